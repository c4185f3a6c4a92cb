/**
 * The daily cascade-risk backtest (issue 25; docs/methods/liquidation-heatmap.md, "Daily backtest") on a real slice
 * of the Coinalyze daily folder (test/backtest/fixtures/README.md) and, when it is present, on the whole folder.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cascadeForecast } from "../../src/analytics/cascade-risk.js";
import { liquidationHeatmap } from "../../src/analytics/liquidation-heatmap.js";
import { runDailyBacktest } from "../../src/backtest/daily/evaluate.js";
import { heatmapInputFor, usable } from "../../src/backtest/daily/inputs.js";
import { loadPanel, type Panel } from "../../src/backtest/daily/panel.js";
import { ranks, spearman, wilson } from "../../src/backtest/daily/stats.js";

const SLICE = fileURLToPath(new URL("./fixtures/coinalyze-daily-slice", import.meta.url));
const REAL = [process.env.MARKETGATE_COINALYZE_DAILY_DIR, fileURLToPath(new URL("../../../shared/data/real/coinalyze-daily", import.meta.url))].find(
  (d): d is string => d !== undefined && existsSync(`${d}/liquidations.csv`),
);
const ISSUE_KEYS = ["days", "symbol_days", "spearman", "levels", "precision_at_top_decile"];

/** A deep copy of a panel whose fields are changed by `edit(symbol series, day index)` from day `from` on. */
function alteredFrom(panel: Panel, from: number, edit: (s: Panel["symbols"] extends Map<string, infer S> ? S : never, d: number) => void): Panel {
  const symbols = new Map(
    [...panel.symbols].map(([sym, s]) => [sym, Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Float64Array.from(v as Float64Array)])) as unknown as typeof s]),
  );
  for (const s of symbols.values()) for (let d = from; d < panel.days.length; d++) edit(s, d);
  return { days: panel.days, symbols };
}

describe("daily backtest on a real slice (12 symbols, 2022-04-01..06-15)", () => {
  const panel = loadPanel(SLICE);

  it("reads the five files: 76 days, the 12 symbols, base-unit liquidations and percent funding as recorded", () => {
    expect(panel.days).toHaveLength(76);
    expect(panel.days[0]).toBe("2022-04-01");
    expect([...panel.symbols.keys()].sort()).toEqual(["ADA", "AVAX", "BNB", "BTC", "DOGE", "DOT", "ETH", "LINK", "MATIC", "SOL", "TRX", "XRP"]);
    const btc = panel.symbols.get("BTC")!;
    const luna = panel.days.indexOf("2022-05-09");
    // BTC's long liquidations of the LUNA crash days are in the thousands of BTC; a quiet April day far fewer.
    expect(btc.longLiq[luna]! + btc.longLiq[luna + 2]!).toBeGreaterThan(1000);
    expect(btc.close[0]).toBeGreaterThan(40_000);
    expect(Math.abs(btc.fundingPct8h[0]!)).toBeLessThan(0.1);
  });

  it("prints one JSON object with the issue's keys as its last line", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "src/backtest/daily/main.ts", "--data", SLICE, "--reps", "20"], { encoding: "utf8" });
    const last = out.trim().split("\n").at(-1)!;
    const json = JSON.parse(last) as Record<string, unknown>;
    for (const k of ISSUE_KEYS) expect(json).toHaveProperty(k);
    expect(Object.keys(json.spearman as object).sort()).toEqual(["funding", "long_short", "model", "persistence", "volatility"]);
    expect(Object.keys(json.levels as object).sort()).toEqual(["high", "low", "medium"]);
    for (const l of ["high", "medium", "low"]) expect(Object.keys((json.levels as Record<string, object>)[l]!).sort()).toEqual(["next_day_liq_pct_oi", "share"]);
    expect(Object.keys(json.precision_at_top_decile as object).sort()).toEqual(["model", "persistence"]);
    expect(json.days).toBeGreaterThan(0);
  });

  it("refuses a folder without the five files and a malformed --from", () => {
    const run = (args: string[]) => {
      try {
        execFileSync(process.execPath, ["--import", "tsx", "src/backtest/daily/main.ts", ...args], { encoding: "utf8", stdio: "pipe" });
        return 0;
      } catch (e) {
        return (e as { status: number }).status;
      }
    };
    expect(run(["--data", fileURLToPath(new URL("./fixtures", import.meta.url))])).toBe(2);
    expect(run(["--data", SLICE, "--from", "1 May"])).toBe(2);
  });

  it("scores only days from --from, each day with the production heatmap's forecast", () => {
    const run = runDailyBacktest(panel, { from: "2022-05-15", minTrainDays: 20, bootstrapReps: 0 });
    expect(run.scored[0]!.day >= "2022-05-15").toBe(true);
    expect(run.result.from).toBe(run.scored[0]!.day);
    expect(run.result.symbol_days).toBe(run.scored.length);
    expect(run.result.days).toBe(new Set(run.scored.map((r) => r.day)).size);
    // Level shares add up to 1 and each level's share is the count at that level.
    const shares = Object.values(run.result.levels).reduce((s, l) => s + l.share, 0);
    expect(shares).toBeCloseTo(1, 3);
    // One scoring function: the heatmap run with the last fit gives the same share as cascadeForecast on its inputs.
    const s = panel.symbols.get("ETH")!;
    const d = panel.days.length - 2;
    expect(usable(s, d)).toBe(true);
    const h = liquidationHeatmap({ ...heatmapInputFor(s, panel.days, d), cascadeModel: run.lastModel });
    expect(h.risk.oi_at_risk_pct / 100).toBeCloseTo(cascadeForecast(h.inputs.cascadeFeatures, run.lastModel).share, 12);
    const last = run.scored.find((r) => r.day === panel.days[d] && r.symbol === "ETH")!;
    expect(last.share).toBeCloseTo(h.risk.oi_at_risk_pct / 100, 12);
    expect(last.level).toBe(h.risk.cascade_risk);
  });

  it("walk-forward: changing everything after day c+1 leaves every score up to day c unchanged (no day sees its own outcome or later)", () => {
    const opts = { from: "2022-05-10", minTrainDays: 20, bootstrapReps: 0 } as const;
    const base = runDailyBacktest(panel, opts);
    const c = panel.days.indexOf("2022-05-25");
    // From day c + 1 on: liquidations ×20 and prices halved, so the outcome of day c and everything later changes.
    const future = alteredFrom(panel, c + 1, (s, d) => {
      s.longLiq[d] = s.longLiq[d]! * 20;
      s.shortLiq[d] = s.shortLiq[d]! * 20;
      s.close[d] = s.close[d]! / 2;
    });
    const moved = runDailyBacktest(future, opts);
    const key = (r: { day: string; symbol: string }) => `${r.day} ${r.symbol}`;
    const after = new Map(moved.scored.map((r) => [key(r), r]));
    let compared = 0;
    let changedLater = 0;
    for (const r of base.scored) {
      const m = after.get(key(r))!;
      if (r.day <= panel.days[c]!) {
        expect(m.share, key(r)).toBe(r.share);
        expect(m.level, key(r)).toBe(r.level);
        compared++;
      } else if (m.share !== r.share) changedLater++;
    }
    expect(compared).toBeGreaterThan(100);
    // The alteration is visible from day c + 1 on (the test would pass vacuously otherwise).
    expect(changedLater).toBeGreaterThan(100);
    // The outcome of day c itself changed: scored against the altered day c + 1.
    const dayC = base.scored.filter((r) => r.day === panel.days[c]);
    expect(dayC.some((r) => after.get(key(r))!.outcome !== r.outcome)).toBe(true);
  });
});

