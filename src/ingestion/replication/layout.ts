import type { RedisHandle } from "../../state/redis.js";
import { CVD_BUCKET_MS } from "../store/cvd-math.js";
import type { CvdBucketRow, CvdChanges, CvdLedgerRow, GapState } from "../store/cvd-store.js";
import { type Interval, parseIntervals } from "../store/intervals.js";
import type { LiquidationRecord } from "../store/liquidation-store.js";
import type { SequenceLedgerState } from "../store/trade-ledger.js";
import { STREAM_VENUES, type FeedState, type StreamVenue, type Trade } from "../types.js";

/*
 * Redis layout of the replicated ingestion (every key under the deployment prefix of RedisHandle.key):
 *
 *   cvd:<BASE>:<dayStartMs>  hash  `<venue>:<start>` → `[buyBase, sellBase, buyUsd, sellUsd, trades, gap,
 *                                  unfilled, idCount]` (absolute values of a 5-min bucket; one hash per symbol
 *                                  and UTC day, PEXPIREAT day start + 8 days: retention is 7 days)
 *   cvd:ids:<BASE>:<venue>:<start>  string  the ids counted into that bucket by id (unordered venues), each
 *                                  followed by "\n", appended by every publication; PEXPIREAT bucket end + 2 h
 *   cvd:symbols              hash  base → trackedSince (epoch ms)
 *   cvd:ledger               hash  `<venue>:<base>` → `[newest, sequence ledger | null]`: newest trade counted
 *                                  (where a replica taking over resumes the backfill) and, on venues with
 *                                  sequence ids, the mark and holes (trade-ledger.ts)
 *   liq:events               zset  score time, member = JSON LiquidationRecord (with its id); 24 h, 1000 newest
 *   streams:changes          stream  field `c` = JSON {@link ChangeEntry}; MAXLEN ~ 10000. Every publication
 *                                  of the leader, so followers apply the same rows in order
 *   streams:states           string  JSON {@link PublishedStates} of the leader, PX a few seconds
 *   streams:wanted           hash  base → last request time (epoch ms) on any replica (on-demand symbols)
 *   streams:unknown:<BASE>   string  "1", PX 10 min: the leader could not subscribe BASE on any venue
 *   streams:handoff          stream  field `h` = JSON {@link HandoffEntry}: what a replica ingested while cut
 *                                  off from Redis, for the leader to merge by trade id; deleted once merged
 *   lease:streams            the ingest leader's lease (src/state/lease.ts)
 */

/** One UTC day, ms. */
export const DAY_MS = 86_400_000;
/** Bucket hashes expire this long after their day started (retention 7 days + the day itself). */
export const BUCKET_HASH_TTL_MS = 8 * DAY_MS;
/** Approximate length cap of the change stream. */
export const CHANGES_MAXLEN = 10_000;
/** Rows (buckets + trades + liquidations) per change entry; bigger publications are split. */
export const ROWS_PER_ENTRY = 500;
/**
 * Bucket ids stay in Redis this long after the bucket ended: what a replica loading from Redis gets. A
 * replica that followed the change stream holds them for the whole retention in its own SQLite.
 */
export const IDS_KEEP_MS = 2 * 3_600_000;
/** Trades per handoff entry; bigger handoffs are split. */
export const TRADES_PER_HANDOFF_ENTRY = 5000;

/** The replication keys of one deployment. */
export class ReplicationKeys {
  readonly symbols: string;
  readonly ledger: string;
  readonly liquidations: string;
  readonly changes: string;
  readonly states: string;
  readonly wanted: string;
  readonly handoff: string;

  constructor(private readonly redis: Pick<RedisHandle, "key">) {
    this.symbols = redis.key("cvd:symbols");
    this.ledger = redis.key("cvd:ledger");
    this.liquidations = redis.key("liq:events");
    this.changes = redis.key("streams:changes");
    this.states = redis.key("streams:states");
    this.wanted = redis.key("streams:wanted");
    this.handoff = redis.key("streams:handoff");
  }

