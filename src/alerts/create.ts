import type { Config } from "../config.js";
import type { Logger } from "../lib/log.js";
import type { RedisHandle } from "../state/redis.js";
import { DeliveryDispatcher } from "./dispatcher.js";
import { AlertEngine, type AlertSignals } from "./engine.js";
import { RedisAlertStore } from "./redis-store.js";
import { AlertScheduler, type SchedulerLease } from "./scheduler.js";
import { AlertService } from "./service.js";
import { AlertStore, alertDbPath } from "./store.js";
import { createWebhookSender } from "./webhook/send.js";
import type { WebhookTargetPolicy } from "./webhook/target.js";

/** Alert settings of the configuration (present when `ALERTS=on`). */
export type AlertConfig = NonNullable<Config["alerts"]>;

/** The SSRF policy of webhook targets from the configuration. */
export function targetPolicy(c: AlertConfig): WebhookTargetPolicy {
  return { allowLoopback: c.webhook.allowLoopback, allowedPorts: c.webhook.allowedPorts };
}

/**
 * Opens the alert store and wraps it in the lifecycle service handlers use: with `redis` (multi-replica,
 * `REDIS_URL`) the shared {@link RedisAlertStore}, else SQLite under `DATA_DIR`.
 * @throws Error when the SQLite database cannot be opened.
 */
export function createAlertService(c: AlertConfig, now: () => number, redis?: RedisHandle): AlertService {
  const store = redis ? new RedisAlertStore(redis) : new AlertStore(c.dataDir === ":memory:" ? ":memory:" : alertDbPath(c.dataDir));
  return new AlertService(store, { now, target: targetPolicy(c), maxActive: c.maxActive });
}

/**
 * The engine, the outbox dispatcher and their scheduler for `service`'s store. `signals` reads the
 * market (heatmap and price); `dataSource` labels every delivery (`X-Marketgate-Data-Source`). With
 * `lease` (replicas sharing Redis) only the lease holder runs rounds and deliveries.
 */
export function createAlertScheduler(
  c: AlertConfig,
  service: AlertService,
  signals: AlertSignals,
  opts: { now: () => number; log: Logger; dataSource: "live" | "simulated"; lease?: SchedulerLease },
): AlertScheduler {
  const engine = new AlertEngine(service.store, signals, { now: opts.now, cooldownMs: c.cooldownMs, log: opts.log });
  const sender = createWebhookSender({ policy: targetPolicy(c), timeoutMs: c.webhook.timeoutMs, ca: c.webhook.extraCa });
  const dispatcher = new DeliveryDispatcher(service.store, sender, {
    now: opts.now,
    retry: c.retry,
    headers: { "X-Marketgate-Data-Source": opts.dataSource },
    log: opts.log,
  });
  return new AlertScheduler(service.store, engine, dispatcher, { evalCron: c.evalCron, dispatchPollMs: c.dispatchPollMs, now: opts.now, log: opts.log, lease: opts.lease });
}
