import type { Trade } from "../../ingestion/types.js";
import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { BackfillOptions } from "../../ingestion/backfill/common.js";
import { type BackfillPage, type NextPage, oldestTrade, PagedTradeBackfill } from "../../ingestion/backfill/paged.js";
import { BITGET_ENDPOINTS } from "./endpoints.js";
import { parseBitgetFills } from "./feed-parse.js";
import { BITGET_PRODUCT_TYPE } from "./parse.js";

/** `fills-history` serves at most 1000 rows per call (`limit`). */
const LIMIT = 1000;

/** `fills-history` paging: trades older than this trade id (none on the first page). */
type BitgetCursor = { idLessThan: string | undefined };

/**
 * Bitget USDT-FUTURES trades from `GET /api/v2/mix/market/fills-history` (newest first, at most 1000 per page,
 * sizes in coins): the first page by time (`startTime=fromMs&endTime=toMs`), the next ones older than the oldest
 * trade id seen (`idLessThan`, exact even when many trades share a millisecond), back to `fromMs`. Complete when
 * a short page or a trade older than `fromMs` was reached within `maxPages` (default 20).
 */
export class BitgetTradeBackfill extends PagedTradeBackfill<"bitget", BitgetCursor> {
  constructor(opts: BackfillOptions) {
    super("bitget", opts, BITGET_ENDPOINTS, 20);
  }

  protected firstCursor(): BitgetCursor {
    return { idLessThan: undefined };
  }

  protected request(inst: FeedInstrument, cursor: BitgetCursor, fromMs: number, toMs: number): Promise<unknown> {
    const query = { symbol: inst.venueSymbol, productType: BITGET_PRODUCT_TYPE, startTime: fromMs, endTime: toMs, limit: LIMIT, idLessThan: cursor.idLessThan };
    return this.http.getJson("/api/v2/mix/market/fills-history", query);
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseBitgetFills(raw, inst);
  }

  protected next({ rows, raw }: BackfillPage, _cursor: BitgetCursor, fromMs: number): NextPage<BitgetCursor> {
    const pageRows = (raw as { data?: unknown[] }).data?.length ?? 0;
    const oldest = oldestTrade(rows, olderThan);
    if (!oldest || pageRows < LIMIT || oldest.time < fromMs) return null;
    return { cursor: { idLessThan: oldest.id } };
  }
}

/** True when `a` precedes `b`: by numeric trade id (ids are decimal strings beyond 2^53), else by time. */
function olderThan(a: Trade, b: Trade): boolean {
  if (/^\d+$/.test(a.id) && /^\d+$/.test(b.id)) return a.id.length !== b.id.length ? a.id.length < b.id.length : a.id < b.id;
  return a.time < b.time;
}
