import { AppError } from "../../errors.js";
import { logger as rootLogger, type Logger } from "../../lib/log.js";
import { Lease, leaseHolder, type LeaseLoss } from "../../state/lease.js";
import type { RedisHandle } from "../../state/redis.js";
import { PRE_SUBSCRIBED, type IngestionManager } from "../manager.js";
import type { StreamReadiness, IngestionService } from "../service.js";
import type { CvdStore } from "../store/cvd-store.js";
import type { LiquidationStore } from "../store/liquidation-store.js";
import { STREAM_VENUES, type FeedState, type StreamVenue } from "../types.js";
import { Follower } from "./follower.js";
import { IngestJournal } from "./journal.js";
import { ReplicationKeys, decodeStates, encodeHandoff, type PublishedStates } from "./layout.js";
import { Leader } from "./leader.js";
import { Publisher } from "./publisher.js";
import { sleep } from "./sleep.js";
import type { StandbyFeeds } from "./standby.js";

export { compareStreamIds } from "./follower.js";

/** Name of the ingest lease (`<prefix>lease:streams`). */
export const STREAMS_LEASE = "streams";
/** Venue latency allowed for when a replica states which intervals its feeds covered, ms. */
const HANDOFF_MARGIN_MS = 1000;

/** Options of {@link ReplicatedIngestion}. Times are milliseconds. */
export interface ReplicatedStreamsOptions {
  redis: RedisHandle;
  /** This replica's local stores: every replica serves reads from them. */
  cvd: CvdStore;
  liquidations: LiquidationStore;
  /**
   * A new IngestionManager with fresh venue feeds over `cvd` and `liquidations`, made each time this replica
   * starts leading (its feeds are stopped, not reused, when it stops).
   */
  createManager: () => IngestionManager;
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
  /**
   * New standby feeds (fresh venue feeds of the venues whose REST serves only their latest trades), made
   * each time this replica starts following; none when absent. Their buffer fills the takeover gap.
   */
  createStandby?: () => StandbyFeeds;
  /** Most trades a replica cut off from Redis keeps to hand over (default 500 000). */
  journalMaxTrades?: number;
  now?: () => number;
  log?: Logger;
}

function disconnected(venue: StreamVenue): FeedState {
  return { venue, connected: false, connectedSince: null, lastMessageAt: null, reconnects: 0, subscribedSymbols: 0, lagMs: null };
}

/**
 * The venue ingestion of a multi-replica deployment (`REDIS_URL`): exactly one replica, the holder of the
 * `streams` lease, runs the venue feeds (a {@link IngestionManager} writing to its local stores) and publishes
 * what its stores write to Redis (see `layout.ts`); every replica, the leader included, serves reads from
 * its own local stores, which followers keep in sync by a full load at start and by tailing the change
 * stream. When the leader dies, another replica acquires the lease within its TTL (plus 50 ms; see
 * `leaseTimings`), catches up, starts its feeds and backfills from REST what nobody streamed since the
 * last replicated trade of each (venue, base).
 *
 * On-demand symbols: `ensure` on any replica records the request in `streams:wanted`; the leader
 * subscribes what is requested and publishes its on-demand symbols with their subscription times, so a
 * follower answers `warming_up` until the leader has streamed the symbol for the warm-up time.
 *
 * Followers run standby feeds of the venues whose REST cannot reach back over a takeover (see
 * {@link StandbyFeeds}); a follower taking over fills the takeover gap from their buffer.
 *
 * Redis unreachable: followers serve what they hold; the leader keeps ingesting into its local store, also
 * past its lease's safety deadline (it is then "cut off": it publishes nothing, and {@link isLeader} is
 * false from that deadline on). When Redis answers again, a leader whose lease held, or that renews or
 * takes it back (nobody else held it) with nobody having published meanwhile, publishes what changed
 * (absolute values); otherwise another replica led meanwhile, and the cut-off replica hands over the trades
 * it counted since its last publication (with the intervals its feeds covered) for the leader to merge by
 * trade id, then reloads from Redis and follows. Nothing here throws to its caller except `ensure`'s
 * UNKNOWN_SYMBOL.
 */
export class ReplicatedIngestion implements IngestionService {
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
  private readonly statesEveryMs: number;
  /** Published states expire (and are ignored) after a few publication periods. */
  private readonly statesMaxAgeMs: number;
  private readonly follower: Follower;
  private readonly leader: Leader;

