/**
 * Alerts on the shared Redis of a multi-replica deployment (real Redis on 127.0.0.1:6379, one key prefix
 * per test, deleted afterwards): the RedisAlertStore keeps the SQLite store's semantics, the service,
 * engine and dispatcher run on it, two schedulers with leases deliver each trigger once, and an
 * unreachable Redis answers 503 without crashing anything.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DeliveryDispatcher, type RetryPolicy } from "../../src/alerts/dispatcher.js";
import { AlertEngine } from "../../src/alerts/engine.js";
import { ALERT_STORAGE_UNREACHABLE, DELIVERIES_KEPT, RedisAlertStore } from "../../src/alerts/redis-store.js";
import type { Evaluation, NewAlert } from "../../src/alerts/repository.js";
import { AlertScheduler } from "../../src/alerts/scheduler.js";
import { AlertService } from "../../src/alerts/service.js";
import type { AlertRecord, LiquidationParams } from "../../src/alerts/types.js";
import type { ToolContext } from "../../src/core/context.js";
import { HOUR_MS, MINUTE_MS } from "../../src/lib/time.js";
import { logger } from "../../src/lib/log.js";
import { RedisHandle } from "../../src/state/redis.js";
import { checkCreateBeforePayment } from "../../tools/alerts/create.js";
import { appError } from "../helpers/errors.js";
import { fail, fakeSender, FakeSignals, ok, risk } from "../helpers/alert-fakes.js";
import { startFreeStack } from "../helpers/free-stack.js";
import { startHttpsReceiver } from "../../src/sandbox/https-receiver.js";
import { manualClock } from "../helpers/scratch.js";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";

/** A whole second (ids carry unix seconds). */
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const T0_SEC = T0 / 1000;
const HOOK = "https://hooks.example.com/marketgate?team=7";
const COOLDOWN_MS = 15 * MINUTE_MS;
const EVERY_SECOND = "* * * * * *";

/** Everything a test opened, undone after it (schedulers first, then keys, then connections). */
const undo: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (undo.length) await undo.pop()!();
});

/** A unique key prefix whose keys are deleted after the test. */
function prefix(): string {
  const p = `mgtest:alerts:${randomUUID().slice(0, 8)}:`;
  undo.unshift(async () => {
    const h = new RedisHandle({ url: REDIS_URL, prefix: p, log: logger });
    h.start();
    await h.waitReady();
    for await (const keys of h.client.scanIterator({ MATCH: `${p}*`, COUNT: 500 })) if (keys.length) await h.client.del(keys);
    await h.close();
  });
  return p;
}

/** A connected handle (closed after the test). */
async function handle(p: string, url = REDIS_URL, ready = true): Promise<RedisHandle> {
  const h = new RedisHandle({ url, prefix: p, log: logger });
  undo.push(() => h.close());
  h.start();
  if (ready) await h.waitReady();
  return h;
}

const LIQ: LiquidationParams = { condition: "cascade_risk", threshold_pct: 5, min_value_usd: 0 };

function newAlert(over: Partial<NewAlert> = {}): NewAlert {
  return {
    kind: "liquidation",
    symbol: "BTC",
    params: LIQ,
    webhookUrl: HOOK,
    webhookSecret: "whsec_test",
    manageTokenHash: "ab".repeat(32),
    owner: null,
    createdAt: T0,
    expiresAt: T0 + HOUR_MS,
    ...over,
  };
}

const trigger = (alertId: string, extra: Partial<NonNullable<Evaluation["trigger"]>> = {}): Evaluation => ({
  alertId,
  evaluation: { value: 10, condition_met: true },
  trigger: { deliveryId: `dlv_${randomUUID()}`, event: "liquidation_alert", body: JSON.stringify({ alert_id: alertId }), ...extra },
});

/** Service, engine and dispatcher on a Redis store, with fake signals and a fake sender. */
function rig(redis: RedisHandle, opts: { clock?: { t: number; now: () => number }; sender?: ReturnType<typeof fakeSender>; retry?: RetryPolicy } = {}) {
  const clock = opts.clock ?? manualClock(T0);
  const store = new RedisAlertStore(redis);
  const service = new AlertService(store, { now: clock.now, target: { allowLoopback: false }, maxActive: 1000 });
  const signals = new FakeSignals();
  const engine = new AlertEngine(store, signals, { now: clock.now, cooldownMs: COOLDOWN_MS });
  const sender = opts.sender ?? fakeSender(() => ok());
  const dispatcher = new DeliveryDispatcher(store, sender, { now: clock.now, retry: opts.retry ?? { maxAttempts: 4, baseDelayMs: 1000, factor: 3 } });
  return { clock, store, service, signals, engine, sender, dispatcher };
}

async function liq(service: AlertService, symbol = "BTC", hours = 24, owner?: string): Promise<{ alert: AlertRecord; manageToken: string }> {
  return service.create("liquidation", { symbol, params: LIQ, webhookUrl: HOOK, expiresInHours: hours }, owner);
}