describe("statistics", () => {
  it("ranks ties at their mean rank, and Spearman is 1 for a monotone relation", () => {
    expect(Array.from(ranks([10, 20, 20, 5]))).toEqual([2, 3.5, 3.5, 1]);
    expect(spearman([1, 2, 3, 4, 5], [1, 4, 9, 16, 100])).toBeCloseTo(1, 12);
    expect(spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])).toBeCloseTo(-1, 12);
  });

  it("gives the Wilson interval of a proportion (38 of 100: 0.2910..0.4779)", () => {
    // By hand: centre (0.38 + 1.96²/200) / (1 + 1.96²/100) = 0.38444; half-width 1.96 √(0.38·0.62/100 + 1.96²/40000) / 1.038416 = 0.09347.
    const [lo, hi] = wilson(38, 100);
    expect(lo).toBeCloseTo(0.291, 3);
    expect(hi).toBeCloseTo(0.4779, 3);
    expect(wilson(0, 0)).toEqual([0, 0]);
  });
});

describe.skipIf(!REAL)("daily backtest on the whole real folder (2022-07-01..2023-06-29 scored)", () => {
  // Documented in docs/methods/liquidation-heatmap.md ("Daily backtest"): the model meets or beats every single
  // baseline out of sample, and next-day liquidations fall from high to medium to low. About 15-30 s on 2 cores.
  it("the model beats every baseline on Spearman and top-decile precision, and the levels are ordered", { timeout: 180_000 }, () => {
    const { result } = runDailyBacktest(loadPanel(REAL!), { from: "2022-07-01", bootstrapReps: 0 });
    expect(result.days).toBe(364);
    const { model, ...baselines } = result.spearman;
    for (const [name, rho] of Object.entries(baselines)) expect(model, name).toBeGreaterThanOrEqual(rho);
    expect(result.precision_at_top_decile.model).toBeGreaterThanOrEqual(result.precision_at_top_decile.persistence);
    for (const p of Object.values(result.more.precision_at_top_decile).slice(0, 3)) expect(result.precision_at_top_decile.model).toBeGreaterThanOrEqual(p);
    const { high, medium, low } = result.levels;
    expect(high.next_day_liq_pct_oi).toBeGreaterThan(medium.next_day_liq_pct_oi);
    expect(medium.next_day_liq_pct_oi).toBeGreaterThan(low.next_day_liq_pct_oi);
  });
});
