/**
 * Daily backtest of cascade risk (issues 25 and 36; docs/methods/cascade-risk.md, "The daily backtest"). For
 * each symbol-day it runs the production heatmap (`liquidationHeatmap`, whose `cascade_risk` and `oi_at_risk_pct`
 * come from src/analytics/cascade-risk.ts) on what was known at that day's close, and scores it against the next
 * day's liquidations ÷ open interest, beside the baselines of `inputs.ts`. Two modes:
 * - shipped (default): the shipped coefficients and thresholds ({@link CASCADE_MODEL}), as the product shows them;
 * - walk-forward (`refit`): each calendar month is scored by the model fitted on the `trainMonths` months before it
 *   (coefficients and thresholds), then the window rolls on a month; plus the alternative forms of
 *   {@link ALTERNATIVE_FORMS}, fitted the same way.
 */
import { CASCADE_FORM, CASCADE_MODEL, cascadeForecast, type CascadeForm, type CascadeModel } from "../../analytics/cascade-risk.js";
import { liquidationHeatmap } from "../../analytics/liquidation-heatmap.js";
import { fitCascadeModel } from "./fit.js";
import { baselinesFor, heatmapInputFor, outcomeFor, SHORT_WINDOW_DAYS, usable } from "./inputs.js";
import type { Panel } from "./panel.js";
import { summarise, type Alternative, type DailyBacktestResult, type Row, type ScoredRow } from "./summary.js";

export type { DailyBacktestResult } from "./summary.js";

/** Options of {@link runDailyBacktest}. */
export interface DailyBacktestOptions {
  /** First day scored (YYYY-MM-DD); earlier days are history (and training) only. Default: the first usable day. */
  from?: string;
  /** Last day scored (YYYY-MM-DD); later days are not read. Default: the last usable day. */
  to?: string;
  /** Walk-forward: refit on the `trainMonths` months before each scored month (default false: the shipped model). */
  refit?: boolean;
  /** Months of the walk-forward's training window (default 12). */
  trainMonths?: number;
  /** Model scored without `refit` (default {@link CASCADE_MODEL}). */
  model?: CascadeModel;
  /** Bootstrap resamples for the intervals (default 200; 0: no bootstrap, those intervals are NaN). */
  bootstrapReps?: number;
  /** Bootstrap seed (default 25). */
  seed?: number;
}

/**
 * Forms fitted beside the shipped one in walk-forward runs, to show what it was chosen against: the free-slope fit of
 * the shipped form's two inputs, and the form of issue 25 (today's liquidations, volatility, turnover, funding,
 * long/short).
 */
export const ALTERNATIVE_FORMS: Record<Alternative, CascadeForm> = {
  fitted_slopes: { withLiquidations: { fixed: {}, free: ["liquidations7d", "turnover"] }, withoutLiquidations: CASCADE_FORM.withoutLiquidations },
  issue25_form: {
    withLiquidations: { fixed: {}, free: ["liquidations", "volatility", "turnover", "funding", "longShort"] },
    withoutLiquidations: { fixed: {}, free: ["volatility", "turnover", "funding", "longShort"] },
  },
};

/** One walk-forward fit: the month it scored, its window and its scale and thresholds. */
export interface WalkForwardFit {
  month: string;
  fitted_on: string;
  rows: number;
  model: CascadeModel;
}

/** What {@link runDailyBacktest} returns. */
export interface DailyBacktestRun {
  result: DailyBacktestResult;
  /** The model of the last scored month (shipped mode: the shipped model). */
  lastModel: CascadeModel;
  /** The walk-forward fits, oldest first (empty in shipped mode). */
  fits: WalkForwardFit[];
  /** Every scored symbol-day: the forecast share and level, and the outcome (fractions). */
  scored: Array<{ day: string; symbol: string; share: number; level: ScoredRow["level"]; outcome: number }>;
}

