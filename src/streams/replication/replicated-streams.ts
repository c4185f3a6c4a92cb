import { AppError } from "../../errors.js";
import { logger as rootLogger, type Logger } from "../../lib/log.js";
import { Lease } from "../../state/lease.js";
import type { Redis, RedisHandle } from "../../state/redis.js";
import { PRE_SUBSCRIBED, type StreamManager } from "../manager.js";
import type { StreamReadiness, StreamService } from "../service.js";
import type { CvdChanges, CvdStore } from "../store/cvd-store.js";
import { LIQUIDATION_MAX_AGE_MS, type LiquidationRecord, type LiquidationStore } from "../store/liquidation-store.js";
import { STREAM_VENUES, type FeedState, type StreamVenue } from "../types.js";
import {
  DAY_MS,
  ReplicationKeys,
  dayStart,
  decodeBucket,
  decodeChanges,
  decodeLast,
  decodeLiquidation,
  decodeStates,
  type PublishedStates,
} from "./layout.js";
import { Publisher } from "./publisher.js";

/** Name of the ingest lease (`<prefix>lease:streams`). */
export const STREAMS_LEASE = "streams";
/** Retention of CVD history, ms (the stores' 7 days). */
const RETENTION_MS = 7 * DAY_MS;
/** How long the leader remembers that a symbol could not be subscribed, ms. */
const UNKNOWN_TTL_MS = 10 * 60_000;

/** Options of {@link ReplicatedStreams}. Times are milliseconds. */
export interface ReplicatedStreamsOptions {
  redis: RedisHandle;
  /** This replica's local stores: every replica serves reads from them. */
  cvd: CvdStore;
  liquidations: LiquidationStore;
  /**
   * A new StreamManager with fresh venue feeds over `cvd` and `liquidations`, made each time this replica
   * starts leading (its feeds are stopped, not reused, when it stops).
   */
  createManager: () => StreamManager;
  /** This replica's identity (lease holder, publisher of change entries). */
  replicaId: string;
  /** Lease lifetime: a dead leader is replaced within it. */
  leaseTtlMs: number;
  /** Always-ready symbols (default {@link PRE_SUBSCRIBED}); must match the managers'. */
  preSubscribed?: readonly string[];
  /** An on-demand symbol is ready once the leader has streamed it this long (default 10 000; the managers' warm-up). */
  warmupMs?: number;
  /** Requests of on-demand symbols older than this are forgotten (default 30 min; the managers' idle time). */
  idleMs?: number;
  /** Period of the leader's state publication and of the followers' state reads (default 1000). */
  statesEveryMs?: number;
  /** How often the leader reads the on-demand requests of all replicas (default 500). */
  wantedPollMs?: number;
  /** Longest blocking read of the change stream (default 1000). */
  tailBlockMs?: number;
  /** A replica taking over backfills at most this far back (default 30 min). */
  maxBackfillMs?: number;
  /** After a venue's first message, the takeover backfill waits this long before reading up to now (default 250). */
  settleMs?: number;
  now?: () => number;
  log?: Logger;
}

type XReadReply = Array<{ name: string; messages: Array<{ id: string; message: Record<string, string> }> }> | null;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Orders Redis stream ids (`<ms>-<seq>`). */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = a.split("-").map((x) => BigInt(x));
  const [bm = 0n, bs = 0n] = b.split("-").map((x) => BigInt(x));
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

function disconnected(venue: StreamVenue): FeedState {
  return { venue, connected: false, connectedSince: null, lastMessageAt: null, reconnects: 0, subscribedSymbols: 0, lagMs: null };
}

/**
 * The live streams of a multi-replica deployment (`REDIS_URL`): exactly one replica, the holder of the
 * `streams` lease, runs the venue feeds (a {@link StreamManager} writing to its local stores) and publishes
 * what its stores write to Redis (see `layout.ts`); every replica, the leader included, serves reads from
 * its own local stores, which followers keep in sync by a full load at start and by tailing the change
 * stream. When the leader dies, another replica acquires the lease within its TTL, catches up, starts its
 * feeds and backfills from REST what nobody streamed since the last replicated trade of each (venue, base).
 *
 * On-demand symbols: `ensure` on any replica records the request in `streams:wanted`; the leader
 * subscribes what is requested and publishes its on-demand symbols with their subscription times, so a
 * follower answers `warming_up` until the leader has streamed the symbol for the warm-up time.
 *
 * Redis unreachable: followers serve what they hold; the leader keeps ingesting and publishes what changed
 * once Redis answers again (until its lease lapses: then it stops its feeds like any replica that loses
 * the lease). Nothing here throws to its caller except `ensure`'s UNKNOWN_SYMBOL.
 */
