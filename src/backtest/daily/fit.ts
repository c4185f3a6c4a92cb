/**
 * Least-squares fit of the cascade-risk coefficients (src/analytics/cascade-risk.ts) and their level thresholds,
 * incremental so that the walk-forward backtest can refit every day on the days before the one it scores.
 */
import {
  CASCADE_TERMS,
  HIGH_QUANTILE,
  MEDIUM_QUANTILE,
  cascadeShare,
  cascadeTarget,
  cascadeTerms,
  type CascadeCoefficients,
  type CascadeFeatures,
  type CascadeModel,
  type CascadeTerm,
} from "../../analytics/cascade-risk.js";
import { quantile } from "./stats.js";

/** Ridge added to the normal equations' diagonal (not to the intercept): keeps an early, small fit stable. */
const RIDGE = 1e-3;

/** Running sums of the normal equations X'X and X'y for one set of terms. */
class NormalEquations {
  readonly k: number;
  readonly xx: Float64Array;
  readonly xy: Float64Array;
  n = 0;
  constructor(readonly terms: readonly number[]) {
    this.k = terms.length + 1;
    this.xx = new Float64Array(this.k * this.k);
    this.xy = new Float64Array(this.k);
  }
  add(allTerms: readonly number[], y: number): void {
    const x = [1, ...this.terms.map((t) => allTerms[t]!)];
    for (let a = 0; a < this.k; a++) {
      this.xy[a]! += x[a]! * y;
      for (let b = 0; b < this.k; b++) this.xx[a * this.k + b]! += x[a]! * x[b]!;
    }
    this.n++;
  }
  /** Solution (intercept first) by Gaussian elimination with partial pivoting. */
  solve(): number[] {
    const k = this.k;
    const A = Array.from({ length: k }, (_, a) => Array.from({ length: k }, (_, b) => this.xx[a * k + b]! + (a === b && a > 0 ? RIDGE * this.n : 0)));
    const y = Array.from(this.xy);
    for (let i = 0; i < k; i++) {
      let m = i;
      for (let j = i + 1; j < k; j++) if (Math.abs(A[j]![i]!) > Math.abs(A[m]![i]!)) m = j;
      [A[i], A[m]] = [A[m]!, A[i]!];
      [y[i], y[m]] = [y[m]!, y[i]!];
      if (A[i]![i] === 0) continue;
      for (let j = i + 1; j < k; j++) {
        const f = A[j]![i]! / A[i]![i]!;
        for (let c = i; c < k; c++) A[j]![c]! -= f * A[i]![c]!;
        y[j]! -= f * y[i]!;
      }
    }
    const w = new Array<number>(k).fill(0);
    for (let i = k - 1; i >= 0; i--) {
      let s = y[i]!;
      for (let c = i + 1; c < k; c++) s -= A[i]![c]! * w[c]!;
      w[i] = A[i]![i] === 0 ? 0 : s / A[i]![i]!;
    }
    return w;
  }
}

/** A training row: the forecast's raw features and the realised next-day share (liquidations ÷ OI, fraction). */
export interface TrainingRow {
  features: CascadeFeatures;
  outcome: number;
}

const ALL = CASCADE_TERMS.map((_, i) => i);
const WITHOUT_LIQUIDATIONS = ALL.filter((i) => CASCADE_TERMS[i] !== "liquidations");

/**
 * Accumulates training rows and fits a {@link CascadeModel} on everything added so far: the two coefficient sets by
 * least squares on the log target and the thresholds (the
 * {@link HIGH_QUANTILE} and {@link MEDIUM_QUANTILE} quantiles of the in-sample forecasts with liquidations).
 */
export class CascadeFitter {
  private readonly withLiq = new NormalEquations(ALL);
  private readonly withoutLiq = new NormalEquations(WITHOUT_LIQUIDATIONS);
  /** Terms of every row added (rows × terms, flat), for the in-sample forecasts of the thresholds. */
  private terms: Float64Array = new Float64Array(1024 * CASCADE_TERMS.length);
  private n = 0;
  private readonly raw: Record<CascadeTerm, number[]> = Object.fromEntries(CASCADE_TERMS.map((t) => [t, []])) as unknown as Record<CascadeTerm, number[]>;
  /** Fill of missing features, the same in the sums and in the fitted model (medians of a growing sample would move under the sums). */
  private readonly termFill: Record<CascadeTerm, number>;

  constructor(termFill: Record<CascadeTerm, number>) {
    this.termFill = termFill;
  }

  get size(): number {
    return this.n;
  }

  add(row: TrainingRow): void {
    const terms = cascadeTerms(row.features, this.termFill);
    const y = cascadeTarget(row.outcome);
    this.withLiq.add(terms, y);
    this.withoutLiq.add(terms, y);
    if ((this.n + 1) * CASCADE_TERMS.length > this.terms.length) {
      const grown = new Float64Array(this.terms.length * 2);
      grown.set(this.terms);
      this.terms = grown;
    }
    this.terms.set(terms, this.n * CASCADE_TERMS.length);
    this.n++;
    for (const t of CASCADE_TERMS) {
      const v = row.features[t];
      if (typeof v === "number" && Number.isFinite(v)) this.raw[t].push(v);
    }
  }

  /** Medians of the raw features added so far (the production model's `fill`; features without values keep the current fill). */
  medians(): Record<CascadeTerm, number> {
    return Object.fromEntries(CASCADE_TERMS.map((t) => [t, this.raw[t].length ? quantile(this.raw[t], 0.5) : this.termFill[t]])) as Record<CascadeTerm, number>;
  }

  /** The model fitted on every row added so far (missing features filled with the constructor's `termFill`). @throws Error with fewer than 50 rows. */
  fit(fittedOn: string): CascadeModel {
    if (this.n < 50) throw new Error(`cannot fit on ${this.n} rows`);
    const fill = this.termFill;
    const coefficients = (eq: NormalEquations): CascadeCoefficients => {
      const w = eq.solve();
      const weights = Object.fromEntries(CASCADE_TERMS.map((t) => [t, 0])) as Record<CascadeTerm, number>;
      eq.terms.forEach((ti, j) => (weights[CASCADE_TERMS[ti]!] = w[j + 1]!));
      return { intercept: w[0]!, weights, fill };
    };
    const model: CascadeModel = { withLiquidations: coefficients(this.withLiq), withoutLiquidations: coefficients(this.withoutLiq), highFrom: 0, mediumFrom: 0, fittedOn };
    // In-sample forecasts (the coefficients with liquidations, on the stored terms).
    const k = CASCADE_TERMS.length;
    const shares = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) shares[i] = cascadeShare(this.terms.subarray(i * k, (i + 1) * k), model.withLiquidations);
    model.highFrom = quantile(shares, HIGH_QUANTILE);
    model.mediumFrom = quantile(shares, MEDIUM_QUANTILE);
    return model;
  }
}
