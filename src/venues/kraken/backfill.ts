import type { Logger } from "../../lib/log.js";
import { memoizeKeyed } from "../../lib/memo.js";
import { HOUR_MS } from "../../lib/time.js";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import {
  backfillDefaults,
  backfillLogger,
  type BackfillOptions,
  type BackfillResult,
  finish,
  type LiquidationBackfillResult,
  page,
  resolveInstrument,
  restClient,
  type TradeBackfill,
} from "../../ingestion/backfill/common.js";
import type { FeedInstrument } from "../../ingestion/feeds/normalise.js";
import type { Liquidation, Trade } from "../../ingestion/types.js";
import { KRAKEN_ENDPOINTS } from "./endpoints.js";
import { parseKrakenHistory } from "./feed-parse.js";
import { KRAKEN } from "./parse.js";

/** Trades per `/derivatives/api/v3/history` page (fixed by Kraken). */
export const KRAKEN_HISTORY_PAGE = 100;
/** Default page limit per walk: 3,000 trades. */
const DEFAULT_MAX_PAGES = 30;
/** How long a walk's result is shared by the trade and the liquidation backfill of one gap. */
const WALK_TTL_MS = 30_000;
/** A base whose trades were asked for within this long is one the feed streams: its liquidations are backfilled too. */
const RECENT_MS = HOUR_MS;

/** What one walk back through the public trade history found over [fromMs, toMs). */
interface Walk {
  trades: Trade[];
  liquidations: Liquidation[];
  complete: boolean;
}

/**
 * Kraken Futures trades, and the liquidations among them, from `GET /derivatives/api/v3/history?symbol=&lastTime=`: the
 * 100 trades before `lastTime` (ISO), newest first, over the last 7 days only. The walk pages BACK from `toMs`, each
 * next page ending 1 ms after the oldest trade seen (that millisecond is read again; repeats are dropped by `uid`); a
 * page that makes no progress (a full page inside one millisecond) steps past it and the result is incomplete. Complete
 * when a page is short (the history's start) or reaches before `fromMs`, within `maxPages` (default 30).
 *
 * The venue has no all-market liquidation history: {@link fetchLiquidations} reads the liquidation fills (`type`
 * `liquidation`) of the bases whose trades were asked for in the last hour (the feed's subscriptions, whose gaps are
 * being filled), sharing the walks of {@link fetchTrades} over the same gap.
 */
export class KrakenTradeBackfill implements TradeBackfill {
  readonly venue = KRAKEN;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;
  private readonly recent = new Map<string, number>();

  constructor(private readonly opts: BackfillOptions) {
    this.http = restClient(KRAKEN, opts, backfillDefaults(KRAKEN_ENDPOINTS));
    this.log = backfillLogger(KRAKEN, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    this.recent.set(base.trim().toUpperCase(), Date.now());
    const w = await this.walk(base, fromMs, toMs);
    return finish(w.trades, fromMs, toMs, w.complete);
  }

  /**
   * Liquidations in [fromMs, toMs) of the bases streamed lately (see the class comment), oldest first. Never throws: a
   * failed walk makes the result incomplete.
   */
  async fetchLiquidations(fromMs: number, toMs: number): Promise<LiquidationBackfillResult> {
    if (!(toMs > fromMs)) return { liquidations: [], complete: true };
    const since = Date.now() - RECENT_MS;
    const bases = [...this.recent].filter(([, at]) => at >= since).map(([b]) => b);
    for (const [b, at] of this.recent) if (at < since) this.recent.delete(b);
    const walks = await Promise.all(
      bases.map((b) =>
        this.walk(b, fromMs, toMs).catch((err: unknown) => {
          this.log.warn({ err: (err as Error).message, base: b }, "kraken liquidation backfill failed");
          return { trades: [], liquidations: [], complete: false };
        }),
      ),
    );
    const liquidations = walks.flatMap((w) => w.liquidations.filter((l) => l.time >= fromMs && l.time < toMs)).sort((a, b) => a.time - b.time);
    return { liquidations, complete: walks.every((w) => w.complete) };
  }

  /** One walk per base and window at a time (the trade and liquidation backfills of a gap share it). */
  private readonly walks = memoizeKeyed(WALK_TTL_MS, 1000, ({ base, fromMs, toMs }: { base: string; fromMs: number; toMs: number }) => this.pages(base, fromMs, toMs));

  private walk(base: string, fromMs: number, toMs: number): Promise<Walk> {
    const b = base.trim().toUpperCase();
    return this.walks(`${b}:${fromMs}:${toMs}`, { base: b, fromMs, toMs });
  }

  private async pages(base: string, fromMs: number, toMs: number): Promise<Walk> {
    const inst = await resolveInstrument(KRAKEN, this.opts, base);
    const trades: Trade[] = [];
    const liquidations: Liquidation[] = [];
    let cursor = toMs;
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? DEFAULT_MAX_PAGES); n++) {
      const at = cursor;
      const p = await page(
        KRAKEN,
        n === 0,
        this.log,
        () => this.request(inst, at),
        (raw) => parseKrakenHistory(raw, inst),
      );
      if (!p) return { trades, liquidations, complete: false };
      clean &&= !p.bad;
      trades.push(...p.parsed.trades);
      liquidations.push(...p.parsed.liquidations);
      const times = rowTimes(p.raw);
      const rows = times.length;
      const oldest = Math.min(...times);
      if (rows < KRAKEN_HISTORY_PAGE || !Number.isFinite(oldest) || oldest < fromMs) return { trades, liquidations, complete: clean };
      if (oldest + 1 < at) cursor = oldest + 1;
      else {
        // A full page inside one millisecond: step past it (its other trades are lost).
        cursor = oldest;
        clean = false;
      }
    }
    return { trades, liquidations, complete: false };
  }

  private request(inst: FeedInstrument, lastTimeMs: number): Promise<unknown> {
    return this.http.getJson("/derivatives/api/v3/history", { symbol: inst.venueSymbol, lastTime: new Date(lastTimeMs).toISOString() });
  }
}

/** The times (ms) of a history page's rows, every classification included (paging follows the rows, not the trades kept). */
function rowTimes(raw: unknown): number[] {
  const rows = (raw as { history?: Array<{ time?: unknown }> } | null)?.history ?? [];
  return rows.map((r) => (typeof r?.time === "string" ? Date.parse(r.time) : Number.NaN)).filter(Number.isFinite);
}
