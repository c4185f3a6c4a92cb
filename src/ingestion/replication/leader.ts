import { AppError } from "../../errors.js";
import type { Logger } from "../../lib/log.js";
import type { RedisHandle } from "../../state/redis.js";
import type { IngestionManager } from "../manager.js";
import type { CvdStore } from "../store/cvd-store.js";
import type { LiquidationStore } from "../store/liquidation-store.js";
import { STREAM_VENUES } from "../types.js";
import { IDS_KEEP_MS, type Handoff, type PublishedStates, type ReplicationKeys, decodeHandoff } from "./layout.js";
import type { Publisher } from "./publisher.js";
import { sleep } from "./sleep.js";
import type { StandbyFeeds } from "./standby.js";

/** How long the leader remembers that a symbol could not be subscribed, ms. */
const UNKNOWN_TTL_MS = 10 * 60_000;

/** Options of {@link Leader}. Times are milliseconds. */
export interface LeaderOptions {
  redis: RedisHandle;
  keys: ReplicationKeys;
  publisher: Publisher;
  cvd: CvdStore;
  liquidations: LiquidationStore;
  replicaId: string;
  /** Always-ready symbols (upper case): never polled as on-demand requests. */
  pre: ReadonlySet<string>;
  idleMs: number;
  wantedPollMs: number;
  /** Lifetime of the published states in Redis. */
  statesTtlMs: number;
  maxBackfillMs: number;
  settleMs: number;
  /** The manager of the current leadership (null while following): jobs of an earlier one stop. */
  current: () => IngestionManager | null;
  /** True while the lease is within its safety deadline: the periodic jobs pause otherwise. */
  leading: () => boolean;
  /** True once the replication is stopping. */
  stopped: () => boolean;
  /** Receives each state publication before it is written (the leader serves its own states). */
  onStates: (value: PublishedStates) => void;
  now: () => number;
  log: Logger;
}

/**
 * The ingest leader's periodic jobs around its {@link IngestionManager}: subscribing the on-demand symbols
 * requested on any replica, remembering symbols no venue lists, publishing the feed states, merging what
 * replicas cut off from Redis handed over, and, on takeover, reconciling rows left from an earlier
 * leadership and backfilling the gap nobody streamed (from REST and the standby feeds' buffers).
 * Long-lived (unknown symbols are remembered across leaderships); the role changes stay with the caller.
 */
export class Leader {
  private wantedTimer: NodeJS.Timeout | null = null;
  private readonly wantedSeen = new Map<string, number>();
  private readonly unknownUntil = new Map<string, number>();
  private takeoverTask: Promise<void> | null = null;
  /** The manager whose takeover backfill is done: handoffs are merged after it (its marks would undo theirs). */
  private settled: IngestionManager | null = null;
  private merging = false;

  constructor(private readonly opts: LeaderOptions) {}

  /** The backfill after the latest takeover, while it runs (for tests); resolved otherwise. */
  takeoverDone(): Promise<void> {
    return this.takeoverTask ?? Promise.resolve();
  }

  /**
   * Before the feeds start: settles what an earlier leadership left, shares local history Redis lacks, and
   * returns where each (venue, base) stopped being counted (`<venue>|<base>` → time), before live trades move it.
   */
  async prepare(): Promise<Map<string, number>> {
    await this.reconcilePending();
    // A first leader over local history (e.g. a deployment moving from embedded mode to replicas) shares it.
    await this.republishIfMissing("redis holds no replicated state").catch(() => undefined);
    const from = new Map<string, number>();
    for (const base of this.opts.cvd.symbols()) {
      for (const venue of STREAM_VENUES) {
        const t = this.opts.cvd.lastTradeTime(venue, base);
        if (t !== null) from.set(`${venue}|${base}`, t);
      }
    }
    return from;
  }

  /**
   * Starts `manager` (the new current one) with the requested symbols, its takeover backfill from `from`
   * (with the buffers of `standby`, which it stops afterwards), the polling of requests and handoffs, and the states.
   */
  async begin(manager: IngestionManager, from: Map<string, number>, standby?: StandbyFeeds | null): Promise<void> {
    this.wantedSeen.clear();
    this.settled = null;
    await this.pollWanted(manager).catch(() => undefined);
    await manager.start();
    this.takeoverTask = this.takeoverBackfill(manager, from, standby ?? null)
      .catch((err: unknown) => this.opts.log.error({ err }, "streams: takeover backfill failed"))
      .finally(() => {
        if (this.opts.current() === manager) this.settled = manager;
        return standby?.stop();
      });
    this.startWantedPoll(manager);
    await this.publishStates();
  }

