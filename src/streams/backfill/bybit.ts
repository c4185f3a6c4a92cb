import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { parseBybitRecentTrades } from "../feeds/parse-bybit.js";
import { type BackfillOptions, type BackfillResult, backfillLogger, finish, page, resolveInstrument, restClient, type TradeBackfill } from "./common.js";

/**
 * Bybit v5 trades from `GET /v5/market/recent-trade?category=linear&symbol=&limit=1000`: the latest 1000
 * trades, no time filter. Complete only when the oldest returned trade is older than `fromMs`.
 */
export class BybitTradeBackfill implements TradeBackfill {
  readonly venue = "bybit" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(this.venue, opts, { baseUrl: "https://api.bybit.com", callsPerMin: 120, windowSec: 5 });
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const p = await page(
      this.venue,
      true,
      this.log,
      () => this.http.getJson("/v5/market/recent-trade", { category: "linear", symbol: inst.venueSymbol, limit: 1000 }),
      (raw) => parseBybitRecentTrades(raw, inst),
    );
    const trades = p?.parsed.trades ?? [];
    const oldest = Math.min(...trades.map((t) => t.time));
    return finish(trades, fromMs, toMs, p !== null && !p.bad && oldest < fromMs);
  }
}
