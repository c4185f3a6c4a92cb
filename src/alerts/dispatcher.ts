import type { Logger } from "../lib/log.js";
import type { AlertStore } from "./store.js";
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
  private readonly concurrency: number;

  constructor(
    private readonly store: AlertStore,
    private readonly sender: WebhookSender,
    private readonly opts: DispatcherOptions,
  ) {
    this.concurrency = Math.max(1, opts.concurrency ?? 8);
  }

  /** Attempts every due delivery once; resolves with the number of attempts made. Never throws. */
  async dispatchDue(): Promise<number> {
    const due = this.store.due(this.opts.now(), 500).filter((d) => !this.inFlight.has(d.id));
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
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, due.length) }, worker));
    return due.length;
  }

  private async attempt(d: DeliveryRecord): Promise<void> {
    const alert = this.store.get(d.alertId);
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
      this.store.recordAttempt(d.id, attempts, { status: "delivered", nextAttemptAt: now, deliveredAt: now });
    } else if (attempts.length >= maxAttempts) {
      this.store.recordAttempt(d.id, attempts, { status: "failed", nextAttemptAt: now, deliveredAt: null });
      this.opts.log?.warn({ delivery: d.id, alert: d.alertId, attempts: attempts.length, last: r.error ?? r.status }, "webhook delivery gave up");
    } else {
      const wait = baseDelayMs * factor ** (attempts.length - 1);
      this.store.recordAttempt(d.id, attempts, { status: "pending", nextAttemptAt: now + wait, deliveredAt: null });
    }
  }
}
