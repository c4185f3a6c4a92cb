import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { HYPERLIQUID_ENDPOINTS } from "./endpoints.js";
import { parseHyperliquidRecentTrades } from "./feed-parse.js";
import { type BackfillOptions, backfillDefaults } from "../../ingestion/backfill/common.js";
import { LatestTradesBackfill } from "../../ingestion/backfill/latest-trades.js";

/**
 * Hyperliquid trades from `POST /info {"type":"recentTrades","coin"}`: the latest few trades only, no
 * time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class HyperliquidTradeBackfill extends LatestTradesBackfill {
  constructor(opts: BackfillOptions) {
    super("hyperliquid", opts, backfillDefaults(HYPERLIQUID_ENDPOINTS));
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    return this.http.postJson("/info", { type: "recentTrades", coin: inst.venueSymbol });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseHyperliquidRecentTrades(raw, inst);
  }
}
