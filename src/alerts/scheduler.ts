import { schedule, type ScheduledTask } from "node-cron";
import { logger as processLogger, type Logger } from "../lib/log.js";
import { Lease } from "../state/lease.js";
import type { RedisHandle } from "../state/redis.js";
import type { DeliveryDispatcher } from "./dispatcher.js";
import type { AlertEngine } from "./engine.js";
import type { AlertRepository } from "./repository.js";

/** Name of the Redis lease whose holder runs the alert rounds and the outbox (`<prefix>lease:alerts`). */
export const ALERT_LEASE = "alerts";

/** Leadership of a multi-replica deployment: only the replica holding the lease runs rounds and deliveries. */
export interface SchedulerLease {
  redis: RedisHandle;
  /** This replica's identity (`REPLICA_ID`). */
  holderId: string;
  /** Lease lifetime (`LEASE_TTL_MS`): a crashed leader is replaced within it (plus 50 ms; see `leaseTimings`). */
  ttlMs: number;
}

/** Options of {@link AlertScheduler}. */
export interface SchedulerOptions {
  /** node-cron expression of evaluation rounds, seconds field included (default every 30 s: `*\/30 * * * * *`). */
  evalCron: string;
  /** How often the outbox is polled for due deliveries, ms (default 1000). */
  dispatchPollMs: number;
  now: () => number;
  log?: Logger;
  /**
   * With a lease (shared Redis store), `start()` competes for the {@link ALERT_LEASE} lease and only
   * the holder runs rounds and polls the outbox, so each trigger is evaluated and delivered once
   * however many replicas run. Without one, `start()` runs them at once (single process).
   */
  lease?: SchedulerLease;
}

/**
 * Runs the alert engine on a node-cron schedule (UTC, overlapping rounds skipped) and polls the delivery
 * outbox. Running starts by applying overdue expiries and sending deliveries that came due while the
 * process was down (or while no replica led), so a restart resumes where the previous process stopped.
 * Store failures (Redis unreachable) are logged and retried at the next round or poll; they never throw.
 */
export class AlertScheduler {
  private task?: ScheduledTask;
  private poll?: NodeJS.Timeout;
  private dispatching?: Promise<number>;
  /** The round in progress, so that `stop()` can wait for it (node-cron's destroy does not). */
  private running?: Promise<void>;
  private lease?: Lease;
  /** Serialises leadership changes (acquire, lose, stop). */
  private transition: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: AlertRepository,
    private readonly engine: AlertEngine,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly opts: SchedulerOptions,
  ) {}

  /** True while this instance runs rounds (always after `start()` without a lease; while holding it with one). */
  get isRunning(): boolean {
    return this.task !== undefined;
  }

  /** Starts rounds and outbox polling, or with a lease starts competing for it. Idempotent. */
  start(): void {
    const l = this.opts.lease;
    if (!l) return this.run();
    if (this.lease) return;
    const lease: Lease = new Lease(l.redis, {
      name: ALERT_LEASE,
      holderId: l.holderId,
      ttlMs: l.ttlMs,
      // An acquisition that completes after stop() (its SET was in flight) does not start anything.
      onAcquire: () => this.serialise(async () => (this.lease === lease ? this.run() : undefined)),
      onLose: () => this.serialise(() => this.halt()),
      log: this.opts.log ?? processLogger,
    });
    this.lease = lease;
    lease.start();
  }

  private serialise(step: () => Promise<void>): Promise<void> {
    this.transition = this.transition.then(step, step);
    return this.transition;
  }

  /** Applies overdue expiries, schedules rounds, polls the outbox and sends what is due now. */
  private run(): void {
    if (this.task) return;
    void this.expireOverdue();
    // Past the lease's safety deadline (its loss is being handled) another replica may lead: start nothing.
    this.task = schedule(this.opts.evalCron, () => (this.mayLead() ? this.round() : undefined), { noOverlap: true, timezone: "UTC", name: "alert-evaluation" });
    this.poll = setInterval(() => (this.mayLead() ? void this.dispatch() : undefined), this.opts.dispatchPollMs);
    this.poll.unref();
    void this.dispatch();
  }

  /** Without a lease: always; with one: while it is held within its safety deadline. */
  private mayLead(): boolean {
    return !this.opts.lease || this.lease?.isLeader === true;
  }

  /** The store call runs synchronously from `run()` (a synchronous store has applied expiries when `start()` returns). */
  private async expireOverdue(): Promise<void> {
    try {
      const expired = await this.store.expireDue(this.opts.now());
      if (expired) this.opts.log?.info({ expired }, "alerts expired while the service was down");
    } catch (err) {
      this.opts.log?.warn({ err }, "overdue alert expiries not applied (retried by the next round)");
    }
  }

  /** One evaluation round followed by a dispatch of what it queued; concurrent calls share one round. */
  round(): Promise<void> {
    this.running ??= this.runRound().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runRound(): Promise<void> {
    try {
      await this.engine.evaluate();
    } catch (err) {
      this.opts.log?.error({ err }, "alert evaluation round failed");
    }
    await this.dispatch();
  }

  /** Sends due deliveries; concurrent calls share one pass. */
  dispatch(): Promise<number> {
    this.dispatching ??= this.dispatcher.dispatchDue().finally(() => (this.dispatching = undefined));
    return this.dispatching;
  }

  /** Stops rounds and polling and waits for the round and the attempts in flight. */
  private async halt(): Promise<void> {
    await this.task?.destroy();
    this.task = undefined;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    await this.running;
    await this.dispatching;
  }

  /** Stops rounds and polling (and releases the lease, so another replica takes over within a third of its TTL) and waits for the round and the attempts in flight. */
  async stop(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    await lease?.stop();
    await this.serialise(() => this.halt());
  }
}