  private manager: IngestionManager | null = null;
  private leading = false;
  /** The lease lapsed while Redis was unreachable: `manager` keeps ingesting, nothing is published. */
  private detached = false;
  private readonly journal: IngestJournal;
  private standby: StandbyFeeds | null = null;
  private started = false;
  private stopped = false;
  private transitions: Promise<void> = Promise.resolve();
  private unobserve: Array<() => void> = [];
  private statesTimer: NodeJS.Timeout | null = null;
  private leaderStates: { value: PublishedStates; fetchedAt: number } | null = null;

  constructor(private readonly opts: ReplicatedStreamsOptions) {
    this.redis = opts.redis;
    this.cvd = opts.cvd;
    this.liquidations = opts.liquidations;
    this.keys = new ReplicationKeys(opts.redis);
    this.log = (opts.log ?? rootLogger).child({ component: "streams-replication", replica: opts.replicaId });
    this.now = opts.now ?? Date.now;
    this.pre = new Set((opts.preSubscribed ?? PRE_SUBSCRIBED).map((s) => s.toUpperCase()));
    this.warmupMs = opts.warmupMs ?? 10_000;
    this.statesEveryMs = opts.statesEveryMs ?? 1000;
    this.statesMaxAgeMs = Math.max(3000, 5 * this.statesEveryMs);
    this.journal = new IngestJournal({ maxTrades: opts.journalMaxTrades ?? 500_000, marginMs: HANDOFF_MARGIN_MS, now: this.now });
    this.publisher = new Publisher({
      redis: opts.redis,
      keys: this.keys,
      replicaId: opts.replicaId,
      now: this.now,
      log: this.log,
      onPublished: (seq) => this.journal.published(seq),
      // Past the lease's safety deadline another replica may lead: publish nothing until it is renewed.
      mayPublish: () => this.lease.isLeader,
    });
    const shared = { redis: opts.redis, keys: this.keys, cvd: opts.cvd, liquidations: opts.liquidations, now: this.now, log: this.log };
    this.follower = new Follower({ ...shared, tailBlockMs: opts.tailBlockMs ?? 1000 });
    this.leader = new Leader({
      ...shared,
      publisher: this.publisher,
      replicaId: opts.replicaId,
      pre: this.pre,
      idleMs: opts.idleMs ?? 30 * 60_000,
      wantedPollMs: opts.wantedPollMs ?? 500,
      statesTtlMs: this.statesMaxAgeMs,
      maxBackfillMs: opts.maxBackfillMs ?? 30 * 60_000,
      settleMs: opts.settleMs ?? 250,
      current: () => this.manager,
      leading: () => this.lease.isLeader,
      stopped: () => this.stopped,
      onStates: (value) => (this.leaderStates = { value, fetchedAt: value.at }),
    });
    this.lease = new Lease(opts.redis, {
      name: STREAMS_LEASE,
      holderId: opts.replicaId,
      ttlMs: opts.leaseTtlMs,
      // The role changes run in order; the lease renews on its own schedule meanwhile.
      onAcquire: () => void this.enqueue(() => this.lead()),
      onLose: (reason) => void this.enqueue(() => this.follow(reason)),
      log: this.log,
    });
  }

  /** True while this replica runs the feeds and publishes: it leads and its lease is within its safety deadline. */
  get isLeader(): boolean {
    return this.leading && this.manager !== null && this.lease.isLeader;
  }

  /** True while this replica ingests without the lease (cut off from Redis when it lapsed). */
  get isCutOff(): boolean {
    return this.detached;
  }

  /** The backfill after the latest takeover (for tests): waits for the role change under way, then for its backfill. */
  async takeoverDone(): Promise<void> {
    await this.transitions;
    await this.leader.takeoverDone();
  }

