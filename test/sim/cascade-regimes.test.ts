/**
 * The simulator's liquidation and turnover regimes against the real days (issue 36; docs/methods/simulator.md,
 * "Cascade-risk regimes"): the calibration constants recomputed from `shared/data/real/coinalyze-daily` when it is
 * present, and the sandbox's eight pre-subscribed symbols read by the production heatmap over the first hour of
 * Binance and OKX liquidation feeds: a mix of levels, as on real days, not `low` throughout.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baselinesFor, usable } from "../../src/backtest/daily/inputs.js";
import { loadPanel } from "../../src/backtest/daily/panel.js";
import { quantile } from "../../src/backtest/daily/stats.js";
import { loadConfig } from "../../src/config.js";
import { PRE_SUBSCRIBED } from "../../src/ingestion/manager.js";
import type { IngestionService } from "../../src/ingestion/service.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES, type FeedState } from "../../src/ingestion/types.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService, type Service } from "../../src/service.js";
import { manualClock } from "../../src/sim/clock.js";
import { LIQ_REGIME_SD, LIQ_TURNOVER_PRODUCT, LIQ_TURNOVER_PRODUCT_MEDIAN } from "../../src/sim/perp/calibration.js";
import { DEFAULT_SIM_SEED, startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { computeHeatmap } from "../../tools/perp/liquidation-heatmap.js";

const REAL = [process.env.MARKETGATE_COINALYZE_DAILY_DIR, fileURLToPath(new URL("../../../shared/data/real/coinalyze-daily", import.meta.url))].find(
  (d): d is string => d !== undefined && existsSync(`${d}/liquidations.csv`),
);
/** When the sandbox's feeds connected (the heatmap-sim test's instant). */
const T0 = Date.UTC(2026, 9, 1, 12);

describe.skipIf(!REAL)("calibration targets from the real daily data (2023-01..06)", () => {
  it("per-symbol medians of mean_7d × turnover, the all-symbol median, and the spread of the 7-day mean", () => {
    const panel = loadPanel(REAL!);
    const products = new Map<string, number[]>();
    const logMeans = new Map<string, number[]>();
    for (const [sym, s] of panel.symbols) {
      for (let d = 0; d < panel.days.length; d++) {
        if (panel.days[d]! < "2023-01-01" || !usable(s, d)) continue;
        const b = baselinesFor(s, d);
        (products.get(sym) ?? products.set(sym, []).get(sym)!).push(b.mean_7d_x_turnover);
        (logMeans.get(sym) ?? logMeans.set(sym, []).get(sym)!).push(Math.log(b.mean_7d));
      }
    }
    for (const [sym, target] of Object.entries(LIQ_TURNOVER_PRODUCT)) expect(quantile(products.get(sym)!, 0.5), sym).toBeCloseTo(target, 3);
    expect(quantile([...products.values()].flat(), 0.5)).toBeCloseTo(LIQ_TURNOVER_PRODUCT_MEDIAN, 3);
    const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - xs.reduce((b, y) => b + y, 0) / xs.length) ** 2, 0) / xs.length);
    expect(quantile([...logMeans.values()].map(sd), 0.5)).toBeCloseTo(LIQ_REGIME_SD, 2);
  });
});

describe("an hour of the sandbox's cascade levels", () => {
  const clock = manualClock(T0);
  let sim: RunningSimulator;
  let service: Service;

  beforeAll(async () => {
    sim = await startSimulator({ seed: DEFAULT_SIM_SEED, clock });
    service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), STREAMS: "off", ALERTS: "off" }), now: clock.now });
  });
  afterAll(async () => {
    await service?.close();
    await sim?.close();
  });

  it("over the first hour of Binance and OKX feeds, the eight symbols read a mix of levels from their liquidation history", { timeout: 120_000 }, async () => {
    // The liquidation store the feeds would fill: the tape's Binance and OKX liquidations (every symbol), as they
    // happen. Feeds connected at T0; the other venues' feeds are not needed by the forecast.
    const db = openStreamDb(":memory:");
    const store = new LiquidationStore(db, { now: clock.now, flushMs: 60_000 });
    const connected = new Set(["binance", "okx"]);
    const states = (): FeedState[] =>
      STREAM_VENUES.map((venue) => ({
        venue,
        connected: connected.has(venue),
        connectedSince: connected.has(venue) ? T0 : null,
        lastMessageAt: clock.now(),
        reconnects: 0,
        subscribedSymbols: 8,
        lagMs: 0,
      }));
    const ingestion = { liquidations: store, states, subscribedBases: () => [...PRE_SUBSCRIBED] } as unknown as IngestionService;
    const ctx = { ...service.ctx, ingestion };
    const levels: string[] = [];
    // Before a quarter of an hour of feeds, no liquidation history: the forecast runs without it.
    expect((await computeHeatmap(ctx, "BTC")).heatmap.risk.forecast_coefficients).toBe("without_liquidations");
    let fed = T0;
    try {
      // Every quarter of an hour of the sandbox's first hour, once the feeds have covered 15 minutes.
      for (const minutes of [15, 30, 45, 60]) {
        const t = T0 + minutes * 60_000;
        for (const venue of ["binance", "okx"] as const) {
          for (let from = fed; from < t; from += 5 * 60_000) {
            clock.set(Math.min(t, from + 5 * 60_000));
            store.add(sim.tape.liquidations(venue, "*", from, Math.min(t, from + 5 * 60_000)));
          }
        }
        fed = t;
        clock.set(t);
        for (const symbol of PRE_SUBSCRIBED) {
          const { heatmap } = await computeHeatmap(ctx, symbol);
          expect(heatmap.risk.forecast_coefficients, symbol).toBe("with_liquidations");
          levels.push(heatmap.risk.cascade_risk);
        }
      }
    } finally {
      store.close();
      db.close();
    }
    // Real days (2023-01..06, the same symbols under the shipped thresholds): about 30% medium or high.
    const raised = levels.filter((l) => l !== "low").length / levels.length;
    expect(levels).toHaveLength(32);
    expect(raised).toBeGreaterThanOrEqual(0.15);
    expect(raised).toBeLessThanOrEqual(0.5);
    expect(new Set(levels).size).toBeGreaterThan(1);
  });
});
