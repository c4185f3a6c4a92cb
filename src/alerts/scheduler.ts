import { schedule, type ScheduledTask } from "node-cron";
import type { Logger } from "../lib/log.js";
import type { DeliveryDispatcher } from "./dispatcher.js";
import type { AlertEngine } from "./engine.js";
import type { AlertStore } from "./store.js";

/** Options of {@link AlertScheduler}. */
export interface SchedulerOptions {
  /** node-cron expression of evaluation rounds, seconds field included (default every 30 s: `*\/30 * * * * *`). */
  evalCron: string;
  /** How often the outbox is polled for due deliveries, ms (default 1000). */
  dispatchPollMs: number;
  now: () => number;
  log?: Logger;
}

/**
 * Runs the alert engine on a node-cron schedule (UTC, overlapping rounds skipped) and polls the delivery
 * outbox. `start()` first applies overdue expiries and sends deliveries that came due while the process
 * was down, so a restart resumes where the previous process stopped.
 */
export class AlertScheduler {
  private task?: ScheduledTask;
  private poll?: NodeJS.Timeout;
  private dispatching?: Promise<number>;
  /** The round in progress, so that `stop()` can wait for it (node-cron's destroy does not). */
  private running?: Promise<void>;

  constructor(
    private readonly store: AlertStore,
    private readonly engine: AlertEngine,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly opts: SchedulerOptions,
  ) {}

  /** Starts rounds and outbox polling. Idempotent. */
  start(): void {
    if (this.task) return;
    const expired = this.store.expireDue(this.opts.now());
    if (expired) this.opts.log?.info({ expired }, "alerts expired while the service was down");
    this.task = schedule(this.opts.evalCron, () => this.round(), { noOverlap: true, timezone: "UTC", name: "alert-evaluation" });
    this.poll = setInterval(() => void this.dispatch(), this.opts.dispatchPollMs);
    this.poll.unref();
    void this.dispatch();
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
  async stop(): Promise<void> {
    await this.task?.destroy();
    this.task = undefined;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    await this.running;
    await this.dispatching;
  }
}
