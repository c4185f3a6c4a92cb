import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { DERIBIT_ENDPOINTS } from "./endpoints.js";
import { parseDeribitTrades } from "./feed-parse.js";
import type { Trade } from "../../ingestion/types.js";
import {
  type BackfillOptions,
  type BackfillResult,
  backfillDefaults,
  backfillLogger,
  finish,
  page,
  resolveInstrument,
  restClient,
  type TradeBackfill,
} from "../../ingestion/backfill/common.js";

/** Trades per page (the venue's maximum `count`). */
export const DERIBIT_TRADES_PAGE = 1000;

/**
 * Deribit perpetual trades from `GET /public/get_last_trades_by_instrument` (`start_timestamp`, `end_timestamp`,
 * `sorting=asc`, `count` ≤ 1000; amounts USD on inverse perpetuals → coins by price): paged FORWARD from `fromMs`,
 * each next page starting at the newest trade's millisecond (repeats are dropped by trade id; a page whose trades
 * all share one millisecond moves on by 1 ms and the result is then incomplete). Complete when the venue says
 * `has_more: false` (or a page ends at or after `toMs`) within `maxPages` (default 20).
 */
export class DeribitTradeBackfill implements TradeBackfill {
  readonly venue = "deribit" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(this.venue, opts, backfillDefaults(DERIBIT_ENDPOINTS));
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const trades: Trade[] = [];
    let start = fromMs;
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? 20); n++) {
      const query = { instrument_name: inst.venueSymbol, start_timestamp: start, end_timestamp: toMs - 1, count: DERIBIT_TRADES_PAGE, sorting: "asc" };
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.http.getJson("/public/get_last_trades_by_instrument", query),
        (raw) => parseDeribitTrades(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      const rows = p.parsed.trades;
      trades.push(...rows);
      const hasMore = (p.raw as { result?: { has_more?: boolean } }).result?.has_more === true;
      const newest = rows.reduce((t, r) => Math.max(t, r.time), -Infinity);
      if (!hasMore || rows.length === 0 || newest >= toMs - 1) return finish(trades, fromMs, toMs, clean);
      if (newest <= start) {
        // A full page inside one millisecond: move past it (its other trades are lost).
        clean = false;
        start += 1;
      } else start = newest;
    }
    return finish(trades, fromMs, toMs, false);
  }
}
