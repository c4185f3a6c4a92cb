import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { BackfillOptions, LiquidationBackfillResult } from "../../ingestion/backfill/common.js";
import { type BackfillPage, type NextPage, oldestTrade, PagedTradeBackfill } from "../../ingestion/backfill/paged.js";
import { GATE_ENDPOINTS } from "./endpoints.js";
import { parseGateTrades } from "./feed-parse.js";
import { fetchGateLiquidations } from "./liquidation-backfill.js";

/** Rows per `/futures/usdt/trades` page. */
const LIMIT = 1000;

/** `/futures/usdt/trades` paging: by end second (`to`, Unix s) or, older than a trade id, by `last_id`. */
type GateCursor = { to: number } | { last_id: string };

/**
 * Gate USDT-futures trades from `GET /futures/usdt/trades?contract=&limit=&to=` (newest first, sizes in signed
 * contracts × quanto_multiplier). `to` is in Unix seconds: the first page ends at `toMs`, each next one at the
 * second of the oldest trade received (that second is read again; duplicates are dropped by id), back to
 * `fromMs`. When a full page lies inside one second (more than 1000 trades in it) the next page is
 * asked by `last_id` (Gate's older id paging). Complete when a trade older than `fromMs` (or the end of the
 * history) was reached within `maxPages` (default 50).
 */
export class GateTradeBackfill extends PagedTradeBackfill<"gate", GateCursor> {
  constructor(opts: BackfillOptions) {
    super("gate", opts, GATE_ENDPOINTS, 50);
  }

  protected firstCursor(_fromMs: number, toMs: number): GateCursor {
    return { to: Math.ceil(toMs / 1000) };
  }

  /** All-market liquidations over [fromMs, toMs) from `/futures/usdt/liq_orders` (see {@link fetchGateLiquidations}), on this backfill's budget. */
  fetchLiquidations(fromMs: number, toMs: number): Promise<LiquidationBackfillResult> {
    return fetchGateLiquidations(this.http, this.opts.instruments, this.log, fromMs, toMs);
  }

  protected request(inst: FeedInstrument, cursor: GateCursor): Promise<unknown> {
    return this.http.getJson("/futures/usdt/trades", { contract: inst.venueSymbol, limit: LIMIT, ...cursor });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseGateTrades(raw, inst);
  }

  protected next({ rows, raw }: BackfillPage, cursor: GateCursor, fromMs: number): NextPage<GateCursor> {
    const oldest = oldestTrade(rows, (a, b) => a.time < b.time || (a.time === b.time && Number(a.id) < Number(b.id)));
    const pageRows = Array.isArray(raw) ? raw.length : 0;
    if (!oldest || pageRows < LIMIT || oldest.time < fromMs) return null;
    const second = Math.floor(oldest.time / 1000);
    const newestSecond = Math.floor(Math.max(...rows.map((t) => t.time)) / 1000);
    // a full page inside one second would come back again by `to`: page by id instead
    return { cursor: newestSecond === second || ("to" in cursor && second >= cursor.to) ? { last_id: oldest.id } : { to: second } };
  }
}
