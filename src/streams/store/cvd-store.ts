import type { Statement } from "better-sqlite3";
import { logger } from "../../lib/log.js";
import { STREAM_VENUES, type StreamGap, type StreamVenue, type Trade } from "../types.js";
import { CVD_BUCKET_MS, alignBucket } from "./cvd-math.js";
import type { Database } from "./db.js";
import { Flusher } from "./flusher.js";

/*
 * Cumulative volume delta per (venue, base) in 5-minute buckets. Reads are served from memory (a Map per
 * symbol and venue, keyed by bucket start); every change is written through to SQLite in batches so a
 * restart resumes with identical history. Retention is a rolling 7 days of bucket slots, enforced on
 * every write that crosses a slot boundary, on a timer, and on load.
 */

/** Retention of CVD history (spec 8): 7 days, ms. */
export const CVD_RETENTION_MS = 7 * 24 * 3_600_000;
/** 5-minute slots kept per (venue, base): 7 × 288 = 2016. */
export const CVD_SLOTS = CVD_RETENTION_MS / CVD_BUCKET_MS;
/** Upper bound of buckets held per symbol: {@link CVD_SLOTS} × 4 venues = 8064. */
export const MAX_BUCKETS_PER_SYMBOL = CVD_SLOTS * STREAM_VENUES.length;
/** Venue clocks may run ahead of ours; trades up to this far in the future are accepted, ms. */
const FUTURE_SKEW_MS = 60_000;

/** Whether a bucket overlaps a stream gap: none, gap backfilled from REST (`filled`), or not (`unfilled`). */
export type GapState = "none" | "filled" | "unfilled";

/** Taker flow of one venue or a sum: volumes in base coins and USD, and the trade count. */
export interface CvdFlow {
  buyBase: number;
  sellBase: number;
  buyUsd: number;
  sellUsd: number;
  trades: number;
}

/** One 5-minute bucket of one (venue, base). `start` is epoch ms aligned to 5 min UTC. */
export interface CvdBucket extends CvdFlow {
  start: number;
  gap: GapState;
}

/** Flow of a base over a range (see {@link CvdStore.cvd}). */
export interface CvdSummary {
  base: string;
  /** Effective start, epoch ms: the requested start aligned down to 5 min, never before tracking/retention. */
  fromMs: number;
  /** Requested end (exclusive), epoch ms. */
  toMs: number;
  /** Start of the tracked range of this base (within retention), epoch ms; null when not tracked. */
  trackedSince: number | null;
  /** Per venue that has at least one bucket in range. */
  venues: Partial<Record<StreamVenue, CvdFlow>>;
  /** Sum over venues. CVD = `buyUsd − sellUsd` (or base: `buyBase − sellBase`). */
  total: CvdFlow;
  /** True when some bucket in range lies in a gap that was not backfilled. */
  unfilled: boolean;
}

/** One re-aggregated history bucket (see {@link CvdStore.history}). */
export interface CvdHistoryPoint extends CvdFlow {
  /** Bucket start, epoch ms, aligned to the bucket size (UTC). */
  start: number;
  /** `buyUsd − sellUsd`: positive is net taker buying. */
  cvdDelta: number;
  /** True when a constituent 5-min slot is in an unfilled gap or has no data at all inside the tracked range. */
  missing: boolean;
  /** Per-venue split, when asked for. */
  venues?: Partial<Record<StreamVenue, CvdFlow>>;
}

/** Options of {@link CvdStore}. */
export interface CvdStoreOptions {
  /** Clock, epoch ms (default `Date.now`); tests inject one. */
  now?: () => number;
  /** Longest delay of write-through to SQLite, ms (default 1000; 0 = write on every change). */
  flushMs?: number;
  /** Period of the retention timer, ms (default 60 000; 0 = no timer, purge only on writes and load). */
  purgeEveryMs?: number;
  /** Trade ids are remembered this far behind the newest trade of each (venue, base), ms (default 20 min). */
  dedupeWindowMs?: number;
  /** …and at most this many ids per (venue, base) (default 50 000). */
  dedupeMaxIds?: number;
}

/** Counters of {@link CvdStore.stats}. */
export interface CvdStoreStats {
  symbols: number;
  buckets: number;
  /** Remembered trade ids, all (venue, base) together. */
  seenIds: number;
  /** Buckets changed since the last flush. */
  dirty: number;
  /** Rough V8 heap estimate of the above (≈ 160 B per bucket, 100 B per id), bytes. */
  approxBytes: number;
  /** {@link MAX_BUCKETS_PER_SYMBOL}. */
  maxBucketsPerSymbol: number;
}

/** A bucket with its identity, as the store persists and replicates it (absolute values). */
export interface CvdBucketRow extends CvdBucket {
  base: string;
  venue: StreamVenue;
}