  /** Resumes the periodic jobs of `manager`, which kept ingesting while this replica was cut off and nobody else led. */
  async resume(manager: IngestionManager): Promise<void> {
    this.settled = manager;
    this.startWantedPoll(manager);
    await this.publishStates();
  }

  /** Stops polling the on-demand requests. */
  stopPolling(): void {
    if (this.wantedTimer) clearInterval(this.wantedTimer);
    this.wantedTimer = null;
  }

  /** The periodic job: publishes the feed states (and republishes everything if Redis lost the data). */
  async tick(): Promise<void> {
    const { publisher } = this.opts;
    await this.publishStates();
    // Published before, yet gone: Redis lost its data (restart without persistence, eviction).
    if (publisher.lastOkAt > 0 && publisher.pendingCount === 0) await this.republishIfMissing("replicated state missing in redis");
    publisher.kick();
  }

  /** Remembers that no venue lists `base`, here and in Redis for the followers, and drops its request. */
  async markUnknown(base: string): Promise<void> {
    const { redis, keys } = this.opts;
    this.unknownUntil.set(base, this.opts.now() + UNKNOWN_TTL_MS);
    await redis.client
      .multi()
      .set(keys.unknown(base), "1", { expiration: { type: "PX", value: UNKNOWN_TTL_MS } })
      .hDel(keys.wanted, base)
      .exec()
      .catch(() => undefined);
  }

  /**
   * Rows left unpublished from an earlier leadership are published only if nobody appended to the change
   * stream since this replica did; otherwise another leader's newer values would be overwritten.
   */
  private async reconcilePending(): Promise<void> {
    const { publisher } = this.opts;
    if (publisher.pendingCount === 0) return;
    try {
      const rev = await this.opts.redis.client.xRevRange(this.opts.keys.changes, "+", "-", { COUNT: 1 });
      if ((rev?.[0]?.id ?? null) === publisher.lastEntryId) return;
    } catch {
      // Unknown: do not risk overwriting newer values.
    }
    this.opts.log.info({ rows: publisher.pendingCount }, "streams: discarding rows another leader has superseded");
    publisher.clear();
  }

  /**
   * Backfills, per venue once its feed delivers (plus `settleMs`), what nobody counted between the last
   * replicated trade of each (venue, base) and now: from the standby feeds' buffer on the venues it holds
   * (those whose REST serves only their latest trades) and from REST, and marks it `filled` (or `unfilled`
   * when neither covered it). Trades overlapping the live stream are skipped by id in the store. One REST
   * request per (venue, base), as for a reconnect gap, within the venues' REST budgets.
   */
  private async takeoverBackfill(manager: IngestionManager, from: Map<string, number>, standby: StandbyFeeds | null): Promise<void> {
    if (from.size === 0) return;
    const live = () => this.opts.current() === manager && !this.opts.stopped();
    await Promise.all(
      STREAM_VENUES.map(async (venue) => {
        while (live() && manager.states().find((s) => s.venue === venue)?.lastMessageAt == null) await sleep(50);
        if (!live()) return;
        await sleep(this.opts.settleMs);
        if (!live()) return;
        const to = this.opts.now();
        // All-market liquidations (Gate's REST publishes them) from where the earliest of its bases stopped.
        const starts = manager.venueSubscriptions(venue).flatMap((base) => from.get(`${venue}|${base}`) ?? []);
        const liqFrom = starts.length ? Math.max(Math.min(...starts), to - this.opts.maxBackfillMs) : to;
        await Promise.all([
          manager.backfillLiquidationsSince({ venue, from: liqFrom, to }),
          ...manager.venueSubscriptions(venue).map(async (base) => {
            const last = from.get(`${venue}|${base}`);
            if (last === undefined || last >= to) return;
            const start = Math.max(last, to - this.opts.maxBackfillMs);
            const buffered = standby?.venues().includes(venue) ? await standby.take(venue, base, start, to) : undefined;
            const complete = await manager.backfillSince({ venue, base, from: start, to }, buffered);
            this.opts.log.info(
              { venue, base, from: start, to, complete, standby: buffered && { trades: buffered.trades.length, complete: buffered.complete } },
              "streams: takeover gap backfilled",
            );
          }),
        ]);
      }),
    );
  }

  private startWantedPoll(manager: IngestionManager): void {
    this.stopPolling();
    this.wantedTimer = setInterval(() => {
      if (this.opts.current() !== manager || !this.opts.leading()) return;
      void this.pollWanted(manager).catch(() => undefined);
      void this.pollHandoffs(manager).catch((err: unknown) => this.opts.log.warn({ err: (err as Error).message }, "streams: merging a handoff failed; retrying"));
    }, this.opts.wantedPollMs);
    this.wantedTimer.unref();
  }

