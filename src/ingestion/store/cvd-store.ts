/*
 * Cumulative volume delta per (venue, base) in 5-minute buckets. Reads are served from memory (a Map per
 * symbol and venue, keyed by bucket start); every change is written through to SQLite in batches so a
 * restart resumes with identical history. Retention is a rolling 7 days of bucket slots, enforced on
 * every write that crosses a slot boundary, on a timer, and on load.
 *
 * Each trade is counted once whatever its age (docs/methods/cvd.md): venues with ordered ids by a mark and
 * holes per (venue, base) (trade-ledger.ts), the others by the ids of each bucket; both are written in the
 * same transaction as the buckets. A bucket is complete only when every gap marked in it was filled: it
 * keeps the unfilled parts as time intervals.
 *
 * This file holds the in-memory state and its rules; beside it: the shapes (cvd-types.ts), what is admitted
 * (cvd-admission.ts), flow arithmetic (cvd-flow.ts), the reads (cvd-read.ts), the SQLite tables
 * (cvd-persistence.ts) and the observers of its writes (cvd-change-feed.ts).
 */
import { logger } from "../../lib/log.js";
import { STREAM_VENUES, type StreamGap, type StreamVenue, type Trade } from "../types.js";
import { groupByTrack, oneGroup, sortBySeq, validRow } from "./cvd-admission.js";
import { bucketRowOf, CvdChangeFeed, ledgerRowOf, type CvdObserver } from "./cvd-change-feed.js";
import { countInto } from "./cvd-flow.js";
import { CVD_BUCKET_MS, alignBucket, cvdSlot } from "./cvd-math.js";
import { CvdPersistence, type CvdBucketValues } from "./cvd-persistence.js";
import { cvdSummary, historyPoints } from "./cvd-read.js";
import {
  CVD_SLOTS,
  MAX_BUCKETS_PER_SYMBOL,
  type CvdBucketRow,
  type CvdChanges,
  type CvdHistoryPoint,
  type CvdLedgerRow,
  type CvdStoreOptions,
  type CvdStoreStats,
  type CvdSummary,
} from "./cvd-types.js";
import type { Database } from "./db.js";
import { Flusher } from "./flusher.js";
import { addInterval, clipIntervals, intervalsOrNone, NO_INTERVALS, parseIntervals, subtractInterval } from "./intervals.js";
import { type IdOrders, SequenceLedger, type TradeSource, sequenceOf, VENUE_ID_ORDER } from "./trade-ledger.js";

export { CVD_RETENTION_MS, CVD_SLOTS, MAX_BUCKETS_PER_SYMBOL } from "./cvd-types.js";
export type { CvdBucket, CvdBucketRow, CvdChanges, CvdFlow, CvdHistoryPoint, CvdLedgerRow, CvdStoreOptions, CvdStoreStats, CvdSummary, GapState } from "./cvd-types.js";
export type { CvdObserver } from "./cvd-change-feed.js";
export type { TradeSource } from "./trade-ledger.js";

/** Venue clocks may run ahead of ours; trades up to this far in the future are accepted, ms. */
const FUTURE_SKEW_MS = 60_000;

const VENUE_SET: ReadonlySet<string> = new Set(STREAM_VENUES);

interface StoredBucket extends CvdBucketRow {
  /** Ids counted here (see {@link CvdBucketRow.idCount}); null while not in memory (or none yet). */
  idSet: Set<string> | null;
  /** Ids counted since the last flush, which writes and reports them; null when none. */
  newIds: string[] | null;
  /** Whether the bucket is in the store's `dirty` set (kept equal by `queueBucket` / `unqueueBucket`). */
  queued: boolean;
}

/** A stored bucket of loaded values, its ids not in memory (fields in the order of every bucket: one object shape). */
function storedBucket(r: CvdBucketValues): StoredBucket {
  const { base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled, idCount } = r;
  return { base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled, idCount, idSet: null, newIds: null, queued: false };
}

interface SymbolState {
  /** Earliest slot start ever tracked (5-min aligned), epoch ms. */
  trackedSince: number;
  venues: Map<StreamVenue, Map<number, StoredBucket>>;
}

