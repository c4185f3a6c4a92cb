import { afterEach, describe, expect, it, vi } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { ownerMessage, SIGNATURE_WINDOW_SEC } from "../../src/alerts/auth.js";
import { DeliveryDispatcher, type RetryPolicy } from "../../src/alerts/dispatcher.js";
import { AlertEngine, liquidationConditionMet, priceConditionMet } from "../../src/alerts/engine.js";
import { AlertScheduler } from "../../src/alerts/scheduler.js";
import { AlertService, MAX_LIFETIME_HOURS } from "../../src/alerts/service.js";
import { ALERT_MIGRATIONS, AlertStore, alertDbPath } from "../../src/alerts/store.js";
import { openSqlite } from "../../src/lib/sqlite.js";
import type { AlertRecord, LiquidationParams, PriceParams } from "../../src/alerts/types.js";
import type { DeliveryAttempt } from "../../src/alerts/webhook/send.js";
import { AppError } from "../../src/errors.js";
import { appError } from "../helpers/errors.js";
import { fail, fakeSender, FakeSignals, ok, risk } from "../helpers/alert-fakes.js";
import { HOUR_MS, MINUTE_MS } from "../../src/lib/time.js";
import type { CallerCredentials } from "../../src/registry/tool.js";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";

/** A whole second (ids carry unix seconds; signatures carry them too). */
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const T0_SEC = T0 / 1000;
const HOOK = "https://hooks.example.com/marketgate?team=7";
const COOLDOWN_MS = 15 * MINUTE_MS;

const cleanup = cleanupAfterEach();
const running: AlertScheduler[] = [];
// Registered after cleanupAfterEach: hooks run as a stack, so schedulers stop before stores close.
afterEach(async () => {
  while (running.length) await running.pop()!.stop();
});

interface Rig {
  clock: { t: number; now: () => number };
  store: AlertStore;
  service: AlertService;
  signals: FakeSignals;
  engine: AlertEngine;
  sender: ReturnType<typeof fakeSender>;
  dispatcher: DeliveryDispatcher;
  retry: RetryPolicy;
}

/** Store (file when `path` is given, else in memory), service, engine with fake signals, dispatcher with a fake sender. */
function rig(opts: { path?: string; clock?: { t: number; now: () => number }; retry?: RetryPolicy; sender?: ReturnType<typeof fakeSender> } = {}): Rig {
  const clock = opts.clock ?? manualClock(T0);
  const store = new AlertStore(opts.path ?? ":memory:");
  cleanup.push(() => store.close());
  const service = new AlertService(store, { now: clock.now, target: { allowLoopback: false }, maxActive: 1000 });
  const signals = new FakeSignals();
  const engine = new AlertEngine(store, signals, { now: clock.now, cooldownMs: COOLDOWN_MS });
  const sender = opts.sender ?? fakeSender(() => ok());
  const retry = opts.retry ?? { maxAttempts: 4, baseDelayMs: 1000, factor: 3 };
  const dispatcher = new DeliveryDispatcher(store, sender, { now: clock.now, retry, headers: { "X-Marketgate-Data-Source": "simulated" } });
  return { clock, store, service, signals, engine, sender, dispatcher, retry };
}

async function liq(r: Rig, symbol: string, threshold_pct: number, min_value_usd = 0, hours = 24, owner?: string): Promise<AlertRecord> {
  const params: LiquidationParams = { condition: "cascade_risk", threshold_pct, min_value_usd };
  return (await r.service.create("liquidation", { symbol, params, webhookUrl: HOOK, expiresInHours: hours }, owner)).alert;
}

async function priceAlert(r: Rig, symbol: string, direction: PriceParams["direction"], target_price: number, hours = 24): Promise<AlertRecord> {
  return (await r.service.create("price", { symbol, params: { direction, target_price }, webhookUrl: HOOK, expiresInHours: hours }, undefined)).alert;
}

describe("alert ids", () => {
  it("count 1, 2, 3 within one second and restart at 1 in the next", async () => {
    const r = rig();
    const ids = [await liq(r, "BTC", 5), await liq(r, "BTC", 5)];
    r.clock.t += 999; // same second
    ids.push(await liq(r, "BTC", 5));
    expect(ids.map((a) => a.id)).toEqual([`alert_liq_btc_${T0_SEC}_1`, `alert_liq_btc_${T0_SEC}_2`, `alert_liq_btc_${T0_SEC}_3`]);
    r.clock.t += 1; // next second
    expect((await liq(r, "BTC", 5)).id).toBe(`alert_liq_btc_${T0_SEC + 1}_1`);
    expect((await liq(r, "BTC", 5)).id).toBe(`alert_liq_btc_${T0_SEC + 1}_2`);
    // Sequences are per symbol and kind.
    expect((await liq(r, "ETH", 5)).id).toBe(`alert_liq_eth_${T0_SEC + 1}_1`);
    expect((await priceAlert(r, "BTC", "above", 1)).id).toBe(`alert_price_btc_${T0_SEC + 1}_1`);
  });

  it("stay unique after closing and reopening a file-backed store within the same second", async () => {
    const path = alertDbPath(tempDir(cleanup, "mg-alert-ids-"));
    const clock = manualClock(T0 + 250);
    const a = rig({ path, clock });
    const first = [(await liq(a, "BTC", 5)).id, (await liq(a, "BTC", 5)).id];
    a.store.close();
    clock.t += 500; // still the same second
    const b = rig({ path, clock });
    const second = [(await liq(b, "BTC", 5)).id, (await liq(b, "BTC", 5)).id];
    expect([...first, ...second]).toEqual([1, 2, 3, 4].map((n) => `alert_liq_btc_${T0_SEC}_${n}`));
    expect(b.store.active("liquidation").map((x) => x.id)).toEqual([...first, ...second]);
  });
});

