/**
 * Cascade risk: a forecast of the share of open interest liquidated over the next 24 hours, and its level
 * (high / medium / low). One function for the hourly production path (the liquidation heatmap and the
 * liquidation alerts, through `liquidationHeatmap`) and the daily backtest (`npm run backtest:daily`), which
 * fits it walk-forward on real Binance liquidations and scores it against the baselines a skeptic tries first
 * (docs/methods/cascade-risk.md).
 *
 * Model (log-linear): forecast = exp(intercept + Σ weight × term), the terms of {@link cascadeTerms} (logarithms
 * of the inputs, the linear funding and long/short distances). The shipped form ({@link CASCADE_FORM}) is the
 * strongest simple baseline of the backtest with a fitted scale: with a liquidation history, forecast =
 * exp(intercept) × (mean daily liquidations of the last 7 days ÷ OI) × (24 h volume ÷ OI), so it ranks
 * symbol-days exactly as that baseline does; no fitted model beat it out of sample. Without one, a fit on
 * turnover, its 7-day mean and volatility.
 */

/** Cascade risk level. */
export type CascadeRisk = "high" | "medium" | "low";

/** Inputs of the forecast; null when unknown (the model's `fill` value, the fitting period's median, is used). */
export interface CascadeFeatures {
  /** Realised liquidations (both sides) of the last 24 h ÷ open interest, fraction; null without a liquidation feed. */
  liquidations: number | null;
  /**
   * Mean over the last 7 days (fewer while less is recorded) of each day's liquidations (both sides) ÷ that day's
   * open interest, fraction per day; null without a liquidation history.
   */
  liquidations7d: number | null;
  /** Daily volatility (one day's standard deviation of the log return), fraction. */
  volatility: number | null;
  /** Volume traded in the last 24 h ÷ open interest (same venue, both USD). */
  turnover: number | null;
  /** Mean over the last 7 days of each day's volume ÷ that day's open interest (same venue). */
  turnover7d: number | null;
  /** |funding rate| per 8 h, fraction. */
  funding: number | null;
  /** |long/short ratio − 1|. */
  longShort: number | null;
}

/** The terms' names, in the order of {@link cascadeTerms}. */
export const CASCADE_TERMS = ["liquidations", "liquidations7d", "volatility", "turnover", "turnover7d", "funding", "longShort"] as const;
/** One term of the model. */
export type CascadeTerm = (typeof CASCADE_TERMS)[number];

/** One fitted coefficient set: intercept, weight per term, and the value a missing input is replaced with. */
export interface CascadeCoefficients {
  intercept: number;
  weights: Record<CascadeTerm, number>;
  /** Fitting period's median of each raw feature (used when the input is null). */
  fill: Record<CascadeTerm, number>;
}

/** The fitted model: coefficients with and without a liquidation history, and the level thresholds (fractions of OI). */
export interface CascadeModel {
  /** Used when `liquidations7d` is known. */
  withLiquidations: CascadeCoefficients;
  withoutLiquidations: CascadeCoefficients;
  /** `high` from this forecast share of OI liquidated in the next 24 h (the fitting period's 90th percentile). */
  highFrom: number;
  /** `medium` from this share (the fitting period's median). */
  mediumFrom: number;
  /** What the model was fitted on (for the `method` block). */
  fittedOn: string;
}

/**
 * What a fit estimates for one coefficient set: `fixed` weights are set by hand (the intercept is still fitted),
 * `free` ones by least squares; every other term gets weight 0.
 */
export interface CascadeFormSet {
  fixed: Partial<Record<CascadeTerm, number>>;
  free: readonly CascadeTerm[];
}

/** The model's form: one {@link CascadeFormSet} per coefficient set. */
export interface CascadeForm {
  withLiquidations: CascadeFormSet;
  withoutLiquidations: CascadeFormSet;
}

/**
 * The shipped form, chosen on the development window (docs/methods/cascade-risk.md, "Choosing the form"):
 * with a liquidation history the baseline `mean_7d_x_turnover` itself (unit weights: only the scale is fitted),
 * because no fitted combination beat it out of sample; without one, turnover, its 7-day mean and volatility, fitted
 * (they beat turnover alone, the best baseline without liquidations).
 */
export const CASCADE_FORM: CascadeForm = {
  withLiquidations: { fixed: { liquidations7d: 1, turnover: 1 }, free: [] },
  withoutLiquidations: { fixed: {}, free: ["turnover", "turnover7d", "volatility"] },
};

/** Floor added to liquidation shares in the regression target (0.01% of OI): days without liquidations stay finite. */
export const LIQ_FLOOR = 1e-4;
/** Lower bounds of the logged inputs: a week without liquidations (1e-6 of OI a day), volatility and turnover. */
const LIQ_MIN = 1e-6;
const VOL_MIN = 1e-3;
const TURNOVER_MIN = 1e-3;
/** Caps of the linear terms (funding in basis points per 8 h, long/short distance): outliers do not dominate. */
const FUNDING_BP_CAP = 100;
const LONG_SHORT_CAP = 5;

/** Quantiles of the fitting period's forecasts that become the level thresholds. */
export const HIGH_QUANTILE = 0.9;
export const MEDIUM_QUANTILE = 0.5;

