import type { Logger } from "../../lib/log.js";
import type { Redis, RedisHandle } from "../../state/redis.js";
import type { CvdChanges, CvdStore } from "../store/cvd-store.js";
import { LIQUIDATION_MAX_AGE_MS, type LiquidationRecord, type LiquidationStore } from "../store/liquidation-store.js";
import { DAY_MS, type ReplicationKeys, dayStart, decodeBucket, decodeChanges, decodeIds, decodeLedger, decodeLiquidation, idsExpireAt } from "./layout.js";
import { sleep } from "./sleep.js";

/** Retention of CVD history, ms (the stores' 7 days). */
const RETENTION_MS = 7 * DAY_MS;

type XReadReply = Array<{ name: string; messages: Array<{ id: string; message: Record<string, string> }> }> | null;

/** Orders Redis stream ids (`<ms>-<seq>`). */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = a.split("-").map((x) => BigInt(x));
  const [bm = 0n, bs = 0n] = b.split("-").map((x) => BigInt(x));
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

/** Options of {@link Follower}. */
export interface FollowerOptions {
  redis: RedisHandle;
  keys: ReplicationKeys;
  /** The local stores the replicated rows are written to. */
  cvd: CvdStore;
  liquidations: LiquidationStore;
  /** Longest blocking read of the change stream, ms. */
  tailBlockMs: number;
  now: () => number;
  log: Logger;
}

/**
 * The follower's side of replication: keeps the local stores in sync with Redis by a full load and by
 * tailing the change stream (XREAD on a connection of its own, since a blocking read would hold up every
 * other command). Falls back to a full load when the stream was trimmed past its position.
 */
export class Follower {
  private tailConn: Redis | null = null;
  private tailClientId: number | undefined;
  private tailTask: Promise<void> | null = null;
  private tailing = false;
  /** Id of the last change entry applied ("0-0": from the start of the stream). */
  private lastId = "0-0";
  private needReload = true;
  /** The next full reload drops every local symbol first (see {@link requestReload}). */
  private replaceNext = false;
  private applyingRows = false;

  constructor(private readonly opts: FollowerOptions) {}

  /** True while replicated rows are written to the stores (their observers must not republish them). */
  get applying(): boolean {
    return this.applyingRows;
  }

  /** Starts tailing the change stream in the background (no-op while tailing). */
  start(): void {
    if (this.tailing) return;
    this.tailing = true;
    this.tailTask = this.tailLoop();
  }

  /** Stops tailing and waits for the loop to end. */
  async stop(): Promise<void> {
    if (!this.tailing) return;
    this.tailing = false;
    // Wake a blocking XREAD at once rather than after its timeout.
    const id = this.tailClientId;
    if (id !== undefined && this.opts.redis.ready) await this.opts.redis.client.clientUnblock(id, "TIMEOUT").catch(() => undefined);
    await this.tailTask;
    this.tailTask = null;
  }

  /** Makes the next read a full reload; with `replace`, one that drops the local history first (it diverged). */
  requestReload(opts: { replace?: boolean } = {}): void {
    this.needReload = true;
    this.replaceNext ||= opts.replace === true;
  }

  /** Resumes after `id` (an entry this replica appended while leading) if it is newer than the last entry applied. */
  skipTo(id: string | null): void {
    if (id !== null && compareStreamIds(id, this.lastId) > 0) this.lastId = id;
  }

  private async tailLoop(): Promise<void> {
    const { redis, keys, log } = this.opts;
    if (!this.tailConn) {
      const conn = redis.connection("streams-tail");
      conn.on("ready", () => (this.tailClientId = undefined));
      this.tailConn = conn;
    }
    const conn = this.tailConn;
    while (this.tailing) {
      try {
        if (!conn.isReady || !redis.ready) {
          await sleep(200);
          continue;
        }
        if (this.needReload) {
          await this.fullReload({ replace: this.replaceNext });
          continue;
        }
        this.tailClientId ??= await conn.clientId();
        const reply = (await conn.xRead({ key: keys.changes, id: this.lastId }, { COUNT: 500, BLOCK: this.opts.tailBlockMs })) as unknown as XReadReply;
        if (!this.tailing) break;
        await this.applyRead(reply);
      } catch (err) {
        if (this.tailing) log.debug({ err: (err as Error).message }, "streams: reading the change stream failed; retrying");
        await sleep(500);
      }
    }
  }

