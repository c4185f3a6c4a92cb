import type { RedisHandle } from "../../state/redis.js";
import type { CvdBucketRow, CvdChanges, CvdLastTrade, GapState } from "../store/cvd-store.js";
import type { LiquidationRecord } from "../store/liquidation-store.js";
import { STREAM_VENUES, type FeedState, type StreamVenue } from "../types.js";

/*
 * Redis layout of the replicated streams (every key under the deployment prefix of RedisHandle.key):
 *
 *   cvd:<BASE>:<dayStartMs>  hash  `<venue>:<start>` → `[buyBase, sellBase, buyUsd, sellUsd, trades, gap]`
 *                                  (absolute values of a 5-min bucket; one hash per symbol and UTC day,
 *                                  PEXPIREAT day start + 8 days: retention is 7 days)
 *   cvd:symbols              hash  base → trackedSince (epoch ms)
 *   cvd:last                 hash  `<venue>:<base>` → `[time, [ids at that time]]`: newest trade counted,
 *                                  where a replica taking over resumes the backfill
 *   liq:events               zset  score time, member = JSON LiquidationRecord (with its id); 24 h, 1000 newest
 *   streams:changes          stream  field `c` = JSON {@link ChangeEntry}; MAXLEN ~ 10000. Every publication
 *                                  of the leader, so followers apply the same rows in order
 *   streams:states           string  JSON {@link PublishedStates} of the leader, PX a few seconds
 *   streams:wanted           hash  base → last request time (epoch ms) on any replica (on-demand symbols)
 *   streams:unknown:<BASE>   string  "1", PX 10 min: the leader could not subscribe BASE on any venue
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

/** The replication keys of one deployment. */
export class ReplicationKeys {
  readonly symbols: string;
  readonly last: string;
  readonly liquidations: string;
  readonly changes: string;
  readonly states: string;
  readonly wanted: string;

  constructor(private readonly redis: Pick<RedisHandle, "key">) {
    this.symbols = redis.key("cvd:symbols");
    this.last = redis.key("cvd:last");
    this.liquidations = redis.key("liq:events");
    this.changes = redis.key("streams:changes");
    this.states = redis.key("streams:states");
    this.wanted = redis.key("streams:wanted");
  }

  /** The bucket hash of `base` for the UTC day starting at `dayStart`. */
  day(base: string, dayStart: number): string {
    return this.redis.key(`cvd:${base}:${dayStart}`);
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
  return JSON.stringify([b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap]);
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
  if (i <= 0 || !VENUES.has(venue) || !Number.isInteger(start) || !Array.isArray(v) || v.length < 6) return undefined;
  const [buyBase, sellBase, buyUsd, sellUsd, trades, gap] = v as unknown[];
  if (!isNum(buyBase) || !isNum(sellBase) || !isNum(buyUsd) || !isNum(sellUsd) || !isNum(trades) || typeof gap !== "string" || !GAPS.has(gap)) return undefined;
  return { base, venue: venue as StreamVenue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap: gap as GapState };
}

/** Hash field of a newest-trade entry. */
export function lastField(t: Pick<CvdLastTrade, "venue" | "base">): string {
  return `${t.venue}:${t.base}`;
}

export function encodeLastValue(t: CvdLastTrade): string {
  return JSON.stringify([t.time, t.ids]);
}

export function decodeLast(field: string, value: string): CvdLastTrade | undefined {
  const i = field.indexOf(":");
  const venue = field.slice(0, i);
  const base = field.slice(i + 1);
  const v = parse(value);
  if (i <= 0 || !VENUES.has(venue) || base.length === 0 || !Array.isArray(v)) return undefined;
  const [time, ids] = v as unknown[];
  if (!isNum(time) || !Array.isArray(ids)) return undefined;
  return { venue: venue as StreamVenue, base, time, ids: ids.filter((x): x is string => typeof x === "string") };
}

export function decodeLiquidation(text: string): LiquidationRecord | undefined {
  const v = parse(text);
  if (!v || typeof v !== "object") return undefined;
  const r = v as LiquidationRecord;
  return typeof r.id === "string" && VENUES.has(r.venue) && isNum(r.time) ? r : undefined;
}

/**
 * One entry of the change stream: symbols dropped (`d`, applied first), tracked symbols (`s`), buckets
 * (`b`, absolute), newest trades (`t`) and liquidations (`l`), plus the publishing replica (`r`).
 */
export interface ChangeEntry {
  r?: string;
  d?: string[];
  s?: Array<[base: string, trackedSince: number]>;
  b?: Array<[base: string, venue: StreamVenue, start: number, buyBase: number, sellBase: number, buyUsd: number, sellUsd: number, trades: number, gap: GapState]>;
  t?: Array<[venue: StreamVenue, base: string, time: number, ids: string[]]>;
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
    (cur.b ??= []).push([b.base, b.venue, b.start, b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap]);
    if (++rows >= ROWS_PER_ENTRY) next();
  }
  for (const t of cvd.lastTrades) {
    (cur.t ??= []).push([t.venue, t.base, t.time, t.ids]);
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
  const out: DecodedChanges = { dropped: [], cvd: { symbols: [], buckets: [], lastTrades: [] }, liquidations: [] };
  if (!v || typeof v !== "object") return out;
  if (Array.isArray(v.d)) out.dropped = v.d.filter((b): b is string => typeof b === "string");
  for (const s of Array.isArray(v.s) ? v.s : []) {
    if (Array.isArray(s) && typeof s[0] === "string" && isNum(s[1])) out.cvd.symbols.push({ base: s[0], trackedSince: s[1] });
  }
  for (const b of Array.isArray(v.b) ? v.b : []) {
    if (!Array.isArray(b) || b.length < 9) continue;
    const [base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap] = b;
    out.cvd.buckets.push({ base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap });
  }
  for (const t of Array.isArray(v.t) ? v.t : []) {
    if (!Array.isArray(t) || t.length < 4) continue;
    const [venue, base, time, ids] = t;
    out.cvd.lastTrades.push({ venue, base, time, ids: Array.isArray(ids) ? ids : [] });
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
