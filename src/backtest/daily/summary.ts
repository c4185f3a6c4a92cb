/**
 * Scores of the daily backtest's scored symbol-days (docs/methods/cascade-risk.md, "The daily backtest"):
 * Spearman, top-decile precision and per-month Spearman of the model and of every baseline, the levels' next-day
 * liquidations, and day-block bootstrap intervals, among them the paired interval of the model's lead over the best
 * baseline.
 */
import type { CascadeFeatures, CascadeModel, CascadeRisk } from "../../analytics/cascade-risk.js";
import { BASELINES, SHORT_WINDOW_DAYS, type Baseline } from "./inputs.js";
import type { Panel } from "./panel.js";
import { agreement, bootstrapByDay, pearson, quantile, ranks, spearman, wilson } from "./stats.js";

/** The alternative forms a walk-forward run fits beside the shipped one (evaluate.ts, `ALTERNATIVE_FORMS`). */
export type Alternative = "fitted_slopes" | "issue25_form";
/** A scored series: the model or a baseline. */
export type Series = "model" | Baseline;
const SERIES: readonly Series[] = ["model", ...BASELINES];
const LEVELS: readonly CascadeRisk[] = ["high", "medium", "low"];

/** One symbol-day of the panel with its inputs known at that day's close and its outcome. */
export interface Row {
  day: number;
  symbol: string;
  features: CascadeFeatures;
  baselines: Record<Baseline, number>;
  /** Next day's liquidations ÷ OI, fraction. */
  outcome: number;
}

/** A scored row: the forecast share and level of the model in force, and its thresholds. */
export interface ScoredRow extends Row {
  /** `YYYY-MM` of the day. */
  month: string;
  model: number;
  /** The same model's forecast without its liquidation history (production without a feed). */
  modelWithoutLiquidations: number;
  /** The alternative forms' forecasts (walk-forward runs only). */
  alternatives: Record<Alternative, number> | null;
  level: CascadeRisk;
  /** The level with two days less history (every input's window shortened), same model. */
  levelShortWindow: CascadeRisk;
  highFrom: number;
  mediumFrom: number;
}

type Interval = [number, number];
/** A paired lead: `lead` = Spearman of the first series − that of `baseline`, with its day-block bootstrap interval. */
export interface Lead {
  baseline: string;
  lead: number;
  ci_low: number;
  ci_high: number;
}
type LevelStats = Record<CascadeRisk, { share: number; next_day_liq_pct_oi: number }>;

