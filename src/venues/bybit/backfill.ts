import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { BYBIT_ENDPOINTS } from "./endpoints.js";
import { parseBybitRecentTrades } from "./feed-parse.js";
import { type BackfillOptions, backfillDefaults } from "../../ingestion/backfill/common.js";
import { LatestTradesBackfill } from "../../ingestion/backfill/latest-trades.js";

/**
 * Bybit v5 trades from `GET /v5/market/recent-trade?category=linear&symbol=&limit=1000`: the latest 1000
 * trades, no time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class BybitTradeBackfill extends LatestTradesBackfill {
  constructor(opts: BackfillOptions) {
    super("bybit", opts, backfillDefaults(BYBIT_ENDPOINTS));
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    return this.http.getJson("/v5/market/recent-trade", { category: "linear", symbol: inst.venueSymbol, limit: 1000 });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseBybitRecentTrades(raw, inst);
  }
}