/** Medians of the raw features over the production fit's symbol-days (replace a missing input). */
const FILL: Record<CascadeTerm, number> = {
  liquidations: 0.005083,
  liquidations7d: 0.006822,
  volatility: 0.03674,
  turnover: 3.8,
  turnover7d: 4.093,
  funding: 0.0001,
  longShort: 1.318,
};
const zero = (): Record<CascadeTerm, number> => Object.fromEntries(CASCADE_TERMS.map((t) => [t, 0])) as Record<CascadeTerm, number>;

/**
 * Production model: `npm run backtest:daily -- --data ../shared/data/real/coinalyze-daily --fit-latest`, the
 * walk-forward fit for the month after the data (the last 12 months, 2022-07-01..2023-06-29, of Binance USDT
 * perpetuals, Coinalyze daily aggregates). Rerun it when the data grows.
 */
export const CASCADE_MODEL: CascadeModel = {
  withLiquidations: { intercept: -1.743, weights: { ...zero(), liquidations7d: 1, turnover: 1 }, fill: FILL },
  withoutLiquidations: { intercept: -5.882, weights: { ...zero(), volatility: 0.2385, turnover: 0.3875, turnover7d: 0.4993 }, fill: FILL },
  highFrom: 0.02261,
  mediumFrom: 0.00454,
  fittedOn: "Binance USDT perpetuals, Coinalyze daily aggregates 2022-07-01..2023-06-29 (66 symbols, 24,024 symbol-days)",
};

/**
 * Default `threshold_pct` of the liquidation alert (tools/alerts/liquidation.ts): the `high` threshold of
 * {@link CASCADE_MODEL} in percent, rounded to 0.1 (so the default alert fires at `high`).
 */
export const ALERT_DEFAULT_THRESHOLD_PCT = Math.round(CASCADE_MODEL.highFrom * 1000) / 10;

/** The regressors of the model for `f` (missing inputs replaced by `fill`), in {@link CASCADE_TERMS} order. */
export function cascadeTerms(f: CascadeFeatures, fill: Record<CascadeTerm, number>): number[] {
  const v = (t: CascadeTerm): number => {
    const x = f[t];
    return typeof x === "number" && Number.isFinite(x) ? x : fill[t];
  };
  return [
    Math.log(Math.max(0, v("liquidations")) + LIQ_FLOOR),
    Math.log(Math.max(LIQ_MIN, v("liquidations7d"))),
    Math.log(Math.max(VOL_MIN, v("volatility"))),
    Math.log(Math.max(TURNOVER_MIN, v("turnover"))),
    Math.log(Math.max(TURNOVER_MIN, v("turnover7d"))),
    Math.min(FUNDING_BP_CAP, Math.abs(v("funding")) * 1e4),
    Math.min(LONG_SHORT_CAP, Math.abs(v("longShort"))),
  ];
}

/** Forecast share of OI liquidated over the next 24 h from the terms of {@link cascadeTerms}: exp(intercept + Σ weight × term). */
export function cascadeShare(terms: ArrayLike<number>, c: Pick<CascadeCoefficients, "intercept" | "weights">): number {
  let z = c.intercept;
  for (let i = 0; i < CASCADE_TERMS.length; i++) z += c.weights[CASCADE_TERMS[i]!] * terms[i]!;
  return Math.exp(z);
}

/** The regression target for an outcome share `y` (next 24 h liquidations ÷ OI, fraction): ln(y + {@link LIQ_FLOOR}). */
export function cascadeTarget(y: number): number {
  return Math.log(Math.max(0, y) + LIQ_FLOOR);
}

/** Result of {@link cascadeForecast}. */
export interface CascadeForecast {
  /** Forecast share of open interest liquidated over the next 24 h, fraction (the model's central, log-scale forecast). */
  share: number;
  level: CascadeRisk;
  /** Which coefficient set was used. */
  coefficients: "with_liquidations" | "without_liquidations";
}

/** Level of a forecast share under `model`'s thresholds: high from `highFrom`, medium from `mediumFrom`, else low. */
export function cascadeLevel(share: number, model: Pick<CascadeModel, "highFrom" | "mediumFrom"> = CASCADE_MODEL): CascadeRisk {
  if (share >= model.highFrom) return "high";
  if (share >= model.mediumFrom) return "medium";
  return "low";
}

/** Whether `f` has the liquidation history the coefficients with liquidations need. */
export function hasLiquidationHistory(f: CascadeFeatures): boolean {
  return typeof f.liquidations7d === "number" && Number.isFinite(f.liquidations7d);
}

/**
 * The cascade-risk forecast (module comment): the coefficients with liquidations when `f.liquidations7d` is known,
 * else those without; share = exp(intercept + Σ weight × term).
 */
export function cascadeForecast(f: CascadeFeatures, model: CascadeModel = CASCADE_MODEL): CascadeForecast {
  const withLiq = hasLiquidationHistory(f);
  const c = withLiq ? model.withLiquidations : model.withoutLiquidations;
  const share = cascadeShare(cascadeTerms(f, c.fill), c);
  return { share, level: cascadeLevel(share, model), coefficients: withLiq ? "with_liquidations" : "without_liquidations" };
}