  /** The bucket hash of `base` for the UTC day starting at `dayStart`. */
  day(base: string, dayStart: number): string {
    return this.redis.key(`cvd:${base}:${dayStart}`);
  }

  /** The id list of a bucket (see the layout above). */
  ids(b: Pick<CvdBucketRow, "base" | "venue" | "start">): string {
    return this.redis.key(`cvd:ids:${b.base}:${b.venue}:${b.start}`);
  }

  unknown(base: string): string {
    return this.redis.key(`streams:unknown:${base}`);
  }
}

/** Start of the UTC day holding `ms`. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Hash field of a bucket. */
export function bucketField(b: Pick<CvdBucketRow, "venue" | "start">): string {
  return `${b.venue}:${b.start}`;
}

/** Compact JSON of a bucket's values. */
export function encodeBucketValue(b: CvdBucketRow): string {
  return JSON.stringify([b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap, b.unfilled, b.idCount]);
}

/** When a bucket's id list expires in Redis, epoch ms. */
export function idsExpireAt(start: number): number {
  return start + CVD_BUCKET_MS + IDS_KEEP_MS;
}

/** The ids of a bucket's id list (newline-terminated ids, see the layout above). */
export function decodeIds(value: string | null): string[] {
  return value ? value.split("\n").filter((id) => id.length > 0) : [];
}

const VENUES: ReadonlySet<string> = new Set(STREAM_VENUES);
const GAPS: ReadonlySet<string> = new Set(["none", "filled", "unfilled"]);
const isNum = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A bucket from its hash field and value; undefined when malformed. */
export function decodeBucket(base: string, field: string, value: string): CvdBucketRow | undefined {
  const i = field.indexOf(":");
  const venue = field.slice(0, i);
  const start = Number(field.slice(i + 1));
  const v = parse(value);
  if (i <= 0 || !VENUES.has(venue) || !Number.isInteger(start) || !Array.isArray(v) || v.length < 8) return undefined;
  const [buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled, idCount] = v as unknown[];
  if (!isNum(buyBase) || !isNum(sellBase) || !isNum(buyUsd) || !isNum(sellUsd) || !isNum(trades) || typeof gap !== "string" || !GAPS.has(gap)) return undefined;
  const intervals = parseIntervals(unfilled);
  if (!intervals || !isNum(idCount)) return undefined;
  return { base, venue: venue as StreamVenue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap: gap as GapState, unfilled: intervals, idCount };
}

/** Hash field of a ledger. */
export function ledgerField(t: Pick<CvdLedgerRow, "venue" | "base">): string {
  return `${t.venue}:${t.base}`;
}

/** Compact JSON of a ledger: `[newest, sequence ledger | null]`. */
export function encodeLedgerValue(t: CvdLedgerRow): string {
  return JSON.stringify([t.newest, t.sequence ?? null]);
}

/** A ledger from its hash field and value; undefined when malformed (the store validates the sequence ledger). */
export function decodeLedger(field: string, value: string): CvdLedgerRow | undefined {
  const i = field.indexOf(":");
  const venue = field.slice(0, i);
  const base = field.slice(i + 1);
  const v = parse(value);
  if (i <= 0 || !VENUES.has(venue) || base.length === 0 || !Array.isArray(v)) return undefined;
  return ledgerRow(venue, base, v[0], v[1]);
}

/** A ledger row from its parts (the store validates the sequence ledger itself). */
function ledgerRow(venue: unknown, base: unknown, newest: unknown, sequence: unknown): CvdLedgerRow | undefined {
  if (typeof venue !== "string" || !VENUES.has(venue) || typeof base !== "string" || !isNum(newest)) return undefined;
  const row: CvdLedgerRow = { venue: venue as StreamVenue, base, newest };
  if (sequence !== null && sequence !== undefined) row.sequence = sequence as SequenceLedgerState;
  return row;
}

export function decodeLiquidation(text: string): LiquidationRecord | undefined {
  const v = parse(text);
  if (!v || typeof v !== "object") return undefined;
  const r = v as LiquidationRecord;
  return typeof r.id === "string" && VENUES.has(r.venue) && isNum(r.time) ? r : undefined;
}

