import type { Logger } from "../../lib/log.js";
import type { RedisHandle } from "../../state/redis.js";
import { CVD_BUCKET_MS } from "../store/cvd-math.js";
import type { CvdBucketRow, CvdChanges, CvdLedgerRow } from "../store/cvd-store.js";
import { LIQUIDATION_MAX_AGE_MS, LIQUIDATION_MAX_EVENTS, type LiquidationRecord } from "../store/liquidation-store.js";
import { STREAM_VENUES } from "../types.js";
import {
  BUCKET_HASH_TTL_MS,
  CHANGES_MAXLEN,
  DAY_MS,
  bucketField,
  IDS_KEEP_MS,
  dayStart,
  encodeBucketValue,
  encodeChanges,
  encodeLedgerValue,
  idsExpireAt,
  ledgerField,
  type ReplicationKeys,
} from "./layout.js";

/** Options of {@link Publisher}. */
export interface PublisherOptions {
  redis: RedisHandle;
  keys: ReplicationKeys;
  replicaId: string;
  now: () => number;
  log: Logger;
  /** Delay before retrying a failed publication, ms (default 1000). */
  retryMs?: number;
  /** After each successful publication: the highest `seq` given to {@link Publisher.addCvd} it included. */
  onPublished?: (seq: number) => void;
  /** Checked before each publication (the leader's lease is valid); false keeps everything pending and retries later. */
  mayPublish?: () => boolean;
}

interface Pending {
  drops: Set<string>;
  symbols: Map<string, number>;
  buckets: Map<string, CvdBucketRow>;
  ledgers: Map<string, CvdLedgerRow>;
  liquidations: Map<string, LiquidationRecord>;
  /** Highest `seq` of the CVD changes pending (see {@link PublisherOptions.onPublished}). */
  seq: number | undefined;
}

const empty = (): Pending => ({ drops: new Set(), symbols: new Map(), buckets: new Map(), ledgers: new Map(), liquidations: new Map(), seq: undefined });
const size = (p: Pending): number => p.drops.size + p.symbols.size + p.buckets.size + p.ledgers.size + p.liquidations.size;
const bucketKey = (b: CvdBucketRow): string => `${b.base}|${b.venue}|${b.start}`;
const maxSeq = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/** `later` (newer absolute values) carrying the ids of both rows, `earlier`'s first: ids are deltas, not values. */
function mergeRows(earlier: CvdBucketRow, later: CvdBucketRow): CvdBucketRow {
  if (later.idsComplete || !earlier.ids?.length) return later;
  return { ...later, ids: [...earlier.ids, ...(later.ids ?? [])], idsComplete: earlier.idsComplete };
}

/**
 * The ingest leader's side of replication: collects what its stores wrote (CVD flushes as absolute bucket
 * values with the ids they counted, ledgers, stored liquidations with their ids, dropped symbols) and writes
 * it to Redis in one MULTI per publication: the bucket hashes and id lists, `cvd:symbols`, `cvd:ledger`,
 * `liq:events`, and entries of the change stream. Everything not yet published stays pending, newest value
 * per bucket (ids accumulated), so a failed publication (Redis unreachable) is retried later with whatever
 * changed since the last success; absolute values make a repeated or late row harmless. Publishes only
 * while enabled (while leading).
 */
export class Publisher {
  private pending: Pending = empty();
  private running: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private enabled = false;
  private readonly retryMs: number;
  /** Id of the last change entry this replica appended (null before the first). */
  lastEntryId: string | null = null;
  /** Time of the last successful publication, epoch ms (0 before the first). */
  lastOkAt = 0;

  constructor(private readonly opts: PublisherOptions) {
    this.retryMs = opts.retryMs ?? 1000;
  }

  /** Rows waiting for publication. */
  get pendingCount(): number {
    return size(this.pending);
  }

  /** Starts publishing (now, then on every change). */
  enable(): void {
    this.enabled = true;
    this.kick();
  }