/** Per (venue, base): newest trade counted, and the ledger of a sequence venue (created on its first sequence id). */
interface Track {
  venue: StreamVenue;
  base: string;
  newest: number;
  seq: SequenceLedger | null;
  /** Whether the track is in the store's `dirtyTracks` set (kept equal by `queueTrack` / `unqueueTrack`). */
  queued: boolean;
  /** Last live trade of the current continuous live stream, and its time (with `seq.live`). */
  liveLast: number | null;
  liveLastTime: number;
  /**
   * The bucket the last trade was counted into and its symbol: live trades of a (venue, base) arrive in the
   * same slot, so this spares three map lookups per trade. Null until then and after a purge.
   */
  bucket: StoredBucket | null;
  sym: SymbolState | null;
}

/**
 * CVD buckets of all tracked symbols, served from memory and persisted to the stream database.
 *
 * Construction loads what the database holds within retention (and deletes older rows). Writes
 * (`add`, `markGap`, `settleGap`, `heartbeat`, `track`) change memory at once and reach SQLite within
 * `flushMs` in one transaction, with the trade ledgers, and on `close()`; a crash loses at most that last
 * interval (buckets and ledgers together, so what it lost can be counted again).
 * Reads never touch SQLite.
 *
 * Bounds: per (venue, base) at most {@link CVD_SLOTS} buckets (the 2016 slots ending at the slot of
 * now + 1 min skew: trades older than that window or further in the future are ignored), hence at most
 * {@link MAX_BUCKETS_PER_SYMBOL} per symbol. Trade ids in memory: those of the buckets of unordered venues
 * that ended less than `openIdsMs` ago, and those counted into holes (see {@link SequenceLedger}).
 *
 * `close()` stops timers and flushes; it does not close the database, which the stores share.
 */
export class CvdStore {
  private readonly now: () => number;
  private readonly openIdsMs: number;
  private readonly idOrders: IdOrders;
  private readonly syms = new Map<string, SymbolState>();
  /** Per venue, per base: nested rather than keyed by `venue|base` so that a lookup builds no string. */
  private readonly tracks: Readonly<Record<StreamVenue, Map<string, Track>>> = Object.fromEntries(STREAM_VENUES.map((v) => [v, new Map()])) as Record<
    StreamVenue,
    Map<string, Track>
  >;
  /** The sequence number of a one-trade group of {@link add}, as the array {@link addSequenced} takes. */
  private readonly oneSeq: number[] = [0];
  private readonly dirty = new Set<StoredBucket>();
  private readonly dirtySymbols = new Set<string>();
  private readonly dirtyTracks = new Set<Track>();
  /** Buckets whose id set is in memory. */
  private readonly idsLoaded = new Set<StoredBucket>();
  private pendingPurgeBefore: number | null = null;
  /** Retention lower bound at the last purge; a write past a slot boundary triggers the next. */
  private purgedAt = -Infinity;
  private readonly flusher: Flusher;
  private readonly purgeTimer: NodeJS.Timeout | null;
  private closed = false;
  private readonly feed = new CvdChangeFeed();
  private readonly persistence: CvdPersistence;

  constructor(db: Database, opts: CvdStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.openIdsMs = opts.openIdsMs ?? 15 * 60_000;
    this.idOrders = opts.idOrders ?? VENUE_ID_ORDER;
    this.persistence = new CvdPersistence(db);
    this.flusher = new Flusher("cvd", opts.flushMs ?? 1000, () => this.writePending());
    this.load();
    const every = opts.purgeEveryMs ?? 60_000;
    this.purgeTimer = every > 0 ? setInterval(() => this.purge(), every) : null;
    this.purgeTimer?.unref();
  }