describe.skipIf(!redisAvailable)("RedisAlertStore", () => {
  it("ids are unique across two stores on one Redis within the same second, per prefix and second", async () => {
    const p = prefix();
    const [a, b] = [new RedisAlertStore(await handle(p)), new RedisAlertStore(await handle(p))];
    const inserted = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).insert("alert_liq_btc", newAlert({ createdAt: T0 + (i % 1000) }))));
    const ids = inserted.map((x) => x.id);
    expect(new Set(ids).size).toBe(40);
    expect(ids.slice().sort()).toEqual(Array.from({ length: 40 }, (_, i) => `alert_liq_btc_${T0_SEC}_${i + 1}`).sort());
    expect((await a.insert("alert_liq_btc", newAlert({ createdAt: T0 + 1000 }))).id).toBe(`alert_liq_btc_${T0_SEC + 1}_1`);
    expect((await b.insert("alert_liq_eth", newAlert({ createdAt: T0 + 1000 }))).id).toBe(`alert_liq_eth_${T0_SEC + 1}_1`);
    // What insert answered is what the other store reads.
    expect(await b.get(inserted[0]!.id)).toEqual(inserted[0]);
    expect(await a.countActive()).toBe(42);
  });

  it("a sequence that expired never reuses an id that exists", async () => {
    const p = prefix();
    const h = await handle(p);
    const s = new RedisAlertStore(h);
    const first = await s.insert("alert_liq_btc", newAlert());
    await h.client.del(h.key(`alerts:seq:alert_liq_btc_${T0_SEC}`));
    expect((await s.insert("alert_liq_btc", newAlert())).id).not.toBe(first.id);
  });

  it("records read back field for field (owner, params, nulls)", async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const a = await s.insert("alert_price_eth", newAlert({ kind: "price", symbol: "ETH", params: { direction: "below", target_price: 2500.5 }, owner: "0xabc" }));
    expect(a).toEqual({
      id: `alert_price_eth_${T0_SEC}_1`,
      kind: "price",
      symbol: "ETH",
      params: { direction: "below", target_price: 2500.5 },
      webhookUrl: HOOK,
      webhookSecret: "whsec_test",
      manageTokenHash: "ab".repeat(32),
      owner: "0xabc",
      status: "active",
      createdAt: T0,
      expiresAt: T0 + HOUR_MS,
      endedAt: null,
      lastEvaluatedAt: null,
      lastEvaluation: null,
      lastTriggeredAt: null,
      triggerCount: 0,
    });
    expect(await s.get(a.id)).toEqual(a);
    expect(await s.get("alert_price_eth_1_1")).toBeUndefined();
    expect(await s.delivery("dlv_none")).toBeUndefined();
    expect(await s.deliveries(a.id, 10)).toEqual([]);
    expect(await s.due(T0 + HOUR_MS, 10)).toEqual([]);
  });

  it("active(): per kind, per owner (case-insensitive), every kind ordered by created_at then id", async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const owner = "0x00000000000000000000000000000000000000aa";
    const l1 = await s.insert("alert_liq_btc", newAlert({ createdAt: T0 + 2000, owner }));
    const p1 = await s.insert("alert_price_btc", newAlert({ kind: "price", params: { direction: "above", target_price: 1 }, createdAt: T0 + 1000 }));
    const l2 = await s.insert("alert_liq_eth", newAlert({ symbol: "ETH", createdAt: T0 + 1000, owner }));
    const l3 = await s.insert("alert_liq_btc", newAlert({ createdAt: T0 + 3000 }));
    expect((await s.active("liquidation")).map((a) => a.id)).toEqual([l2.id, l1.id, l3.id]);
    expect((await s.active("price")).map((a) => a.id)).toEqual([p1.id]);
    expect((await s.active()).map((a) => a.id)).toEqual([l2.id, p1.id, l1.id, l3.id]);
    expect((await s.active("liquidation", owner.toUpperCase().replace("0X", "0x"))).map((a) => a.id)).toEqual([l2.id, l1.id]);
    expect(await s.active("price", owner)).toEqual([]);
    expect(await s.cancel(l1.id, T0 + 5000)).toBe(true);
    expect((await s.active("liquidation", owner)).map((a) => a.id)).toEqual([l2.id]);
    expect(await s.countActive()).toBe(3);
  });

  it("expireDue() expires each alert once across two stores, ended at its expiry", async () => {
    const p = prefix();
    const [a, b] = [new RedisAlertStore(await handle(p)), new RedisAlertStore(await handle(p))];
    const owner = "0x00000000000000000000000000000000000000bb";
    const due = await Promise.all(Array.from({ length: 30 }, (_, i) => a.insert("alert_liq_btc", newAlert({ expiresAt: T0 + 1000 + i, owner }))));
    const later = await a.insert("alert_liq_btc", newAlert({ expiresAt: T0 + HOUR_MS }));
    const counts = await Promise.all([a.expireDue(T0 + 5000), b.expireDue(T0 + 5000), a.expireDue(T0 + 5000), b.expireDue(T0 + 5000)]);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(30);
    for (const d of due) expect(await b.get(d.id)).toMatchObject({ status: "expired", endedAt: d.expiresAt });
    expect(await a.countActive()).toBe(1);
    expect((await b.active()).map((x) => x.id)).toEqual([later.id]);
    expect(await b.active("liquidation", owner)).toEqual([]);
    expect(await a.expireDue(T0 + HOUR_MS - 1)).toBe(0);
    expect(await a.expireDue(T0 + HOUR_MS)).toBe(1); // at expires_at exactly
    // An expired alert cannot be cancelled or extended.
    expect(await a.cancel(later.id, T0 + HOUR_MS)).toBe(false);
    expect(await a.setExpiry(later.id, T0 + 2 * HOUR_MS)).toBe(false);
  });

  it("setExpiry() moves an active alert's expiry (and its place in the expiry index)", async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const a = await s.insert("alert_liq_btc", newAlert());
    expect(await s.setExpiry(a.id, T0 + 3 * HOUR_MS)).toBe(true);
    expect(await s.expireDue(T0 + 2 * HOUR_MS)).toBe(0);
    expect((await s.get(a.id))!.expiresAt).toBe(T0 + 3 * HOUR_MS);
    expect(await s.expireDue(T0 + 3 * HOUR_MS)).toBe(1);
    expect(await s.get(a.id)).toMatchObject({ status: "expired", endedAt: T0 + 3 * HOUR_MS });
  });

  it("recordEvaluations(): evaluation, trigger count and outbox delivery together; inactive alerts skipped", async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const fired = await s.insert("alert_liq_btc", newAlert());
    const quiet = await s.insert("alert_liq_btc", newAlert());
    const gone = await s.insert("alert_liq_btc", newAlert());
    await s.cancel(gone.id, T0);
    const t = trigger(fired.id);
    await s.recordEvaluations(T0 + 10, [t, { alertId: quiet.id, evaluation: { error: "UPSTREAM_UNAVAILABLE: x" } }, trigger(gone.id)]);
    expect(await s.get(fired.id)).toMatchObject({ triggerCount: 1, lastTriggeredAt: T0 + 10, lastEvaluatedAt: T0 + 10, lastEvaluation: { value: 10, condition_met: true } });
    expect(await s.get(quiet.id)).toMatchObject({ triggerCount: 0, lastTriggeredAt: null, lastEvaluatedAt: T0 + 10, lastEvaluation: { error: "UPSTREAM_UNAVAILABLE: x" } });
    expect(await s.get(gone.id)).toMatchObject({ status: "cancelled", triggerCount: 0, lastEvaluatedAt: null });
    expect(await s.deliveries(gone.id, 10)).toEqual([]);
    const d = {
      id: t.trigger!.deliveryId,
      alertId: fired.id,
      event: "liquidation_alert",
      body: t.trigger!.body,
      status: "pending",
      createdAt: T0 + 10,
      nextAttemptAt: T0 + 10,
      attempts: [],
      deliveredAt: null,
    };
    expect(await s.deliveries(fired.id, 10)).toEqual([d]);
    expect(await s.delivery(d.id)).toEqual(d);
    expect(await s.due(T0 + 10, 10)).toEqual([d]);
    expect(await s.due(T0 + 9, 10)).toEqual([]);
  });

  it("a trigger decided on a stale last_triggered_at is not queued twice (two overlapping rounds)", async () => {
    const p = prefix();
    const [a, b] = [new RedisAlertStore(await handle(p)), new RedisAlertStore(await handle(p))];
    const x = await a.insert("alert_liq_btc", newAlert());
    // Both rounds read the alert before either wrote: both decide it fires.
    await Promise.all([a.recordEvaluations(T0 + 10, [trigger(x.id, { previousTriggeredAt: null })]), b.recordEvaluations(T0 + 11, [trigger(x.id, { previousTriggeredAt: null })])]);
    expect((await a.get(x.id))!.triggerCount).toBe(1);
    expect(await a.deliveries(x.id, 10)).toHaveLength(1);
    // A decision on the current state fires.
    const last = (await a.get(x.id))!.lastTriggeredAt;
    await b.recordEvaluations(T0 + 20, [trigger(x.id, { previousTriggeredAt: last })]);
    expect(await a.get(x.id)).toMatchObject({ triggerCount: 2, lastTriggeredAt: T0 + 20 });
  });

  it("cancel() cancels the alert and its pending deliveries (not settled ones), once", async () => {
    const p = prefix();
    const [a, b] = [new RedisAlertStore(await handle(p)), new RedisAlertStore(await handle(p))];
    const x = await a.insert("alert_liq_btc", newAlert({ owner: "0xcc" }));
    const t1 = trigger(x.id);
    await a.recordEvaluations(T0, [t1]);
    await a.recordAttempt(t1.trigger!.deliveryId, [{ at: T0, status: 200, duration_ms: 5 }], { status: "delivered", nextAttemptAt: T0, deliveredAt: T0 });
    const t2 = trigger(x.id);
    await a.recordEvaluations(T0 + COOLDOWN_MS, [t2]);
    const results = await Promise.all([a.cancel(x.id, T0 + COOLDOWN_MS + 1), b.cancel(x.id, T0 + COOLDOWN_MS + 2)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await a.get(x.id)).toMatchObject({ status: "cancelled" });
    expect([T0 + COOLDOWN_MS + 1, T0 + COOLDOWN_MS + 2]).toContain((await a.get(x.id))!.endedAt);
    expect((await a.deliveries(x.id, 10)).map((d) => [d.id, d.status])).toEqual([
      [t2.trigger!.deliveryId, "cancelled"],
      [t1.trigger!.deliveryId, "delivered"],
    ]);
    expect(await a.due(T0 + HOUR_MS, 10)).toEqual([]);
    expect(await a.countActive()).toBe(0);
    expect(await a.active("liquidation", "0xcc")).toEqual([]);
    // An attempt finishing after the cancellation does not resurrect the delivery.
    await a.recordAttempt(t2.trigger!.deliveryId, [{ at: T0, status: 500, duration_ms: 5 }], { status: "pending", nextAttemptAt: T0 + HOUR_MS, deliveredAt: null });
    expect(await a.delivery(t2.trigger!.deliveryId)).toMatchObject({ status: "cancelled", attempts: [] });
    expect(await a.cancel(x.id, T0 + HOUR_MS)).toBe(false);
  });

  it("due() oldest first with a limit; recordAttempt() reschedules, settles, and ignores settled deliveries", async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const alerts = await Promise.all([1, 2, 3].map(() => s.insert("alert_liq_btc", newAlert())));
    const ts = alerts.map((a) => trigger(a.id));
    await s.recordEvaluations(T0, ts.slice(0, 2));
    await s.recordEvaluations(T0 + 5, ts.slice(2));
    const [d1, d2, d3] = ts.map((t) => t.trigger!.deliveryId) as [string, string, string];
    const first2 = [d1, d2].sort();
    expect((await s.due(T0 + 5, 2)).map((d) => d.id)).toEqual(first2);
    expect((await s.due(T0 + 5, 10)).map((d) => d.id)).toEqual([...first2, d3]);

    const attempt = { at: T0, status: 503, error: "HTTP 503", duration_ms: 9 };
    await s.recordAttempt(d1, [attempt], { status: "pending", nextAttemptAt: T0 + 1000, deliveredAt: null });
    expect((await s.due(T0 + 999, 10)).map((d) => d.id)).toEqual([d2, d3]);
    expect((await s.due(T0 + 1000, 10)).map((d) => d.id)).toEqual([d2, d3, d1]);
    expect(await s.delivery(d1)).toMatchObject({ status: "pending", nextAttemptAt: T0 + 1000, attempts: [attempt], deliveredAt: null });

    await s.recordAttempt(d2, [{ at: T0 + 1, status: 200, duration_ms: 3 }], { status: "delivered", nextAttemptAt: T0 + 2, deliveredAt: T0 + 2 });
    await s.recordAttempt(d3, [attempt, attempt], { status: "failed", nextAttemptAt: T0 + 7, deliveredAt: null });
    expect((await s.due(T0 + HOUR_MS, 10)).map((d) => d.id)).toEqual([d1]);
    expect(await s.due(T0 + 999, 10)).toEqual([]); // its retry is due at T0 + 1000
    expect(await s.delivery(d2)).toMatchObject({ status: "delivered", deliveredAt: T0 + 2 });
    expect(await s.delivery(d3)).toMatchObject({ status: "failed", deliveredAt: null });
    // Settled deliveries are final.
    await s.recordAttempt(d2, [], { status: "pending", nextAttemptAt: T0, deliveredAt: null });
    expect(await s.delivery(d2)).toMatchObject({ status: "delivered", attempts: [{ status: 200 }] });
    expect((await s.due(T0 + HOUR_MS, 10)).map((d) => d.id)).toEqual([d1]);
  });

  it(`deliveries() newest first with a limit, at most ${DELIVERIES_KEPT} kept per alert`, async () => {
    const p = prefix();
    const s = new RedisAlertStore(await handle(p));
    const a = await s.insert("alert_liq_btc", newAlert({ expiresAt: T0 + 1000 * HOUR_MS }));
    const ids: string[] = [];
    for (let i = 0; i < DELIVERIES_KEPT + 3; i++) {
      const t = trigger(a.id);
      ids.push(t.trigger!.deliveryId);
      await s.recordEvaluations(T0 + i, [t]);
      // Settle all but the first two (they stay pending while trimmed away).
      if (i >= 2) await s.recordAttempt(t.trigger!.deliveryId, [], { status: "delivered", nextAttemptAt: T0 + i, deliveredAt: T0 + i });
    }
    expect((await s.deliveries(a.id, 3)).map((d) => d.id)).toEqual(ids.slice(-3).reverse());
    const kept = await s.deliveries(a.id, 1000);
    expect(kept.map((d) => d.id)).toEqual(ids.slice(3).reverse());
    expect(await s.delivery(ids[2]!)).toBeUndefined(); // settled and trimmed: gone
    // Trimmed while pending: still sent; gone once settled.
    expect((await s.due(T0 + HOUR_MS, 10)).map((d) => d.id).sort()).toEqual(ids.slice(0, 2).sort());
    await s.recordAttempt(ids[0]!, [], { status: "delivered", nextAttemptAt: T0, deliveredAt: T0 });
    expect(await s.delivery(ids[0]!)).toBeUndefined();
    expect((await s.get(a.id))!.triggerCount).toBe(DELIVERIES_KEPT + 3);
  });
});

