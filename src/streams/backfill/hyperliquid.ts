import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { parseHyperliquidRecentTrades } from "../feeds/parse-hyperliquid.js";
import { type BackfillOptions, type BackfillResult, backfillLogger, finish, page, resolveInstrument, restClient, type TradeBackfill } from "./common.js";

/**
 * Hyperliquid trades from `POST /info {"type":"recentTrades","coin"}`: the latest few trades only, no
 * time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class HyperliquidTradeBackfill implements TradeBackfill {
  readonly venue = "hyperliquid" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    // /info weighs 20 of 1,200/min: keep 10 calls/min for backfills
    this.http = restClient(this.venue, opts, { baseUrl: "https://api.hyperliquid.xyz", callsPerMin: 10 });
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const p = await page(
      this.venue,
      true,
      this.log,
      () => this.http.postJson("/info", { type: "recentTrades", coin: inst.venueSymbol }),
      (raw) => parseHyperliquidRecentTrades(raw, inst),
    );
    const trades = p?.parsed.trades ?? [];
    const oldest = Math.min(...trades.map((t) => t.time));
    return finish(trades, fromMs, toMs, p !== null && !p.bad && oldest < fromMs);
  }
}
