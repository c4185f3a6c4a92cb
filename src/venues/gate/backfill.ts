import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { GATE_ENDPOINTS } from "./endpoints.js";
import { parseGateTrades } from "./feed-parse.js";
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

/** Rows per `/futures/usdt/trades` page. */
const LIMIT = 1000;

/**
 * Gate USDT-futures trades from `GET /futures/usdt/trades?contract=&limit=&to=` (newest first, sizes in signed
 * contracts × quanto_multiplier). `to` is in Unix seconds: the first page ends at `toMs`, each next one at the
 * second of the oldest trade received (that second is read again; duplicates are dropped by id), back to
 * `fromMs`. When a full page lies inside one second (more than 1000 trades in it) the next page is
 * asked by `last_id` (Gate's older id paging). Complete when a trade older than `fromMs` (or the end of the
 * history) was reached within `maxPages` (default 50).
 */
export class GateTradeBackfill implements TradeBackfill {
  readonly venue = "gate" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(this.venue, opts, backfillDefaults(GATE_ENDPOINTS));
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const trades: Trade[] = [];
    let cursor: { to: number } | { last_id: string } = { to: Math.ceil(toMs / 1000) };
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? 50); n++) {
      const query = { contract: inst.venueSymbol, limit: LIMIT, ...cursor };
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.http.getJson("/futures/usdt/trades", query),
        (raw) => parseGateTrades(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      const rows = p.parsed.trades;
      trades.push(...rows);
      const oldest = rows.reduce<Trade | undefined>((o, t) => (o === undefined || t.time < o.time || (t.time === o.time && Number(t.id) < Number(o.id)) ? t : o), undefined);
      const pageRows = Array.isArray(p.raw) ? p.raw.length : 0;
      if (!oldest || pageRows < LIMIT || oldest.time < fromMs) return finish(trades, fromMs, toMs, clean);
      const second = Math.floor(oldest.time / 1000);
      const newestSecond = Math.floor(Math.max(...rows.map((t) => t.time)) / 1000);
      // a full page inside one second would come back again by `to`: page by id instead
      cursor = newestSecond === second || ("to" in cursor && second >= cursor.to) ? { last_id: oldest.id } : { to: second };
    }
    return finish(trades, fromMs, toMs, false);
  }
}