export class ReplicatedStreams implements StreamService {
  readonly cvd: CvdStore;
  readonly liquidations: LiquidationStore;
  private readonly redis: RedisHandle;
  private readonly keys: ReplicationKeys;
  private readonly publisher: Publisher;
  private readonly lease: Lease;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly pre: Set<string>;
  private readonly warmupMs: number;
  private readonly idleMs: number;
  private readonly statesEveryMs: number;
  private readonly wantedPollMs: number;
  private readonly tailBlockMs: number;
  private readonly maxBackfillMs: number;
  private readonly settleMs: number;

  private manager: StreamManager | null = null;
  private leading = false;
  private started = false;
  private stopped = false;
  private transitions: Promise<void> = Promise.resolve();
  private unobserve: Array<() => void> = [];
  /** True while replicated rows are written to the stores (their observers must not republish them). */
  private applying = false;

  private tailConn: Redis | null = null;
  private tailClientId: number | undefined;
  private tailTask: Promise<void> | null = null;
  private tailing = false;
  /** Id of the last change entry applied ("0-0": from the start of the stream). */
  private lastId = "0-0";
  private needReload = true;

  private statesTimer: NodeJS.Timeout | null = null;
  private wantedTimer: NodeJS.Timeout | null = null;
  private leaderStates: { value: PublishedStates; fetchedAt: number } | null = null;
  private readonly wantedSeen = new Map<string, number>();
  private readonly unknownUntil = new Map<string, number>();
  private takeoverTask: Promise<void> | null = null;
  private takeovers = 0;

  constructor(private readonly opts: ReplicatedStreamsOptions) {
    this.redis = opts.redis;
    this.cvd = opts.cvd;
    this.liquidations = opts.liquidations;
    this.keys = new ReplicationKeys(opts.redis);
    this.log = (opts.log ?? rootLogger).child({ component: "streams-replication", replica: opts.replicaId });
    this.now = opts.now ?? Date.now;
    this.pre = new Set((opts.preSubscribed ?? PRE_SUBSCRIBED).map((s) => s.toUpperCase()));
    this.warmupMs = opts.warmupMs ?? 10_000;
    this.idleMs = opts.idleMs ?? 30 * 60_000;
    this.statesEveryMs = opts.statesEveryMs ?? 1000;
    this.wantedPollMs = opts.wantedPollMs ?? 500;
    this.tailBlockMs = opts.tailBlockMs ?? 1000;
    this.maxBackfillMs = opts.maxBackfillMs ?? 30 * 60_000;
    this.settleMs = opts.settleMs ?? 250;
    this.publisher = new Publisher({ redis: opts.redis, keys: this.keys, replicaId: opts.replicaId, now: this.now, log: this.log });
    this.lease = new Lease(opts.redis, {
      name: STREAMS_LEASE,
      holderId: opts.replicaId,
      ttlMs: opts.leaseTtlMs,
      // Both return at once: the lease renews on its own schedule while the role changes run in order.
      onAcquire: () => void this.enqueue(() => this.lead()),
      onLose: () => void this.enqueue(() => this.follow()),
      log: this.log,
    });
  }

  /** True while this replica runs the feeds. */
  get isLeader(): boolean {
    return this.leading && this.manager !== null;
  }

  /** Times this replica started leading (for tests and logs). */
  get leadCount(): number {
    return this.takeovers;
  }

  /** The backfill after the latest takeover, while it runs (for tests); resolved otherwise. */
  takeoverDone(): Promise<void> {
    return this.takeoverTask ?? Promise.resolve();
  }

