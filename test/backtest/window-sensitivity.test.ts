/**
 * History-length sensitivity of the cascade level (issue 25, part 3): the daily backtest reports how often the level
 * computed with two days less history agrees with the full window's, with Cohen's kappa.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { liquidationHeatmap } from "../../src/analytics/liquidation-heatmap.js";
import { runDailyBacktest } from "../../src/backtest/daily/evaluate.js";
import { heatmapInputFor, SHORT_WINDOW_DAYS, WINDOW_DAYS } from "../../src/backtest/daily/inputs.js";
import { loadPanel } from "../../src/backtest/daily/panel.js";
import { agreement } from "../../src/backtest/daily/stats.js";

const SLICE = fileURLToPath(new URL("./fixtures/coinalyze-daily-slice", import.meta.url));

describe("agreement and Cohen's kappa", () => {
  it("matches a hand-computed example and the limits", () => {
    // 10 items: a = 6 high / 4 low, b = 5 high / 5 low, 7 equal. p_o = 0.7, p_e = 0.6·0.5 + 0.4·0.5 = 0.5, kappa = 0.4.
    const a = ["h", "h", "h", "h", "h", "h", "l", "l", "l", "l"];
    const b = ["h", "h", "h", "h", "l", "l", "l", "l", "l", "h"];
    const r = agreement(a, b);
    expect(r.share).toBeCloseTo(0.7, 12);
    expect(r.kappa).toBeCloseTo(0.4, 12);
    expect(agreement(a, a).kappa).toBe(1);
    expect(agreement(["x", "x"], ["x", "x"])).toEqual({ share: 1, kappa: 1 });
    expect(agreement([], []).share).toBeNaN();
  });
});

describe("window sensitivity of the daily backtest (real slice)", () => {
  it("shortening the history by two days changes the volatility input, and the result reports the level agreement", () => {
    const panel = loadPanel(SLICE);
    const s = panel.symbols.get("BTC")!;
    const d = panel.days.indexOf("2022-05-12"); // the LUNA crash: the last days dominate a short window's volatility
    const full = liquidationHeatmap(heatmapInputFor(s, panel.days, d)).inputs.cascadeFeatures;
    const short = liquidationHeatmap(heatmapInputFor(s, panel.days, d, SHORT_WINDOW_DAYS)).inputs.cascadeFeatures;
    expect(SHORT_WINDOW_DAYS).toBe(WINDOW_DAYS - 2);
    expect(short.volatility).not.toBe(full.volatility);
    expect(short.liquidations).toBe(full.liquidations);
    // The 7-day means shorten with the history too (production's first days).
    expect(short.liquidations7d).not.toBe(full.liquidations7d);

    const { result } = runDailyBacktest(panel, { bootstrapReps: 0 });
    const w = result.more.window_sensitivity;
    expect(w.window_days).toBe(SHORT_WINDOW_DAYS);
    expect(w.agreement).toBeGreaterThan(0);
    expect(w.agreement).toBeLessThanOrEqual(1);
    expect(Number.isFinite(w.kappa)).toBe(true);
  });
});
