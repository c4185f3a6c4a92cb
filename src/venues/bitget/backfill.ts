import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
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
import { BITGET_ENDPOINTS } from "./endpoints.js";
import { parseBitgetFills } from "./feed-parse.js";
import { BITGET_PRODUCT_TYPE } from "./parse.js";

/** `fills-history` serves at most 1000 rows per call (`limit`). */
const LIMIT = 1000;

/**
 * Bitget USDT-FUTURES trades from `GET /api/v2/mix/market/fills-history` (newest first, at most 1000 per page,
 * sizes in coins): the first page by time (`startTime=fromMs&endTime=toMs`), the next ones older than the oldest
 * trade id seen (`idLessThan`, exact even when many trades share a millisecond), back to `fromMs`. Complete when
 * a short page or a trade older than `fromMs` was reached within `maxPages` (default 20).
 */
export class BitgetTradeBackfill implements TradeBackfill {
  readonly venue = "bitget" as const;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(this.venue, opts, backfillDefaults(BITGET_ENDPOINTS));
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const trades: Trade[] = [];
    let idLessThan: string | undefined;
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? 20); n++) {
      const query = { symbol: inst.venueSymbol, productType: BITGET_PRODUCT_TYPE, startTime: fromMs, endTime: toMs, limit: LIMIT, idLessThan };
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.http.getJson("/api/v2/mix/market/fills-history", query),
        (raw) => parseBitgetFills(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      trades.push(...p.parsed.trades);
      const rows = (p.raw as { data?: unknown[] }).data?.length ?? 0;
      const oldest = p.parsed.trades.reduce<Trade | undefined>((o, t) => (o === undefined || olderThan(t, o) ? t : o), undefined);
      if (!oldest || rows < LIMIT || oldest.time < fromMs) return finish(trades, fromMs, toMs, clean);
      idLessThan = oldest.id;
    }
    return finish(trades, fromMs, toMs, false);
  }
}

/** True when `a` precedes `b`: by numeric trade id (ids are decimal strings beyond 2^53), else by time. */
function olderThan(a: Trade, b: Trade): boolean {
  if (/^\d+$/.test(a.id) && /^\d+$/.test(b.id)) return a.id.length !== b.id.length ? a.id.length < b.id.length : a.id < b.id;
  return a.time < b.time;
}
