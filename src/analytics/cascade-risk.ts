/**
 * Cascade risk: a forecast of the share of open interest liquidated over the next 24 hours, and its level
 * (high / medium / low). One function for the hourly production path (the liquidation heatmap and the
 * liquidation alerts, through `liquidationHeatmap`) and the daily backtest (`npm run backtest:daily`), which
 * fits the coefficients walk-forward on real Binance liquidations and reports their out-of-sample skill
 * (docs/methods/liquidation-heatmap.md, "Cascade risk").
 *
 * Model (log-linear): ln(next 24 h liquidations ÷ OI + {@link LIQ_FLOOR}) = intercept + Σ weight × term, with
 * the terms of {@link cascadeTerms}: ln(realised liquidations of the last 24 h ÷ OI + floor), ln(daily
 * volatility), ln(24 h volume ÷ OI), |funding| in basis points per 8 h and |long/short ratio − 1|. Without a
 * liquidation feed the coefficients fitted without that term are used.
 */

/** Cascade risk level. */
export type CascadeRisk = "high" | "medium" | "low";

/** Inputs of the forecast; null when unknown (the model's `fill` value, the fitting period's median, is used). */
export interface CascadeFeatures {
  /** Realised liquidations (both sides) of the last 24 h ÷ open interest, fraction; null without a liquidation feed. */
  liquidations: number | null;
  /** Daily volatility (one day's standard deviation of the log return), fraction. */
  volatility: number | null;
  /** Volume traded in the last 24 h ÷ open interest (same venue, both USD). */
  turnover: number | null;
  /** |funding rate| per 8 h, fraction. */
  funding: number | null;
  /** |long/short ratio − 1|. */
  longShort: number | null;
}

/** The terms' names, in the order of {@link cascadeTerms}. */
export const CASCADE_TERMS = ["liquidations", "volatility", "turnover", "funding", "longShort"] as const;
/** One term of the model. */
export type CascadeTerm = (typeof CASCADE_TERMS)[number];

/** One fitted coefficient set: intercept, weight per term, and the value a missing input is replaced with. */
export interface CascadeCoefficients {
  intercept: number;
  weights: Record<CascadeTerm, number>;
  /** Fitting period's median of each raw feature (used when the input is null). */
  fill: Record<CascadeTerm, number>;
}

/** The fitted model: coefficients with and without a liquidation feed, and the level thresholds (fractions of OI). */
export interface CascadeModel {
  withLiquidations: CascadeCoefficients;
  withoutLiquidations: CascadeCoefficients;
  /** `high` from this forecast share of OI liquidated in the next 24 h (the fitting period's 90th percentile). */
  highFrom: number;
  /** `medium` from this share (the fitting period's median). */
  mediumFrom: number;
  /** What the model was fitted on (for the `method` block). */
  fittedOn: string;
}

/** Floor added to liquidation shares before the logarithm (0.01% of OI): days without liquidations stay finite. */
export const LIQ_FLOOR = 1e-4;
/** Lower bounds of volatility and turnover before the logarithm. */
const VOL_MIN = 1e-3;
const TURNOVER_MIN = 1e-3;
/** Caps of the linear terms (funding in basis points per 8 h, long/short distance): outliers do not dominate. */
const FUNDING_BP_CAP = 100;
const LONG_SHORT_CAP = 5;

/** Quantiles of the fitting period's forecasts that become the level thresholds. */
export const HIGH_QUANTILE = 0.9;
export const MEDIUM_QUANTILE = 0.5;

/** Medians of the raw features over the production fit's symbol-days (replace a missing input). */
const FILL: Record<CascadeTerm, number> = { liquidations: 0.006715, volatility: 0.0425, turnover: 4.161, funding: 0.0001, longShort: 1.436 };

/**
 * Production coefficients: fitted by `npm run backtest:daily -- --data ../shared/data/real/coinalyze-daily --fit-all`
 * on every usable symbol-day of 2022-01-10..2023-06-29 (Binance USDT perpetuals, Coinalyze daily aggregates). The
 * walk-forward evaluation refits them every day on the days before the one scored; this is the same fit on every
 * day of the folder (what the walk-forward would use for the day after it). Rerun it when the data grows.
 */
export const CASCADE_MODEL: CascadeModel = {
  withLiquidations: {
    intercept: -3.367,
    weights: { liquidations: 0.2294, volatility: 0.4085, turnover: 0.4189, funding: -0.007234, longShort: 0.06806 },
    fill: FILL,
  },
  withoutLiquidations: {
    intercept: -4.735,
    weights: { liquidations: 0, volatility: 0.4947, turnover: 0.7096, funding: -0.01054, longShort: 0.09588 },
    fill: FILL,
  },
  highFrom: 0.01397,
  mediumFrom: 0.005913,
  fittedOn: "Binance USDT perpetuals, Coinalyze daily aggregates 2022-01-10..2023-06-29 (66 symbols, 35,376 symbol-days)",
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
    Math.log(Math.max(VOL_MIN, v("volatility"))),
    Math.log(Math.max(TURNOVER_MIN, v("turnover"))),
    Math.min(FUNDING_BP_CAP, Math.abs(v("funding")) * 1e4),
    Math.min(LONG_SHORT_CAP, Math.abs(v("longShort"))),
  ];
}

/** Forecast share of OI liquidated over the next 24 h from the terms of {@link cascadeTerms}: exp(intercept + Σ weight × term) − floor, at least 0. */
export function cascadeShare(terms: ArrayLike<number>, c: Pick<CascadeCoefficients, "intercept" | "weights">): number {
  let z = c.intercept;
  for (let i = 0; i < CASCADE_TERMS.length; i++) z += c.weights[CASCADE_TERMS[i]!] * terms[i]!;
  return Math.max(0, Math.exp(z) - LIQ_FLOOR);
}

/** The regression target for an outcome share `y` (next 24 h liquidations ÷ OI, fraction). */
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

/**
 * The cascade-risk forecast (module comment): the coefficients with liquidations when `f.liquidations` is known,
 * else those without; share = exp(intercept + Σ weight × term) − {@link LIQ_FLOOR}, at least 0.
 */
export function cascadeForecast(f: CascadeFeatures, model: CascadeModel = CASCADE_MODEL): CascadeForecast {
  const withLiq = typeof f.liquidations === "number" && Number.isFinite(f.liquidations);
  const c = withLiq ? model.withLiquidations : model.withoutLiquidations;
  const share = cascadeShare(cascadeTerms(f, c.fill), c);
  return { share, level: cascadeLevel(share, model), coefficients: withLiq ? "with_liquidations" : "without_liquidations" };
}
