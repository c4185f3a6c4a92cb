/**
 * Daily walk-forward backtest of cascade risk (issue 25; docs/methods/liquidation-heatmap.md, "Daily backtest").
 * For each symbol-day it runs the production heatmap (`liquidationHeatmap`, whose `cascade_risk` and
 * `oi_at_risk_pct` come from src/analytics/cascade-risk.ts) on what was known at that day's close, with the
 * cascade model refitted on the days before (walk-forward), and scores it against the next day's liquidations ÷
 * open interest, beside four single-input baselines.
 */
import { CASCADE_MODEL, cascadeForecast, type CascadeFeatures, type CascadeModel, type CascadeRisk } from "../../analytics/cascade-risk.js";
import { liquidationHeatmap } from "../../analytics/liquidation-heatmap.js";
import { CascadeFitter } from "./fit.js";
import { baselinesFor, heatmapInputFor, outcomeFor, SHORT_WINDOW_DAYS, usable } from "./inputs.js";
import type { Panel } from "./panel.js";
import { agreement, bootstrapByDay, ranks, pearson, spearman, wilson } from "./stats.js";

/** Options of {@link runDailyBacktest}. */
export interface DailyBacktestOptions {
  /** First day scored (YYYY-MM-DD); earlier days are history only. Default: after `minTrainDays`. */
  from?: string;
  /** Days of training rows required before the first scored day (default 60). */
  minTrainDays?: number;
  /** Bootstrap resamples for the intervals (default 200; 0: no bootstrap, those intervals are NaN). */
  bootstrapReps?: number;
  /** Bootstrap seed (default 25). */
  seed?: number;
}

const BASELINES = ["persistence", "volatility", "funding", "long_short"] as const;
type Baseline = (typeof BASELINES)[number];
const LEVELS: readonly CascadeRisk[] = ["high", "medium", "low"];

/** One symbol-day of the panel with its inputs known at that day's close and its outcome. */
interface Row {
  day: number;
  symbol: string;
  features: CascadeFeatures;
  baselines: Record<Baseline, number>;
  /** Next day's liquidations ÷ OI, fraction. */
  outcome: number;
}

/** A scored row: the walk-forward model's forecast share and level, and the thresholds in force. */
interface Scored extends Row {
  model: number;
  modelWithoutLiquidations: number;
  level: CascadeRisk;
  /** The level with two days less history (the entry window and OI history shortened), same model. */
  levelShortWindow: CascadeRisk;
  highFrom: number;
  mediumFrom: number;
}

type Interval = [number, number];

/** The result; its first five keys are the JSON line issue 25 asks for, the rest is detail. */
export interface DailyBacktestResult {
  days: number;
  symbol_days: number;
  spearman: Record<"model" | Baseline, number>;
  levels: Record<CascadeRisk, { share: number; next_day_liq_pct_oi: number }>;
  precision_at_top_decile: { model: number; persistence: number };
  /** 95% intervals: Spearman and level means by day-block bootstrap, shares and precisions by Wilson. */
  ci95: {
    spearman: Record<"model" | Baseline, Interval>;
    levels: Record<CascadeRisk, { share: Interval; next_day_liq_pct_oi: Interval }>;
    precision_at_top_decile: { model: Interval; persistence: Interval };
    /** Paired (same resampled days) intervals of the model's lead over the best baseline, today's liquidations. */
    model_minus_persistence: { spearman: Interval; precision_at_top_decile: Interval };
  };
  /** The other baselines' top-decile precision and the model without its liquidation input (production without a feed). */
  more: {
    precision_at_top_decile: Record<"volatility" | "funding" | "long_short" | "model_without_liquidations", number>;
    spearman_model_without_liquidations: number;
    /** Mean over days of the within-day (cross-symbol) Spearman. */
    spearman_within_day: Record<"model" | "persistence", number>;
    /** Median next-day liquidations per level, percent of OI. */
    levels_median_next_day_liq_pct_oi: Record<CascadeRisk, number>;
    /** Level shares and next-day means with both thresholds scaled by each factor (the knife edge's sensitivity). */
    threshold_sensitivity: Record<string, Record<CascadeRisk, { share: number; next_day_liq_pct_oi: number }>>;
    /** Share of scored symbol-days within ±10% of the medium/low threshold (their level flips with a 10% change). */
    near_medium_low_boundary_share: number;
    /**
     * History-length sensitivity: the level computed with two days less history (`window_days` of candles and OI
     * history instead of the whole window) against the full window's, same model: share of equal levels and
     * Cohen's kappa.
     */
    window_sensitivity: { window_days: number; agreement: number; kappa: number };
    /** The last walk-forward fit's thresholds, percent of OI. */
    last_thresholds_pct: { high: number; medium: number };
  };
  from: string;
  to: string;
}