/**
 * Newest trade time counted for (venue, base), with the ids of the trades counted at exactly that time:
 * where a backfill resumes without counting those again.
 */
export interface CvdLastTrade {
  venue: StreamVenue;
  base: string;
  time: number;
  ids: string[];
}

/**
 * What a flush wrote (see {@link CvdStore.observe}), or a whole store ({@link CvdStore.exportChanges}):
 * buckets as absolute values, so applying them again or out of date order converges on the same state.
 */
export interface CvdChanges {
  /** Tracked symbols and the start of their tracked range (epoch ms). */
  symbols: Array<{ base: string; trackedSince: number }>;
  buckets: CvdBucketRow[];
  lastTrades: CvdLastTrade[];
}

/** Observer of a store's writes: each flush's changes, and dropped symbols. Called synchronously; must not throw. */
export interface CvdObserver {
  flushed?(changes: CvdChanges): void;
  dropped?(base: string): void;
}

type StoredBucket = CvdBucketRow;

interface SymbolState {
  /** Earliest slot start ever tracked (5-min aligned), epoch ms. */
  trackedSince: number;
  venues: Map<StreamVenue, Map<number, StoredBucket>>;
}

/** Recently counted trade ids of one (venue, base), insertion-ordered (≈ time-ordered for live trades). */
interface SeenSet {
  venue: StreamVenue;
  base: string;
  ids: Map<string, number>;
  /**
   * Ids in insertion order, evicted from `head`. A separate queue because iterating a Map from its start
   * after many deletions walks every deleted slot (V8 keeps them until it rehashes), which made eviction
   * O(n) per call.
   */
  order: string[];
  head: number;
  newest: number;
}

interface BucketRow {
  base: string;
  venue: string;
  start: number;
  buy_base: number;
  sell_base: number;
  buy_usd: number;
  sell_usd: number;
  trades: number;
  gap: GapState;
}

const VENUE_SET: ReadonlySet<string> = new Set(STREAM_VENUES);
const emptyFlow = (): CvdFlow => ({ buyBase: 0, sellBase: 0, buyUsd: 0, sellUsd: 0, trades: 0 });

function addFlow(into: CvdFlow, f: CvdFlow): void {
  into.buyBase += f.buyBase;
  into.sellBase += f.sellBase;
  into.buyUsd += f.buyUsd;
  into.sellUsd += f.sellUsd;
  into.trades += f.trades;
}

const GAP_STATES: ReadonlySet<string> = new Set(["none", "filled", "unfilled"]);
const finiteNonNegative = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x >= 0;

/** A replicated bucket row that can be stored as is. */
function validRow(r: CvdBucketRow | undefined): r is CvdBucketRow {
  return (
    r !== undefined &&
    r !== null &&
    VENUE_SET.has(r.venue) &&
    typeof r.base === "string" &&
    r.base.length > 0 &&
    Number.isInteger(r.start) &&
    r.start % CVD_BUCKET_MS === 0 &&
    finiteNonNegative(r.buyBase) &&
    finiteNonNegative(r.sellBase) &&
    finiteNonNegative(r.buyUsd) &&
    finiteNonNegative(r.sellUsd) &&
    Number.isInteger(r.trades) &&
    r.trades >= 0 &&
    GAP_STATES.has(r.gap)
  );
}

function validTrade(t: Trade): boolean {
  return (
    VENUE_SET.has(t.venue) &&
    typeof t.base === "string" &&
    t.base.length > 0 &&
    typeof t.id === "string" &&
    t.id.length > 0 &&
    Number.isFinite(t.time) &&
    Number.isFinite(t.price) &&
    t.price > 0 &&
    Number.isFinite(t.size) &&
    t.size > 0 &&
    (t.side === "buy" || t.side === "sell")
  );
}

/**
 * CVD buckets of all tracked symbols, served from memory and persisted to the stream database.
 *
 * Construction loads what the database holds within retention (and deletes older rows). Writes
 * (`add`, `markGap`, `heartbeat`, `track`) change memory at once and reach SQLite within `flushMs` in
 * one transaction, and on `close()`; a crash loses at most that last interval. Reads never touch SQLite.
 *
 * Bounds: per (venue, base) at most {@link CVD_SLOTS} buckets (the 2016 slots ending at the slot of
 * now + 1 min skew: trades older than that window or further in the future are ignored), hence at most
 * {@link MAX_BUCKETS_PER_SYMBOL} per symbol; at most `dedupeMaxIds` remembered ids per (venue, base).
 *
 * `close()` stops timers and flushes; it does not close the database, which the stores share.
 */