describe("trigger rule", () => {
  it("liquidation: oi_at_risk_pct >= threshold_pct AND oi_at_risk_usd >= min_value_usd (equality fires)", async () => {
    const p = (threshold_pct: number, min_value_usd: number): LiquidationParams => ({ condition: "cascade_risk", threshold_pct, min_value_usd });
    expect(liquidationConditionMet(p(5, 1_000_000), risk(5, 1_000_000))).toBe(true);
    expect(liquidationConditionMet(p(5, 1_000_000), risk(4.999, 5_000_000))).toBe(false);
    expect(liquidationConditionMet(p(5, 1_000_000), risk(50, 999_999))).toBe(false);

    const r = rig();
    r.signals.risk.set("BTC", risk(5, 1_000_000));
    const equal = await liq(r, "BTC", 5, 1_000_000);
    const pctAbove = await liq(r, "BTC", 5.0001, 0);
    const usdAbove = await liq(r, "BTC", 1, 1_000_001);
    const below = await liq(r, "BTC", 4, 0);
    const stats = await r.engine.evaluate();
    expect(stats).toMatchObject({ expired: 0, evaluated: 4, triggered: 2, failedSymbols: [] });
    const got = (a: AlertRecord) => r.store.get(a.id)!;
    expect(got(equal).lastEvaluation).toEqual({ value: 5, cascade_risk: "medium", condition_met: true });
    expect(got(pctAbove).lastEvaluation).toEqual({ value: 5, cascade_risk: "medium", condition_met: false });
    expect(got(usdAbove).lastEvaluation).toMatchObject({ condition_met: false });
    expect(got(below).lastEvaluation).toMatchObject({ condition_met: true });
    expect([equal, pctAbove, usdAbove, below].map((a) => got(a).triggerCount)).toEqual([1, 0, 0, 1]);
    expect([equal, pctAbove, usdAbove, below].map((a) => r.store.deliveries(a.id, 10).length)).toEqual([1, 0, 0, 1]);
    for (const a of [equal, below]) expect(got(a).lastEvaluatedAt).toBe(T0);
  });

  it("price: above is price >= target, below is price <= target", async () => {
    expect(priceConditionMet({ direction: "above", target_price: 100 }, 100)).toBe(true);
    expect(priceConditionMet({ direction: "above", target_price: 100 }, 99.99)).toBe(false);
    expect(priceConditionMet({ direction: "below", target_price: 100 }, 100)).toBe(true);
    expect(priceConditionMet({ direction: "below", target_price: 100 }, 100.01)).toBe(false);

    const r = rig();
    r.signals.prices.set("ETH", 2500);
    const alerts = [
      await priceAlert(r, "ETH", "above", 2500),
      await priceAlert(r, "ETH", "above", 2500.01),
      await priceAlert(r, "ETH", "below", 2500),
      await priceAlert(r, "ETH", "below", 2499.99),
    ];
    expect(await r.engine.evaluate()).toMatchObject({ evaluated: 4, triggered: 2 });
    expect(alerts.map((a) => r.store.get(a.id)!.lastEvaluation)).toEqual([
      { value: 2500, condition_met: true },
      { value: 2500, condition_met: false },
      { value: 2500, condition_met: true },
      { value: 2500, condition_met: false },
    ]);
    expect(alerts.map((a) => r.store.get(a.id)!.triggerCount)).toEqual([1, 0, 1, 0]);
  });
});

describe("signals per round", () => {
  it("read each symbol once however many alerts share it; price alerts reuse the heatmap price", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6, 64_000));
    r.signals.risk.set("SOL", risk(1, 1e5, 150));
    r.signals.prices.set("ETH", 2500);
    for (let i = 0; i < 3; i++) await liq(r, "BTC", 5);
    const btcAbove = await priceAlert(r, "BTC", "above", 64_000);
    const btcBelow = await priceAlert(r, "BTC", "below", 60_000);
    await priceAlert(r, "ETH", "above", 3000);
    await priceAlert(r, "ETH", "below", 3000);
    await liq(r, "SOL", 5);

    const stats = await r.engine.evaluate();
    expect(stats).toMatchObject({ evaluated: 8, triggered: 3 + 1 + 1, failedSymbols: [] });
    expect(r.signals.calls.slice().sort()).toEqual(["price:ETH", "risk:BTC", "risk:SOL"]);
    expect(r.signals.count("price:BTC")).toBe(0);
    // The BTC price alerts were judged on the heatmap's price.
    expect(r.store.get(btcAbove.id)!.lastEvaluation).toEqual({ value: 64_000, condition_met: true });
    expect(r.store.get(btcBelow.id)!.lastEvaluation).toEqual({ value: 64_000, condition_met: false });
    const body = JSON.parse(r.store.deliveries(btcAbove.id, 1)[0]!.body) as { data: { current_price: number } };
    expect(body.data.current_price).toBe(64_000);

    // Next round: again once per symbol.
    r.clock.t += 30_000;
    await r.engine.evaluate();
    expect(r.signals.calls).toHaveLength(6);
    expect([r.signals.count("risk:BTC"), r.signals.count("risk:SOL"), r.signals.count("price:ETH")]).toEqual([2, 2, 2]);
  });

  it("a failing symbol records the error on its alerts; other symbols are still evaluated", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6));
    r.signals.risk.set("ETH", new AppError("UPSTREAM_UNAVAILABLE", "no venue answered for ETH"));
    r.signals.prices.set("SOL", new Error("socket hang up"));
    const btc = await liq(r, "BTC", 5);
    const eth = await liq(r, "ETH", 5);
    const ethPrice = await priceAlert(r, "ETH", "above", 1);
    const sol = await priceAlert(r, "SOL", "above", 1);

    const stats = await r.engine.evaluate();
    expect(stats.failedSymbols.slice().sort()).toEqual(["ETH", "SOL"]);
    expect(stats).toMatchObject({ evaluated: 4, triggered: 1 });
    expect(r.store.get(btc.id)).toMatchObject({ triggerCount: 1, lastEvaluation: { value: 10, condition_met: true } });
    // The heatmap failed: the liquidation alert AND the price alert of the symbol carry its error.
    expect(r.store.get(eth.id)).toMatchObject({ triggerCount: 0, lastEvaluatedAt: T0, lastEvaluation: { error: "UPSTREAM_UNAVAILABLE: no venue answered for ETH" } });
    expect(r.store.get(ethPrice.id)!.lastEvaluation).toEqual({ error: "UPSTREAM_UNAVAILABLE: no venue answered for ETH" });
    // Unexpected errors are not shown verbatim.
    expect(r.store.get(sol.id)!.lastEvaluation).toEqual({ error: "internal error" });
    expect(r.store.deliveries(eth.id, 10)).toEqual([]);
    expect(r.store.deliveries(sol.id, 10)).toEqual([]);
  });
});