  /** Stops publishing; what is pending stays pending. */
  disable(): void {
    this.enabled = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** Forgets everything pending (another replica published since: its values are newer). */
  clear(): void {
    this.pending = empty();
  }

  /** Liquidations not yet published (what a replica cut off from Redis hands over). */
  pendingLiquidations(): LiquidationRecord[] {
    return [...this.pending.liquidations.values()];
  }

  /**
   * Queues a store flush's changes. `seq` (optional) tags them: once a publication including them
   * succeeded, {@link PublisherOptions.onPublished} gets the highest tag it included.
   */
  addCvd(changes: CvdChanges, seq?: number): void {
    const p = this.pending;
    for (const s of changes.symbols) p.symbols.set(s.base, s.trackedSince);
    for (const b of changes.buckets) {
      const k = bucketKey(b);
      const prev = p.buckets.get(k);
      p.buckets.set(k, prev ? mergeRows(prev, b) : b);
    }
    for (const t of changes.ledgers) p.ledgers.set(`${t.venue}|${t.base}`, t);
    p.seq = maxSeq(p.seq, seq);
    this.kick();
  }

  addLiquidations(records: readonly LiquidationRecord[]): void {
    const m = this.pending.liquidations;
    for (const r of records) m.set(r.id, r);
    if (m.size > LIQUIDATION_MAX_EVENTS) {
      const keep = [...m.values()].sort((a, b) => b.time - a.time).slice(0, LIQUIDATION_MAX_EVENTS);
      this.pending.liquidations = new Map(keep.map((r) => [r.id, r]));
    }
    this.kick();
  }

  /** A dropped symbol: its pending rows go, and the publication deletes it from Redis before any later rows. */
  addDrop(base: string): void {
    const p = this.pending;
    p.drops.add(base);
    p.symbols.delete(base);
    for (const [k, b] of p.buckets) if (b.base === base) p.buckets.delete(k);
    for (const [k, t] of p.ledgers) if (t.base === base) p.ledgers.delete(k);
    this.kick();
  }

  /** Publishes soon when enabled (coalescing with one under way). */
  kick(): void {
    if (!this.enabled || this.running) return;
    if (this.retryTimer) return;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Waits for the publication under way, then publishes what is pending; resolves true when nothing is left. */
  async flush(): Promise<boolean> {
    await this.running;
    if (this.pendingCount === 0) return true;
    return this.publishOnce();
  }

  private async loop(): Promise<void> {
    while (this.enabled && this.pendingCount > 0) {
      if (!(await this.publishOnce())) {
        if (this.enabled && !this.retryTimer) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.kick();
          }, this.retryMs);
          this.retryTimer.unref();
        }
        return;
      }
    }
  }

  /** One MULTI with everything pending. On failure the rows go back under anything newer. */
  private async publishOnce(): Promise<boolean> {
    const snap = this.pending;
    if (size(snap) === 0) return true;
    if (this.opts.mayPublish && !this.opts.mayPublish()) return false;
    this.pending = empty();
    const { redis, keys, now: clock } = this.opts;
    const now = clock();
    try {
      const m = redis.client.multi();
      for (const base of snap.drops) {
        for (let d = dayStart(now - BUCKET_HASH_TTL_MS); d <= dayStart(now) + DAY_MS; d += DAY_MS) m.del(keys.day(base, d));
        m.hDel(keys.symbols, base);
        m.hDel(
          keys.ledger,
          STREAM_VENUES.map((venue) => ledgerField({ venue, base })),
        );
        const ids: string[] = [];
        for (let start = Math.floor((now - IDS_KEEP_MS) / CVD_BUCKET_MS) * CVD_BUCKET_MS - CVD_BUCKET_MS; start <= now + 60_000; start += CVD_BUCKET_MS) {
          for (const venue of STREAM_VENUES) ids.push(keys.ids({ base, venue, start }));
        }
        m.del(ids);
      }
      if (snap.symbols.size) m.hSet(keys.symbols, Object.fromEntries([...snap.symbols].map(([b, t]) => [b, String(t)])));
      const days = new Map<string, { day: number; fields: Record<string, string> }>();
      for (const b of snap.buckets.values()) {
        const day = dayStart(b.start);
        const key = keys.day(b.base, day);
        let e = days.get(key);
        if (!e) days.set(key, (e = { day, fields: {} }));
        e.fields[bucketField(b)] = encodeBucketValue(b);
      }
      for (const [key, e] of days) {
        m.hSet(key, e.fields);
        m.pExpireAt(key, e.day + BUCKET_HASH_TTL_MS);
      }
      for (const b of snap.buckets.values()) {
        if (b.ids === undefined || (b.ids.length === 0 && !b.idsComplete) || idsExpireAt(b.start) <= now) continue;
        const key = keys.ids(b);
        if (b.idsComplete) m.del(key);
        if (b.ids.length) m.append(key, `${b.ids.join("\n")}\n`);
        m.pExpireAt(key, idsExpireAt(b.start));
      }
      if (snap.ledgers.size) m.hSet(keys.ledger, Object.fromEntries([...snap.ledgers.values()].map((t) => [ledgerField(t), encodeLedgerValue(t)])));
      if (snap.liquidations.size) {
        m.zAdd(
          keys.liquidations,
          [...snap.liquidations.values()].map((r) => ({ score: r.time, value: JSON.stringify(r) })),
        );
        m.zRemRangeByScore(keys.liquidations, "-inf", `(${now - LIQUIDATION_MAX_AGE_MS}`);
        m.zRemRangeByRank(keys.liquidations, 0, -(LIQUIDATION_MAX_EVENTS + 1));
        m.pExpire(keys.liquidations, LIQUIDATION_MAX_AGE_MS + 3_600_000);
      }
      const entries = encodeChanges(
        this.opts.replicaId,
        [...snap.drops],
        { symbols: [...snap.symbols].map(([base, trackedSince]) => ({ base, trackedSince })), buckets: [...snap.buckets.values()], ledgers: [...snap.ledgers.values()] },
        [...snap.liquidations.values()],
      );
      for (const e of entries) m.xAdd(keys.changes, "*", { c: e }, { TRIM: { strategy: "MAXLEN", strategyModifier: "~", threshold: CHANGES_MAXLEN } });
      const replies = await m.exec();
      if (entries.length) this.lastEntryId = String(replies[replies.length - 1]);
      this.lastOkAt = now;
      if (snap.seq !== undefined) this.opts.onPublished?.(snap.seq);
      return true;
    } catch (err) {
      this.restore(snap);
      this.opts.log.warn({ err: (err as Error).message, pending: this.pendingCount }, "streams: publication to redis failed; retrying");
      return false;
    }
  }

  /** Puts a failed snapshot back; rows changed since win, and rows of symbols dropped since are discarded. */
  private restore(snap: Pending): void {
    const cur = this.pending;
    const later = new Set(cur.drops);
    for (const base of snap.drops) cur.drops.add(base);
    for (const [b, t] of snap.symbols) if (!cur.symbols.has(b) && !later.has(b)) cur.symbols.set(b, t);
    for (const [k, b] of snap.buckets) {
      if (later.has(b.base)) continue;
      const newer = cur.buckets.get(k);
      cur.buckets.set(k, newer ? mergeRows(b, newer) : b);
    }
    for (const [k, t] of snap.ledgers) if (!cur.ledgers.has(k) && !later.has(t.base)) cur.ledgers.set(k, t);
    for (const [id, r] of snap.liquidations) if (!cur.liquidations.has(id)) cur.liquidations.set(id, r);
    cur.seq = maxSeq(cur.seq, snap.seq);
  }
}