/** The result; its first keys are the JSON line issues 25 and 36 ask for, `more` is detail. */
export interface DailyBacktestResult {
  /** `shipped`: the shipped coefficients and thresholds; `walk_forward`: refitted on the months before each scored month. */
  mode: "shipped" | "walk_forward";
  days: number;
  symbol_days: number;
  spearman: Record<Series, number>;
  levels: LevelStats;
  precision_at_top_decile: Record<Series, number>;
  /** 95% intervals: Spearman and level means by day-block bootstrap, shares and precisions by Wilson. */
  ci95: {
    spearman: Record<Series, Interval>;
    levels: Record<CascadeRisk, { share: Interval; next_day_liq_pct_oi: Interval }>;
    precision_at_top_decile: Record<Series, Interval>;
  };
  more: {
    /** The model's Spearman lead over the baseline with the highest Spearman here, paired (same resampled days). */
    lead_vs_best: Lead;
    /** Spearman of every series within each calendar month. */
    spearman_by_month: Record<string, Record<Series, number>>;
    /** The model without its liquidation history (production without a feed), against turnover (its best input alone). */
    without_liquidations: { spearman: number; precision_at_top_decile: number; lead_vs_turnover: Lead };
    /** Walk-forward only: the alternative forms fitted the same way, with their lead over the model (null in shipped mode). */
    alternatives: Record<Alternative, { spearman: number; precision_at_top_decile: number; lead_vs_model: Lead }> | null;
    /** Mean over days of the within-day (cross-symbol) Spearman. */
    spearman_within_day: Record<Series, number>;
    /** Median next-day liquidations per level, percent of OI. */
    levels_median_next_day_liq_pct_oi: Record<CascadeRisk, number>;
    /** Level shares and next-day means with both thresholds scaled by each factor (the knife edge's sensitivity). */
    threshold_sensitivity: Record<string, LevelStats>;
    /** Share of scored symbol-days within ±10% of the medium/low threshold (their level flips with a 10% change). */
    near_medium_low_boundary_share: number;
    /** The level with two days less history against the full window's: share of equal levels and Cohen's kappa. */
    window_sensitivity: { window_days: number; agreement: number; kappa: number };
    /** What was scored: the shipped model's `fittedOn`, or the walk-forward scheme. */
    model: string;
    /** Thresholds of the shipped model, or of the last walk-forward fit, percent of OI. */
    thresholds_pct: { high: number; medium: number };
    /** Walk-forward fits, oldest first: scored month, training window and rows, scale (intercept) and thresholds (percent). */
    fits: Array<{ month: string; fitted_on: string; rows: number; intercept: number; high_pct: number; medium_pct: number }>;
  };
  from: string;
  to: string;
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
const r4i = (x: Interval | undefined): Interval => (x ? [r4(x[0]), r4(x[1])] : [NaN, NaN]);
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const record = <K extends string, V>(keys: readonly K[], f: (k: K, j: number) => V) => Object.fromEntries(keys.map((k, j) => [k, f(k, j)])) as Record<K, V>;

/** Options of {@link summarise}. */
export interface SummaryOptions {
  reps: number;
  seed: number;
  mode: DailyBacktestResult["mode"];
  model: string;
  thresholds: Pick<CascadeModel, "highFrom" | "mediumFrom">;
  fits: ReadonlyArray<{ month: string; fitted_on: string; rows: number; model: CascadeModel }>;
}

/** The result of the scored rows `scored` (sorted by day). */
export function summarise(scored: readonly ScoredRow[], panel: Panel, o: SummaryOptions): DailyBacktestResult {
  const byDayMap = new Map<number, number[]>();
  scored.forEach((r, i) => (byDayMap.get(r.day) ?? byDayMap.set(r.day, []).get(r.day)!).push(i));
  const byDay = [...byDayMap.values()];
  const outcome = (i: number) => scored[i]!.outcome;
  const series = record(SERIES, (k) => (k === "model" ? (i: number) => scored[i]!.model : (i: number) => scored[i]!.baselines[k]));
  const withoutLiq = (i: number) => scored[i]!.modelWithoutLiquidations;
  const alternatives = scored[0]!.alternatives ? (Object.keys(scored[0]!.alternatives) as Alternative[]) : [];
  const alt = (a: Alternative) => (i: number) => scored[i]!.alternatives![a];
  const all = scored.map((_, i) => i);
  const rho = (f: (i: number) => number, idx: readonly number[]) => spearman(idx.map(f), idx.map(outcome));
  const spearmanOf = record(SERIES, (k) => r4(rho(series[k], all)));
  const best = BASELINES.reduce((b, k) => (spearmanOf[k] > spearmanOf[b] ? k : b), BASELINES[0]);

  const levelOf = (i: number) => scored[i]!.level;
  const levelStats = (of: (i: number) => CascadeRisk): LevelStats =>
    record(LEVELS, (l) => {
      const idx = all.filter((i) => of(i) === l);
      return { share: r4(idx.length / all.length), next_day_liq_pct_oi: r4(idx.length ? (100 * idx.reduce((s, i) => s + outcome(i), 0)) / idx.length : NaN) };
    });
  const levelMean = (idx: readonly number[], l: CascadeRisk) => {
    const mine = idx.filter((i) => levelOf(i) === l);
    return mine.length ? (100 * mine.reduce((s, i) => s + outcome(i), 0)) / mine.length : NaN;
  };

  // One bootstrap for every interval: per resample the outcome is ranked once. Statistics, in order: each series'
  // Spearman, each level's mean, the model's lead over the best baseline, the lead without liquidations over
  // turnover, each alternative's lead over the model.
  const intervals =
    o.reps <= 0
      ? []
      : bootstrapByDay(
          byDay,
          (idx) => {
            const y = ranks(idx.map(outcome));
            const r = (f: (i: number) => number) => pearson(ranks(idx.map(f)), y);
            const rhos = SERIES.map((k) => r(series[k]));
            const model = rhos[0]!;
            return [
              ...rhos,
              ...LEVELS.map((l) => levelMean(idx, l)),
              model - rhos[SERIES.indexOf(best)]!,
              r(withoutLiq) - rhos[SERIES.indexOf("turnover")]!,
              ...alternatives.map((a) => r(alt(a)) - model),
            ];
          },
          o.reps,
          o.seed,
        );
  const at = (j: number) => intervals[j];
  const leadOf = (name: string, lead: number, j: number): Lead => {
    const ci = r4i(at(j));
    return { baseline: name, lead: r4(lead), ci_low: ci[0], ci_high: ci[1] };
  };
  const jLead = SERIES.length + LEVELS.length;

  const prec = record(SERIES, (k) => topDecile(byDay, series[k], outcome));
  const rate = (p: { hits: number; n: number }) => r4(p.hits / p.n);
  const withinDay = (f: (i: number) => number) => r4(mean(byDay.map((idx) => rho(f, idx)).filter(Number.isFinite)));
  const byMonth = new Map<string, number[]>();
  all.forEach((i) => (byMonth.get(scored[i]!.month) ?? byMonth.set(scored[i]!.month, []).get(scored[i]!.month)!).push(i));
  const levelMedians = record(LEVELS, (l) =>
    r4(
      100 *
        quantile(
          scored.filter((r) => r.level === l).map((r) => r.outcome),
          0.5,
        ),
    ),
  );
  const sensitivity: Record<string, LevelStats> = {};
  for (const k of [0.8, 0.9, 1.1, 1.25]) {
    sensitivity[`x${k}`] = levelStats((i) => {
      const r = scored[i]!;
      return r.model >= r.highFrom * k ? "high" : r.model >= r.mediumFrom * k ? "medium" : "low";
    });
  }
  const window = agreement(
    scored.map((r) => r.level),
    scored.map((r) => r.levelShortWindow),
  );
  const withoutRho = rho(withoutLiq, all);

  return {
    mode: o.mode,
    days: byDay.length,
    symbol_days: scored.length,
    spearman: spearmanOf,
    levels: levelStats(levelOf),
    precision_at_top_decile: record(SERIES, (k) => rate(prec[k])),
    ci95: {
      spearman: record(SERIES, (_, j) => r4i(at(j))),
      levels: record(LEVELS, (l, j) => ({ share: r4i(wilson(all.filter((i) => levelOf(i) === l).length, all.length)), next_day_liq_pct_oi: r4i(at(SERIES.length + j)) })),
      precision_at_top_decile: record(SERIES, (k) => r4i(wilson(prec[k].hits, prec[k].n))),
    },
    more: {
      lead_vs_best: leadOf(best, spearmanOf.model - spearmanOf[best], jLead),
      spearman_by_month: Object.fromEntries([...byMonth].map(([m, idx]) => [m, record(SERIES, (k) => r4(rho(series[k], idx)))])),
      without_liquidations: {
        spearman: r4(withoutRho),
        precision_at_top_decile: rate(topDecile(byDay, withoutLiq, outcome)),
        lead_vs_turnover: leadOf("turnover", withoutRho - rho(series.turnover, all), jLead + 1),
      },
      alternatives: alternatives.length
        ? record(alternatives, (a, j) => {
            const s = rho(alt(a), all);
            return { spearman: r4(s), precision_at_top_decile: rate(topDecile(byDay, alt(a), outcome)), lead_vs_model: leadOf("model", s - rho(series.model, all), jLead + 2 + j) };
          })
        : null,
      spearman_within_day: record(SERIES, (k) => withinDay(series[k])),
      levels_median_next_day_liq_pct_oi: levelMedians,
      threshold_sensitivity: sensitivity,
      near_medium_low_boundary_share: r4(scored.filter((r) => Math.abs(r.model / r.mediumFrom - 1) <= 0.1).length / scored.length),
      window_sensitivity: { window_days: SHORT_WINDOW_DAYS, agreement: r4(window.share), kappa: r4(window.kappa) },
      model: o.model,
      thresholds_pct: { high: r4(o.thresholds.highFrom * 100), medium: r4(o.thresholds.mediumFrom * 100) },
      fits: o.fits.map((f) => ({
        month: f.month,
        fitted_on: f.fitted_on,
        rows: f.rows,
        intercept: r4(f.model.withLiquidations.intercept),
        high_pct: r4(f.model.highFrom * 100),
        medium_pct: r4(f.model.mediumFrom * 100),
      })),
    },
    from: panel.days[scored[0]!.day]!,
    to: panel.days[scored[scored.length - 1]!.day]!,
  };
}