describe("cooldown", () => {
  it("queues nothing again within the cooldown and fires again once it passed while the condition holds", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6));
    const a = await liq(r, "BTC", 5);
    await r.engine.evaluate();
    expect(r.store.get(a.id)).toMatchObject({ triggerCount: 1, lastTriggeredAt: T0 });

    r.clock.t = T0 + COOLDOWN_MS - 1;
    expect(await r.engine.evaluate()).toMatchObject({ evaluated: 1, triggered: 0 });
    expect(r.store.get(a.id)).toMatchObject({ triggerCount: 1, lastTriggeredAt: T0, lastEvaluatedAt: T0 + COOLDOWN_MS - 1, lastEvaluation: { condition_met: true } });
    expect(r.store.deliveries(a.id, 10)).toHaveLength(1);

    r.clock.t = T0 + COOLDOWN_MS;
    expect(await r.engine.evaluate()).toMatchObject({ triggered: 1 });
    expect(r.store.get(a.id)).toMatchObject({ triggerCount: 2, lastTriggeredAt: T0 + COOLDOWN_MS });
    const deliveries = r.store.deliveries(a.id, 10);
    expect(deliveries).toHaveLength(2);
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(2);
    expect(JSON.parse(deliveries[0]!.body)).toMatchObject({ timestamp: new Date(T0 + COOLDOWN_MS).toISOString() });

    // Condition gone: no trigger even after the cooldown; the alert stays active.
    r.signals.risk.set("BTC", risk(1, 5e6));
    r.clock.t += 2 * COOLDOWN_MS;
    expect(await r.engine.evaluate()).toMatchObject({ triggered: 0 });
    expect(r.store.get(a.id)).toMatchObject({ status: "active", triggerCount: 2, lastEvaluation: { value: 1, condition_met: false } });
  });
});

describe("what a round writes", () => {
  it("per alert only what changed; the others take the symbol's reading as their last evaluation", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6, 64_000));
    const [low, high] = [await liq(r, "BTC", 5), await liq(r, "BTC", 20)];
    const below = await priceAlert(r, "BTC", "below", 60_000);
    const writes = vi.spyOn(r.store, "recordEvaluations");
    const written = () =>
      writes.mock.calls
        .at(-1)![1]
        .map((e) => e.alertId)
        .sort();

    await r.engine.evaluate(); // first evaluations: every alert
    expect(written()).toEqual([low.id, high.id, below.id].sort());

    r.clock.t += 30_000; // same readings: nothing of any alert changed
    expect(await r.engine.evaluate()).toMatchObject({ evaluated: 3, triggered: 0 });
    expect(written()).toEqual([]);
    for (const a of [low, high, below]) expect(r.store.get(a.id)!.lastEvaluatedAt).toBe(T0 + 30_000);
    expect(r.store.get(high.id)!.lastEvaluation).toEqual({ value: 10, cascade_risk: "medium", condition_met: false });

    r.clock.t += 30_000; // new values, no condition flips: still nothing per alert
    r.signals.risk.set("BTC", risk(12, 5e6, 63_000, "high"));
    await r.engine.evaluate();
    expect(written()).toEqual([]);
    expect(r.store.get(high.id)).toMatchObject({ lastEvaluatedAt: T0 + 60_000, lastEvaluation: { value: 12, cascade_risk: "high", condition_met: false } });
    expect(r.store.get(below.id)!.lastEvaluation).toEqual({ value: 63_000, condition_met: false });

    r.clock.t += 30_000; // a venue outage: the error is the symbol's, written once
    r.signals.risk.set("BTC", new AppError("UPSTREAM_UNAVAILABLE", "no venue answered for BTC"));
    await r.engine.evaluate();
    expect(written()).toEqual([]);
    expect(r.store.active().map((a) => a.lastEvaluation)).toEqual(Array(3).fill({ error: "UPSTREAM_UNAVAILABLE: no venue answered for BTC" }));

    r.clock.t += 30_000; // back, and the high threshold is crossed: only that alert is written (it fires)
    r.signals.risk.set("BTC", risk(25, 5e6, 63_000));
    expect(await r.engine.evaluate()).toMatchObject({ triggered: 1 });
    expect(written()).toEqual([high.id]);
    expect(r.store.get(high.id)).toMatchObject({ triggerCount: 1, lastEvaluation: { value: 25, condition_met: true } });
    expect(r.store.get(low.id)).toMatchObject({ triggerCount: 1, lastEvaluatedAt: T0 + 120_000, lastEvaluation: { value: 25, condition_met: true } });
  });

  it("an alert that ends keeps the last evaluation it had while active", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6));
    const cancelled = await liq(r, "BTC", 50);
    const expiring = await liq(r, "BTC", 50, 0, 1);
    await r.engine.evaluate();
    r.clock.t = T0 + 30 * MINUTE_MS;
    r.signals.risk.set("BTC", risk(11, 5e6));
    await r.engine.evaluate();
    expect(r.store.cancel(cancelled.id, r.clock.t + 1)).toBe(true);
    r.clock.t = T0 + HOUR_MS; // `expiring` expires at the start of this round
    r.signals.risk.set("BTC", risk(12, 5e6));
    await r.engine.evaluate();
    for (const a of [cancelled, expiring]) expect(r.store.get(a.id)).toMatchObject({ lastEvaluatedAt: T0 + 30 * MINUTE_MS, lastEvaluation: { value: 11, condition_met: false } });
    expect(r.store.get(cancelled.id)!.status).toBe("cancelled");
    expect(r.store.get(expiring.id)!.status).toBe("expired");
  });
});