  /**
   * Counts taker trades into their 5-min buckets, each trade once whatever its age, its source or how often
   * it is sent (docs/methods/cvd.md): on venues with sequence ids (Binance, OKX) by the (venue, base)
   * ledger of marks and holes, whose semantics depend on `source` (see {@link TradeSource}; default `live`:
   * the venue stream, continuous until {@link streamBreak}); otherwise by the ids of the trade's bucket. A
   * trade of an unordered venue whose bucket's ids are not all known (history loaded from another replica
   * after its ids expired) is not counted. Invalid trades (unknown venue, non-positive size/price,
   * non-finite time, empty id) and trades outside the retained slots are ignored. The first trade of a
   * base starts tracking it. Returns the number counted.
   */
  add(trades: readonly Trade[], source: TradeSource = "live"): number {
    if (this.closed || trades.length === 0) return 0;
    const hi = cvdSlot(this.now() + FUTURE_SKEW_MS);
    const lo = hi - (CVD_SLOTS - 1) * CVD_BUCKET_MS;
    if (lo > this.purgedAt) this.purge();
    const counted: Trade[] | null = this.feed.wantsCounted ? [] : null;
    let n = 0;
    // A frame carries one symbol of one venue: such a batch is its own group, with no copy and no map.
    if (oneGroup(trades, lo, hi)) n = this.addGroup(trades, source, counted);
    else for (const group of groupByTrack(trades, lo, hi)) n += this.addGroup(group, source, counted);
    if (n > 0) {
      this.flusher.schedule();
      if (counted) this.feed.counted(counted);
    }
    return n;
  }

  /**
   * One (venue, base) of {@link add}, valid trades in the retained slots: sequence ids through the ledger,
   * the others through bucket id sets. Returns the number counted (also pushed to `counted`).
   */
  private addGroup(group: readonly Trade[], source: TradeSource, counted: Trade[] | null): number {
    const track = this.trackFor(group[0]!.venue, group[0]!.base);
    if (group.length === 1) {
      // One trade (every Binance aggTrade frame): no arrays. The scratch array is not kept past the call.
      const t = group[0]!;
      const seq = sequenceOf(t.venue, t.id, this.idOrders);
      if (seq === null) {
        const b = this.admitById(track, t);
        return b ? this.count(track, b, t, counted) : 0;
      }
      this.oneSeq[0] = seq;
      return this.addSequenced(track, this.oneSeq, group, source, counted);
    }
    let n = 0;
    // Parallel arrays rather than {trade, seq} pairs: no object per trade.
    let seqs: number[] | null = null;
    let seqTrades: Trade[] | null = null;
    let ordered = true;
    for (const t of group) {
      const seq = sequenceOf(t.venue, t.id, this.idOrders);
      if (seq === null) {
        const b = this.admitById(track, t);
        if (b) n += this.count(track, b, t, counted);
      } else if (seqs === null || seqTrades === null) {
        seqs = [seq];
        seqTrades = [t];
      } else {
        if (seq < seqs[seqs.length - 1]!) ordered = false;
        seqs.push(seq);
        seqTrades.push(t);
      }
    }
    if (seqs === null || seqTrades === null) return n;
    if (!ordered) [seqs, seqTrades] = sortBySeq(seqs, seqTrades);
    return n + this.addSequenced(track, seqs, seqTrades, source, counted);
  }