  /** Loads the replicated state, follows the change stream and competes for the ingest lease. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.unobserve = [
      this.cvd.observe({
        flushed: (c) => {
          if (!this.applying) this.publisher.addCvd(c);
        },
        dropped: (base) => {
          if (!this.applying) this.publisher.addDrop(base);
        },
      }),
      this.liquidations.observe((added) => {
        if (!this.applying) this.publisher.addLiquidations(added);
      }),
    ];
    await this.redis.waitReady(2000).catch(() => undefined);
    if (this.redis.ready) {
      await this.fullReload().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, "streams: initial load from redis failed; retrying"));
    }
    this.startTail();
    this.statesTimer = setInterval(() => void this.tick(), this.statesEveryMs);
    this.statesTimer.unref();
    this.lease.start();
  }

  /** Stops leading or following (a leader publishes what is pending and releases the lease), then closes the stores. */
  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    if (this.statesTimer) clearInterval(this.statesTimer);
    this.statesTimer = null;
    this.stopWantedPoll();
    await this.transitions;
    const m = this.manager;
    if (m) {
      await m.stopFeeds();
      try {
        this.cvd.flush();
        this.liquidations.flush();
      } catch (err) {
        this.log.error({ err }, "streams: flush on stop failed");
      }
      await Promise.race([this.publisher.flush(), sleep(2000)]);
    }
    this.publisher.disable();
    await this.lease.stop();
    await this.transitions;
    await this.stopTail();
    for (const off of this.unobserve) off();
    this.cvd.close();
    this.liquidations.close();
  }

  async ensure(base: string): Promise<StreamReadiness> {
    const b = base.trim().toUpperCase();
    if (this.pre.has(b)) return "ready";
    const m = this.manager;
    if (this.leading && m) {
      void this.redis.client.hSet(this.keys.wanted, b, String(this.now())).catch(() => undefined);
      try {
        return await m.ensure(b);
      } catch (err) {
        if (err instanceof AppError && err.code === "UNKNOWN_SYMBOL") await this.markUnknown(b);
        throw err;
      }
    }
    let unknown = false;
    try {
      const replies = await this.redis.client.multi().hSet(this.keys.wanted, b, String(this.now())).exists(this.keys.unknown(b)).exec();
      unknown = Number(replies[1]) === 1;
    } catch {
      // Redis unreachable: answer from what we know.
    }
    if (unknown) throw new AppError("UNKNOWN_SYMBOL", `no venue stream lists ${b}`);
    const since = this.publishedStates()?.onDemand.find(([x]) => x === b)?.[1];
    return since !== undefined && this.now() - since >= this.warmupMs ? "ready" : "warming_up";
  }

  states(): FeedState[] {
    const m = this.manager;
    if (this.leading && m) return m.states();
    const s = this.publishedStates();
    if (!s) return STREAM_VENUES.map(disconnected);
    const age = Math.max(0, this.now() - s.at);
    return STREAM_VENUES.map((v) => {
      const f = s.feeds.find((x) => x?.venue === v);
      return f ? { ...f, lagMs: typeof f.lagMs === "number" ? f.lagMs + age : null } : disconnected(v);
    });
  }

  activeConnections(): number {
    return this.states().filter((s) => s.connected).length;
  }

  subscribedBases(): string[] {
    const m = this.manager;
    if (this.leading && m) return m.subscribedBases();
    return [...this.pre, ...(this.publishedStates()?.onDemand.map(([b]) => b) ?? [])];
  }

  get onDemandCount(): number {
    const m = this.manager;
    if (this.leading && m) return m.onDemandCount;
    return this.publishedStates()?.onDemand.length ?? 0;
  }

  get backfillCount(): number {
    return this.manager?.backfillCount ?? 0;
  }

  // ---- roles ----

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.transitions = this.transitions.then(step).catch((err: unknown) => this.log.error({ err }, "streams: role change failed"));
    return this.transitions;
  }

  /** Becomes the ingest leader: catch up with the stream, start the feeds, backfill the takeover gap, publish. */
  private async lead(): Promise<void> {
    if (this.stopped || !this.lease.isLeader || this.manager) return;
    await this.stopTail();
    try {
      await this.catchUp();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "streams: catching up before leading failed; leading with what is held");
    }
    if (this.stopped || !this.lease.isLeader) {
      if (!this.stopped) this.startTail();
      return;
    }
    await this.reconcilePending();
    // A first leader over local history (e.g. a deployment moving from embedded mode to replicas) shares it.
    await this.republishIfMissing("redis holds no replicated state").catch(() => undefined);
    // Where each (venue, base) stopped being counted, before live trades move it.
    const from = new Map<string, number>();
    for (const base of this.cvd.symbols()) {
      for (const venue of STREAM_VENUES) {
        const t = this.cvd.lastTradeTime(venue, base);
        if (t !== null) from.set(`${venue}|${base}`, t);
      }
    }
    const manager = this.opts.createManager();
    this.manager = manager;
    this.leading = true;
    this.takeovers++;
    this.publisher.enable();
    this.wantedSeen.clear();
    await this.pollWanted(manager).catch(() => undefined);
    await manager.start();
    this.takeoverTask = this.takeoverBackfill(manager, from).catch((err: unknown) => this.log.error({ err }, "streams: takeover backfill failed"));
    this.startWantedPoll(manager);
    await this.publishStates();
    this.log.info({ symbols: manager.subscribedBases().length }, "streams: leading (venue feeds started)");
  }

  /** Stops the feeds (if leading) and follows the change stream again, from the last entry this replica saw or wrote. */
  private async follow(): Promise<void> {
    const m = this.manager;
    this.leading = false;
    this.manager = null;
    this.stopWantedPoll();
    this.publisher.disable();
    if (m) {
      await m.stopFeeds();
      this.log.info("streams: following (venue feeds stopped)");
    }
    const own = this.publisher.lastEntryId;
    if (own !== null && compareStreamIds(own, this.lastId) > 0) this.lastId = own;
    if (!this.stopped) this.startTail();
  }

  /**
   * Rows left unpublished from an earlier leadership are published only if nobody appended to the change
   * stream since this replica did; otherwise another leader's newer values would be overwritten.
   */
  private async reconcilePending(): Promise<void> {
    if (this.publisher.pendingCount === 0) return;
    try {
      const rev = await this.redis.client.xRevRange(this.keys.changes, "+", "-", { COUNT: 1 });
      if ((rev?.[0]?.id ?? null) === this.publisher.lastEntryId) return;
    } catch {
      // Unknown: do not risk overwriting newer values.
    }
    this.log.info({ rows: this.publisher.pendingCount }, "streams: discarding rows another leader has superseded");
    this.publisher.clear();
  }

  /**
   * Backfills from REST, per venue once its feed delivers (plus `settleMs`), what nobody counted between
   * the last replicated trade of each (venue, base) and now, and marks it `filled` (or `unfilled` when
   * REST could not cover it: venues whose REST serves only their latest trades, Hyperliquid's 10, cannot
   * cover a long takeover). Trades overlapping the live stream are skipped by id in the store. One request
   * per (venue, base), as for a reconnect gap, within the venues' REST budgets.
   */
  private async takeoverBackfill(manager: StreamManager, from: Map<string, number>): Promise<void> {
    if (from.size === 0) return;
    const live = () => this.manager === manager && !this.stopped;
    await Promise.all(
      STREAM_VENUES.map(async (venue) => {
        while (live() && manager.states().find((s) => s.venue === venue)?.lastMessageAt == null) await sleep(50);
        if (!live()) return;
        await sleep(this.settleMs);
        if (!live()) return;
        const to = this.now();
        await Promise.all(
          manager.venueSubscriptions(venue).map(async (base) => {
            const last = from.get(`${venue}|${base}`);
            if (last === undefined || last >= to) return;
            const start = Math.max(last, to - this.maxBackfillMs);
            const complete = await manager.backfillSince({ venue, base, from: start, to });
            this.log.info({ venue, base, from: start, to, complete }, "streams: takeover gap backfilled");
          }),
        );
      }),
    );
  }

  // ---- leader: states and on-demand requests ----

  private startWantedPoll(manager: StreamManager): void {
    this.stopWantedPoll();
    this.wantedTimer = setInterval(() => {
      if (this.manager === manager) void this.pollWanted(manager).catch(() => undefined);
    }, this.wantedPollMs);
    this.wantedTimer.unref();
  }

  private stopWantedPoll(): void {
    if (this.wantedTimer) clearInterval(this.wantedTimer);
    this.wantedTimer = null;
  }

  /** Subscribes the symbols requested on any replica since the last poll; forgets requests older than the idle time. */
  private async pollWanted(manager: StreamManager): Promise<void> {
    const raw = await this.redis.client.hGetAll(this.keys.wanted);
    const now = this.now();
    const entries = Object.entries(raw)
      .map(([b, v]) => [b, Number(v)] as const)
      .sort((a, b) => a[1] - b[1]);
    for (const [base, until] of this.unknownUntil) if (until <= now) this.unknownUntil.delete(base);
    const stale = entries.filter(([, t]) => !Number.isFinite(t) || now - t > this.idleMs).map(([b]) => b);
    if (stale.length) await this.redis.client.hDel(this.keys.wanted, stale);
    for (const [base, t] of entries) {
      if (!Number.isFinite(t) || now - t > this.idleMs || this.pre.has(base) || this.wantedSeen.get(base) === t) continue;
      if ((this.unknownUntil.get(base) ?? 0) > now) continue;
      if (this.manager !== manager) return;
      this.wantedSeen.set(base, t);
      try {
        await manager.ensure(base);
      } catch (err) {
        if (err instanceof AppError && err.code === "UNKNOWN_SYMBOL") await this.markUnknown(base);
        else this.log.warn({ err, base }, "streams: subscribing a requested symbol failed");
      }
    }
  }

  private async markUnknown(base: string): Promise<void> {
    this.unknownUntil.set(base, this.now() + UNKNOWN_TTL_MS);
    await this.redis.client
      .multi()
      .set(this.keys.unknown(base), "1", { expiration: { type: "PX", value: UNKNOWN_TTL_MS } })
      .hDel(this.keys.wanted, base)
      .exec()
      .catch(() => undefined);
  }

  /** Leader: publishes the feed states (and republishes everything if Redis lost the data). Follower: reads them. */
  private async tick(): Promise<void> {
    try {
      if (this.leading && this.manager) {
        await this.publishStates();
        // Published before, yet gone: Redis lost its data (restart without persistence, eviction).
        if (this.publisher.lastOkAt > 0 && this.publisher.pendingCount === 0) await this.republishIfMissing("replicated state missing in redis");
        this.publisher.kick();
      } else {
        const raw = await this.redis.client.get(this.keys.states);
        const value = decodeStates(raw);
        this.leaderStates = value ? { value, fetchedAt: this.now() } : null;
      }
    } catch {
      // Redis unreachable: keep what we have (states age out below).
    }
  }

  /** Queues everything the local stores hold for publication when Redis tracks no symbol while we do. */
  private async republishIfMissing(why: string): Promise<void> {
    if (this.cvd.symbols().length === 0 || (await this.redis.client.exists(this.keys.symbols)) !== 0) return;
    this.log.warn({ symbols: this.cvd.symbols().length }, `streams: ${why}; publishing everything held`);
    this.publisher.addCvd(this.cvd.exportChanges());
    this.publisher.addLiquidations(this.liquidations.recent({ limit: 1000 }));
  }

  private async publishStates(): Promise<void> {
    const m = this.manager;
    if (!m) return;
    const value: PublishedStates = {
      leader: this.opts.replicaId,
      at: this.now(),
      feeds: m.states(),
      onDemand: m.onDemandSymbols().map((s) => [s.base, s.subscribedAt]),
    };
    this.leaderStates = { value, fetchedAt: value.at };
    await this.redis.client
      .set(this.keys.states, JSON.stringify(value), { expiration: { type: "PX", value: Math.max(3000, 5 * this.statesEveryMs) } })
      .catch(() => undefined);
  }

  /** The leader's latest published states, unless older than a few publication periods. */
  private publishedStates(): PublishedStates | undefined {
    const s = this.leaderStates;
    const maxAge = Math.max(3000, 5 * this.statesEveryMs);
    const now = this.now();
    if (!s || now - s.fetchedAt > maxAge || now - s.value.at > 2 * maxAge) return undefined;
    return s.value;
  }

  // ---- follower: load and tail ----

  private startTail(): void {
    if (this.tailing || this.stopped) return;
    this.tailing = true;
    this.tailTask = this.tailLoop();
  }

  private async stopTail(): Promise<void> {
    if (!this.tailing) return;
    this.tailing = false;
    // Wake a blocking XREAD at once rather than after its timeout.
    const id = this.tailClientId;
    if (id !== undefined && this.redis.ready) await this.redis.client.clientUnblock(id, "TIMEOUT").catch(() => undefined);
    await this.tailTask;
    this.tailTask = null;
  }

  private async tailLoop(): Promise<void> {
    if (!this.tailConn) {
      const conn = this.redis.connection("streams-tail");
      conn.on("ready", () => (this.tailClientId = undefined));
      this.tailConn = conn;
    }
    const conn = this.tailConn;
    while (this.tailing) {
      try {
        if (!conn.isReady || !this.redis.ready) {
          await sleep(200);
          continue;
        }
        if (this.needReload) {
          await this.fullReload();
          continue;
        }
        this.tailClientId ??= await conn.clientId();
        const reply = (await conn.xRead({ key: this.keys.changes, id: this.lastId }, { COUNT: 500, BLOCK: this.tailBlockMs })) as unknown as XReadReply;
        if (!this.tailing) break;
        await this.applyRead(reply);
      } catch (err) {
        if (this.tailing) this.log.debug({ err: (err as Error).message }, "streams: reading the change stream failed; retrying");
        await sleep(500);
      }
    }
  }

  /** Applies entries read after `lastId`, unless `lastId` was trimmed away meanwhile (then entries may be missing: full reload). */
  private async applyRead(reply: XReadReply): Promise<number> {
    const messages = reply?.[0]?.messages ?? [];
    if (messages.length === 0) return 0;
    if (this.lastId !== "0-0" && ((await this.redis.client.xRange(this.keys.changes, this.lastId, this.lastId))?.length ?? 0) === 0) {
      this.log.warn({ lastId: this.lastId }, "streams: change stream trimmed past this replica's position; reloading");
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
  private async catchUp(): Promise<void> {
    if (!this.redis.ready) return;
    for (let i = 0; i < 1000; i++) {
      if (this.needReload) {
        await this.fullReload();
        continue;
      }
      const reply = (await this.redis.client.xRead({ key: this.keys.changes, id: this.lastId }, { COUNT: 500 })) as unknown as XReadReply;
      if ((await this.applyRead(reply)) === 0 && !this.needReload) return;
    }
  }

  private applyEntry(text: string): void {
    const c = decodeChanges(text);
    this.applyReplica(() => {
      for (const base of c.dropped) this.cvd.drop(base);
      this.cvd.applyReplicated(c.cvd);
      this.liquidations.applyReplicated(c.liquidations);
    });
  }

  private applyReplica(fn: () => void): void {
    this.applying = true;
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, "streams: applying replicated rows failed");
    } finally {
      this.applying = false;
    }
  }

  /**
   * Loads everything Redis holds into the local stores and resumes the change stream from its newest entry
   * at the time of the load (entries appended during the load are applied again: absolute values).
   * Local symbols Redis does not track (dropped while this replica was away) are dropped, unless Redis
   * holds no symbol at all (nothing published yet, or Redis lost its data: keep ours).
   */
  private async fullReload(): Promise<void> {
    const c = this.redis.client;
    const rev = await c.xRevRange(this.keys.changes, "+", "-", { COUNT: 1 });
    const startId = rev?.[0]?.id ?? "0-0";
    const [symbols, last] = await Promise.all([c.hGetAll(this.keys.symbols), c.hGetAll(this.keys.last)]);
    const now = this.now();
    const days: number[] = [];
    for (let d = dayStart(now - RETENTION_MS); d <= dayStart(now + 60_000); d += DAY_MS) days.push(d);
    const bases = Object.keys(symbols);
    const hashes = await Promise.all(bases.flatMap((base) => days.map(async (d) => ({ base, fields: await c.hGetAll(this.keys.day(base, d)) }))));
    const liqs = await c.zRangeByScore(this.keys.liquidations, now - LIQUIDATION_MAX_AGE_MS, "+inf");
    const changes: CvdChanges = { symbols: [], buckets: [], lastTrades: [] };
    for (const [base, since] of Object.entries(symbols)) changes.symbols.push({ base, trackedSince: Number(since) });
    for (const { base, fields } of hashes) {
      for (const [field, value] of Object.entries(fields)) {
        const b = decodeBucket(base, field, value);
        if (b) changes.buckets.push(b);
      }
    }
    for (const [field, value] of Object.entries(last)) {
      const t = decodeLast(field, value);
      if (t) changes.lastTrades.push(t);
    }
    const records = liqs.map(decodeLiquidation).filter((r): r is LiquidationRecord => r !== undefined);
    this.applyReplica(() => {
      if (bases.length > 0) for (const base of this.cvd.symbols()) if (!(base in symbols)) this.cvd.drop(base);
      this.cvd.applyReplicated(changes);
      this.liquidations.applyReplicated(records);
    });
    this.lastId = startId;
    this.needReload = false;
    this.log.info({ symbols: bases.length, buckets: changes.buckets.length, liquidations: records.length }, "streams: loaded replicated state");
  }
}