/**
 * One entry of the change stream: symbols dropped (`d`, applied first), tracked symbols (`s`), buckets
 * (`b`, absolute, with the ids counted since the previous publication), ledgers (`t`) and liquidations
 * (`l`), plus the publishing replica (`r`).
 */
export interface ChangeEntry {
  r?: string;
  d?: string[];
  s?: Array<[base: string, trackedSince: number]>;
  b?: Array<
    [
      base: string,
      venue: StreamVenue,
      start: number,
      buyBase: number,
      sellBase: number,
      buyUsd: number,
      sellUsd: number,
      trades: number,
      gap: GapState,
      unfilled: Interval[],
      idCount: number,
      ids?: string[],
    ]
  >;
  t?: Array<[venue: StreamVenue, base: string, newest: number, sequence: SequenceLedgerState | null]>;
  l?: LiquidationRecord[];
}

/** What one change entry does to the stores. */
export interface DecodedChanges {
  dropped: string[];
  cvd: CvdChanges;
  liquidations: LiquidationRecord[];
}

/** Splits a publication into change entries of at most {@link ROWS_PER_ENTRY} rows each (drops and symbols in the first). */
export function encodeChanges(replica: string, dropped: string[], cvd: CvdChanges, liquidations: LiquidationRecord[]): string[] {
  const out: string[] = [];
  let cur: ChangeEntry = { r: replica };
  let rows = 0;
  const next = () => {
    out.push(JSON.stringify(cur));
    cur = { r: replica };
    rows = 0;
  };
  if (dropped.length) cur.d = dropped;
  if (cvd.symbols.length) cur.s = cvd.symbols.map((s) => [s.base, s.trackedSince]);
  for (const b of cvd.buckets) {
    const row: NonNullable<ChangeEntry["b"]>[number] = [b.base, b.venue, b.start, b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap, b.unfilled, b.idCount];
    if (b.ids?.length) row.push(b.ids);
    (cur.b ??= []).push(row);
    if (++rows >= ROWS_PER_ENTRY) next();
  }
  for (const t of cvd.ledgers) {
    (cur.t ??= []).push([t.venue, t.base, t.newest, t.sequence ?? null]);
    if (++rows >= ROWS_PER_ENTRY) next();
  }
  for (const l of liquidations) {
    (cur.l ??= []).push(l);
    if (++rows >= ROWS_PER_ENTRY) next();
  }
  if (cur.d || cur.s || cur.b || cur.t || cur.l) next();
  return out;
}

/** The rows of a change entry; malformed parts are left out. */
export function decodeChanges(text: string): DecodedChanges {
  const v = parse(text) as ChangeEntry | undefined;
  const out: DecodedChanges = { dropped: [], cvd: { symbols: [], buckets: [], ledgers: [] }, liquidations: [] };
  if (!v || typeof v !== "object") return out;
  if (Array.isArray(v.d)) out.dropped = v.d.filter((b): b is string => typeof b === "string");
  for (const s of Array.isArray(v.s) ? v.s : []) {
    if (Array.isArray(s) && typeof s[0] === "string" && isNum(s[1])) out.cvd.symbols.push({ base: s[0], trackedSince: s[1] });
  }
  // Rows are validated by the store that applies them.
  for (const b of Array.isArray(v.b) ? v.b : []) {
    if (!Array.isArray(b) || b.length < 11) continue;
    const [base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled, idCount, ids] = b;
    const row: CvdBucketRow = { base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled, idCount };
    if (ids !== undefined) row.ids = ids;
    out.cvd.buckets.push(row);
  }
  for (const t of Array.isArray(v.t) ? v.t : []) {
    const row = Array.isArray(t) ? ledgerRow(t[0], t[1], t[2], t[3]) : undefined;
    if (row) out.cvd.ledgers.push(row);
  }
  if (Array.isArray(v.l)) out.liquidations = v.l.filter((l) => l && typeof l === "object");
  return out;
}

