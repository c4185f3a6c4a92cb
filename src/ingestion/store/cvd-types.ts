/**
 * The shapes of the CVD store (`cvd-store.ts`): flows, buckets, the answers of its reads, the rows it persists and
 * replicates, and its retention bounds.
 */
import { STREAM_VENUES, type StreamVenue } from "../types.js";
import { CVD_BUCKET_MS } from "./cvd-math.js";
import type { Interval } from "./intervals.js";
import type { IdOrders, SequenceLedgerState } from "./trade-ledger.js";

/** Retention of CVD history: 7 days, ms (docs/methods/cvd.md). */
export const CVD_RETENTION_MS = 7 * 24 * 3_600_000;
/** 5-minute slots kept per (venue, base): 7 × 288 = 2016. */
export const CVD_SLOTS = CVD_RETENTION_MS / CVD_BUCKET_MS;
/** Upper bound of buckets held per symbol: {@link CVD_SLOTS} × 4 venues = 8064. */
export const MAX_BUCKETS_PER_SYMBOL = CVD_SLOTS * STREAM_VENUES.length;

/** Whether a bucket overlaps a stream gap: none, every gap backfilled (`filled`), or some part not (`unfilled`). */
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

/** Flow of a base over a range (see `CvdStore.cvd`). */
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

/** One re-aggregated history bucket (see `CvdStore.history`). */
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

/** Options of `CvdStore`. */
export interface CvdStoreOptions {
  /** Clock, epoch ms (default `Date.now`); tests inject one. */
  now?: () => number;
  /** Longest delay of write-through to SQLite, ms (default 1000; 0 = write on every change). */
  flushMs?: number;
  /** Period of the retention timer, ms (default 60 000; 0 = no timer, purge only on writes and load). */
  purgeEveryMs?: number;
  /**
   * The trade ids of a bucket of an unordered venue stay in memory until this long after the bucket
   * ended, ms (default 15 min); later they are read back from SQLite when a trade of that bucket arrives.
   */
  openIdsMs?: number;
  /** Each venue's trade-id order, from the venue definitions (default: trade-ledger.ts's `VENUE_ID_ORDER`). */
  idOrders?: IdOrders;
}

/** Counters of `CvdStore.stats`. */
export interface CvdStoreStats {
  symbols: number;
  buckets: number;
  /** Trade ids in memory: those of open buckets of unordered venues, and those counted into holes. */
  idsInMemory: number;
  /** Holes of the sequence venues' ledgers (id ranges a stream skipped that no complete backfill closed). */
  holes: number;
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
  /** The parts of the bucket in a stream gap that no backfill filled, `[from, to)` epoch ms; empty unless `gap` is `unfilled`. */
  unfilled: Interval[];
  /** Ids of trades of an unordered venue (or with ids that are not sequence numbers) counted into the bucket. */
  idCount: number;
  /** Reported by a flush: the ids counted since the previous one. With `idsComplete`: all `idCount` ids. */
  ids?: string[];
  /** `ids` is the bucket's whole id set (a full load), replacing what a replica holds. */
  idsComplete?: boolean;
}

/**
 * What a (venue, base) counted: the time of its newest trade (where a backfill resumes) and, on venues
 * with sequence ids, its ledger (mark and holes, see `SequenceLedger`).
 */
export interface CvdLedgerRow {
  venue: StreamVenue;
  base: string;
  /** Newest trade time counted, epoch ms. */
  newest: number;
  sequence?: SequenceLedgerState;
}

/**
 * What a flush wrote (see `CvdStore.observe`), or a whole store (`CvdStore.exportChanges`): buckets as absolute
 * values, so applying them again or out of date order converges on the same state.
 */
export interface CvdChanges {
  /** Tracked symbols and the start of their tracked range (epoch ms). */
  symbols: Array<{ base: string; trackedSince: number }>;
  buckets: CvdBucketRow[];
  ledgers: CvdLedgerRow[];
}
