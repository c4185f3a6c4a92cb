import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { OKX_ENDPOINTS } from "./endpoints.js";
import { parseOkxTrades } from "./feed-parse.js";
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

const LIMIT = 100;

/**
 * OKX swap trades from `GET /api/v5/market/history-trades` (newest first, 100 per page, sizes in contracts
 * × ctVal): the first page by time (`type=2&after=toMs`), the next ones by trade id (`type=1&after=<oldest
 * tradeId>`, exact even when many trades share a millisecond), back to `fromMs`. Complete when a trade
 * older than `fromMs` (or the end of the history) was reached within `maxPages` (default 50).
 */
export class OkxTradeBackfill implements TradeBackfill {
  readonly venue = "okx" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(this.venue, opts, backfillDefaults(OKX_ENDPOINTS));
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const trades: Trade[] = [];
    let after: { type: number; after: string } = { type: 2, after: String(toMs) };
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? 50); n++) {
      const query = { instId: inst.venueSymbol, ...after, limit: LIMIT };
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.http.getJson("/api/v5/market/history-trades", query),
        (raw) => parseOkxTrades(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      trades.push(...p.parsed.trades);
      const rows = p.parsed.trades;
      const oldest = rows.reduce<Trade | undefined>((o, t) => (o === undefined || Number(t.id) < Number(o.id) ? t : o), undefined);
      const pageRows = (p.raw as { data?: unknown[] }).data?.length ?? 0;
      if (!oldest || pageRows < LIMIT || oldest.time < fromMs) return finish(trades, fromMs, toMs, clean);
      after = { type: 1, after: oldest.id };
    }
    return finish(trades, fromMs, toMs, false);
  }
}