export class CvdStore {
  private readonly now: () => number;
  private readonly dedupeWindowMs: number;
  private readonly dedupeMaxIds: number;
  private readonly syms = new Map<string, SymbolState>();
  private readonly seen = new Map<string, SeenSet>();
  private readonly dirty = new Set<StoredBucket>();
  private readonly dirtySymbols = new Set<string>();
  private pendingSeen: Array<{ venue: StreamVenue; base: string; id: string; time: number }> = [];
  private readonly touchedSeen = new Set<SeenSet>();
  private pendingPurgeBefore: number | null = null;
  /** Retention lower bound at the last purge; a write past a slot boundary triggers the next. */
  private purgedAt = -Infinity;
  private readonly flusher: Flusher;
  private readonly purgeTimer: NodeJS.Timeout | null;
  private closed = false;
  private readonly observers = new Set<CvdObserver>();

  private readonly st: {
    upsertBucket: Statement<[string, string, number, number, number, number, number, number, GapState]>;
    upsertSymbol: Statement<[string, number]>;
    insertSeen: Statement<[string, string, string, number]>;
    deleteSeenBefore: Statement<[string, string, number]>;
    deleteBucketsBefore: Statement<[number]>;
    deleteAllSeenBefore: Statement<[number]>;
    dropBuckets: Statement<[string]>;
    dropSymbol: Statement<[string]>;
    dropSeen: Statement<[string]>;
  };

  constructor(
    private readonly db: Database,
    opts: CvdStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.dedupeWindowMs = opts.dedupeWindowMs ?? 20 * 60_000;
    this.dedupeMaxIds = opts.dedupeMaxIds ?? 50_000;
    this.st = {
      upsertBucket: db.prepare(
        `INSERT INTO cvd_bucket (base, venue, start, buy_base, sell_base, buy_usd, sell_usd, trades, gap)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (base, venue, start) DO UPDATE SET buy_base = excluded.buy_base, sell_base = excluded.sell_base,
           buy_usd = excluded.buy_usd, sell_usd = excluded.sell_usd, trades = excluded.trades, gap = excluded.gap`,
      ),
      upsertSymbol: db.prepare(
        `INSERT INTO cvd_symbol (base, tracked_since) VALUES (?, ?) ON CONFLICT (base) DO UPDATE SET tracked_since = excluded.tracked_since`,
      ),
      insertSeen: db.prepare(`INSERT OR IGNORE INTO cvd_seen (venue, base, id, time) VALUES (?, ?, ?, ?)`),
      deleteSeenBefore: db.prepare(`DELETE FROM cvd_seen WHERE venue = ? AND base = ? AND time < ?`),
      deleteBucketsBefore: db.prepare(`DELETE FROM cvd_bucket WHERE start < ?`),
      deleteAllSeenBefore: db.prepare(`DELETE FROM cvd_seen WHERE time < ?`),
      dropBuckets: db.prepare(`DELETE FROM cvd_bucket WHERE base = ?`),
      dropSymbol: db.prepare(`DELETE FROM cvd_symbol WHERE base = ?`),
      dropSeen: db.prepare(`DELETE FROM cvd_seen WHERE base = ?`),
    };
    this.flusher = new Flusher("cvd", opts.flushMs ?? 1000, () => this.writePending());
    this.load();
    const every = opts.purgeEveryMs ?? 60_000;
    this.purgeTimer = every > 0 ? setInterval(() => this.purge(), every) : null;
    this.purgeTimer?.unref();
  }

  /**
   * Counts taker trades into their 5-min buckets. Idempotent for backfill: a trade whose id is among
   * the remembered ids of its (venue, base) — those within `dedupeWindowMs` of the newest trade, at most
   * `dedupeMaxIds`, saved on a graceful close() — is skipped. A backfill must therefore not resend trades
   * older than that window which were already counted (it covers gaps, which were not).
   * Invalid trades (unknown venue, non-positive size/price, non-finite time) and trades outside the
   * retained slots are ignored. The first trade of a base starts tracking it. Returns the number counted.
   */
  add(trades: readonly Trade[]): number {
    if (this.closed || trades.length === 0) return 0;
    this.maybePurge();
    const [lo, hi] = this.window();
    let counted = 0;
    let last: SeenSet | undefined;
    const touched = new Set<SeenSet>();
    for (const t of trades) {
      if (!validTrade(t)) continue;
      const slot = alignBucket(t.time, CVD_BUCKET_MS);
      if (slot < lo || slot > hi) continue;
      // Frames carry one symbol of one venue: reuse the previous trade's set.
      const seen = last && last.venue === t.venue && last.base === t.base ? last : (last = this.seenFor(t.venue, t.base));
      if (seen.ids.has(t.id)) continue;
      seen.ids.set(t.id, t.time);
      seen.order.push(t.id);
      if (t.time > seen.newest) seen.newest = t.time;
      touched.add(seen);
      const b = this.bucket(t.base, t.venue, slot);
      const usd = t.size * t.price;
      if (t.side === "buy") {
        b.buyBase += t.size;
        b.buyUsd += usd;
      } else {
        b.sellBase += t.size;
        b.sellUsd += usd;
      }
      b.trades += 1;
      this.dirty.add(b);
      counted++;
    }
    for (const s of touched) {
      this.evictSeen(s);
      this.touchedSeen.add(s);
    }
    if (counted > 0) this.flusher.schedule();
    return counted;
  }