  /** Applies entries read after `lastId`, unless `lastId` was trimmed away meanwhile (then entries may be missing: full reload). */
  private async applyRead(reply: XReadReply): Promise<number> {
    const messages = reply?.[0]?.messages ?? [];
    if (messages.length === 0) return 0;
    const { redis, keys } = this.opts;
    if (this.lastId !== "0-0" && ((await redis.client.xRange(keys.changes, this.lastId, this.lastId))?.length ?? 0) === 0) {
      this.opts.log.warn({ lastId: this.lastId }, "streams: change stream trimmed past this replica's position; reloading");
      this.needReload = true;
      return 0;
    }
    for (const m of messages) {
      if (typeof m.message.c === "string") this.applyEntry(m.message.c);
      this.lastId = m.id;
    }
    return messages.length;
  }

  /** Before leading: applies what is left in the change stream (or reloads everything if needed). */
  async catchUp(): Promise<void> {
    const { redis, keys } = this.opts;
    if (!redis.ready) return;
    for (let i = 0; i < 1000; i++) {
      if (this.needReload) {
        await this.fullReload({ replace: this.replaceNext });
        continue;
      }
      const reply = (await redis.client.xRead({ key: keys.changes, id: this.lastId }, { COUNT: 500 })) as unknown as XReadReply;
      if ((await this.applyRead(reply)) === 0 && !this.needReload) return;
    }
  }

  private applyEntry(text: string): void {
    const c = decodeChanges(text);
    this.applyReplica(() => {
      for (const base of c.dropped) this.opts.cvd.drop(base);
      this.opts.cvd.applyReplicated(c.cvd);
      this.opts.liquidations.applyReplicated(c.liquidations);
    });
  }

  private applyReplica(fn: () => void): void {
    this.applyingRows = true;
    try {
      fn();
    } catch (err) {
      this.opts.log.error({ err }, "streams: applying replicated rows failed");
    } finally {
      this.applyingRows = false;
    }
  }

  /**
   * Loads everything Redis holds into the local stores and resumes the change stream from its newest entry
   * at the time of the load (entries appended during the load are applied again: absolute values). Buckets
   * come with their ids while Redis keeps them (see `IDS_KEEP_MS`), ledgers with their marks and holes.
   * Local symbols Redis does not track (dropped while this replica was away) are dropped, unless Redis
   * holds no symbol at all (nothing published yet, or Redis lost its data: keep ours). With `replace`, every
   * local symbol is dropped first (this replica's own history diverged: it ingested while cut off).
   */
  async fullReload(opts: { replace?: boolean } = {}): Promise<void> {
    const { keys, cvd, liquidations } = this.opts;
    const c = this.opts.redis.client;
    const rev = await c.xRevRange(keys.changes, "+", "-", { COUNT: 1 });
    const startId = rev?.[0]?.id ?? "0-0";
    const [symbols, ledgers] = await Promise.all([c.hGetAll(keys.symbols), c.hGetAll(keys.ledger)]);
    const now = this.opts.now();
    const days: number[] = [];
    for (let d = dayStart(now - RETENTION_MS); d <= dayStart(now + 60_000); d += DAY_MS) days.push(d);
    const bases = Object.keys(symbols);
    const hashes = await Promise.all(bases.flatMap((base) => days.map(async (d) => ({ base, fields: await c.hGetAll(keys.day(base, d)) }))));
    const liqs = await c.zRangeByScore(keys.liquidations, now - LIQUIDATION_MAX_AGE_MS, "+inf");
    const changes: CvdChanges = { symbols: [], buckets: [], ledgers: [] };
    for (const [base, since] of Object.entries(symbols)) changes.symbols.push({ base, trackedSince: Number(since) });
    for (const { base, fields } of hashes) {
      for (const [field, value] of Object.entries(fields)) {
        const b = decodeBucket(base, field, value);
        if (b) changes.buckets.push(b);
      }
    }
    // Read after the buckets: an id list is never older than the count it is checked against.
    await Promise.all(
      changes.buckets
        .filter((b) => b.idCount > 0 && idsExpireAt(b.start) > now)
        .map(async (b) => {
          const ids = decodeIds(await c.get(keys.ids(b)));
          if (ids.length > 0) Object.assign(b, { ids, idsComplete: true });
        }),
    );
    for (const [field, value] of Object.entries(ledgers)) {
      const t = decodeLedger(field, value);
      if (t) changes.ledgers.push(t);
    }
    const records = liqs.map(decodeLiquidation).filter((r): r is LiquidationRecord => r !== undefined);
    this.applyReplica(() => {
      if (bases.length > 0) for (const base of cvd.symbols()) if (opts.replace || !(base in symbols)) cvd.drop(base);
      cvd.applyReplicated(changes);
      liquidations.applyReplicated(records);
    });
    this.lastId = startId;
    this.needReload = false;
    if (opts.replace) this.replaceNext = false;
    this.opts.log.info({ symbols: bases.length, buckets: changes.buckets.length, liquidations: records.length }, "streams: loaded replicated state");
  }
}