  /** Loads the replicated state, follows the change stream and competes for the ingest lease. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.unobserve = [
      this.cvd.observe({
        flushed: (c) => {
          if (!this.follower.applying) this.publisher.addCvd(c, this.journal.seq());
        },
        dropped: (base) => {
          if (!this.follower.applying) this.publisher.addDrop(base);
        },
        counted: (trades) => this.journal.record(trades),
        broke: (venue, gap) => this.journal.gap(venue, gap),
      }),
      this.liquidations.observe((added) => {
        if (!this.follower.applying) this.publisher.addLiquidations(added);
      }),
    ];
    await this.redis.waitReady(2000).catch(() => undefined);
    if (this.redis.ready) {
      await this.follower.fullReload().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, "streams: initial load from redis failed; retrying"));
    }
    if (!this.stopped) this.follower.start();
    this.statesTimer = setInterval(() => void this.tick(), this.statesEveryMs);
    this.statesTimer.unref();
    this.lease.start();
    void this.enqueue(() => this.startStandby());
  }

  /** Stops leading or following (a leader publishes what is pending and releases the lease), then closes the stores. */
  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    if (this.statesTimer) clearInterval(this.statesTimer);
    this.statesTimer = null;
    this.leader.stopPolling();
    await this.transitions;
    await this.standby?.stop();
    this.standby = null;
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
    await this.follower.stop();
    for (const off of this.unobserve) off();
    this.cvd.close();
    this.liquidations.close();
  }

  async ensure(base: string): Promise<StreamReadiness> {
    const b = base.trim().toUpperCase();
    if (this.pre.has(b)) return "ready";
    const m = this.manager;
    if (m) {
      void this.redis.client.hSet(this.keys.wanted, b, String(this.now())).catch(() => undefined);
      try {
        return await m.ensure(b);
      } catch (err) {
        if (err instanceof AppError && err.code === "UNKNOWN_SYMBOL") await this.leader.markUnknown(b);
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
    if (m) return m.states();
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
    if (m) return m.subscribedBases();
    return [...this.pre, ...(this.publishedStates()?.onDemand.map(([b]) => b) ?? [])];
  }

  get onDemandCount(): number {
    const m = this.manager;
    if (m) return m.onDemandCount;
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

  /**
   * Becomes the ingest leader: catch up with the stream, start the feeds, backfill the takeover gap,
   * publish. A replica that kept ingesting while cut off resumes as it was if nobody published meanwhile;
   * otherwise it hands its trades over and takes over like any follower.
   */
  private async lead(): Promise<void> {
    if (this.stopped || !this.lease.isLeader) return;
    if (this.manager && this.detached && (await this.reattach())) return;
    if (this.manager) return;
    await this.follower.stop();
    try {
      await this.follower.catchUp();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "streams: catching up before leading failed; leading with what is held");
    }
    if (this.stopped || !this.lease.isLeader) {
      if (!this.stopped) this.follower.start();
      return;
    }
    const from = await this.leader.prepare();
    const manager = this.opts.createManager();
    this.manager = manager;
    this.leading = true;
    this.journal.begin();
    this.publisher.enable();
    const standby = this.standby;
    this.standby = null;
    await this.leader.begin(manager, from, standby);
    this.log.info({ symbols: manager.subscribedBases().length }, "streams: leading (venue feeds started)");
  }

  /**
   * Back in charge after being cut off: if nobody appended to the change stream since this replica's last
   * entry (or Redis lost it all), its local store is the newest state: publish what is pending and carry on.
   * Otherwise hand over and return false (the caller then takes over afresh).
   */
  private async reattach(): Promise<boolean> {
    let newest: string | null;
    try {
      newest = (await this.redis.client.xRevRange(this.keys.changes, "+", "-", { COUNT: 1 }))?.[0]?.id ?? null;
    } catch {
      return true; // unreachable again: stay as we are; the lease decides next
    }
    if (newest === null || newest === this.publisher.lastEntryId) {
      this.detached = false;
      this.leading = true;
      this.publisher.enable();
      await this.leader.resume(this.manager!);
      this.log.info({ pending: this.publisher.pendingCount }, "streams: leading again (nobody led while redis was unreachable); publishing what changed");
      return true;
    }
    return !(await this.handOff());
  }

  /**
   * Stops leading. The lease expired (no renewal answered in time; it may come back, nobody else may hold
   * it): keeps the feeds running, cut off, publishing nothing, to resume or hand over once Redis tells.
   * Something counted is unpublished and cannot be handed over now (Redis unreachable): the same.
   * Otherwise stops the feeds (handing over what was not published, if anything) and follows the change
   * stream again, from the last entry this replica saw or wrote.
   */
  private async follow(reason: LeaseLoss): Promise<void> {
    const m = this.manager;
    this.leading = false;
    this.leader.stopPolling();
    this.publisher.disable();
    if (m && !this.stopped && reason === "expired") {
      this.detached = true;
      this.log.warn(
        { symbols: m.subscribedBases().length },
        "streams: lease expired before a renewal answered; ingesting locally, publishing nothing, until it is renewed or another replica leads",
      );
      return;
    }
    if (m && !this.stopped) {
      const unpublished = this.journal.size > 0 || this.publisher.pendingCount > 0;
      if (unpublished && this.redis.ready && (await this.handOff())) return;
      if (unpublished || !this.redis.ready) {
        this.detached = true;
        this.log.warn({ symbols: m.subscribedBases().length }, "streams: lease lapsed while redis is unreachable; ingesting locally until it answers");
        return;
      }
    }
    this.manager = null;
    this.detached = false;
    this.journal.stop();
    if (m) {
      await m.stopFeeds();
      this.log.info("streams: following (venue feeds stopped)");
    }
    this.follower.skipTo(this.publisher.lastEntryId);
    if (!this.stopped) {
      this.follower.start();
      await this.startStandby();
    }
  }

  /**
   * Another replica published while this one ingested cut off: writes what it counted since its last
   * publication to `streams:handoff` for the leader to merge by trade id, stops its feeds, and reloads its
   * store from Redis in full (its own history diverged). Returns false, changing nothing, when the handoff
   * could not be written.
   */
  private async handOff(): Promise<boolean> {
    const m = this.manager;
    if (!m) return false;
    // Coverage ends a latency margin before the feeds' last message: keep ingesting that long, so it reaches
    // the moment of this decision (and the end of a takeover gap the leader marked before it).
    await sleep(HANDOFF_MARGIN_MS);
    if (this.manager !== m) return false;
    const bases = new Map(STREAM_VENUES.map((v) => [v, m.venueSubscriptions(v)] as const));
    const h = { ...this.journal.handoff(m.states(), bases), liquidations: this.publisher.pendingLiquidations() };
    const key = `${this.opts.replicaId}:${this.now()}`;
    try {
      const multi = this.redis.client.multi();
      for (const e of encodeHandoff(this.opts.replicaId, key, h)) multi.xAdd(this.keys.handoff, "*", { h: e });
      await multi.exec();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "streams: handing over what was ingested while cut off failed; retrying");
      return false;
    }
    this.log.warn(
      { trades: h.trades.length, liquidations: h.liquidations.length, coverage: h.coverage.map((c) => [c.venue, c.intervals.length]) },
      "streams: another replica led while this one was cut off; handed over what it ingested and reloading from redis",
    );
    this.manager = null;
    this.detached = false;
    this.leading = false;
    this.journal.stop();
    this.publisher.disable();
    this.publisher.clear();
    await m.stopFeeds();
    this.follower.requestReload({ replace: true });
    if (!this.stopped) {
      this.follower.start();
      await this.startStandby();
    }
    return true;
  }

  /** Starts this follower's standby feeds (when configured and not leading). */
  private async startStandby(): Promise<void> {
    if (this.stopped || this.manager || !this.opts.createStandby) return;
    this.standby ??= this.opts.createStandby();
    await this.standby.start(this.subscribedBases());
  }

  // ---- states ----

  /**
   * Leader: publishes the feed states (and republishes everything if Redis lost the data). Cut off: once
   * Redis answers and another replica holds the lease, hands over (holding it itself: resumes, see
   * {@link lead}). Follower: reads the states and keeps its standby feeds on the leader's symbols.
   */
  private async tick(): Promise<void> {
    try {
      if (this.leading && this.manager) {
        if (this.lease.isLeader) await this.leader.tick();
      } else if (this.detached) {
        if (!this.redis.ready) return;
        const holder = await leaseHolder(this.redis, STREAMS_LEASE);
        if (holder !== null && holder !== this.opts.replicaId) {
          void this.enqueue(async () => {
            if (this.detached && !this.lease.isLeader) await this.handOff();
          });
        } else if (holder === this.opts.replicaId && this.lease.isLeader) {
          void this.enqueue(() => this.lead()); // won the lease back but could not resume or hand over yet: again
        }
      } else {
        const raw = await this.redis.client.get(this.keys.states);
        const value = decodeStates(raw);
        this.leaderStates = value ? { value, fetchedAt: this.now() } : null;
        await this.standby?.sync(this.subscribedBases());
      }
    } catch {
      // Redis unreachable: keep what we have (states age out below).
    }
  }

  /** The leader's latest published states, unless older than a few publication periods. */
  private publishedStates(): PublishedStates | undefined {
    const s = this.leaderStates;
    const maxAge = this.statesMaxAgeMs;
    const now = this.now();
    if (!s || now - s.fetchedAt > maxAge || now - s.value.at > 2 * maxAge) return undefined;
    return s.value;
  }
}
