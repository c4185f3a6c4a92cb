import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService, type Service } from "../../src/service.js";
import { fixedClock } from "../../src/sim/clock.js";
import { DEFAULT_SIM_SEED, startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { PRE_SUBSCRIBED } from "../../src/ingestion/manager.js";
import { parseOpenInterestHist } from "../../src/venues/binance/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { json } from "../helpers/json.js";

/**
 * The heatmap over the sandbox simulator (default seed, a fixed instant so the answer is reproducible): the
 * eight pre-subscribed symbols must not all read the same, and every input the tool can read is used.
 */
describe("Binance openInterestHist parser", () => {
  it("reads the row Binance's Open-Interest-Statistics docs show, per ONE coin, oldest first", () => {
    const inst: PerpInstrument = { venue: "binance", base: "PEPE", venueSymbol: "1000PEPEUSDT", multiplier: 1000, contractSize: 1 };
    const rows = [
      { symbol: "1000PEPEUSDT", sumOpenInterest: "200.5", sumOpenInterestValue: "4010.0", timestamp: 1642183500000 },
      { symbol: "1000PEPEUSDT", sumOpenInterest: "100.0", sumOpenInterestValue: "2000.0", timestamp: "1642179900000" },
    ];
    expect(parseOpenInterestHist(rows, inst)).toEqual([
      { venue: "binance", base: "PEPE", time: 1642179900000, oiCoins: 100_000, oiUsd: 2000 },
      { venue: "binance", base: "PEPE", time: 1642183500000, oiCoins: 200_500, oiUsd: 4010 },
    ]);
    expect(() => parseOpenInterestHist({ code: -1121 }, inst)).toThrow();
  });
});

describe("liquidation heatmap on the simulator", () => {
  let sim: RunningSimulator;
  let service: Service;
  let url: string;
  let close: () => Promise<void>;
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, body: (await json(res)) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  beforeAll(async () => {
    sim = await startSimulator({ seed: DEFAULT_SIM_SEED, clock: fixedClock(Date.UTC(2026, 9, 1, 12)) });
    const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), STREAMS: "off", ALERTS: "off" });
    service = await createService({ config });
    const l = await service.listen();
    url = l.url;
    close = l.close;
  });
  afterAll(async () => {
    await close?.();
    await sim?.close();
  });

  it("reads different structural levels for the eight pre-subscribed symbols, from open-interest history, funding and long/short ratios", async () => {
    const answers = await Promise.all(PRE_SUBSCRIBED.map((s) => get(`/liquidation/heatmap/${s}`)));
    for (const a of answers) expect(a.status).toBe(200);
    const bodies = answers.map((a) => a.body);
    // The structural bands (not validated on real liquidations; cascade_risk's forecast is, by the daily backtest).
    const levels = bodies.map((b) => b.risk_summary.structural_risk as string);
    const nearBand = bodies.map((b) => b.risk_summary.near_band_oi_pct as number);
    expect(new Set(levels).size).toBeGreaterThan(1);
    expect(new Set(nearBand.map((x) => x.toFixed(2))).size).toBe(PRE_SUBSCRIBED.length);
    expect(levels.filter((l) => l === "high").length).toBeLessThan(PRE_SUBSCRIBED.length);
    // The forecast: streams are off, so it runs without a liquidation history, on turnover, its 7-day mean and volatility.
    expect(new Set(bodies.map((b) => (b.risk_summary.oi_at_risk_pct as number).toFixed(4))).size).toBe(PRE_SUBSCRIBED.length);
    for (const b of bodies) {
      expect(b.estimated).toBe(true);
      expect(b.risk_summary.cascade_risk).toBe(b.cascade_risk);
      expect(b.risk_summary.cascade_risk_reason).toMatch(/^Estimate: /);
      expect(b.risk_summary.oi_at_risk_pct).toBeCloseTo((100 * b.risk_summary.total_oi_at_risk_usd) / b.open_interest_usd, 1);
      expect(b.risk_summary.near_band_pct).toBeCloseTo(Math.min(7.5, Math.max(0.5, b.risk_summary.daily_volatility_pct)), 1);
      const m = b.method;
      expect(m.entries_from).toBe("open_interest_changes");
      expect(m.entry_hours_used).toBe(168);
      expect(m.open_interest_history_source).toBe("binance (simulated)");
      expect(typeof m.funding_rate_8h).toBe("number");
      expect(m.long_short_sources.length).toBeGreaterThan(0);
      expect(m.liquidation_feedback).toBeNull(); // streams are off
      expect(b.risk_summary.forecast_coefficients).toBe("without_liquidations");
      expect(m.forecast_inputs.liquidations_pct_oi_24h).toBeNull();
      expect(m.forecast_inputs.liquidations_7d_pct_oi).toBeNull();
      expect(m.liquidation_history).toBeNull();
      for (const k of ["daily_volatility_pct", "turnover_24h", "turnover_7d", "funding_abs_8h_pct", "long_short_distance"]) expect(typeof m.forecast_inputs[k]).toBe("number");
      expect(m.thresholds.high_from_pct).toBeGreaterThan(m.thresholds.medium_from_pct);
      // Clusters account for the whole open interest on each side.
      for (const side of ["long", "short"]) {
        const sum = (b.leverage_clusters as Array<{ side: string; oi_at_risk_usd: number }>).filter((c) => c.side === side).reduce((s, c) => s + c.oi_at_risk_usd, 0);
        expect(sum / b.open_interest_usd).toBeCloseTo(1, 3);
      }
    }
  });
});