/** What the leader publishes every second under `streams:states`. */
export interface PublishedStates {
  /** Replica id of the leader. */
  leader: string;
  /** Publication time, epoch ms. */
  at: number;
  feeds: FeedState[];
  /** On-demand symbols and when the leader subscribed them (epoch ms). */
  onDemand: Array<[base: string, subscribedAt: number]>;
}

export function decodeStates(text: string | null): PublishedStates | undefined {
  if (!text) return undefined;
  const v = parse(text) as PublishedStates | undefined;
  if (!v || typeof v !== "object" || typeof v.leader !== "string" || !isNum(v.at) || !Array.isArray(v.feeds) || !Array.isArray(v.onDemand)) return undefined;
  return v;
}

/**
 * One entry of `streams:handoff`: part `n` of handoff `k` by replica `r` — trades it counted while it
 * could not publish (`t`: `[venue, base, time, price, size, side, id]`, side 1 = buy), liquidations it
 * stored (`l`), and in the last part (`end`) the intervals per venue over which its feeds ingested every
 * trade of the listed bases (`c`), which the leader may then clear of unfilled gap marks.
 */
export interface HandoffEntry {
  r: string;
  k: string;
  n: number;
  end?: true;
  t?: Array<[venue: StreamVenue, base: string, time: number, price: number, size: number, side: 0 | 1, id: string]>;
  l?: LiquidationRecord[];
  c?: Array<[venue: StreamVenue, bases: string[], intervals: Interval[]]>;
}

/** What a replica hands over (see {@link HandoffEntry}). */
export interface Handoff {
  trades: Trade[];
  liquidations: LiquidationRecord[];
  coverage: Array<{ venue: StreamVenue; bases: string[]; intervals: Interval[] }>;
}

/** Splits a handoff into entries of at most {@link TRADES_PER_HANDOFF_ENTRY} trades; the last carries the coverage. */
export function encodeHandoff(replica: string, key: string, h: Handoff): string[] {
  const out: HandoffEntry[] = [];
  for (let i = 0; i < h.trades.length || out.length === 0; i += TRADES_PER_HANDOFF_ENTRY) {
    const part = h.trades.slice(i, i + TRADES_PER_HANDOFF_ENTRY);
    out.push({ r: replica, k: key, n: out.length, t: part.map((t) => [t.venue, t.base, t.time, t.price, t.size, t.side === "buy" ? 1 : 0, t.id]) });
  }
  out[0]!.l = h.liquidations;
  const last = out.at(-1)!;
  last.end = true;
  last.c = h.coverage.map((c) => [c.venue, c.bases, c.intervals]);
  return out.map((e) => JSON.stringify(e));
}

/** A handoff entry's contents; malformed parts are left out (the stores validate trades and liquidations). */
export function decodeHandoff(text: string): { key: string; end: boolean; handoff: Handoff } | undefined {
  const v = parse(text) as HandoffEntry | undefined;
  if (!v || typeof v !== "object" || typeof v.k !== "string") return undefined;
  const handoff: Handoff = { trades: [], liquidations: [], coverage: [] };
  for (const t of Array.isArray(v.t) ? v.t : []) {
    if (!Array.isArray(t) || t.length !== 7) continue;
    const [venue, base, time, price, size, side, id] = t;
    handoff.trades.push({ venue, base, time, price, size, side: side === 1 ? "buy" : "sell", id });
  }
  if (Array.isArray(v.l)) handoff.liquidations = v.l.filter((l) => l && typeof l === "object");
  for (const c of Array.isArray(v.c) ? v.c : []) {
    if (!Array.isArray(c) || typeof c[0] !== "string" || !VENUES.has(c[0]) || !Array.isArray(c[1])) continue;
    const intervals = parseIntervals(c[2]);
    if (intervals) handoff.coverage.push({ venue: c[0] as StreamVenue, bases: c[1].filter((b): b is string => typeof b === "string"), intervals });
  }
  return { key: v.k, end: v.end === true, handoff };
}