  /**
   * Marks the buckets of `gap.venue` overlapping `[gap.from, gap.to)` as `filled` (backfilled from REST)
   * or `unfilled`, for `gap.base` when given (only if tracked), else for every tracked base that has
   * buckets of that venue. Buckets are created when absent; slots before tracking started, outside
   * retention or after the current slot are not touched. The latest mark wins, so marking `filled` after
   * a backfill clears an earlier `unfilled`. Returns the number of buckets marked.
   */
  markGap(gap: StreamGap & { base?: string; filled: boolean }): number {
    if (this.closed || !VENUE_SET.has(gap.venue) || !(gap.to > gap.from)) return 0;
    this.maybePurge();
    const [lo] = this.window();
    const nowSlot = alignBucket(this.now(), CVD_BUCKET_MS);
    const bases =
      gap.base !== undefined
        ? this.syms.has(gap.base)
          ? [gap.base]
          : []
        : [...this.syms].filter(([, s]) => (s.venues.get(gap.venue)?.size ?? 0) > 0).map(([b]) => b);
    const state: GapState = gap.filled ? "filled" : "unfilled";
    let marked = 0;
    for (const base of bases) {
      const sym = this.syms.get(base)!;
      const first = Math.max(alignBucket(Math.max(gap.from, -8.64e15), CVD_BUCKET_MS), lo, sym.trackedSince);
      const last = Math.min(alignBucket(Math.min(gap.to, 8.64e15) - 1, CVD_BUCKET_MS), nowSlot);
      for (let slot = first; slot <= last; slot += CVD_BUCKET_MS) {
        const b = this.bucket(base, gap.venue, slot);
        b.gap = state;
        this.dirty.add(b);
        marked++;
      }
    }
    if (marked > 0) this.flusher.schedule();
    return marked;
  }

  /**
   * Starts tracking `base` (tracked range from the current slot) if not yet tracked. The tracked range
   * is what {@link history} judges for missing data.
   */
  track(base: string): void {
    if (this.closed) return;
    this.maybePurge();
    this.symbol(base, alignBucket(this.now(), CVD_BUCKET_MS));
    this.flusher.schedule();
  }

  /**
   * Records that the streams of `venues` for `base` were live at `atMs` (default now) by creating empty
   * buckets for that slot. Without it a quiet 5 minutes with no trade on any venue looks like a data hole
   * to {@link history}; feeds call it periodically (e.g. every minute) while connected. Tracks `base`.
   */
  heartbeat(base: string, venues: readonly StreamVenue[], atMs: number = this.now()): void {
    if (this.closed) return;
    this.maybePurge();
    const [lo] = this.window();
    const slot = alignBucket(atMs, CVD_BUCKET_MS);
    if (slot < lo || slot > alignBucket(this.now(), CVD_BUCKET_MS)) return;
    let created = false;
    for (const v of venues) {
      if (!VENUE_SET.has(v) || this.syms.get(base)?.venues.get(v)?.has(slot)) continue;
      this.dirty.add(this.bucket(base, v, slot));
      created = true;
    }
    if (created) this.flusher.schedule();
  }

  /**
   * Flow of `base` per venue and in total over the 5-min buckets overlapping `[fromMs, toMs)` (epoch ms;
   * ±Infinity allowed), so the range is widened to whole 5-min slots at the start. Only retained buckets
   * count. An untracked base gives zeros, no venues and `trackedSince: null`.
   */
  cvd(base: string, fromMs: number, toMs: number): CvdSummary {
    const sym = this.syms.get(base);
    const [lo, hi] = this.window();
    const first = Number.isFinite(fromMs) ? Math.max(alignBucket(fromMs, CVD_BUCKET_MS), lo) : lo;
    const last = Number.isFinite(toMs) ? Math.min(alignBucket(toMs - 1, CVD_BUCKET_MS), hi) : hi;
    const total = emptyFlow();
    const venues: Partial<Record<StreamVenue, CvdFlow>> = {};
    if (!sym) return { base, fromMs: first, toMs, trackedSince: null, venues, total, unfilled: false };
    const trackedSince = Math.max(sym.trackedSince, lo);
    let unfilled = false;
    // Fixed order (venues as listed, slots ascending) so float sums are reproducible, e.g. after a restart.
    for (const venue of STREAM_VENUES) {
      const m = sym.venues.get(venue);
      if (!m) continue;
      let flow: CvdFlow | null = null;
      for (let slot = first; slot <= last; slot += CVD_BUCKET_MS) {
        const b = m.get(slot);
        if (!b) continue;
        flow ??= emptyFlow();
        addFlow(flow, b);
        if (b.gap === "unfilled") unfilled = true;
      }
      if (flow) {
        venues[venue] = flow;
        addFlow(total, flow);
      }
    }
    return { base, fromMs: Math.max(first, trackedSince), toMs, trackedSince, venues, total, unfilled };
  }