describe("alert database upgrade", () => {
  it("keeps what a v1 database recorded: evaluations, triggers, ended alerts; rounds go on from there", async () => {
    const path = alertDbPath(tempDir(cleanup, "mg-alert-v1-"));
    const v1 = openSqlite(path, ALERT_MIGRATIONS.slice(0, 1), "alert");
    const row = (id: string, status: string, evaluation: object | null, triggered: number | null, count: number) =>
      v1
        .prepare(
          `INSERT INTO alert (id, kind, symbol, params, webhook_url, webhook_secret, manage_token_hash, owner, status, created_at, expires_at, ended_at, last_evaluated_at, last_evaluation, last_triggered_at, trigger_count)
           VALUES (?, 'liquidation', 'BTC', '{"condition":"cascade_risk","threshold_pct":5,"min_value_usd":0}', ?, 'whsec_x', 'ab', NULL, ?, ?, ?, NULL, ?, ?, ?, ?)`,
        )
        .run(id, HOOK, status, T0, T0 + 24 * HOUR_MS, evaluation ? T0 : null, evaluation ? JSON.stringify(evaluation) : null, triggered, count);
    row("alert_liq_btc_1_1", "active", { value: 10, cascade_risk: "medium", condition_met: true }, T0, 3);
    row("alert_liq_btc_1_2", "cancelled", { error: "UPSTREAM_UNAVAILABLE: x" }, null, 0);
    row("alert_liq_btc_1_3", "active", null, null, 0);
    v1.close();

    const r = rig({ path });
    expect(r.store.get("alert_liq_btc_1_1")).toMatchObject({
      lastEvaluatedAt: T0,
      lastEvaluation: { value: 10, cascade_risk: "medium", condition_met: true },
      lastTriggeredAt: T0,
      triggerCount: 3,
    });
    expect(r.store.get("alert_liq_btc_1_2")).toMatchObject({ status: "cancelled", lastEvaluatedAt: T0, lastEvaluation: { error: "UPSTREAM_UNAVAILABLE: x" }, triggerCount: 0 });
    expect(r.store.get("alert_liq_btc_1_3")).toMatchObject({ lastEvaluatedAt: null, lastEvaluation: null, lastTriggeredAt: null, triggerCount: 0 });

    r.clock.t = T0 + 5 * MINUTE_MS; // the first alert is in its cooldown; the third is new to rounds
    r.signals.risk.set("BTC", risk(11, 5e6));
    expect(await r.engine.evaluate()).toMatchObject({ evaluated: 2, triggered: 1 });
    expect(r.store.get("alert_liq_btc_1_1")).toMatchObject({ lastEvaluatedAt: T0 + 5 * MINUTE_MS, lastEvaluation: { value: 11, condition_met: true }, triggerCount: 3 });
    expect(r.store.get("alert_liq_btc_1_3")).toMatchObject({ lastEvaluation: { value: 11, condition_met: true }, triggerCount: 1 });
  });
});

describe("payloads", () => {
  it("liquidation alert: exactly the spec keys", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(12.3456, 1_234_567.8, 64_000.5, "high"));
    const a = await liq(r, "BTC", 5);
    await r.engine.evaluate();
    const [d] = r.store.deliveries(a.id, 10);
    expect(d).toMatchObject({ alertId: a.id, event: "liquidation_alert", status: "pending", createdAt: T0, nextAttemptAt: T0, attempts: [], deliveredAt: null });
    expect(d!.id).toMatch(/^dlv_[0-9a-f-]{36}$/);
    const body = JSON.parse(d!.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["alert_id", "data", "event", "severity", "symbol", "timestamp"]);
    expect(Object.keys(body.data as object).sort()).toEqual(["cascade_risk", "current_price", "oi_at_risk_pct", "oi_at_risk_usd", "threshold_pct", "triggered"]);
    expect(body).toStrictEqual({
      event: "liquidation_alert",
      alert_id: a.id,
      symbol: "BTC",
      severity: "high",
      data: { triggered: true, current_price: 64_000.5, oi_at_risk_usd: 1_234_568, oi_at_risk_pct: 12.35, cascade_risk: "high", threshold_pct: 5 },
      timestamp: "2025-01-15T12:00:00.000Z",
    });
  });

  it("price alert: event price_alert", async () => {
    const r = rig();
    r.signals.prices.set("ETH", 2500.25);
    const a = await priceAlert(r, "ETH", "below", 2600);
    await r.engine.evaluate();
    const [d] = r.store.deliveries(a.id, 10);
    expect(d!.event).toBe("price_alert");
    expect(JSON.parse(d!.body)).toStrictEqual({
      event: "price_alert",
      alert_id: a.id,
      symbol: "ETH",
      data: { triggered: true, direction: "below", target_price: 2600, current_price: 2500.25 },
      timestamp: "2025-01-15T12:00:00.000Z",
    });
  });
});