  /**
   * Merges the handoffs replicas left in `streams:handoff` (what they ingested while cut off from Redis):
   * their trades are counted unless already counted (by id), their liquidations stored unless known, and
   * the intervals their feeds covered are cleared of unfilled marks. Entries are deleted once merged; a
   * leader dying meanwhile leaves them to the next, which merges them again harmlessly.
   */
  private async pollHandoffs(manager: IngestionManager): Promise<void> {
    if (this.settled !== manager || this.merging) return;
    this.merging = true;
    try {
      const { redis, keys } = this.opts;
      const entries = (await redis.client.xRange(keys.handoff, "-", "+", { COUNT: 20 })) ?? [];
      if (entries.length === 0) return;
      for (const e of entries) {
        if (this.opts.current() !== manager) return;
        const d = typeof e.message.h === "string" ? decodeHandoff(e.message.h) : undefined;
        if (d) this.merge(d.handoff, e.message.h!.length);
      }
      await redis.client.xDel(
        keys.handoff,
        entries.map((e) => e.id),
      );
    } finally {
      this.merging = false;
    }
  }

  private merge(h: Handoff, bytes: number): void {
    const { cvd, liquidations } = this.opts;
    const counted = cvd.add(h.trades, "loose");
    const stored = liquidations.add(h.liquidations).length;
    let settled = 0;
    for (const c of h.coverage) for (const base of c.bases) for (const [from, to] of c.intervals) settled += cvd.settleGap({ venue: c.venue, base, from, to });
    this.opts.log.info(
      { trades: h.trades.length, counted, liquidations: stored, bucketsSettled: settled, bytes },
      "streams: merged what a replica ingested while cut off from redis",
    );
  }

  /** Subscribes the symbols requested on any replica since the last poll; forgets requests older than the idle time. */
  private async pollWanted(manager: IngestionManager): Promise<void> {
    const { redis, keys, idleMs } = this.opts;
    const raw = await redis.client.hGetAll(keys.wanted);
    const now = this.opts.now();
    const entries = Object.entries(raw)
      .map(([b, v]) => [b, Number(v)] as const)
      .sort((a, b) => a[1] - b[1]);
    for (const [base, until] of this.unknownUntil) if (until <= now) this.unknownUntil.delete(base);
    const stale = entries.filter(([, t]) => !Number.isFinite(t) || now - t > idleMs).map(([b]) => b);
    if (stale.length) await redis.client.hDel(keys.wanted, stale);
    for (const [base, t] of entries) {
      if (!Number.isFinite(t) || now - t > idleMs || this.opts.pre.has(base) || this.wantedSeen.get(base) === t) continue;
      if ((this.unknownUntil.get(base) ?? 0) > now) continue;
      if (this.opts.current() !== manager) return;
      this.wantedSeen.set(base, t);
      try {
        await manager.ensure(base);
      } catch (err) {
        if (err instanceof AppError && err.code === "UNKNOWN_SYMBOL") await this.markUnknown(base);
        else this.opts.log.warn({ err, base }, "streams: subscribing a requested symbol failed");
      }
    }
  }

  /** Queues everything the local stores hold for publication when Redis tracks no symbol while we do. */
  private async republishIfMissing(why: string): Promise<void> {
    const { cvd, publisher } = this.opts;
    if (cvd.symbols().length === 0 || (await this.opts.redis.client.exists(this.opts.keys.symbols)) !== 0) return;
    this.opts.log.warn({ symbols: cvd.symbols().length }, `streams: ${why}; publishing everything held`);
    publisher.addCvd(cvd.exportChanges({ idsSince: this.opts.now() - IDS_KEEP_MS }));
    publisher.addLiquidations(this.opts.liquidations.recent({ limit: 1000 }));
  }

  /** Publishes the current manager's feed states and on-demand symbols (expiring, so a dead leader's age out). */
  private async publishStates(): Promise<void> {
    const m = this.opts.current();
    if (!m) return;
    const value: PublishedStates = {
      leader: this.opts.replicaId,
      at: this.opts.now(),
      feeds: m.states(),
      onDemand: m.onDemandSymbols().map((s) => [s.base, s.subscribedAt]),
    };
    this.opts.onStates(value);
    await this.opts.redis.client.set(this.opts.keys.states, JSON.stringify(value), { expiration: { type: "PX", value: this.opts.statesTtlMs } }).catch(() => undefined);
  }
}