  /** CVD since tracking started (within the 7-day retention): {@link cvd} over everything retained. */
  cumulative(base: string): CvdSummary {
    return this.cvd(base, -Infinity, Infinity);
  }

  /**
   * History of `base` in buckets of `bucketMs` (a multiple of 5 min: 5 min, 15 min, 1 h) whose starts are
   * aligned to `bucketMs` (UTC) from the bucket holding `fromMs` while start < `toMs`, oldest first.
   * Buckets wholly before the tracked range or starting after now are left out (history accumulates
   * from the first request). Each point sums its 5-min slots; `missing` is true when a slot is in an
   * unfilled gap, or when a completed slot inside the tracked range has no bucket on any venue (the
   * service was down, or no heartbeat/trade). The in-progress slot is never missing for lack of data.
   * `opts.perVenue` adds the per-venue split. Throws `RangeError` for another bucket size.
   */
  history(base: string, fromMs: number, toMs: number, bucketMs: number, opts: { perVenue?: boolean } = {}): CvdHistoryPoint[] {
    if (!Number.isInteger(bucketMs) || bucketMs <= 0 || bucketMs % CVD_BUCKET_MS !== 0) {
      throw new RangeError(`history bucket must be a multiple of ${CVD_BUCKET_MS} ms, got ${bucketMs}`);
    }
    const sym = this.syms.get(base);
    if (!sym || !Number.isFinite(fromMs)) return [];
    const [lo] = this.window();
    const nowSlot = alignBucket(this.now(), CVD_BUCKET_MS);
    const trackStart = Math.max(sym.trackedSince, lo);
    const out: CvdHistoryPoint[] = [];
    for (let s = alignBucket(Math.max(fromMs, trackStart), bucketMs); s < toMs && s <= nowSlot; s += bucketMs) {
      const flow = emptyFlow();
      const venues: Partial<Record<StreamVenue, CvdFlow>> = {};
      let missing = false;
      for (let slot = s; slot < s + bucketMs; slot += CVD_BUCKET_MS) {
        let present = false;
        for (const venue of STREAM_VENUES) {
          const b = sym.venues.get(venue)?.get(slot);
          if (!b) continue;
          present = true;
          if (b.gap === "unfilled") missing = true;
          addFlow(flow, b);
          if (opts.perVenue) addFlow((venues[venue] ??= emptyFlow()), b);
        }
        if (!present && slot >= trackStart && slot < nowSlot) missing = true;
      }
      const point: CvdHistoryPoint = { start: s, cvdDelta: flow.buyUsd - flow.sellUsd, ...flow, missing };
      if (opts.perVenue) point.venues = venues;
      out.push(point);
    }
    return out;
  }

  /** Tracked bases, sorted. */
  symbols(): string[] {
    return [...this.syms.keys()].sort();
  }

  /** Newest trade time counted for (venue, base), epoch ms, or null: where a backfill can resume. */
  lastTradeTime(venue: StreamVenue, base: string): number | null {
    return this.seen.get(`${venue}|${base}`)?.newest ?? null;
  }

  /** Forgets `base` in memory and in the database at once (buckets, tracking, ids). Returns whether it was tracked. */
  drop(base: string): boolean {
    const had = this.syms.delete(base);
    for (const b of this.dirty) if (b.base === base) this.dirty.delete(b);
    this.dirtySymbols.delete(base);
    this.pendingSeen = this.pendingSeen.filter((p) => p.base !== base);
    for (const [key, s] of this.seen) {
      if (s.base !== base) continue;
      this.seen.delete(key);
      this.touchedSeen.delete(s);
    }
    this.db.transaction(() => {
      this.st.dropBuckets.run(base);
      this.st.dropSymbol.run(base);
      this.st.dropSeen.run(base);
    })();
    if (had) this.notify((o) => o.dropped?.(base));
    return had;
  }

