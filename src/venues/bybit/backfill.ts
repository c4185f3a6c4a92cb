import type { FeedInstrument, ParsedFrame } from "../feeds/normalise.js";
import { parseBybitRecentTrades } from "../feeds/parse-bybit.js";
import type { BackfillOptions } from "./common.js";
import { LatestTradesBackfill } from "./latest-trades.js";

/**
 * Bybit v5 trades from `GET /v5/market/recent-trade?category=linear&symbol=&limit=1000`: the latest 1000
 * trades, no time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class BybitTradeBackfill extends LatestTradesBackfill {
  constructor(opts: BackfillOptions) {
    super("bybit", opts, { baseUrl: "https://api.bybit.com", callsPerMin: 120, windowSec: 5 });
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    return this.http.getJson("/v5/market/recent-trade", { category: "linear", symbol: inst.venueSymbol, limit: 1000 });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseBybitRecentTrades(raw, inst);
  }
}