  /** The trades of a sequence venue in one group of {@link add}, ascending by `seqs` (their ids). */
  private addSequenced(track: Track, seqs: readonly number[], trades: readonly Trade[], source: TradeSource, counted: Trade[] | null): number {
    const ledger = (track.seq ??= new SequenceLedger());
    const live = source === "live";
    const following = live && ledger.live && track.liveLast !== null;
    let n = 0;
    let prevNew = false;
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      const t = trades[i]!;
      // No trade lies between neighbours of a complete run, nor of live frames continuing the stream. After
      // a break a live frame links only from its first new trade on: replays before it prove nothing.
      const linked = source === "run" ? i > 0 : live && (following || (i > 0 && prevNew));
      const above = ledger.mark === null || seq > ledger.mark;
      const admitted = ledger.admit(seq, t.time, linked);
      if (admitted) n += this.count(track, this.bucketOf(track, t.time), t, counted);
      prevNew = admitted && above;
    }
    const last = seqs[seqs.length - 1]!;
    let settled = false;
    if (live) {
      // No hole (the usual case): nothing to settle, and no call per live frame.
      if (following && ledger.holes.length > 0) settled = ledger.settleRun(track.liveLast!, track.liveLastTime, last);
      ledger.live = true;
      if (track.liveLast === null || last > track.liveLast) {
        track.liveLast = last;
        track.liveLastTime = trades[trades.length - 1]!.time;
      }
    } else if (source === "run") {
      settled = ledger.settleRun(seqs[0]!, trades[0]!.time, last);
    }
    if (settled) this.queueTrack(track);
    return n;
  }

  /**
   * Whether `t` (not sequence-numbered) is new to its bucket's id set, recording it: its bucket when new,
   * null when known or when the set is incomplete.
   */
  private admitById(track: Track, t: Trade): StoredBucket | null {
    const b = this.bucketOf(track, t.time);
    const ids = this.idsOf(b);
    if (ids === null) return null;
    // One hash lookup rather than has() then add(): the set only grows when the id is new.
    const size = ids.size;
    if (ids.add(t.id).size === size) return null;
    (b.newIds ??= []).push(t.id);
    b.idCount = ids.size;
    return b;
  }

  /** Counts `t` into `b`, its bucket ({@link bucketOf}); returns 1 (the count of {@link add}). */
  private count(track: Track, b: StoredBucket, t: Trade, counted: Trade[] | null): number {
    countInto(b, t);
    this.queueBucket(b);
    if (t.time > track.newest) track.newest = t.time;
    this.queueTrack(track);
    counted?.push(t);
    return 1;
  }

  /*
   * The pending-write sets. Every trade marks its bucket and track; a flag on each mirrors membership so
   * that the per-trade path costs a field read rather than a hash lookup when they are queued already.
   * Every change of the sets goes through these four (and the clear of writePending).
   */

  /** Queues bucket `b` for the next flush. */
  private queueBucket(b: StoredBucket): void {
    if (b.queued) return;
    b.queued = true;
    this.dirty.add(b);
  }

  /** Unqueues bucket `b` (it is dropped). */
  private unqueueBucket(b: StoredBucket): void {
    b.queued = false;
    this.dirty.delete(b);
  }

  /** Queues track `t` (newest trade, ledger) for the next flush. */
  private queueTrack(t: Track): void {
    if (t.queued) return;
    t.queued = true;
    this.dirtyTracks.add(t);
  }

  /** Unqueues track `t` (it is dropped). */
  private unqueueTrack(t: Track): void {
    t.queued = false;
    this.dirtyTracks.delete(t);
  }

  /** The bucket of (track's venue and base, slot of `time`), created when absent; cached on the track. */
  private bucketOf(track: Track, time: number): StoredBucket {
    const slot = cvdSlot(time);
    const b = track.bucket;
    // `trackedSince` only moves back through symbol(), except when a replica sets it: then take the slow path.
    if (b !== null && b.start === slot && slot >= track.sym!.trackedSince) return b;
    const sym = this.symbol(track.base, slot);
    track.sym = sym;
    return (track.bucket = this.bucketIn(sym, track.base, track.venue, slot));
  }

  /**
   * The id set of `b`, read from SQLite when not in memory; null when it does not hold all `idCount` ids
   * (they were counted elsewhere and not all replicated here): nothing may then be counted into it by id.
   */
  private idsOf(b: StoredBucket): Set<string> | null {
    if (!b.idSet) {
      const set = new Set<string>();
      // No id counted anywhere yet: nothing to read.
      if (b.idCount > 0) this.persistence.readIds(b.base, b.venue, b.start, set);
      b.idSet = set;
      this.idsLoaded.add(b);
    }
    return b.idSet.size >= b.idCount ? b.idSet : null;
  }

  /**
   * Tells the store that the stream of `venue` was interrupted (a reconnect over `gap`, or a new set of
   * feeds starting: restart, takeover): the next live trade of each of its bases is not taken to follow
   * the last one counted, so a backfill can still count what lies between. Observers hear of it.
   */
  streamBreak(venue: StreamVenue, gap?: StreamGap): void {
    for (const t of VENUE_SET.has(venue) ? this.tracks[venue].values() : []) {
      if (t.seq) t.seq.live = false;
      t.liveLast = null;
    }
    this.feed.broke(venue, gap);
  }

  /**
   * Records a stream gap of `gap.venue` over `[gap.from, gap.to)` (epoch ms) for `gap.base` when given
   * (only if tracked), else for every tracked base that has buckets of that venue: `filled: false` adds the
   * interval to the unfilled parts of the buckets it overlaps (state `unfilled`); `filled: true` (it was
   * backfilled) removes it from them, and the bucket is `filled` once no unfilled part is left, so filling
   * one gap never hides another in the same bucket. Buckets are created when absent; slots before tracking
   * started, outside retention or after the current slot are not touched. Returns the number of buckets marked.
   */
  markGap(gap: StreamGap & { base?: string; filled: boolean }): number {
    return this.eachGapBucket(gap, true, (b, from, to) => {
      b.unfilled = gap.filled ? subtractInterval(b.unfilled, from, to) : addInterval(b.unfilled, from, to);
      b.gap = b.unfilled.length > 0 ? "unfilled" : "filled";
      return true;
    });
  }

  /**
   * Records that every trade of `gap.venue` in `[gap.from, gap.to)` is counted (another replica handed over
   * what it ingested there): removes the interval from the unfilled parts of existing buckets, which become
   * `filled` when none is left. Buckets without a gap are left as they are. Returns the number of buckets changed.
   */
  settleGap(gap: StreamGap & { base?: string }): number {
    return this.eachGapBucket(gap, false, (b, from, to) => {
      if (clipIntervals(b.unfilled, from, to).length === 0) return false;
      b.unfilled = subtractInterval(b.unfilled, from, to);
      b.gap = b.unfilled.length > 0 ? "unfilled" : "filled";
      return true;
    });
  }

  /** Calls `fn` with each bucket of the gap's venue and bases overlapping the gap (created when `create`), and the overlap. */
  private eachGapBucket(gap: StreamGap & { base?: string }, create: boolean, fn: (b: StoredBucket, from: number, to: number) => boolean): number {
    if (this.closed || !VENUE_SET.has(gap.venue) || !(gap.to > gap.from)) return 0;
    this.maybePurge();
    const [lo] = this.window();
    const nowSlot = alignBucket(this.now(), CVD_BUCKET_MS);
    const bases = gap.base !== undefined ? (this.syms.has(gap.base) ? [gap.base] : []) : [...this.syms].filter(([, s]) => (s.venues.get(gap.venue)?.size ?? 0) > 0).map(([b]) => b);
    let marked = 0;
    for (const base of bases) {
      const sym = this.syms.get(base)!;
      const first = Math.max(alignBucket(Math.max(gap.from, -8.64e15), CVD_BUCKET_MS), lo, sym.trackedSince);
      const last = Math.min(alignBucket(Math.min(gap.to, 8.64e15) - 1, CVD_BUCKET_MS), nowSlot);
      for (let slot = first; slot <= last; slot += CVD_BUCKET_MS) {
        const b = create ? this.bucket(base, gap.venue, slot) : sym.venues.get(gap.venue)?.get(slot);
        if (!b || !fn(b, Math.max(gap.from, slot), Math.min(gap.to, slot + CVD_BUCKET_MS))) continue;
        this.queueBucket(b);
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
      this.queueBucket(this.bucket(base, v, slot));
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
    return cvdSummary(base, sym, fromMs, toMs, lo, hi);
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
    return historyPoints(sym, fromMs, toMs, bucketMs, lo, alignBucket(this.now(), CVD_BUCKET_MS), opts.perVenue === true);
  }

  /** Tracked bases, sorted. */
  symbols(): string[] {
    return [...this.syms.keys()].sort();
  }

  /** Newest trade time counted for (venue, base), epoch ms, or null: where a backfill can resume. */
  lastTradeTime(venue: StreamVenue, base: string): number | null {
    const n = VENUE_SET.has(venue) ? this.tracks[venue].get(base)?.newest : undefined;
    return n !== undefined && Number.isFinite(n) ? n : null;
  }

  /** Forgets `base` in memory and in the database at once (buckets, tracking, ids, ledgers). Returns whether it was tracked. */
  drop(base: string): boolean {
    const sym = this.syms.get(base);
    this.syms.delete(base);
    for (const m of sym?.venues.values() ?? []) {
      for (const b of m.values()) {
        this.unqueueBucket(b);
        this.idsLoaded.delete(b);
      }
    }
    this.dirtySymbols.delete(base);
    for (const m of Object.values(this.tracks)) {
      const t = m.get(base);
      if (!t) continue;
      m.delete(base);
      this.unqueueTrack(t);
    }
    this.persistence.drop(base);
    if (sym) this.feed.dropped(base);
    return sym !== undefined;
  }

  /**
   * Registers an observer of this store's writes: after each flush has committed, `flushed` gets the
   * symbols (tracked ranges), buckets (absolute values, with the ids counted since the previous flush) and
   * ledgers that flush wrote; `dropped` is called when a symbol is dropped, `counted` with the trades each
   * {@link add} counted, `broke` on each {@link streamBreak}. Writes by {@link applyReplicated} are not
   * reported. Returns the function that removes the observer.
   */
  observe(observer: CvdObserver): () => void {
    return this.feed.observe(observer);
  }

  /**
   * Writes replicated state as is, in memory and in SQLite at once: symbols with their tracked range (set,
   * not merged), buckets as absolute values (replacing what is held, unfilled parts included; outside
   * retention ignored) with their ids (appended, or replacing the set when `idsComplete`), and ledgers
   * (replacing newest trade and mark and holes, so a backfill or a takeover from there counts nothing
   * twice). No de-duplication and no observer call: the rows come from the replica that counted them.
   * Invalid rows are skipped. Returns the number of buckets written. Ignored after `close()`.
   */
  applyReplicated(changes: Partial<CvdChanges>): number {
    if (this.closed) return 0;
    this.maybePurge();
    const [lo, hi] = this.window();
    const syms = new Map<string, number>();
    const rows: Array<{ b: StoredBucket; ids: string[] | undefined; replace: boolean }> = [];
    const tracks: Track[] = [];
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
      const b = this.bucketIn(sym, r.base, r.venue, r.start);
      // In place: a bucket object may sit in the dirty set, which must then write these values.
      b.buyBase = r.buyBase;
      b.sellBase = r.sellBase;
      b.buyUsd = r.buyUsd;
      b.sellUsd = r.sellUsd;
      b.trades = r.trades;
      b.gap = r.gap;
      b.unfilled = intervalsOrNone(parseIntervals(r.unfilled)!);
      b.idCount = r.idCount;
      if (r.idsComplete) {
        b.idSet = new Set(r.ids ?? []);
        this.idsLoaded.add(b);
      } else if (b.idSet) for (const id of r.ids ?? []) b.idSet.add(id);
      rows.push({ b, ids: r.ids, replace: r.idsComplete === true });
    }
    for (const r of changes.ledgers ?? []) {
      if (!VENUE_SET.has(r?.venue) || typeof r.base !== "string" || r.base.length === 0 || !Number.isFinite(r.newest) || r.newest < lo) continue;
      const seq = r.sequence === undefined ? null : SequenceLedger.from(r.sequence);
      if (seq === undefined) continue;
      const t = this.trackFor(r.venue, r.base);
      t.newest = r.newest;
      t.seq = seq;
      t.liveLast = null;
      tracks.push(t);
    }
    if (syms.size === 0 && rows.length === 0 && tracks.length === 0) return 0;
    try {
      this.persistence.writeReplicated({ symbols: syms, buckets: rows, tracks });
    } catch (err) {
      // Memory is up to date; leave the rows to the flusher, which retries. Ids not written are re-read
      // (and found incomplete) rather than trusted.
      logger.error({ err }, "cvd store: writing replicated rows failed; retrying with the next flush");
      for (const base of syms.keys()) this.dirtySymbols.add(base);
      for (const { b, ids } of rows) {
        this.queueBucket(b);
        if (ids?.length) (b.newIds ??= []).push(...ids);
      }
      for (const t of tracks) this.queueTrack(t);
      this.flusher.schedule();
    }
    return rows.length;
  }

  /**
   * Everything held within retention, as {@link CvdChanges} (copies): for a full republication. With
   * `idsSince` (epoch ms), buckets ending after it carry their whole id set (`idsComplete`).
   */
  exportChanges(opts: { idsSince?: number } = {}): CvdChanges {
    const [lo] = this.window();
    const out: CvdChanges = { symbols: [], buckets: [], ledgers: [] };
    for (const [base, sym] of this.syms) {
      out.symbols.push({ base, trackedSince: sym.trackedSince });
      for (const m of sym.venues.values()) {
        for (const b of m.values()) {
          if (b.start < lo) continue;
          const row = bucketRowOf(b);
          if (opts.idsSince !== undefined && b.idCount > 0 && b.start + CVD_BUCKET_MS > opts.idsSince) {
            const ids = this.idsOf(b);
            if (ids) Object.assign(row, { ids: [...ids], idsComplete: true });
          }
          out.buckets.push(row);
        }
      }
    }
    for (const t of this.allTracks()) if (Number.isFinite(t.newest)) out.ledgers.push(ledgerRowOf(t));
    return out;
  }

  /**
   * Drops buckets older than the retention window from memory (and from SQLite on the next flush) with
   * their ids, ledger holes whose trades all left it, and ledgers whose newest trade left it. Runs on the
   * timer, on writes crossing a slot boundary, and on load. Returns the number of buckets dropped.
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
          this.unqueueBucket(b);
          this.idsLoaded.delete(b);
          dropped++;
        }
        if (m.size === 0) sym.venues.delete(venue);
      }
    }
    for (const m of Object.values(this.tracks)) {
      for (const [base, t] of m) {
        // Its bucket may have just been dropped: the next trade looks it up again.
        t.bucket = null;
        if (t.newest < lo) {
          m.delete(base);
          this.unqueueTrack(t);
        } else if (t.seq?.prune(lo)) this.queueTrack(t);
      }
    }
    this.pendingPurgeBefore = lo;
    if (!this.closed) this.flusher.schedule();
    return dropped;
  }

  /** Counts and a rough memory estimate. */
  stats(): CvdStoreStats {
    let buckets = 0;
    for (const sym of this.syms.values()) for (const m of sym.venues.values()) buckets += m.size;
    let ids = 0;
    let holes = 0;
    for (const b of this.idsLoaded) ids += b.idSet?.size ?? 0;
    for (const t of this.allTracks()) {
      ids += t.seq?.heldIds ?? 0;
      holes += t.seq?.holes.length ?? 0;
    }
    return {
      symbols: this.syms.size,
      buckets,
      idsInMemory: ids,
      holes,
      dirty: this.dirty.size,
      approxBytes: buckets * 160 + ids * 100,
      maxBucketsPerSymbol: MAX_BUCKETS_PER_SYMBOL,
    };
  }

  /** Writes pending changes now (one transaction). Throws on SQLite errors; the changes stay pending. */
  flush(): void {
    this.flusher.flushNow();
  }

  /** Stops the timers and flushes. Later writes are ignored; reads keep working on memory. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    this.flusher.stop();
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
    return this.bucketIn(this.symbol(base, slot), base, venue, slot);
  }

  private bucketIn(sym: SymbolState, base: string, venue: StreamVenue, slot: number): StoredBucket {
    let m = sym.venues.get(venue);
    if (!m) sym.venues.set(venue, (m = new Map()));
    let b = m.get(slot);
    if (!b) {
      // New here: no ids anywhere yet, so the (empty) set in memory is complete.
      b = {
        base,
        venue,
        start: slot,
        buyBase: 0,
        sellBase: 0,
        buyUsd: 0,
        sellUsd: 0,
        trades: 0,
        gap: "none",
        unfilled: NO_INTERVALS,
        idCount: 0,
        idSet: null,
        newIds: null,
        queued: false,
      };
      m.set(slot, b);
    }
    return b;
  }

  private trackFor(venue: StreamVenue, base: string): Track {
    const m = this.tracks[venue];
    let t = m.get(base);
    if (!t) m.set(base, (t = { venue, base, newest: -Infinity, seq: null, queued: false, liveLast: null, liveLastTime: -Infinity, bucket: null, sym: null }));
    return t;
  }

  private *allTracks(): Generator<Track> {
    for (const m of Object.values(this.tracks)) yield* m.values();
  }

  /** The tracked ranges of the symbols changed since the last flush (those still tracked). */
  private *dirtySymbolRows(): Generator<{ base: string; trackedSince: number }> {
    for (const base of this.dirtySymbols) {
      const sym = this.syms.get(base);
      if (sym) yield { base, trackedSince: sym.trackedSince };
    }
  }

  private writePending(): void {
    if (this.dirty.size === 0 && this.dirtySymbols.size === 0 && this.dirtyTracks.size === 0 && this.pendingPurgeBefore === null) return;
    const changes = this.feed.observed ? this.pendingChanges() : null;
    this.persistence.writeFlush({ symbols: this.dirtySymbolRows(), buckets: this.dirty, tracks: this.dirtyTracks, purgeBefore: this.pendingPurgeBefore });
    // Cleared only after the commit: a failed transaction leaves everything pending for the next try.
    for (const b of this.dirty) {
      b.newIds = null;
      b.queued = false;
    }
    this.dirty.clear();
    this.dirtySymbols.clear();
    for (const t of this.dirtyTracks) t.queued = false;
    this.dirtyTracks.clear();
    this.pendingPurgeBefore = null;
    this.evictIds();
    if (changes && (changes.symbols.length > 0 || changes.buckets.length > 0 || changes.ledgers.length > 0)) {
      this.feed.flushed(changes);
    }
  }

  /** Drops from memory the id sets of buckets that ended more than `openIdsMs` ago (they stay in SQLite). */
  private evictIds(): void {
    const before = this.now() - this.openIdsMs - CVD_BUCKET_MS;
    for (const b of this.idsLoaded) {
      if (b.start >= before || b.newIds) continue;
      b.idSet = null;
      this.idsLoaded.delete(b);
    }
  }

  /** What the pending flush writes, as copies (see {@link observe}). */
  private pendingChanges(): CvdChanges {
    const symbols = [...this.dirtySymbolRows()];
    const buckets: CvdBucketRow[] = [];
    for (const b of this.dirty) {
      const row = bucketRowOf(b);
      if (b.newIds?.length) row.ids = b.newIds.slice();
      buckets.push(row);
    }
    const ledgers: CvdLedgerRow[] = [];
    for (const t of this.dirtyTracks) if (Number.isFinite(t.newest)) ledgers.push(ledgerRowOf(t));
    return { symbols, buckets, ledgers };
  }

  /** Loads what the database holds within retention, then purges older rows (memory and SQLite). */
  private load(): void {
    const [lo, hi] = this.window();
    const loaded = this.persistence.load(lo, hi);
    for (const r of loaded.symbols) this.syms.set(r.base, { trackedSince: r.trackedSince, venues: new Map() });
    for (const r of loaded.buckets) {
      let sym = this.syms.get(r.base);
      if (!sym) this.syms.set(r.base, (sym = { trackedSince: r.start, venues: new Map() }));
      let m = sym.venues.get(r.venue);
      if (!m) sym.venues.set(r.venue, (m = new Map()));
      m.set(r.start, storedBucket(r));
    }
    for (const r of loaded.ledgers) {
      const t = this.trackFor(r.venue, r.base);
      t.newest = r.newest;
      if (r.seq) t.seq = r.seq;
    }
    this.purge();
    this.flusher.flushNow();
  }
}