/** Rows of every usable symbol-day, with the production heatmap's forecast inputs. */
export function collectRows(panel: Panel): Row[] {
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

/** `YYYY-MM` of a day. */
const monthOf = (day: string) => day.slice(0, 7);
/** The month `k` months before `YYYY-MM`. */
function monthsBefore(month: string, k: number): string {
  const [y, m] = month.split("-").map(Number) as [number, number];
  const i = y * 12 + (m - 1) - k;
  return `${Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, "0")}`;
}

/** The rows of the months `first` (included) to `end` (excluded). */
function rowsOfMonths(panel: Panel, rows: readonly Row[], first: string, end: string): Row[] {
  return rows.filter((r) => {
    const m = monthOf(panel.days[r.day]!);
    return m >= first && m < end;
  });
}

/** `first..last` day of `rows` (sorted by day). */
const windowOf = (panel: Panel, rows: readonly Row[]) => `${panel.days[rows[0]!.day]}..${panel.days[rows[rows.length - 1]!.day]}`;

/**
 * The model fitted on the last `trainMonths` calendar months of `panel`'s usable rows: what the walk-forward would
 * score the month after the data with (the shipped model of src/analytics/cascade-risk.ts), with the rows and
 * symbols it was fitted on.
 */
export function fitLatest(panel: Panel, trainMonths = 12): { model: CascadeModel; rows: number; symbols: number } {
  const rows = collectRows(panel);
  const end = monthsBefore(monthOf(panel.days[rows[rows.length - 1]!.day]!), -1);
  const train = rowsOfMonths(panel, rows, monthsBefore(end, trainMonths), end);
  return { model: fitCascadeModel(train, windowOf(panel, train)), rows: train.length, symbols: new Set(train.map((r) => r.symbol)).size };
}

/** Scores `rows` with `model` through the production heatmap (and the level with two days less history). */
function score(panel: Panel, rows: readonly Row[], model: CascadeModel, alternatives: Record<Alternative, CascadeModel> | null): ScoredRow[] {
  return rows.map((r) => {
    const s = panel.symbols.get(r.symbol)!;
    const risk = liquidationHeatmap({ ...heatmapInputFor(s, panel.days, r.day), cascadeModel: model }).risk;
    const levelShortWindow = liquidationHeatmap({ ...heatmapInputFor(s, panel.days, r.day, SHORT_WINDOW_DAYS), cascadeModel: model }).risk.cascade_risk;
    return {
      ...r,
      month: monthOf(panel.days[r.day]!),
      model: risk.oi_at_risk_pct / 100,
      modelWithoutLiquidations: cascadeForecast({ ...r.features, liquidations7d: null }, model).share,
      alternatives: alternatives && (Object.fromEntries(Object.entries(alternatives).map(([k, m]) => [k, cascadeForecast(r.features, m).share])) as Record<Alternative, number>),
      level: risk.cascade_risk,
      levelShortWindow,
      highFrom: model.highFrom,
      mediumFrom: model.mediumFrom,
    };
  });
}

/**
 * Runs the backtest on `panel` (module comment). Walk-forward: the model scoring month m is fitted on the rows of the
 * `trainMonths` calendar months before m (their outcomes, day d + 1, are known by m's first day); a month is scored
 * only when rows reach back to the first month of its window.
 * @throws Error when no day can be scored (too little history, or `from` after the data).
 */
export function runDailyBacktest(panel: Panel, opts: DailyBacktestOptions = {}): DailyBacktestRun {
  const reps = opts.bootstrapReps ?? 200;
  const seed = opts.seed ?? 25;
  const trainMonths = opts.trainMonths ?? 12;
  const from = opts.from ?? "";
  const to = opts.to ?? "9999";
  // Rows after `to` are dropped before anything is fitted or scored: a run with `to` never reads later outcomes.
  const rows = collectRows(panel).filter((r) => panel.days[r.day]! <= to);
  if (!rows.some((r) => panel.days[r.day]! >= from)) throw new Error(`no usable day from ${from || "the start"} to ${opts.to ?? "the end"}`);
  const scored: ScoredRow[] = [];
  const fits: WalkForwardFit[] = [];
  let lastModel = opts.model ?? CASCADE_MODEL;
  if (!opts.refit) {
    scored.push(
      ...score(
        panel,
        rows.filter((r) => panel.days[r.day]! >= from),
        lastModel,
        null,
      ),
    );
  } else {
    const months = [...new Set(rows.map((r) => monthOf(panel.days[r.day]!)))];
    for (const month of months) {
      const first = monthsBefore(month, trainMonths);
      const target = rows.filter((r) => monthOf(panel.days[r.day]!) === month && panel.days[r.day]! >= from);
      if (!months.includes(first) || !target.length) continue;
      const train = rowsOfMonths(panel, rows, first, month);
      const fittedOn = windowOf(panel, train);
      lastModel = fitCascadeModel(train, fittedOn);
      const alternatives = Object.fromEntries(Object.entries(ALTERNATIVE_FORMS).map(([k, f]) => [k, fitCascadeModel(train, fittedOn, f)])) as Record<Alternative, CascadeModel>;
      fits.push({ month, fitted_on: fittedOn, rows: train.length, model: lastModel });
      scored.push(...score(panel, target, lastModel, alternatives));
    }
  }
  if (!scored.length) throw new Error(`no day to score: walk-forward needs rows in the ${trainMonths} months before a scored month`);
  const describe = opts.refit ? `walk-forward: each month fitted on the ${trainMonths} months before it` : lastModel.fittedOn;
  return {
    result: summarise(scored, panel, { reps, seed, mode: opts.refit ? "walk_forward" : "shipped", model: describe, thresholds: lastModel, fits }),
    lastModel,
    fits,
    scored: scored.map((r) => ({ day: panel.days[r.day]!, symbol: r.symbol, share: r.model, level: r.level, outcome: r.outcome })),
  };
}