/** What {@link runDailyBacktest} returns. */
export interface DailyBacktestRun {
  result: DailyBacktestResult;
  /** The last walk-forward fit (on the days before the last scored day). */
  lastModel: CascadeModel;
  /** The fitter holding every usable row (`fit` on it gives the production coefficients). */
  fitter: CascadeFitter;
  /** First day with a usable row. */
  firstRowDay: string;
  /** Every scored symbol-day: the forecast share and level of the walk-forward model, and the outcome (fractions). */
  scored: Array<{ day: string; symbol: string; share: number; level: CascadeRisk; outcome: number }>;
}

/** Rows of every usable symbol-day, with the production heatmap's forecast inputs. */
function collectRows(panel: Panel): Row[] {
  const rows: Row[] = [];
  for (const [symbol, s] of panel.symbols) {
    for (let d = 0; d < panel.days.length; d++) {
      if (!usable(s, d)) continue;
      const h = liquidationHeatmap(heatmapInputFor(s, panel.days, d));
      rows.push({ day: d, symbol, features: h.inputs.cascadeFeatures, baselines: baselinesFor(s, d), outcome: outcomeFor(s, d) });
    }
  }
  return rows.sort((a, b) => a.day - b.day || a.symbol.localeCompare(b.symbol));
}

/** Per day, the top decile (at least one) by `score`: how many of them are in that day's top decile of outcomes. */
function topDecile(byDay: readonly (readonly number[])[], score: (i: number) => number, outcome: (i: number) => number): { hits: number; n: number } {
  let hits = 0;
  let n = 0;
  for (const idx of byDay) {
    const k = Math.max(1, Math.round(idx.length / 10));
    const top = new Set([...idx].sort((a, b) => outcome(b) - outcome(a)).slice(0, k));
    const picked = [...idx].sort((a, b) => score(b) - score(a)).slice(0, k);
    hits += picked.filter((i) => top.has(i)).length;
    n += k;
  }
  return { hits, n };
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const r4i = (x: Interval): Interval => [r4(x[0]), r4(x[1])];

/**
 * Runs the backtest on `panel` (module comment). Walk-forward: the model scoring day s is fitted on the rows of
 * days before s only (their outcomes, day d + 1 ≤ s, are known at s's close).
 * @throws Error when no day can be scored (too little history before `from`, or `from` after the data).
 */
export function runDailyBacktest(panel: Panel, opts: DailyBacktestOptions = {}): DailyBacktestRun {
  const minTrainDays = opts.minTrainDays ?? 60;
  const reps = opts.bootstrapReps ?? 200;
  const seed = opts.seed ?? 25;
  const rows = collectRows(panel);
  const dayRows = new Map<number, Row[]>();
  for (const r of rows) (dayRows.get(r.day) ?? dayRows.set(r.day, []).get(r.day)!).push(r);
  const fromIdx = opts.from ? panel.days.findIndex((d) => d >= opts.from!) : 0;
  if (fromIdx < 0) throw new Error(`--from ${opts.from} is after the last day (${panel.days[panel.days.length - 1]})`);

  const fitter = new CascadeFitter(CASCADE_MODEL.withLiquidations.fill);
  const scored: Scored[] = [];
  const dayList = [...dayRows.keys()].sort((a, b) => a - b);
  let trainDays = 0;
  let lastModel: CascadeModel | undefined;
  for (const day of dayList) {
    if (day >= fromIdx && trainDays >= minTrainDays) {
      const model = fitter.fit(`${panel.days[dayList[0]!]}..${panel.days[day - 1]}`);
      lastModel = model;
      for (const r of dayRows.get(day)!) {
        const s = panel.symbols.get(r.symbol)!;
        // The production function, with the coefficients fitted on the days before.
        const risk = liquidationHeatmap({ ...heatmapInputFor(s, panel.days, day), cascadeModel: model }).risk;
        const noFeed = cascadeForecast({ ...r.features, liquidations: null }, model).share;
        const levelShortWindow = liquidationHeatmap({ ...heatmapInputFor(s, panel.days, day, SHORT_WINDOW_DAYS), cascadeModel: model }).risk.cascade_risk;
        scored.push({
          ...r,
          model: risk.oi_at_risk_pct / 100,
          modelWithoutLiquidations: noFeed,
          level: risk.cascade_risk,
          levelShortWindow,
          highFrom: model.highFrom,
          mediumFrom: model.mediumFrom,
        });
      }
    }
    // Day `day`'s rows become training rows for the days after it (their outcome, day + 1, is then known).
    for (const r of dayRows.get(day)!) fitter.add({ features: r.features, outcome: r.outcome });
    trainDays++;
  }
  if (!scored.length || !lastModel) throw new Error(`no day to score: ${trainDays} days of usable rows, ${minTrainDays} needed before the first scored day`);
  return {
    result: summarise(scored, panel, reps, seed, lastModel),
    lastModel,
    fitter,
    firstRowDay: panel.days[dayList[0]!]!,
    scored: scored.map((r) => ({ day: panel.days[r.day]!, symbol: r.symbol, share: r.model, level: r.level, outcome: r.outcome })),
  };
}

function summarise(scored: Scored[], panel: Panel, reps: number, seed: number, lastModel: CascadeModel): DailyBacktestResult {
  const byDayMap = new Map<number, number[]>();
  scored.forEach((r, i) => (byDayMap.get(r.day) ?? byDayMap.set(r.day, []).get(r.day)!).push(i));
  const byDay = [...byDayMap.values()];
  const outcome = (i: number) => scored[i]!.outcome;
  const series: Record<"model" | Baseline, (i: number) => number> = {
    model: (i) => scored[i]!.model,
    persistence: (i) => scored[i]!.baselines.persistence,
    volatility: (i) => scored[i]!.baselines.volatility,
    funding: (i) => scored[i]!.baselines.funding,
    long_short: (i) => scored[i]!.baselines.long_short,
  };
  const all = scored.map((_, i) => i);
  const rho = (f: (i: number) => number, idx: number[]) => spearman(idx.map(f), idx.map(outcome));
  const names = ["model", ...BASELINES] as const;
  const spearmanOf = Object.fromEntries(names.map((k) => [k, r4(rho(series[k], all))])) as Record<"model" | Baseline, number>;
  const levelStats = (levelOf: (i: number) => CascadeRisk) => {
    const out = {} as Record<CascadeRisk, { share: number; next_day_liq_pct_oi: number }>;
    for (const l of LEVELS) {
      const idx = all.filter((i) => levelOf(i) === l);
      out[l] = { share: r4(idx.length / all.length), next_day_liq_pct_oi: r4(idx.length ? (100 * idx.reduce((s, i) => s + outcome(i), 0)) / idx.length : NaN) };
    }
    return out;
  };
  const levels = levelStats((i) => scored[i]!.level);
  // One bootstrap for every interval: per resample, the outcome is ranked once.
  const levelMean = (idx: number[], l: CascadeRisk) => {
    const mine = idx.filter((i) => scored[i]!.level === l);
    return mine.length ? (100 * mine.reduce((s, i) => s + outcome(i), 0)) / mine.length : NaN;
  };
  const intervals =
    reps <= 0
      ? []
      : bootstrapByDay(
          byDay,
          (idx) => {
            const y = ranks(idx.map(outcome));
            const rhos = names.map((k) => pearson(ranks(idx.map(series[k])), y));
            return [...rhos, ...LEVELS.map((l) => levelMean(idx, l)), rhos[0]! - rhos[1]!];
          },
          reps,
          seed,
        );
  const spearmanCi = Object.fromEntries(names.map((k, j) => [k, r4i(intervals[j] ?? [NaN, NaN])])) as Record<"model" | Baseline, Interval>;
  const levelsCi = {} as DailyBacktestResult["ci95"]["levels"];
  LEVELS.forEach((l, j) => {
    const n = all.filter((i) => scored[i]!.level === l).length;
    levelsCi[l] = { share: r4i(wilson(n, all.length)), next_day_liq_pct_oi: r4i(intervals[names.length + j] ?? [NaN, NaN]) };
  });
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
  };
  const levelMedians = Object.fromEntries(LEVELS.map((l) => [l, r4(100 * median(scored.filter((r) => r.level === l).map((r) => r.outcome)))])) as Record<CascadeRisk, number>;

  const prec = (f: (i: number) => number) => topDecile(byDay, f, outcome);
  const pm = prec(series.model);
  const pp = prec(series.persistence);
  // Paired precision difference: per day the hits of each and the picks, then whole days resampled.
  const perDay = byDay.map((idx) => [topDecile([idx], series.model, outcome), topDecile([idx], series.persistence, outcome)] as const);
  const precisionDiff =
    reps <= 0
      ? [NaN, NaN]
      : bootstrapByDay(
          perDay.map((_, d) => [d]),
          (days) => {
            let m = 0;
            let p = 0;
            let n = 0;
            for (const d of days) {
              m += perDay[d]![0].hits;
              p += perDay[d]![1].hits;
              n += perDay[d]![0].n;
            }
            return [(m - p) / n];
          },
          reps,
          seed + 1,
        )[0]!;
  const sensitivity: DailyBacktestResult["more"]["threshold_sensitivity"] = {};
  for (const k of [0.8, 0.9, 1.1, 1.25]) {
    sensitivity[`x${k}`] = levelStats((i) => {
      const r = scored[i]!;
      return r.model >= r.highFrom * k ? "high" : r.model >= r.mediumFrom * k ? "medium" : "low";
    });
  }
  const withinDay = (f: (i: number) => number) => {
    const v = byDay.map((idx) => rho(f, idx)).filter(Number.isFinite);
    return r4(v.reduce((s, x) => s + x, 0) / v.length);
  };
  const rate = (p: { hits: number; n: number }) => r4(p.hits / p.n);
  return {
    days: byDay.length,
    symbol_days: scored.length,
    spearman: spearmanOf,
    levels,
    precision_at_top_decile: { model: rate(pm), persistence: rate(pp) },
    ci95: {
      spearman: spearmanCi,
      levels: levelsCi,
      precision_at_top_decile: { model: r4i(wilson(pm.hits, pm.n)), persistence: r4i(wilson(pp.hits, pp.n)) },
      model_minus_persistence: { spearman: r4i(intervals[names.length + LEVELS.length] ?? [NaN, NaN]), precision_at_top_decile: r4i(precisionDiff as Interval) },
    },
    more: {
      precision_at_top_decile: {
        volatility: rate(prec(series.volatility)),
        funding: rate(prec(series.funding)),
        long_short: rate(prec(series.long_short)),
        model_without_liquidations: rate(prec((i) => scored[i]!.modelWithoutLiquidations)),
      },
      spearman_model_without_liquidations: r4(rho((i) => scored[i]!.modelWithoutLiquidations, all)),
      spearman_within_day: { model: withinDay(series.model), persistence: withinDay(series.persistence) },
      levels_median_next_day_liq_pct_oi: levelMedians,
      threshold_sensitivity: sensitivity,
      near_medium_low_boundary_share: r4(scored.filter((r) => Math.abs(r.model / r.mediumFrom - 1) <= 0.1).length / scored.length),
      window_sensitivity: (() => {
        const a = agreement(
          scored.map((r) => r.level),
          scored.map((r) => r.levelShortWindow),
        );
        return { window_days: SHORT_WINDOW_DAYS, agreement: r4(a.share), kappa: r4(a.kappa) };
      })(),
      last_thresholds_pct: { high: r4(lastModel.highFrom * 100), medium: r4(lastModel.mediumFrom * 100) },
    },
    from: panel.days[scored[0]!.day]!,
    to: panel.days[scored[scored.length - 1]!.day]!,
  };
}
