import {
  type BackfillOptions,
  type BackfillResult,
  backfillDefaults,
  backfillLogger,
  finish,
  type LiquidationBackfillResult,
  page,
  resolveInstrument,
  restClient,
  type TradeBackfill,
} from "../../ingestion/backfill/common.js";
import { AppError } from "../../errors.js";
import type { FeedInstrument } from "../../ingestion/feeds/normalise.js";
import type { Liquidation, StreamVenue, Trade } from "../../ingestion/types.js";
import type { Logger } from "../../lib/log.js";
import { HOUR_MS } from "../../lib/time.js";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import { DYDX_ENDPOINTS } from "./endpoints.js";
import { parseDydxTrades } from "./feed-parse.js";
import { DYDX } from "./venue-id.js";

/** Rows per `/trades/perpetualMarket/{ticker}` page: the indexer's largest `limit` (comlink `API_LIMIT_V4`). */
export const DYDX_TRADES_PAGE = 1000;
/** Most pages one interval of one market may take (default `maxPages`); beyond them the result is incomplete. */
export const DYDX_MAX_PAGES = 20;
/** How long one paging of a (market, interval) is shared by the trade and the liquidation backfill of that interval. */
const RUN_TTL_MS = 30_000;
/** The markets a liquidation backfill covers: those whose trades were backfilled within this long (the streamed ones). */
const STREAMED_TTL_MS = 2 * HOUR_MS;

/** Where the next page ends: the first page at a time, the next ones at a block height (both inclusive). */
type Cursor = { createdBeforeOrAt: string } | { createdBeforeOrAtHeight: number };

/** What one paging of a market over an interval found (rows outside the interval included; see {@link finish}). */
interface Run {
  trades: Trade[];
  liquidations: Liquidation[];
  complete: boolean;
}

/**
 * dYdX trades (and liquidations) from `GET /trades/perpetualMarket/{ticker}?limit=1000&createdBeforeOrAt=` (newest
 * first, ordered by block height): the first page ends at `toMs`, each next one at the oldest block height of the
 * previous page (`createdBeforeOrAtHeight`, inclusive: that block is read again and duplicates dropped by id), until a
 * trade older than `fromMs`, a short page (the market's first trade), or `maxPages` (default 20; incomplete). A full
 * page inside a single block steps below that block and is incomplete (the block's other rows are skipped).
 *
 * The same pages carry the market's liquidations (`LIQUIDATED` rows), so {@link fetchLiquidations} reads them for the
 * markets whose trades this backfill was asked for in the last 2 h (the feed's: ingestion backfills every streamed
 * market on each gap), sharing the paging with {@link fetchTrades} when both ask the same interval. Backfilled
 * liquidations are the venue's own public rows, identical to what the feed would have delivered (the stores drop
 * the ones already held).
 */
export class DydxTradeBackfill implements TradeBackfill {
  readonly venue: StreamVenue = DYDX;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;
  /** Pagings in flight or just done, by `ticker|from|to`. */
  private readonly runs = new Map<string, { at: number; run: Promise<Run> }>();
  /** Canonical base → when its trades were last asked for. */
  private readonly asked = new Map<string, number>();

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(DYDX, opts, backfillDefaults(DYDX_ENDPOINTS));
    this.log = backfillLogger(DYDX, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    // Noted before any await, so a liquidation backfill started right after this call covers the market.
    this.asked.set(base.trim().toUpperCase(), Date.now());
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(DYDX, this.opts, base);
    const r = await this.run(inst, fromMs, toMs);
    return finish(r.trades, fromMs, toMs, r.complete);
  }

