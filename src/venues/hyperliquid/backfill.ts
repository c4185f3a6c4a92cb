import type { FeedInstrument, ParsedFrame } from "../feeds/normalise.js";
import { parseHyperliquidRecentTrades } from "../feeds/parse-hyperliquid.js";
import type { BackfillOptions } from "./common.js";
import { LatestTradesBackfill } from "./latest-trades.js";

/**
 * Hyperliquid trades from `POST /info {"type":"recentTrades","coin"}`: the latest few trades only, no
 * time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class HyperliquidTradeBackfill extends LatestTradesBackfill {
  constructor(opts: BackfillOptions) {
    // /info weighs 20 of 1,200/min: keep 10 calls/min for backfills
    super("hyperliquid", opts, { baseUrl: "https://api.hyperliquid.xyz", callsPerMin: 10 });
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    return this.http.postJson("/info", { type: "recentTrades", coin: inst.venueSymbol });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseHyperliquidRecentTrades(raw, inst);
  }
}
