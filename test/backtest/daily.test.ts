/**
 * The daily cascade-risk backtest (issues 25 and 36; docs/methods/cascade-risk.md, "The daily backtest") on a real
 * slice of the Coinalyze daily folder (test/backtest/fixtures/README.md) and, when it is present, on the whole folder.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CASCADE_MODEL, cascadeForecast, cascadeLevel } from "../../src/analytics/cascade-risk.js";
import { liquidationHeatmap } from "../../src/analytics/liquidation-heatmap.js";
import { fitLatest, runDailyBacktest } from "../../src/backtest/daily/evaluate.js";
import { BASELINES, baselinesFor, heatmapInputFor, usable } from "../../src/backtest/daily/inputs.js";
import { loadPanel, type Panel } from "../../src/backtest/daily/panel.js";
import { ranks, spearman, wilson } from "../../src/backtest/daily/stats.js";

const SLICE = fileURLToPath(new URL("./fixtures/coinalyze-daily-slice", import.meta.url));
const REAL = [process.env.MARKETGATE_COINALYZE_DAILY_DIR, fileURLToPath(new URL("../../../shared/data/real/coinalyze-daily", import.meta.url))].find(
  (d): d is string => d !== undefined && existsSync(`${d}/liquidations.csv`),
);
const ISSUE_KEYS = ["mode", "days", "symbol_days", "spearman", "levels", "precision_at_top_decile"];
const SERIES = ["model", ...BASELINES].sort();
/** Walk-forward on the slice (three months): each month fitted on the one before. */
const SLICE_REFIT = { refit: true, trainMonths: 1 } as const;
const cli = (args: string[]) => execFileSync(process.execPath, ["--import", "tsx", "src/backtest/daily/main.ts", ...args], { encoding: "utf8", stdio: "pipe" });
const lastJson = (out: string) => JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, unknown> & { more: Record<string, unknown> };

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

  it("prints one JSON object with the issues' keys as its last line: every baseline, the lead over the best, per-month Spearman", () => {
    const json = lastJson(cli(["--data", SLICE, "--reps", "20", "--refit", "--train-months", "1"]));
    for (const k of ISSUE_KEYS) expect(json).toHaveProperty(k);
    expect(json.mode).toBe("walk_forward");
    expect(Object.keys(json.spearman as object).sort()).toEqual(SERIES);
    expect(Object.keys(json.precision_at_top_decile as object).sort()).toEqual(SERIES);
    expect(Object.keys((json.ci95 as Record<string, object>).spearman!).sort()).toEqual(SERIES);
    expect(Object.keys(json.levels as object).sort()).toEqual(["high", "low", "medium"]);
    for (const l of ["high", "medium", "low"]) expect(Object.keys((json.levels as Record<string, object>)[l]!).sort()).toEqual(["next_day_liq_pct_oi", "share"]);
    expect(Object.keys(json.more.lead_vs_best as object).sort()).toEqual(["baseline", "ci_high", "ci_low", "lead"]);
    expect(Object.keys(json.more.spearman_by_month as object)).toEqual(["2022-05", "2022-06"]);
    expect(json.days).toBeGreaterThan(0);
  });

  it("refuses a folder without the five files, a malformed --from and --train-months", () => {
    const run = (args: string[]) => {
      try {
        cli(args);
        return 0;
      } catch (e) {
        return (e as { status: number }).status;
      }
    };
    expect(run(["--data", fileURLToPath(new URL("./fixtures", import.meta.url))])).toBe(2);
    expect(run(["--data", SLICE, "--from", "1 May"])).toBe(2);
    expect(run(["--data", SLICE, "--refit", "--train-months", "0"])).toBe(2);
  });

  it("scores the shipped coefficients and thresholds by default, whatever --from (issue 36: no refit on the scored window)", () => {
    for (const from of [undefined, "2022-05-15"]) {
      const run = runDailyBacktest(panel, { from, bootstrapReps: 0 });
      expect(run.result.mode).toBe("shipped");
      expect(run.fits).toEqual([]);
      expect(run.result.more.thresholds_pct).toEqual({ high: Math.round(CASCADE_MODEL.highFrom * 1e6) / 1e4, medium: Math.round(CASCADE_MODEL.mediumFrom * 1e6) / 1e4 });
      for (const r of run.scored) {
        const s = panel.symbols.get(r.symbol)!;
        const d = panel.days.indexOf(r.day);
        expect(r.share).toBeCloseTo(cascadeForecast(liquidationHeatmap(heatmapInputFor(s, panel.days, d)).inputs.cascadeFeatures, CASCADE_MODEL).share, 12);
        expect(r.level).toBe(cascadeLevel(r.share, CASCADE_MODEL));
      }
    }
  });

  it("baselines: the 7-day mean of liquidations ÷ OI, times turnover, and turnover, from the day and the six before", () => {
    const s = panel.symbols.get("SOL")!;
    const d = panel.days.indexOf("2022-05-12");
    let mean = 0;
    for (let k = d - 6; k <= d; k++) mean += (s.longLiq[k]! + s.shortLiq[k]!) / s.oi[k]! / 7;
    const b = baselinesFor(s, d);
    expect(b.mean_7d).toBeCloseTo(mean, 15);
    expect(b.turnover).toBeCloseTo(s.volume[d]! / s.oi[d]!, 15);
    expect(b.mean_7d_x_turnover).toBeCloseTo(mean * b.turnover, 15);
    expect(b.persistence).toBeCloseTo((s.longLiq[d]! + s.shortLiq[d]!) / s.oi[d]!, 15);
    // The forecast's 7-day liquidation input is that same mean, through the production heatmap.
    expect(liquidationHeatmap(heatmapInputFor(s, panel.days, d)).inputs.cascadeFeatures.liquidations7d).toBeCloseTo(mean, 12);
  });

  it("the lead over the best baseline, per-month Spearman and top-decile precision of every series agree with a recomputation", () => {
    const run = runDailyBacktest(panel, { ...SLICE_REFIT, bootstrapReps: 50 });
    const { spearman: rho, more } = run.result;
    const best = BASELINES.reduce((b, k) => (rho[k] > rho[b] ? k : b));
    expect(more.lead_vs_best.baseline).toBe(best);
    expect(more.lead_vs_best.lead).toBeCloseTo(rho.model - rho[best], 3);
    expect(more.lead_vs_best.ci_low).toBeLessThanOrEqual(more.lead_vs_best.ci_high);
    // Per month: the pooled Spearman of that month's scored rows.
    const june = run.scored.filter((r) => r.day.startsWith("2022-06"));
    expect(more.spearman_by_month["2022-06"]!.model).toBeCloseTo(
      spearman(
        june.map((r) => r.share),
        june.map((r) => r.outcome),
      ),
      4,
    );
    for (const k of SERIES) expect(run.result.precision_at_top_decile[k as keyof typeof rho]).toBeGreaterThanOrEqual(0);
  });

  it("walk-forward: each month is scored by the fit on the months before it, and the shipped form ranks as mean_7d_x_turnover", () => {
    const run = runDailyBacktest(panel, { ...SLICE_REFIT, bootstrapReps: 0 });
    expect(run.fits.map((f) => [f.month, f.fitted_on])).toEqual([
      ["2022-05", "2022-04-09..2022-04-30"],
      ["2022-06", "2022-05-01..2022-05-31"],
    ]);
    expect(run.result.more.fits.map((f) => f.high_pct)).toEqual(run.fits.map((f) => Math.round(f.model.highFrom * 1e6) / 1e4));
    // Within a month one scale multiplies mean_7d × turnover: the same ranking, the same Spearman.
    for (const v of Object.values(run.result.more.spearman_by_month)) expect(v.model).toBeCloseTo(v.mean_7d_x_turnover, 12);
    expect(run.result.more.alternatives).not.toBeNull();
    // --to ends the scored window; the days before it score the same.
    const may = runDailyBacktest(panel, { ...SLICE_REFIT, to: "2022-05-31", bootstrapReps: 0 });
    expect(may.result.to).toBe("2022-05-31");
    expect(may.scored).toEqual(run.scored.filter((r) => r.day <= "2022-05-31"));
  });

  it("scores only days from --from, each day with the production heatmap's forecast", () => {
    const run = runDailyBacktest(panel, { ...SLICE_REFIT, from: "2022-05-15", bootstrapReps: 0 });
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
    const opts = { ...SLICE_REFIT, from: "2022-05-10", bootstrapReps: 0 } as const;
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

describe.skipIf(!REAL)("daily backtest on the whole real folder", () => {
  // Documented in docs/methods/cascade-risk.md ("The daily backtest"). About 15 s each on 2 cores.
  it("walk-forward (12 months): the model is at least the best baseline, which is mean_7d_x_turnover, and the levels are ordered", { timeout: 180_000 }, () => {
    const { result } = runDailyBacktest(loadPanel(REAL!), { refit: true, bootstrapReps: 0 });
    expect([result.from, result.to, result.days]).toEqual(["2023-01-01", "2023-06-29", 180]);
    const { model, ...baselines } = result.spearman;
    for (const [name, rho] of Object.entries(baselines)) expect(model, name).toBeGreaterThanOrEqual(rho);
    expect(result.more.lead_vs_best.baseline).toBe("mean_7d_x_turnover");
    const { high, medium, low } = result.levels;
    expect(high.next_day_liq_pct_oi).toBeGreaterThan(medium.next_day_liq_pct_oi);
    expect(medium.next_day_liq_pct_oi).toBeGreaterThan(low.next_day_liq_pct_oi);
    // Without a liquidation history the fit beats turnover, its best input alone.
    expect(result.more.without_liquidations.spearman).toBeGreaterThan(result.spearman.turnover);
  });

  it("the shipped model is the latest 12-month fit (`--fit-latest`), to its printed precision", { timeout: 180_000 }, () => {
    const { model } = fitLatest(loadPanel(REAL!));
    const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(Math.abs(b) * 1e-3);
    close(CASCADE_MODEL.withLiquidations.intercept, model.withLiquidations.intercept);
    close(CASCADE_MODEL.withoutLiquidations.intercept, model.withoutLiquidations.intercept);
    for (const t of ["volatility", "turnover", "turnover7d"] as const) close(CASCADE_MODEL.withoutLiquidations.weights[t], model.withoutLiquidations.weights[t]);
    close(CASCADE_MODEL.highFrom, model.highFrom);
    close(CASCADE_MODEL.mediumFrom, model.mediumFrom);
    expect(model.fittedOn).toBe("2022-07-01..2023-06-29");
  });
});