describe("expiry", () => {
  it("an alert past expires_at becomes expired at its expiry and is not evaluated", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6));
    r.signals.risk.set("ETH", risk(10, 5e6));
    const short = await liq(r, "BTC", 5, 0, 1);
    const long = await liq(r, "ETH", 5, 0, 48);
    r.clock.t = T0 + 3 * HOUR_MS;
    const stats = await r.engine.evaluate();
    expect(stats).toMatchObject({ expired: 1, evaluated: 1, triggered: 1 });
    expect(r.signals.calls).toEqual(["risk:ETH"]);
    expect(r.store.get(short.id)).toMatchObject({ status: "expired", endedAt: T0 + HOUR_MS, expiresAt: T0 + HOUR_MS, lastEvaluatedAt: null, triggerCount: 0 });
    expect(r.store.deliveries(short.id, 10)).toEqual([]);
    expect(r.store.get(long.id)).toMatchObject({ status: "active", endedAt: null, triggerCount: 1 });
  });

  it("expires exactly at expires_at", async () => {
    const r = rig();
    r.signals.risk.set("BTC", risk(10, 5e6));
    const a = await liq(r, "BTC", 5, 0, 1);
    r.clock.t = T0 + HOUR_MS - 1;
    expect(await r.engine.evaluate()).toMatchObject({ expired: 0, evaluated: 1 });
    r.clock.t = T0 + HOUR_MS;
    expect(await r.engine.evaluate()).toMatchObject({ expired: 1, evaluated: 0 });
    expect(r.store.get(a.id)).toMatchObject({ status: "expired", endedAt: T0 + HOUR_MS });
  });

  it("service.require() applies an overdue expiry", async () => {
    const r = rig();
    const a = await liq(r, "BTC", 5, 0, 2);
    r.clock.t = T0 + 5 * HOUR_MS;
    expect(r.store.get(a.id)!.status).toBe("active"); // nothing ran yet
    expect(await r.service.require("liquidation", a.id)).toMatchObject({ status: "expired", endedAt: T0 + 2 * HOUR_MS });
    expect(await r.service.listActive("liquidation")).toEqual([]);
  });

  it("service.require() refuses unknown ids and ids of the other kind", async () => {
    const r = rig();
    const a = await liq(r, "BTC", 5);
    expect((await appError(() => r.service.require("price", a.id))).code).toBe("NOT_FOUND");
    expect((await appError(() => r.service.require("liquidation", "alert_liq_btc_1_1"))).code).toBe("NOT_FOUND");
  });
});

