import type { Logger } from "../lib/log.js";
import type { AlertRepository } from "./repository.js";
import type { AttemptRecord, DeliveryRecord } from "./types.js";
import type { WebhookSender } from "./webhook/send.js";

/** Retry schedule of a delivery: attempt n (1-based) failing waits `baseDelayMs × factor^(n−1)`. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 6). */
  maxAttempts: number;
  /** Wait after the first failure (default 10 s). */
  baseDelayMs: number;
  /** Growth per failure (default 3: 10 s, 30 s, 90 s, 270 s, 810 s). */
  factor: number;
}

/** Default: 6 attempts over about 20 minutes. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 10_000, factor: 3 };

/** Options of {@link DeliveryDispatcher}. */
export interface DispatcherOptions {
  now: () => number;
  retry: RetryPolicy;
  /** Deliveries attempted in parallel (default 8). */
  concurrency?: number;
  /** Extra headers of every delivery (the data-source label). */
  headers?: Record<string, string>;
  log?: Logger;
}

/**
 * Sends the outbox: every pending delivery whose next attempt is due is POSTed (signed, SSRF-checked,
 * 5 s timeout, no redirects: see `createWebhookSender`); a 2xx marks it delivered, anything else schedules
 * the next attempt with exponential backoff until `maxAttempts`, then marks it failed. Each attempt is
 * recorded on the delivery. A delivery is in flight at most once per process; after a kill, a delivery
 * whose attempt was not recorded is sent again (at-least-once: receivers de-duplicate on
 * `X-Marketgate-Delivery`).
 */
export class DeliveryDispatcher {
  private readonly inFlight = new Set<string>();
  /**
   * Attempts finished while an outbox read was under way (id → finish stamp): such a read may still show
   * the delivery as due (an asynchronous store answers from before the attempt was recorded), and must
   * not send it again. Cleared whenever no read is under way.
   */
  private readonly finished = new Map<string, number>();
  private stamp = 0;
  private reading = 0;
  private readonly concurrency: number;

  constructor(
    private readonly store: AlertRepository,
    private readonly sender: WebhookSender,
    private readonly opts: DispatcherOptions,
  ) {
    this.concurrency = Math.max(1, opts.concurrency ?? 8);
  }

  /** Attempts every due delivery once; resolves with the number of attempts made. Never throws (a store that cannot be read counts as nothing due). */
  async dispatchDue(): Promise<number> {
    let due: DeliveryRecord[];
    const since = this.stamp;
    this.reading++;
    try {
      due = (await this.store.due(this.opts.now(), 500)).filter((d) => !this.inFlight.has(d.id) && !((this.finished.get(d.id) ?? 0) > since));
    } catch (err) {
      this.opts.log?.warn({ err }, "webhook outbox could not be read");
      return 0;
    } finally {
      if (--this.reading === 0) this.finished.clear();
    }
    for (const d of due) this.inFlight.add(d.id);
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const d = due[next++]!;
        try {
          await this.attempt(d);
        } catch (err) {
          this.opts.log?.error({ err, delivery: d.id }, "webhook attempt failed unexpectedly");
        } finally {
          this.inFlight.delete(d.id);
          if (this.reading > 0) this.finished.set(d.id, ++this.stamp);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, due.length) }, worker));
    return due.length;
  }

  private async attempt(d: DeliveryRecord): Promise<void> {
    const alert = await this.store.get(d.alertId);
    if (!alert) return;
    const startedAt = this.opts.now();
    const r = await this.sender.send({
      url: alert.webhookUrl,
      body: d.body,
      secret: alert.webhookSecret,
      timestampSec: Math.floor(startedAt / 1000),
      deliveryId: d.id,
      event: d.event,
      headers: this.opts.headers,
    });
    const attempts: AttemptRecord[] = [...d.attempts, { at: startedAt, status: r.status, ...(r.error ? { error: r.error } : {}), duration_ms: Math.round(r.durationMs) }];
    const now = this.opts.now();
    const { maxAttempts, baseDelayMs, factor } = this.opts.retry;
    if (r.ok) {
      await this.store.recordAttempt(d.id, attempts, { status: "delivered", nextAttemptAt: now, deliveredAt: now });
    } else if (attempts.length >= maxAttempts) {
      await this.store.recordAttempt(d.id, attempts, { status: "failed", nextAttemptAt: now, deliveredAt: null });
      this.opts.log?.warn({ delivery: d.id, alert: d.alertId, attempts: attempts.length, last: r.error ?? r.status }, "webhook delivery gave up");
    } else {
      const wait = baseDelayMs * factor ** (attempts.length - 1);
      await this.store.recordAttempt(d.id, attempts, { status: "pending", nextAttemptAt: now + wait, deliveredAt: null });
    }
  }
}