describe.skipIf(!redisAvailable)("AlertService, AlertEngine and DeliveryDispatcher on Redis", () => {
  it("create, evaluate once per symbol, fire, deliver with retries, cooldown", async () => {
    const p = prefix();
    const r = rig(await handle(p), { sender: fakeSender((_req, n) => (n === 1 ? fail(500) : ok(204))) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    r.signals.risk.set("ETH", risk(1, 5e6));
    const a = (await liq(r.service, "BTC")).alert;
    const b = (await liq(r.service, "BTC")).alert;
    const c = (await liq(r.service, "ETH")).alert;
    expect([a.id, b.id, c.id]).toEqual([`alert_liq_btc_${T0_SEC}_1`, `alert_liq_btc_${T0_SEC}_2`, `alert_liq_eth_${T0_SEC}_1`]);
    expect(await r.engine.evaluate()).toMatchObject({ expired: 0, evaluated: 3, triggered: 2, failedSymbols: [] });
    expect(r.signals.calls.slice().sort()).toEqual(["risk:BTC", "risk:ETH"]);
    expect(await r.store.get(c.id)).toMatchObject({ triggerCount: 0, lastEvaluation: { value: 1, condition_met: false } });

    expect(await r.dispatcher.dispatchDue()).toBe(2);
    r.clock.t = T0 + 1000;
    expect(await r.dispatcher.dispatchDue()).toBe(1);
    const [d] = await r.store.deliveries(a.id, 10);
    const [e] = await r.store.deliveries(b.id, 10);
    const settled = [d!, e!].sort((x, y) => x.attempts.length - y.attempts.length);
    expect(settled[0]).toMatchObject({ status: "delivered", deliveredAt: T0 });
    expect(settled[1]).toMatchObject({ status: "delivered", deliveredAt: T0 + 1000 });
    expect(settled[1]!.attempts.map((x) => x.status)).toEqual([500, 204]);
    expect(r.sender.requests.map((q) => q.secret)).toContain(a.webhookSecret);

    // Within the cooldown nothing fires again; after it, it does.
    r.clock.t = T0 + COOLDOWN_MS - 1;
    expect(await r.engine.evaluate()).toMatchObject({ triggered: 0 });
    r.clock.t = T0 + COOLDOWN_MS;
    expect(await r.engine.evaluate()).toMatchObject({ triggered: 2 });
    expect((await r.store.get(a.id))!.triggerCount).toBe(2);
  });

  it("a round writes per alert only what changed; an alert that ends keeps the evaluation it had", async () => {
    const p = prefix();
    const r = rig(await handle(p));
    r.signals.risk.set("BTC", risk(10, 5e6));
    const [a, b] = [(await liq(r.service, "BTC")).alert, (await liq(r.service, "BTC", 1)).alert];
    const writes = vi.spyOn(r.store, "recordEvaluations");
    await r.engine.evaluate();
    expect(writes.mock.calls.at(-1)![1]).toHaveLength(2);
    r.clock.t = T0 + 30 * MINUTE_MS;
    r.signals.risk.set("BTC", risk(11, 5e6, 64_000, "high"));
    expect(await r.engine.evaluate()).toMatchObject({ evaluated: 2, triggered: 2 }); // cooled: both fire again
    r.clock.t += 30_000;
    r.signals.risk.set("BTC", risk(12, 5e6));
    await r.engine.evaluate();
    expect(writes.mock.calls.at(-1)![1]).toEqual([]);
    expect(await r.store.get(a.id)).toMatchObject({ lastEvaluatedAt: r.clock.t, lastEvaluation: { value: 12, cascade_risk: "medium", condition_met: true }, triggerCount: 2 });
    expect(await r.store.cancel(a.id, r.clock.t + 1)).toBe(true);
    r.clock.t = T0 + HOUR_MS; // b expires at the start of this round
    r.signals.risk.set("BTC", risk(13, 5e6));
    await r.engine.evaluate();
    for (const x of [a, b]) expect(await r.store.get(x.id)).toMatchObject({ lastEvaluatedAt: T0 + 30 * MINUTE_MS + 30_000, lastEvaluation: { value: 12, condition_met: true } });
    expect((await r.store.get(b.id))!.status).toBe("expired");
  });

  it("cancel with the manage token, extend with the cap, expiry on read, owner list", async () => {
    const p = prefix();
    const r = rig(await handle(p), { sender: fakeSender(() => fail()) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const owner = "0x00000000000000000000000000000000000000dD";
    const { alert, manageToken } = await liq(r.service, "BTC", 24, owner);
    expect(alert.owner).toBe(owner.toLowerCase());
    const short = (await liq(r.service, "BTC", 1)).alert;
    expect((await r.service.listActive("liquidation", owner)).map((a) => a.id)).toEqual([alert.id]);
    await r.engine.evaluate();
    expect(await r.dispatcher.dispatchDue()).toBe(2);

    expect((await appError(() => r.service.cancel("liquidation", alert.id, { bearerToken: "mgt_wrong" }))).code).toBe("FORBIDDEN");
    r.clock.t += 10 * MINUTE_MS;
    await expect(r.service.cancel("liquidation", alert.id, { bearerToken: manageToken })).resolves.toMatchObject({ status: "cancelled", endedAt: T0 + 10 * MINUTE_MS });
    expect((await r.store.deliveries(alert.id, 10)).map((d) => d.status)).toEqual(["cancelled"]);
    r.clock.t += HOUR_MS;
    expect(await r.dispatcher.dispatchDue()).toBe(1); // only the other alert's retry
    expect((await appError(() => r.service.extend("liquidation", alert.id, 1))).code).toBe("CONFLICT");

    // The short alert expired an hour in: reads apply it.
    expect(await r.service.require("liquidation", short.id)).toMatchObject({ status: "expired", endedAt: T0 + HOUR_MS });
    expect(await r.service.listActive("liquidation")).toEqual([]);
    expect((await appError(() => r.service.cancel("liquidation", short.id, {}))).code).toBe("FORBIDDEN");

    const long = (await liq(r.service, "BTC", 24)).alert;
    const ext = await r.service.extend("liquidation", long.id, 200);
    expect(ext.alert.expiresAt).toBe(r.clock.t + 168 * HOUR_MS);
    expect((await appError(() => r.service.extend("liquidation", long.id, 1))).code).toBe("BAD_REQUEST");
    expect((await appError(() => r.service.require("price", long.id))).code).toBe("NOT_FOUND");
    await expect(r.service.checkCapacity()).resolves.toBeUndefined();
  });
});

describe.skipIf(!redisAvailable)("AlertScheduler with a lease (replicas on one Redis)", () => {
  /** A replica: its own connection, store, engine, dispatcher, sender and scheduler (real clock). */
  async function replica(p: string, name: string, opts: { url?: string; ready?: boolean } = {}) {
    const redis = await handle(p, opts.url, opts.ready);
    const r = rig(redis, { clock: { t: 0, now: Date.now } });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const scheduler = new AlertScheduler(r.store, r.engine, r.dispatcher, {
      evalCron: EVERY_SECOND,
      dispatchPollMs: 100,
      now: Date.now,
      lease: { redis, holderId: name, ttlMs: 1000 },
    });
    undo.push(() => scheduler.stop());
    return { ...r, redis, scheduler };
  }

  it("two started schedulers: one leads, a trigger is delivered once; the other takes over within the TTL", async () => {
    const p = prefix();
    const a = await replica(p, "replica-a");
    const b = await replica(p, "replica-b");
    const alert = (await liq(a.service, "BTC")).alert;
    a.scheduler.start();
    b.scheduler.start();
    const sent = () => [...a.sender.requests, ...b.sender.requests];
    await vi.waitFor(() => expect(sent()).toHaveLength(1), { timeout: 5000, interval: 20 });
    // Several more rounds (every second) and polls on both: still one delivery.
    await new Promise((res) => setTimeout(res, 2500));
    expect(sent()).toHaveLength(1);
    expect((await a.store.deliveries(alert.id, 10)).map((d) => d.status)).toEqual(["delivered"]);
    expect((await a.store.get(alert.id))!.triggerCount).toBe(1);
    expect([a.scheduler.isRunning, b.scheduler.isRunning].filter(Boolean)).toHaveLength(1);
    const [leader, follower] = a.scheduler.isRunning ? [a, b] : [b, a];
    expect(follower.signals.calls).toEqual([]);
    expect(follower.sender.requests).toEqual([]);

    // The leader stops: the other takes over within the lease TTL and handles new triggers.
    await leader.scheduler.stop();
    const stoppedAt = Date.now();
    await vi.waitFor(() => expect(follower.scheduler.isRunning).toBe(true), { timeout: 1500, interval: 10 });
    expect(Date.now() - stoppedAt).toBeLessThan(1000);
    const next = (await liq(follower.service, "BTC")).alert;
    await vi.waitFor(() => expect(follower.sender.requests.map((q) => JSON.parse(q.body) as { alert_id: string }).map((x) => x.alert_id)).toEqual([next.id]), {
      timeout: 4000,
      interval: 20,
    });
    expect(leader.sender.requests).toHaveLength(1);
    expect(sent()).toHaveLength(2);
  }, 20_000);

  it("a leader that dies without releasing is replaced once its lease expired", async () => {
    const p = prefix();
    const a = await replica(p, "replica-a");
    a.scheduler.start();
    await vi.waitFor(() => expect(a.scheduler.isRunning).toBe(true), { timeout: 2000, interval: 10 });
    const b = await replica(p, "replica-b");
    b.scheduler.start();
    await new Promise((res) => setTimeout(res, 500));
    expect(b.scheduler.isRunning).toBe(false);
    // "Kill" a: its connection drops, nothing is released; its scheduler halts once its lease ran out.
    await a.redis.close();
    const diedAt = Date.now();
    await vi.waitFor(() => expect(b.scheduler.isRunning).toBe(true), { timeout: 3000, interval: 10 });
    expect(Date.now() - diedAt).toBeLessThan(2000); // TTL plus one renewal period
    const alert = (await liq(b.service, "BTC")).alert;
    await vi.waitFor(() => expect(b.sender.requests).toHaveLength(1), { timeout: 4000, interval: 20 });
    expect(JSON.parse(b.sender.requests[0]!.body)).toMatchObject({ alert_id: alert.id });
    expect(a.sender.requests).toEqual([]);
    await vi.waitFor(() => expect(a.scheduler.isRunning).toBe(false), { timeout: 3000, interval: 10 });
  }, 20_000);
});

/** A proxy to the test Redis, closed after the test. */
async function redisProxy(): Promise<RedisProxy> {
  const proxy = await startRedisProxy();
  undo.unshift(() => proxy.close());
  return proxy;
}

describe.skipIf(!redisAvailable)("Redis unreachable", () => {
  it("writes and reads answer 503 UPSTREAM_UNAVAILABLE at once; rounds, polls and the lease never throw", async () => {
    const p = prefix();
    const redis = await handle(p, "redis://127.0.0.1:1", false);
    const r = rig(redis, { clock: { t: 0, now: Date.now } });
    const scheduler = new AlertScheduler(r.store, r.engine, r.dispatcher, {
      evalCron: EVERY_SECOND,
      dispatchPollMs: 50,
      now: Date.now,
      lease: { redis, holderId: "x", ttlMs: 1000 },
    });
    undo.push(() => scheduler.stop());
    scheduler.start();
    const plain = new AlertScheduler(r.store, r.engine, r.dispatcher, { evalCron: EVERY_SECOND, dispatchPollMs: 50, now: Date.now });
    undo.push(() => plain.stop());
    plain.start();

    const started = Date.now();
    const created = await appError(() => liq(r.service, "BTC"));
    expect(created).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 5 });
    expect(created.message).toBe(`${ALERT_STORAGE_UNREACHABLE}; nothing was stored or changed, try again in a few seconds`);
    const cancelled = await appError(() => r.service.cancel("liquidation", `alert_liq_btc_${T0_SEC}_1`, { bearerToken: "mgt_x" }));
    expect(cancelled.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(cancelled.message).toContain(ALERT_STORAGE_UNREACHABLE);
    expect((await appError(() => r.service.extend("liquidation", `alert_liq_btc_${T0_SEC}_1`, 1))).code).toBe("UPSTREAM_UNAVAILABLE");
    expect((await appError(() => r.store.get("x"))).message).toBe(`${ALERT_STORAGE_UNREACHABLE}; alerts cannot be read right now, try again in a few seconds`);
    expect((await appError(() => r.service.listActive("liquidation"))).code).toBe("UPSTREAM_UNAVAILABLE");
    expect((await appError(() => r.service.checkCapacity())).code).toBe("UPSTREAM_UNAVAILABLE");
    expect((await appError(() => r.engine.evaluate())).code).toBe("UPSTREAM_UNAVAILABLE");
    expect(await r.dispatcher.dispatchDue()).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000);

    // Before payment the caller is told nothing was charged either.
    const pre = await appError(() => checkCreateBeforePayment({ alerts: r.service } as unknown as ToolContext, "BTC", HOOK));
    expect(pre).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 5 });
    expect(pre.message).toBe(`${ALERT_STORAGE_UNREACHABLE}; nothing was stored or charged, try again in a few seconds`);

    // A couple of failing rounds and polls later nothing crashed (an unhandled rejection fails the run).
    await new Promise((res) => setTimeout(res, 1500));
    expect(scheduler.isRunning).toBe(false);
    expect(r.sender.requests).toEqual([]);
  }, 15_000);

  it("when Redis comes back, writes work again and the lease (rounds, deliveries) is re-acquired", async () => {
    const p = prefix();
    const proxy = await redisProxy();
    const redis = await handle(p, proxy.url);
    const r = rig(redis, { clock: { t: 0, now: Date.now } });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const scheduler = new AlertScheduler(r.store, r.engine, r.dispatcher, {
      evalCron: EVERY_SECOND,
      dispatchPollMs: 50,
      now: Date.now,
      lease: { redis, holderId: "solo", ttlMs: 1000 },
    });
    undo.push(() => scheduler.stop());
    scheduler.start();
    await vi.waitFor(() => expect(scheduler.isRunning).toBe(true), { timeout: 2000, interval: 10 });

    await proxy.cut();
    await vi.waitFor(() => expect(redis.ready).toBe(false), { timeout: 2000, interval: 10 });
    expect((await appError(() => liq(r.service, "BTC"))).code).toBe("UPSTREAM_UNAVAILABLE");
    // Leadership is given up once the lease could not be renewed for its TTL.
    await vi.waitFor(() => expect(scheduler.isRunning).toBe(false), { timeout: 3000, interval: 20 });

    await proxy.restore();
    await redis.waitReady(5000);
    const alert = (await liq(r.service, "BTC")).alert;
    await vi.waitFor(() => expect(scheduler.isRunning).toBe(true), { timeout: 3000, interval: 20 });
    await vi.waitFor(() => expect(r.sender.requests.map((q) => q.deliveryId)).toHaveLength(1), { timeout: 4000, interval: 20 });
    expect(JSON.parse(r.sender.requests[0]!.body)).toMatchObject({ alert_id: alert.id });
    await vi.waitFor(async () => expect((await r.store.deliveries(alert.id, 1))[0]).toMatchObject({ status: "delivered" }), { timeout: 2000, interval: 20 });
  }, 20_000);

  it("over HTTP (REDIS_URL set, Redis down): create, cancel, extend, get and list answer 503 with Retry-After; the service keeps serving", async () => {
    const stack = await startFreeStack({ REDIS_URL: "redis://127.0.0.1:1", REDIS_PREFIX: prefix(), STREAMS: "off", ALERT_EVAL_CRON: EVERY_SECOND, LEASE_TTL_MS: "1000" });
    undo.push(() => stack.close());
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${stack.url}${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: "Bearer mgt_x" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { error?: { code: string; message: string } } };
    };
    const started = Date.now();
    const created = await call("POST", "/liquidation/alert", { symbol: "BTC", threshold_pct: 5, webhook_url: "https://hooks.example.com/x", expires_in_hours: 2 });
    expect(created).toMatchObject({
      status: 503,
      retryAfter: "5",
      body: { error: { code: "UPSTREAM_UNAVAILABLE", message: `${ALERT_STORAGE_UNREACHABLE}; nothing was stored or charged, try again in a few seconds` } },
    });
    const id = `alert_liq_btc_${T0_SEC}_1`;
    for (const [method, path] of [
      ["DELETE", `/liquidation/alert/${id}`],
      ["POST", `/liquidation/alert/${id}/extend`],
      ["GET", `/liquidation/alert/${id}`],
      ["GET", "/liquidation/alerts"],
      ["GET", "/price-alerts"],
    ] as const) {
      const res = await call(method, path, method === "POST" ? { add_hours: 1 } : undefined);
      expect(res, `${method} ${path}`).toMatchObject({ status: 503, body: { error: { code: "UPSTREAM_UNAVAILABLE" } } });
      expect(res.body.error!.message).toContain(ALERT_STORAGE_UNREACHABLE);
    }
    expect(Date.now() - started).toBeLessThan(3000);
    await new Promise((res) => setTimeout(res, 1200)); // a few failing rounds and lease attempts
    expect((await call("GET", "/liquidation/alerts")).status).toBe(503);
    expect(stack.service.alerts!.isRunning).toBe(false);
  }, 30_000);
});