describe("cancel", () => {
  const ownerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const;
  const otherKey = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as const;
  const owner = privateKeyToAccount(ownerKey);
  const other = privateKeyToAccount(otherKey);

  /** A created liquidation alert owned by `owner`, with its manage token. */
  function created(r: Rig) {
    const params: LiquidationParams = { condition: "cascade_risk", threshold_pct: 5, min_value_usd: 0 };
    return r.service.create("liquidation", { symbol: "BTC", params, webhookUrl: HOOK, expiresInHours: 24 }, owner.address);
  }

  async function signed(key: typeof owner, action: "read" | "cancel", id: string, signedAt: number): Promise<CallerCredentials> {
    return { walletSignature: await key.signMessage({ message: ownerMessage(action, id, signedAt) }), signedAt: String(signedAt) };
  }

  it("refuses a missing or wrong manage token with FORBIDDEN", async () => {
    const r = rig();
    const { alert, manageToken } = await created(r);
    expect(alert.owner).toBe(owner.address.toLowerCase());
    expect(manageToken).toMatch(/^mgt_/);
    expect(alert.manageTokenHash).not.toContain(manageToken);
    for (const creds of [{}, { bearerToken: "mgt_wrong" }, { bearerToken: manageToken + "x" }, { bearerToken: "" }]) {
      expect((await appError(() => r.service.cancel("liquidation", alert.id, creds))).code).toBe("FORBIDDEN");
    }
    expect(r.store.get(alert.id)!.status).toBe("active");
  });

  it("with the manage token: cancelled, pending deliveries cancelled, nothing sent", async () => {
    const r = rig({ sender: fakeSender(() => fail()) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const { alert, manageToken } = await created(r);
    await r.engine.evaluate();
    // One delivery already failed once and waits for its retry.
    expect(await r.dispatcher.dispatchDue()).toBe(1);
    r.clock.t += 10 * MINUTE_MS;
    const cancelled = await r.service.cancel("liquidation", alert.id, { bearerToken: manageToken });
    expect(cancelled).toMatchObject({ status: "cancelled", endedAt: T0 + 10 * MINUTE_MS });
    const [d] = r.store.deliveries(alert.id, 10);
    expect(d).toMatchObject({ status: "cancelled", deliveredAt: null });
    expect(d!.attempts).toHaveLength(1);
    r.clock.t += HOUR_MS;
    expect(await r.dispatcher.dispatchDue()).toBe(0);
    expect(r.sender.requests).toHaveLength(1);
    // A cancelled alert is no longer evaluated, and cancelling again answers the same record.
    await r.engine.evaluate();
    expect(r.signals.calls).toEqual(["risk:BTC"]);
    await expect(r.service.cancel("liquidation", alert.id, { bearerToken: manageToken })).resolves.toMatchObject({ status: "cancelled", endedAt: T0 + 10 * MINUTE_MS });
  });

  it("an attempt in flight when the alert is cancelled does not resurrect the delivery", async () => {
    let release!: (a: DeliveryAttempt) => void;
    const r = rig({ sender: fakeSender(() => new Promise<DeliveryAttempt>((res) => (release = res))) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const { alert, manageToken } = await created(r);
    await r.engine.evaluate();
    const pass = r.dispatcher.dispatchDue();
    await r.service.cancel("liquidation", alert.id, { bearerToken: manageToken });
    release(fail());
    expect(await pass).toBe(1);
    expect(r.store.deliveries(alert.id, 10)[0]).toMatchObject({ status: "cancelled" });
  });

  it("with an owner-wallet signature of the cancel message: allowed", async () => {
    const r = rig();
    const { alert } = await created(r);
    r.clock.t = T0 + 42_500;
    const creds = await signed(owner, "cancel", alert.id, T0_SEC + 40);
    await expect(r.service.authorize(alert, creds, "cancel")).resolves.toBe("owner_wallet");
    await expect(r.service.cancel("liquidation", alert.id, creds)).resolves.toMatchObject({ status: "cancelled", endedAt: T0 + 42_500 });
  });

  it("a signature at the edge of the window is allowed, older is refused", async () => {
    const r = rig();
    const { alert } = await created(r);
    r.clock.t = T0 + 3600_000;
    const now = T0_SEC + 3600;
    await expect(r.service.authorize(alert, await signed(owner, "cancel", alert.id, now - SIGNATURE_WINDOW_SEC), "cancel")).resolves.toBe("owner_wallet");
    const stale = await signed(owner, "cancel", alert.id, now - SIGNATURE_WINDOW_SEC - 1);
    expect((await appError(() => r.service.cancel("liquidation", alert.id, stale))).code).toBe("FORBIDDEN");
    const future = await signed(owner, "cancel", alert.id, now + SIGNATURE_WINDOW_SEC + 1);
    expect((await appError(() => r.service.cancel("liquidation", alert.id, future))).code).toBe("FORBIDDEN");
    expect(r.store.get(alert.id)!.status).toBe("active");
  });

  it("refuses a signature for another action, another alert, another key, or a mismatched signed_at", async () => {
    const r = rig();
    const { alert } = await created(r);
    const other1 = (await created(r)).alert;
    const refused = async (creds: CallerCredentials) => {
      expect((await appError(() => r.service.cancel("liquidation", alert.id, creds))).code).toBe("FORBIDDEN");
    };
    await refused(await signed(owner, "read", alert.id, T0_SEC));
    await refused(await signed(owner, "cancel", other1.id, T0_SEC));
    await refused(await signed(other, "cancel", alert.id, T0_SEC));
    await refused({ ...(await signed(owner, "cancel", alert.id, T0_SEC)), signedAt: String(T0_SEC + 1) });
    await refused({ walletSignature: "0xdeadbeef", signedAt: String(T0_SEC) });
    await refused({ walletSignature: (await signed(owner, "cancel", alert.id, T0_SEC)).walletSignature });
    // A read signature still authorises reading.
    await expect(r.service.authorize(alert, await signed(owner, "read", alert.id, T0_SEC), "read")).resolves.toBe("owner_wallet");
    expect(r.store.get(alert.id)!.status).toBe("active");
  });

  it("an alert without an owner can only be cancelled with its token", async () => {
    const r = rig();
    const { alert, manageToken } = await r.service.create(
      "liquidation",
      { symbol: "BTC", params: { condition: "cascade_risk", threshold_pct: 5, min_value_usd: 0 }, webhookUrl: HOOK, expiresInHours: 24 },
      undefined,
    );
    expect(alert.owner).toBeNull();
    expect((await appError(async () => r.service.cancel("liquidation", alert.id, await signed(owner, "cancel", alert.id, T0_SEC)))).code).toBe("FORBIDDEN");
    await expect(r.service.cancel("liquidation", alert.id, { bearerToken: manageToken })).resolves.toMatchObject({ status: "cancelled" });
  });

  it("cancelling an expired alert is a CONFLICT", async () => {
    const r = rig();
    const { alert, manageToken } = await created(r);
    r.clock.t = T0 + 25 * HOUR_MS;
    expect((await appError(() => r.service.cancel("liquidation", alert.id, { bearerToken: manageToken }))).code).toBe("CONFLICT");
    // Still refused without credentials: authorisation comes first.
    expect((await appError(() => r.service.cancel("liquidation", alert.id, {}))).code).toBe("FORBIDDEN");
    expect(r.store.get(alert.id)).toMatchObject({ status: "expired", endedAt: T0 + 24 * HOUR_MS });
  });
});

describe("extend", () => {
  it("adds hours, caps the remaining lifetime at 168 h and refuses when already at the cap", async () => {
    const r = rig();
    const a = await liq(r, "BTC", 5, 0, 24);
    const ext = await r.service.extend("liquidation", a.id, 10);
    expect(ext.addedMs).toBe(10 * HOUR_MS);
    expect(ext.alert.expiresAt).toBe(T0 + 34 * HOUR_MS);
    expect(r.store.get(a.id)!.expiresAt).toBe(T0 + 34 * HOUR_MS);

    const capped = await r.service.extend("liquidation", a.id, 168);
    expect(capped.alert.expiresAt).toBe(T0 + MAX_LIFETIME_HOURS * HOUR_MS);
    expect(capped.addedMs).toBe((MAX_LIFETIME_HOURS - 34) * HOUR_MS);

    const e = await appError(() => r.service.extend("liquidation", a.id, 1));
    expect(e.code).toBe("BAD_REQUEST");
    expect(e.details).toEqual([{ field: "add_hours", message: "nothing to add" }]);
    expect((await appError(() => r.service.extension("liquidation", a.id, 1))).code).toBe("BAD_REQUEST");

    // An hour later one hour fits again, no more.
    r.clock.t += HOUR_MS;
    const again = await r.service.extend("liquidation", a.id, 5);
    expect(again.addedMs).toBe(HOUR_MS);
    expect(again.alert.expiresAt).toBe(r.clock.t + MAX_LIFETIME_HOURS * HOUR_MS);
  });

  it("refuses alerts that are not active with CONFLICT", async () => {
    const r = rig();
    const cancelled = await r.service.create(
      "liquidation",
      { symbol: "BTC", params: { condition: "cascade_risk", threshold_pct: 5, min_value_usd: 0 }, webhookUrl: HOOK, expiresInHours: 24 },
      undefined,
    );
    await r.service.cancel("liquidation", cancelled.alert.id, { bearerToken: cancelled.manageToken });
    expect((await appError(() => r.service.extend("liquidation", cancelled.alert.id, 1))).code).toBe("CONFLICT");

    const expiring = await liq(r, "BTC", 5, 0, 1);
    r.clock.t += 2 * HOUR_MS;
    expect((await appError(() => r.service.extend("liquidation", expiring.id, 24))).code).toBe("CONFLICT");
    expect(r.store.get(expiring.id)).toMatchObject({ status: "expired", expiresAt: T0 + HOUR_MS });
    expect((await appError(() => r.service.extend("price", expiring.id, 24))).code).toBe("NOT_FOUND");
  });
});

describe("DeliveryDispatcher", () => {
  it("retries failures with backoff base × 3^(n−1) and gives up after maxAttempts", async () => {
    const r = rig({ sender: fakeSender(() => fail(500)), retry: { maxAttempts: 4, baseDelayMs: 1000, factor: 3 } });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const a = await liq(r, "BTC", 5);
    await r.engine.evaluate();
    const [queued] = r.store.deliveries(a.id, 1);

    expect(await r.dispatcher.dispatchDue()).toBe(1);
    let d = r.store.delivery(queued!.id)!;
    expect(d).toMatchObject({ status: "pending", nextAttemptAt: T0 + 1000, deliveredAt: null });
    expect(d.attempts).toEqual([{ at: T0, status: 500, error: "HTTP 500", duration_ms: 12 }]);

    // Not due yet.
    r.clock.t = T0 + 999;
    expect(await r.dispatcher.dispatchDue()).toBe(0);

    const waits = [3000, 9000];
    for (const [i, wait] of waits.entries()) {
      r.clock.t = r.store.delivery(queued!.id)!.nextAttemptAt;
      const at = r.clock.t;
      expect(await r.dispatcher.dispatchDue()).toBe(1);
      d = r.store.delivery(queued!.id)!;
      expect(d.attempts).toHaveLength(i + 2);
      expect(d).toMatchObject({ status: "pending", nextAttemptAt: at + wait });
    }

    r.clock.t = d.nextAttemptAt;
    expect(await r.dispatcher.dispatchDue()).toBe(1);
    d = r.store.delivery(queued!.id)!;
    expect(d).toMatchObject({ status: "failed", deliveredAt: null });
    expect(d.attempts.map((x) => x.status)).toEqual([500, 500, 500, 500]);
    expect(d.attempts.map((x) => x.at)).toEqual([T0, T0 + 1000, T0 + 4000, T0 + 13_000]);

    r.clock.t += HOUR_MS;
    expect(await r.dispatcher.dispatchDue()).toBe(0);
    expect(r.sender.requests).toHaveLength(4);
    // Every attempt is the same delivery, signed with the alert's secret at its own time.
    const alert = r.store.get(a.id)!;
    for (const [i, req] of r.sender.requests.entries()) {
      expect(req).toMatchObject({
        url: HOOK,
        secret: alert.webhookSecret,
        deliveryId: queued!.id,
        event: "liquidation_alert",
        body: queued!.body,
        headers: { "X-Marketgate-Data-Source": "simulated" },
      });
      expect(req.timestampSec).toBe(Math.floor(d.attempts[i]!.at / 1000));
    }
  });

  it("a 2xx marks the delivery delivered with delivered_at", async () => {
    const r = rig({ sender: fakeSender((_req, n) => (n === 1 ? { ok: false, status: null, error: "connect ECONNREFUSED 127.0.0.1:443", durationMs: 3 } : ok(204))) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const a = await liq(r, "BTC", 5);
    await r.engine.evaluate();
    await r.dispatcher.dispatchDue();
    r.clock.t = T0 + 1000;
    expect(await r.dispatcher.dispatchDue()).toBe(1);
    const [d] = r.store.deliveries(a.id, 1);
    expect(d).toMatchObject({ status: "delivered", deliveredAt: T0 + 1000 });
    expect(d!.attempts).toEqual([
      { at: T0, status: null, error: "connect ECONNREFUSED 127.0.0.1:443", duration_ms: 3 },
      { at: T0 + 1000, status: 204, duration_ms: 7 },
    ]);
    r.clock.t += HOUR_MS;
    expect(await r.dispatcher.dispatchDue()).toBe(0);
    expect(r.sender.requests).toHaveLength(2);
  });

  it("does not send a delivery twice when dispatchDue() runs concurrently", async () => {
    const releases: Array<(a: DeliveryAttempt) => void> = [];
    const r = rig({ sender: fakeSender(() => new Promise<DeliveryAttempt>((res) => releases.push(res))) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    r.signals.risk.set("ETH", risk(10, 5e6));
    await liq(r, "BTC", 5);
    await liq(r, "BTC", 6);
    await liq(r, "ETH", 5);
    await r.engine.evaluate();

    const passes = [r.dispatcher.dispatchDue(), r.dispatcher.dispatchDue(), r.dispatcher.dispatchDue()];
    // Let every pass run as far as it can before answering.
    await new Promise((res) => setTimeout(res, 10));
    expect(r.sender.requests).toHaveLength(3);
    for (const release of releases) release(ok());
    expect(await Promise.all(passes)).toEqual([3, 0, 0]);
    expect(new Set(r.sender.requests.map((q) => q.deliveryId)).size).toBe(3);
    expect(await r.dispatcher.dispatchDue()).toBe(0);
    expect(r.sender.requests).toHaveLength(3);
    for (const a of r.store.active()) expect(r.store.deliveries(a.id, 10).map((d) => d.status)).toEqual(["delivered"]);
  });
});

describe("AlertScheduler", () => {
  const NEVER = "0 0 0 1 1 *"; // once a year: rounds are driven by hand here

  it("start() on a reopened store applies expiries overdue while down and sends deliveries that came due", async () => {
    const path = alertDbPath(tempDir(cleanup, "mg-alert-sched-"));
    const clock = manualClock(T0);
    const retry: RetryPolicy = { maxAttempts: 6, baseDelayMs: 10_000, factor: 3 };

    // First process: both alerts fire, the first attempts fail.
    const a = rig({ path, clock, retry, sender: fakeSender(() => fail(503)) });
    a.signals.risk.set("BTC", risk(10, 5e6));
    const shortLived = await liq(a, "BTC", 5, 0, 1);
    const longLived = await liq(a, "BTC", 5, 0, 24);
    await a.engine.evaluate();
    expect(await a.dispatcher.dispatchDue()).toBe(2);
    const deliveries = [shortLived, longLived].map((x) => a.store.deliveries(x.id, 1)[0]!);
    expect(deliveries.map((d) => d.nextAttemptAt)).toEqual([T0 + 10_000, T0 + 10_000]);
    a.store.close();

    // Down for two hours.
    clock.t = T0 + 2 * HOUR_MS;
    const b = rig({ path, clock, retry, sender: fakeSender(() => ok()) });
    expect(b.store.get(shortLived.id)!.status).toBe("active");
    const scheduler = new AlertScheduler(b.store, b.engine, b.dispatcher, { evalCron: NEVER, dispatchPollMs: 60_000, now: clock.now });
    running.push(scheduler);
    scheduler.start();
    // Expiry is applied synchronously by start().
    expect(b.store.get(shortLived.id)).toMatchObject({ status: "expired", endedAt: T0 + HOUR_MS });
    expect(b.store.get(longLived.id)).toMatchObject({ status: "active", endedAt: null });
    // start() itself sends both due retries at once (the next poll would be a minute away).
    await vi.waitFor(() => expect(b.store.delivery(deliveries[1]!.id)!.status).toBe("delivered"), { timeout: 2000, interval: 5 });
    expect(b.store.delivery(deliveries[0]!.id)!.status).toBe("delivered");
    expect(b.sender.requests.map((q) => q.deliveryId).sort()).toEqual(deliveries.map((d) => d.id).sort());
    expect(await scheduler.dispatch()).toBe(0);
    for (const d of deliveries) {
      const now = b.store.delivery(d.id)!;
      expect(now).toMatchObject({ status: "delivered", deliveredAt: T0 + 2 * HOUR_MS });
      expect(now.attempts.map((x) => x.status)).toEqual([503, 200]);
    }
    expect(b.signals.calls).toEqual([]);
    await scheduler.stop();
  });

  // node-cron's destroy() does not wait for a running task: stop() must, or a round in flight would
  // write and send after stop() resolved (and fail on the store Service.close() closes next).
  it("stop() waits for (or cuts short) a cron round in flight: nothing is sent after it resolved", async () => {
    let started!: () => void;
    const inRound = new Promise<void>((res) => (started = res));
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const r = rig();
    r.signals.liquidationRisk = async () => {
      started();
      await gate;
      return risk(10, 5e6);
    };
    await liq(r, "BTC", 5);
    const scheduler = new AlertScheduler(r.store, r.engine, r.dispatcher, { evalCron: "* * * * * *", dispatchPollMs: 60_000, now: r.clock.now });
    running.push(scheduler);
    scheduler.start();
    await inRound; // a cron round is now waiting for its reading (at most about a second)
    let sentAtStop = -1;
    const stopping = scheduler.stop().then(() => (sentAtStop = r.sender.requests.length));
    await Promise.race([stopping, new Promise((res) => setTimeout(res, 50))]);
    release();
    await stopping;
    await new Promise((res) => setTimeout(res, 50));
    expect(r.sender.requests).toHaveLength(sentAtStop);
  });

  it("round() evaluates and dispatches what it queued; start() is idempotent and stop() waits for attempts", async () => {
    let release!: (a: DeliveryAttempt) => void;
    const r = rig({ sender: fakeSender(() => new Promise<DeliveryAttempt>((res) => (release = res))) });
    r.signals.risk.set("BTC", risk(10, 5e6));
    const a = await liq(r, "BTC", 5);
    const scheduler = new AlertScheduler(r.store, r.engine, r.dispatcher, { evalCron: NEVER, dispatchPollMs: 60_000, now: r.clock.now });
    running.push(scheduler);
    scheduler.start();
    scheduler.start();
    await scheduler.dispatch();
    const round = scheduler.round();
    await new Promise((res) => setTimeout(res, 10));
    expect(r.sender.requests).toHaveLength(1);
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await new Promise((res) => setTimeout(res, 10));
    expect(stopped).toBe(false);
    release(ok());
    await round;
    await stopping;
    expect(r.store.deliveries(a.id, 1)[0]).toMatchObject({ status: "delivered" });
  });
});