  /**
   * Registers an observer of this store's writes: after each flush has committed, `flushed` gets the
   * symbols (tracked ranges), buckets (absolute values) and newest trades that flush wrote; `dropped` is
   * called when a symbol is dropped. Writes by {@link applyReplicated} are not reported. Returns the function
   * that removes the observer.
   */
  observe(observer: CvdObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /**
   * Writes replicated state as is, in memory and in SQLite at once: symbols with their tracked range (set,
   * not merged), buckets as absolute values (replacing what is held; outside retention ignored), and newest
   * trades (advancing {@link lastTradeTime} and remembering those ids, so a backfill from there skips them).
   * No de-duplication and no observer call: the rows come from the replica that counted them. Invalid rows
   * are skipped. Returns the number of buckets written. Ignored after `close()`.
   */
  applyReplicated(changes: Partial<CvdChanges>): number {
    if (this.closed) return 0;
    this.maybePurge();
    const [lo, hi] = this.window();
    const syms = new Map<string, number>();
    const rows: StoredBucket[] = [];
    for (const r of changes.symbols ?? []) {
      if (typeof r?.base !== "string" || r.base.length === 0 || !Number.isFinite(r.trackedSince)) continue;
      const sym = this.syms.get(r.base);
      if (sym) sym.trackedSince = r.trackedSince;
      else this.syms.set(r.base, { trackedSince: r.trackedSince, venues: new Map() });
      syms.set(r.base, r.trackedSince);
    }
    for (const r of changes.buckets ?? []) {
      if (!validRow(r) || r.start < lo || r.start > hi) continue;
      let sym = this.syms.get(r.base);
      if (!sym) {
        this.syms.set(r.base, (sym = { trackedSince: r.start, venues: new Map() }));
        syms.set(r.base, r.start);
      }
      let m = sym.venues.get(r.venue);
      if (!m) sym.venues.set(r.venue, (m = new Map()));
      let b = m.get(r.start);
      if (!b) m.set(r.start, (b = { base: r.base, venue: r.venue, start: r.start, buyBase: 0, sellBase: 0, buyUsd: 0, sellUsd: 0, trades: 0, gap: "none" }));
      // In place: a bucket object may sit in the dirty set, which must then write these values.
      b.buyBase = r.buyBase;
      b.sellBase = r.sellBase;
      b.buyUsd = r.buyUsd;
      b.sellUsd = r.sellUsd;
      b.trades = r.trades;
      b.gap = r.gap;
      rows.push(b);
    }
    for (const t of changes.lastTrades ?? []) {
      if (!VENUE_SET.has(t?.venue) || typeof t.base !== "string" || t.base.length === 0 || !Number.isFinite(t.time) || t.time < lo) continue;
      const s = this.seenFor(t.venue, t.base);
      if (t.time > s.newest) s.newest = t.time;
      for (const id of Array.isArray(t.ids) ? t.ids : []) {
        if (typeof id !== "string" || s.ids.has(id)) continue;
        s.ids.set(id, t.time);
        s.order.push(id);
      }
      this.evictSeen(s);
    }
    if (syms.size === 0 && rows.length === 0) return 0;
    try {
      this.db.transaction(() => {
        for (const [base, since] of syms) this.st.upsertSymbol.run(base, since);
        for (const b of rows) this.st.upsertBucket.run(b.base, b.venue, b.start, b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap);
      })();
    } catch (err) {
      // Memory is up to date; leave the rows to the flusher, which retries.
      logger.error({ err }, "cvd store: writing replicated rows failed; retrying with the next flush");
      for (const base of syms.keys()) this.dirtySymbols.add(base);
      for (const b of rows) this.dirty.add(b);
      this.flusher.schedule();
    }
    return rows.length;
  }

  /** Everything held within retention, as {@link CvdChanges} (copies): for a full republication. */
  exportChanges(): CvdChanges {
    const [lo] = this.window();
    const out: CvdChanges = { symbols: [], buckets: [], lastTrades: [] };
    for (const [base, sym] of this.syms) {
      out.symbols.push({ base, trackedSince: sym.trackedSince });
      for (const m of sym.venues.values()) for (const b of m.values()) if (b.start >= lo) out.buckets.push({ ...b });
    }
    for (const s of this.seen.values()) if (Number.isFinite(s.newest)) out.lastTrades.push(this.lastTradeOf(s));
    return out;
  }

  private lastTradeOf(s: SeenSet): CvdLastTrade {
    const ids = new Set<string>();
    // Trades arrive about in time order: the ones at the newest time are at the end of the queue.
    for (let i = s.order.length - 1, n = 0; i >= s.head && n < 256; i--, n++) {
      const id = s.order[i]!;
      if (s.ids.get(id) === s.newest) ids.add(id);
    }
    return { venue: s.venue, base: s.base, time: s.newest, ids: [...ids] };
  }

  private notify(fn: (o: CvdObserver) => void): void {
    for (const o of this.observers) {
      try {
        fn(o);
      } catch (err) {
        logger.error({ err }, "cvd store observer threw");
      }
    }
  }

  /**
   * Drops buckets older than the retention window from memory (and from SQLite on the next flush), and id
   * sets whose newest trade left it. Runs on the timer, on writes crossing a slot boundary, and on load.
   * Returns the number of buckets dropped.
   */
  purge(): number {
    const [lo] = this.window();
    this.purgedAt = lo;
    let dropped = 0;
    for (const sym of this.syms.values()) {
      for (const [venue, m] of sym.venues) {
        for (const [start, b] of m) {
          if (start >= lo) continue;
          m.delete(start);
          this.dirty.delete(b);
          dropped++;
        }
        if (m.size === 0) sym.venues.delete(venue);
      }
    }
    for (const [key, s] of this.seen) {
      if (s.newest >= lo) continue;
      this.seen.delete(key);
      this.touchedSeen.delete(s);
    }
    this.pendingPurgeBefore = lo;
    if (!this.closed) this.flusher.schedule();
    return dropped;
  }

  /** Counts and a rough memory estimate. */
  stats(): CvdStoreStats {
    let buckets = 0;
    for (const sym of this.syms.values()) for (const m of sym.venues.values()) buckets += m.size;
    let seenIds = 0;
    for (const s of this.seen.values()) seenIds += s.ids.size;
    return {
      symbols: this.syms.size,
      buckets,
      seenIds,
      dirty: this.dirty.size,
      approxBytes: buckets * 160 + seenIds * 100,
      maxBucketsPerSymbol: MAX_BUCKETS_PER_SYMBOL,
    };
  }

  /** Writes pending changes now (one transaction). Throws on SQLite errors; the changes stay pending. */
  flush(): void {
    this.flusher.flushNow();
  }

  /**
   * Stops the timers and flushes, saving the remembered trade ids. Later writes are ignored; reads keep
   * working on memory. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    this.flusher.stop();
    // Ids are saved here, not on every flush: writing one row per trade would cap ingestion far below the
    // venues' rates. Only a graceful restart needs them (a backfill may overlap the trades counted just
    // before it); after a crash no gap is backfilled across the restart, so nothing can be counted twice.
    for (const s of this.seen.values()) for (const [id, time] of s.ids) this.pendingSeen.push({ venue: s.venue, base: s.base, id, time });
    this.flusher.flushNow();
  }

  /** Retained slot range `[lo, hi]` (5-min starts, inclusive): the 2016 slots ending at the slot of now + skew. */
  private window(): [number, number] {
    const hi = alignBucket(this.now() + FUTURE_SKEW_MS, CVD_BUCKET_MS);
    return [hi - (CVD_SLOTS - 1) * CVD_BUCKET_MS, hi];
  }

  private maybePurge(): void {
    if (this.window()[0] > this.purgedAt) this.purge();
  }

  private symbol(base: string, slot: number): SymbolState {
    let sym = this.syms.get(base);
    if (!sym) {
      sym = { trackedSince: Math.min(slot, alignBucket(this.now(), CVD_BUCKET_MS)), venues: new Map() };
      this.syms.set(base, sym);
      this.dirtySymbols.add(base);
    } else if (slot < sym.trackedSince) {
      // A backfill reaching further back than tracking began extends the tracked range.
      sym.trackedSince = slot;
      this.dirtySymbols.add(base);
    }
    return sym;
  }

  private bucket(base: string, venue: StreamVenue, slot: number): StoredBucket {
    const sym = this.symbol(base, slot);
    let m = sym.venues.get(venue);
    if (!m) sym.venues.set(venue, (m = new Map()));
    let b = m.get(slot);
    if (!b) {
      b = { base, venue, start: slot, buyBase: 0, sellBase: 0, buyUsd: 0, sellUsd: 0, trades: 0, gap: "none" };
      m.set(slot, b);
    }
    return b;
  }

  private seenFor(venue: StreamVenue, base: string): SeenSet {
    const key = `${venue}|${base}`;
    let s = this.seen.get(key);
    if (!s) this.seen.set(key, (s = { venue, base, ids: new Map(), order: [], head: 0, newest: -Infinity }));
    return s;
  }

  /** Evicts from the oldest-inserted end: ids behind the window, and any excess over the cap. */
  private evictSeen(s: SeenSet): void {
    const horizon = s.newest - this.dedupeWindowMs;
    while (s.head < s.order.length) {
      const id = s.order[s.head]!;
      const time = s.ids.get(id);
      if (time !== undefined && s.ids.size <= this.dedupeMaxIds && time >= horizon) break;
      s.ids.delete(id);
      s.head++;
    }
    // Compact the queue once its evicted prefix dominates.
    if (s.head > 1024 && s.head * 2 > s.order.length) {
      s.order = s.order.slice(s.head);
      s.head = 0;
    }
  }

  private writePending(): void {
    if (this.dirty.size === 0 && this.dirtySymbols.size === 0 && this.pendingSeen.length === 0 && this.touchedSeen.size === 0 && this.pendingPurgeBefore === null) {
      return;
    }
    const changes = this.observers.size > 0 ? this.pendingChanges() : null;
    this.db.transaction(() => {
      for (const base of this.dirtySymbols) {
        const sym = this.syms.get(base);
        if (sym) this.st.upsertSymbol.run(base, sym.trackedSince);
      }
      for (const b of this.dirty) {
        this.st.upsertBucket.run(b.base, b.venue, b.start, b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap);
      }
      for (const p of this.pendingSeen) this.st.insertSeen.run(p.venue, p.base, p.id, p.time);
      for (const s of this.touchedSeen) this.st.deleteSeenBefore.run(s.venue, s.base, s.newest - this.dedupeWindowMs);
      if (this.pendingPurgeBefore !== null) {
        this.st.deleteBucketsBefore.run(this.pendingPurgeBefore);
        this.st.deleteAllSeenBefore.run(this.pendingPurgeBefore);
      }
    })();
    // Cleared only after the commit: a failed transaction leaves everything pending for the next try.
    this.dirty.clear();
    this.dirtySymbols.clear();
    this.pendingSeen = [];
    this.touchedSeen.clear();
    this.pendingPurgeBefore = null;
    if (changes && (changes.symbols.length > 0 || changes.buckets.length > 0 || changes.lastTrades.length > 0)) {
      this.notify((o) => o.flushed?.(changes));
    }
  }

  /** What the pending flush writes, as copies (see {@link observe}). */
  private pendingChanges(): CvdChanges {
    const symbols: CvdChanges["symbols"] = [];
    for (const base of this.dirtySymbols) {
      const sym = this.syms.get(base);
      if (sym) symbols.push({ base, trackedSince: sym.trackedSince });
    }
    const buckets: CvdBucketRow[] = [];
    for (const b of this.dirty) buckets.push({ ...b });
    const lastTrades: CvdLastTrade[] = [];
    for (const s of this.touchedSeen) if (Number.isFinite(s.newest)) lastTrades.push(this.lastTradeOf(s));
    return { symbols, buckets, lastTrades };
  }

  private load(): void {
    const [lo, hi] = this.window();
    const symbols = this.db.prepare(`SELECT base, tracked_since FROM cvd_symbol`).all() as Array<{ base: string; tracked_since: number }>;
    for (const r of symbols) this.syms.set(r.base, { trackedSince: r.tracked_since, venues: new Map() });
    const rows = this.db
      .prepare(`SELECT * FROM cvd_bucket WHERE start >= ? AND start <= ? ORDER BY base, venue, start`)
      .all(lo, hi) as BucketRow[];
    for (const r of rows) {
      if (!VENUE_SET.has(r.venue)) continue;
      const venue = r.venue as StreamVenue;
      let sym = this.syms.get(r.base);
      if (!sym) this.syms.set(r.base, (sym = { trackedSince: r.start, venues: new Map() }));
      let m = sym.venues.get(venue);
      if (!m) sym.venues.set(venue, (m = new Map()));
      m.set(r.start, {
        base: r.base,
        venue,
        start: r.start,
        buyBase: r.buy_base,
        sellBase: r.sell_base,
        buyUsd: r.buy_usd,
        sellUsd: r.sell_usd,
        trades: r.trades,
        gap: r.gap,
      });
    }
    const pairs = this.db.prepare(`SELECT venue, base, MAX(time) AS newest FROM cvd_seen GROUP BY venue, base`).all() as Array<{
      venue: string;
      base: string;
      newest: number;
    }>;
    const idsOf = this.db.prepare(`SELECT id, time FROM cvd_seen WHERE venue = ? AND base = ? AND time >= ? ORDER BY time DESC LIMIT ?`);
    for (const p of pairs) {
      if (!VENUE_SET.has(p.venue) || p.newest < lo) continue;
      const s = this.seenFor(p.venue as StreamVenue, p.base);
      s.newest = p.newest;
      const ids = idsOf.all(p.venue, p.base, p.newest - this.dedupeWindowMs, this.dedupeMaxIds) as Array<{ id: string; time: number }>;
      for (let i = ids.length - 1; i >= 0; i--) {
        s.ids.set(ids[i]!.id, ids[i]!.time);
        s.order.push(ids[i]!.id);
      }
      this.touchedSeen.add(s);
    }
    this.purge();
    this.flusher.flushNow();
  }
}