describe.skipIf(!redisAvailable)("two replicas over HTTP on one Redis", () => {
  it("an alert created on one replica is read, listed and cancelled on the other; its trigger is delivered once", async () => {
    const receiver = await startHttpsReceiver();
    undo.push(() => receiver.close());
    const dir = mkdtempSync(join(tmpdir(), "mg-alerts-replicas-"));
    undo.unshift(() => rmSync(dir, { recursive: true, force: true }));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, receiver.ca);
    const env = {
      REDIS_URL,
      REDIS_PREFIX: prefix(),
      LEASE_TTL_MS: "1000",
      STREAMS: "off",
      ALERT_EVAL_CRON: EVERY_SECOND,
      ALERT_DISPATCH_POLL_MS: "50",
      WEBHOOK_ALLOW_LOOPBACK: "true",
      WEBHOOK_EXTRA_CA_FILE: caFile,
    };
    const stacks = [];
    for (const replica of ["a", "b"]) {
      const s = await startFreeStack({ ...env, REPLICA_ID: `replica-${replica}` });
      undo.push(() => s.close());
      stacks.push(s);
    }
    const [a, b] = stacks as [(typeof stacks)[number], (typeof stacks)[number]];
    const res = await fetch(`${a.url}/liquidation/alert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ symbol: "BTC", threshold_pct: 0.0001, webhook_url: receiver.url("/hook"), expires_in_hours: 2 }),
    });
    const created = (await res.json()) as { alert_id: string; manage_token: string };
    expect(res.status, JSON.stringify(created)).toBe(200);
    const auth = { authorization: `Bearer ${created.manage_token}` };

    const onB = await fetch(`${b.url}/liquidation/alert/${created.alert_id}`, { headers: auth });
    expect(onB.status).toBe(200);
    expect(await onB.json()).toMatchObject({ alert_id: created.alert_id, status: "active", webhook_url: receiver.url("/hook"), visibility: "owner" });
    expect((await b.get("/liquidation/alerts")).body).toMatchObject({ count: 1, alerts: [{ alert_id: created.alert_id }] });

    // Both replicas run the scheduler; one leads: the trigger is delivered once.
    await receiver.waitFor(1, 8000);
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.requests).toHaveLength(1);
    expect([a.service.alerts!.isRunning, b.service.alerts!.isRunning].filter(Boolean)).toHaveLength(1);

    const cancelled = await fetch(`${b.url}/liquidation/alert/${created.alert_id}`, { method: "DELETE", headers: auth });
    expect(cancelled.status).toBe(200);
    const view = (await (await fetch(`${a.url}/liquidation/alert/${created.alert_id}`, { headers: auth })).json()) as {
      status: string;
      trigger_count: number;
      deliveries: Array<{ status: string }>;
    };
    expect(view).toMatchObject({ status: "cancelled", trigger_count: 1, deliveries: [{ status: "delivered" }] });
    expect((await a.get("/liquidation/alerts")).body).toMatchObject({ count: 0 });
  }, 60_000);
});
