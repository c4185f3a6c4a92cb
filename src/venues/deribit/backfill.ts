import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { BackfillOptions } from "../../ingestion/backfill/common.js";
import { type BackfillPage, type NextPage, PagedTradeBackfill } from "../../ingestion/backfill/paged.js";
import { DERIBIT_ENDPOINTS } from "./endpoints.js";
import { parseDeribitTrades } from "./feed-parse.js";

/** Trades per page (the venue's maximum `count`). */
export const DERIBIT_TRADES_PAGE = 1000;

/**
 * Deribit perpetual trades from `GET /public/get_last_trades_by_instrument` (`start_timestamp`, `end_timestamp`,
 * `sorting=asc`, `count` ≤ 1000; amounts USD on inverse perpetuals → coins by price): paged FORWARD from `fromMs`,
 * each next page starting at the newest trade's millisecond (repeats are dropped by trade id; a page whose trades
 * all share one millisecond moves on by 1 ms and the result is then incomplete). Complete when the venue says
 * `has_more: false` (or a page ends at or after `toMs`) within `maxPages` (default 20).
 * The cursor is the page's `start_timestamp` (ms).
 */
export class DeribitTradeBackfill extends PagedTradeBackfill<"deribit", number> {
  constructor(opts: BackfillOptions) {
    super("deribit", opts, DERIBIT_ENDPOINTS, 20);
  }

  protected firstCursor(fromMs: number): number {
    return fromMs;
  }

  protected request(inst: FeedInstrument, start: number, _fromMs: number, toMs: number): Promise<unknown> {
    const query = { instrument_name: inst.venueSymbol, start_timestamp: start, end_timestamp: toMs - 1, count: DERIBIT_TRADES_PAGE, sorting: "asc" };
    return this.http.getJson("/public/get_last_trades_by_instrument", query);
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseDeribitTrades(raw, inst);
  }

  protected next({ rows, raw }: BackfillPage, start: number, _fromMs: number, toMs: number): NextPage<number> {
    const hasMore = (raw as { result?: { has_more?: boolean } }).result?.has_more === true;
    const newest = rows.reduce((t, r) => Math.max(t, r.time), -Infinity);
    if (!hasMore || rows.length === 0 || newest >= toMs - 1) return null;
    // A full page inside one millisecond: move past it (its other trades are lost).
    if (newest <= start) return { cursor: start + 1, lossy: true };
    return { cursor: newest };
  }
}
