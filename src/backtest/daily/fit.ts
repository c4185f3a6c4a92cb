/**
 * Fit of the cascade-risk model (src/analytics/cascade-risk.ts) on a window of training rows: the coefficients of
 * each set by least squares on the log target, with the weights a {@link CascadeForm} fixes held, and the level
 * thresholds (quantiles of the window's in-sample forecasts).
 */
import {
  CASCADE_FORM,
  CASCADE_MODEL,
  CASCADE_TERMS,
  HIGH_QUANTILE,
  MEDIUM_QUANTILE,
  cascadeShare,
  cascadeTarget,
  cascadeTerms,
  hasLiquidationHistory,
  type CascadeCoefficients,
  type CascadeFeatures,
  type CascadeForm,
  type CascadeFormSet,
  type CascadeModel,
  type CascadeTerm,
} from "../../analytics/cascade-risk.js";
import { quantile } from "./stats.js";

/** Ridge added to the normal equations' diagonal (not to the intercept), × the number of rows: keeps a small fit stable. */
const RIDGE = 1e-3;
/** Fewest rows a coefficient set is fitted on. */
export const MIN_FIT_ROWS = 50;

/** A training row: the forecast's raw features and the realised next-day share (liquidations ÷ OI, fraction). */
export interface TrainingRow {
  features: CascadeFeatures;
  outcome: number;
}

/** Solution (intercept first) of the ridge normal equations of `y` on `[1, ...x]`, by Gaussian elimination with partial pivoting. */
function leastSquares(xs: readonly (readonly number[])[], y: readonly number[]): number[] {
  const k = (xs[0]?.length ?? 0) + 1;
  const A = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  const b = new Array<number>(k).fill(0);
  xs.forEach((row, i) => {
    const x = [1, ...row];
    for (let p = 0; p < k; p++) {
      b[p]! += x[p]! * y[i]!;
      for (let q = 0; q < k; q++) A[p]![q]! += x[p]! * x[q]!;
    }
  });
  for (let p = 1; p < k; p++) A[p]![p]! += RIDGE * xs.length;
  for (let i = 0; i < k; i++) {
    let m = i;
    for (let j = i + 1; j < k; j++) if (Math.abs(A[j]![i]!) > Math.abs(A[m]![i]!)) m = j;
    [A[i], A[m]] = [A[m]!, A[i]!];
    [b[i], b[m]] = [b[m]!, b[i]!];
    if (A[i]![i] === 0) continue;
    for (let j = i + 1; j < k; j++) {
      const f = A[j]![i]! / A[i]![i]!;
      for (let c = i; c < k; c++) A[j]![c]! -= f * A[i]![c]!;
      b[j]! -= f * b[i]!;
    }
  }
  const w = new Array<number>(k).fill(0);
  for (let i = k - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let c = i + 1; c < k; c++) s -= A[i]![c]! * w[c]!;
    w[i] = A[i]![i] === 0 ? 0 : s / A[i]![i]!;
  }
  return w;
}

/** Medians of the raw features of `rows` (the model's `fill`; a feature without values keeps the shipped fill). */
export function featureMedians(rows: readonly TrainingRow[]): Record<CascadeTerm, number> {
  return Object.fromEntries(
    CASCADE_TERMS.map((t) => {
      const v = rows.map((r) => r.features[t]).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
      return [t, v.length ? quantile(v, 0.5) : CASCADE_MODEL.withLiquidations.fill[t]];
    }),
  ) as Record<CascadeTerm, number>;
}

/** One coefficient set of `form` fitted on `terms` (per row, {@link CASCADE_TERMS} order) and `targets`. */
function fitSet(form: CascadeFormSet, terms: readonly number[][], targets: readonly number[], fill: Record<CascadeTerm, number>): CascadeCoefficients {
  const index = (t: CascadeTerm) => CASCADE_TERMS.indexOf(t);
  const fixed = Object.entries(form.fixed) as [CascadeTerm, number][];
  const residual = targets.map((y, i) => y - fixed.reduce((s, [t, w]) => s + w * terms[i]![index(t)]!, 0));
  const w = leastSquares(
    terms.map((row) => form.free.map((t) => row[index(t)]!)),
    residual,
  );
  const weights = Object.fromEntries(CASCADE_TERMS.map((t) => [t, 0])) as Record<CascadeTerm, number>;
  for (const [t, v] of fixed) weights[t] = v;
  form.free.forEach((t, j) => (weights[t] = w[j + 1]!));
  return { intercept: w[0]!, weights, fill };
}

/**
 * The model of `form` fitted on `rows`: missing features take the rows' medians; the set with liquidations is
 * fitted on the rows that have a liquidation history, the set without on every row; `highFrom` and `mediumFrom` are
 * the {@link HIGH_QUANTILE} and {@link MEDIUM_QUANTILE} quantiles of the in-sample forecasts with liquidations.
 * @throws Error with fewer than {@link MIN_FIT_ROWS} rows with a liquidation history.
 */
export function fitCascadeModel(rows: readonly TrainingRow[], fittedOn: string, form: CascadeForm = CASCADE_FORM): CascadeModel {
  const withHistory = rows.filter((r) => hasLiquidationHistory(r.features));
  if (withHistory.length < MIN_FIT_ROWS) throw new Error(`cannot fit on ${withHistory.length} rows with a liquidation history (${MIN_FIT_ROWS} needed)`);
  const fill = featureMedians(rows);
  const termsOf = (rs: readonly TrainingRow[]) => rs.map((r) => cascadeTerms(r.features, fill));
  const targetsOf = (rs: readonly TrainingRow[]) => rs.map((r) => cascadeTarget(r.outcome));
  const historyTerms = termsOf(withHistory);
  const withLiquidations = fitSet(form.withLiquidations, historyTerms, targetsOf(withHistory), fill);
  const withoutLiquidations = fitSet(form.withoutLiquidations, termsOf(rows), targetsOf(rows), fill);
  const shares = historyTerms.map((t) => cascadeShare(t, withLiquidations));
  return { withLiquidations, withoutLiquidations, highFrom: quantile(shares, HIGH_QUANTILE), mediumFrom: quantile(shares, MEDIUM_QUANTILE), fittedOn };
}
