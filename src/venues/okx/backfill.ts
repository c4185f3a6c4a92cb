import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { BackfillOptions } from "../../ingestion/backfill/common.js";
import { type BackfillPage, type NextPage, oldestTrade, PagedTradeBackfill } from "../../ingestion/backfill/paged.js";
import { OKX_ENDPOINTS } from "./endpoints.js";
import { parseOkxTrades } from "./feed-parse.js";

const LIMIT = 100;

/** `history-trades` paging: `type=2` pages by time (ms), `type=1` by trade id. */
type OkxCursor = { type: number; after: string };

/**
 * OKX swap trades from `GET /api/v5/market/history-trades` (newest first, 100 per page, sizes in contracts
 * × ctVal): the first page by time (`type=2&after=toMs`), the next ones by trade id (`type=1&after=<oldest
 * tradeId>`, exact even when many trades share a millisecond), back to `fromMs`. Complete when a trade
 * older than `fromMs` (or the end of the history) was reached within `maxPages` (default 50).
 */
export class OkxTradeBackfill extends PagedTradeBackfill<"okx", OkxCursor> {
  constructor(opts: BackfillOptions) {
    super("okx", opts, OKX_ENDPOINTS, 50);
  }

  protected firstCursor(_fromMs: number, toMs: number): OkxCursor {
    return { type: 2, after: String(toMs) };
  }

  protected request(inst: FeedInstrument, cursor: OkxCursor): Promise<unknown> {
    return this.http.getJson("/api/v5/market/history-trades", { instId: inst.venueSymbol, ...cursor, limit: LIMIT });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseOkxTrades(raw, inst);
  }

  protected next({ rows, raw }: BackfillPage, _cursor: OkxCursor, fromMs: number): NextPage<OkxCursor> {
    const oldest = oldestTrade(rows, (a, b) => Number(a.id) < Number(b.id));
    const pageRows = (raw as { data?: unknown[] }).data?.length ?? 0;
    if (!oldest || pageRows < LIMIT || oldest.time < fromMs) return null;
    return { cursor: { type: 1, after: oldest.id } };
  }
}