  /**
   * Liquidations in [fromMs, toMs), oldest first, of the markets whose trades were backfilled in the last 2 h (none
   * known: nothing, incomplete). Incomplete when a market's paging was. Never throws.
   */
  async fetchLiquidations(fromMs: number, toMs: number): Promise<LiquidationBackfillResult> {
    if (!(toMs > fromMs)) return { liquidations: [], complete: true };
    const now = Date.now();
    for (const [b, at] of this.asked) if (now - at > STREAMED_TTL_MS) this.asked.delete(b);
    if (this.asked.size === 0) return { liquidations: [], complete: false };
    const runs = await Promise.all(
      [...this.asked.keys()].map(async (base): Promise<Run> => {
        try {
          return await this.run(await resolveInstrument(DYDX, this.opts, base), fromMs, toMs);
        } catch (err) {
          // A market the venue does not list has no liquidations to miss.
          if (err instanceof AppError && err.code === "NOT_FOUND") {
            this.asked.delete(base);
            return { trades: [], liquidations: [], complete: true };
          }
          this.log.warn({ err: (err as Error).message, base }, "dydx liquidation backfill failed for a market");
          return { trades: [], liquidations: [], complete: false };
        }
      }),
    );
    const liquidations = runs.flatMap((r) => r.liquidations).filter((l) => l.time >= fromMs && l.time < toMs);
    return { liquidations: liquidations.sort((a, b) => a.time - b.time), complete: runs.every((r) => r.complete) };
  }

  /** The paging of `inst` over [fromMs, toMs), shared for {@link RUN_TTL_MS} (a failed one is not kept). */
  private run(inst: FeedInstrument, fromMs: number, toMs: number): Promise<Run> {
    const now = Date.now();
    for (const [k, r] of this.runs) if (now - r.at > RUN_TTL_MS) this.runs.delete(k);
    const key = `${inst.venueSymbol}|${fromMs}|${toMs}`;
    const hit = this.runs.get(key);
    if (hit) return hit.run;
    const run = this.pages(inst, fromMs, toMs);
    this.runs.set(key, { at: now, run });
    run.catch(() => this.runs.delete(key));
    return run;
  }

  private async pages(inst: FeedInstrument, fromMs: number, toMs: number): Promise<Run> {
    const path = `/trades/perpetualMarket/${encodeURIComponent(inst.venueSymbol)}`;
    const out: Run = { trades: [], liquidations: [], complete: false };
    const seen = new Set<string>();
    let cursor: Cursor = { createdBeforeOrAt: new Date(toMs).toISOString() };
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? DYDX_MAX_PAGES); n++) {
      const at: Cursor = cursor;
      const p = await page(
        DYDX,
        n === 0,
        this.log,
        () => this.http.getJson(path, { limit: DYDX_TRADES_PAGE, ...at }),
        (raw) => parseDydxTrades(raw, inst),
      );
      if (!p) return out;
      clean &&= !p.bad;
      out.trades.push(...p.parsed.trades);
      for (const l of p.parsed.liquidations) {
        const k = `${l.time}|${l.side}|${l.price}|${l.size}`;
        if (!seen.has(k) && seen.add(k)) out.liquidations.push(l);
      }
      const rows = (p.raw as { trades: Array<{ createdAtHeight?: unknown } | null> }).trades;
      const oldest = Math.min(...p.parsed.trades.map((t) => t.time));
      if (rows.length < DYDX_TRADES_PAGE || oldest < fromMs) {
        out.complete = clean;
        return out;
      }
      const heights = rows.map((r) => Number(r?.createdAtHeight)).filter((h) => Number.isSafeInteger(h) && h > 0);
      if (heights.length === 0) return out;
      const low = Math.min(...heights);
      const below: number = "createdBeforeOrAtHeight" in at ? at.createdBeforeOrAtHeight : Infinity;
      // A full page inside one block (or not below the last cursor) would come back again: step under it, lossy.
      if (low === Math.max(...heights) || low >= below) {
        clean = false;
        cursor = { createdBeforeOrAtHeight: Math.min(low, below) - 1 };
      } else cursor = { createdBeforeOrAtHeight: low };
    }
    return out;
  }
}
