import { mean, sampleCorrelation, sampleCovariance, sampleKurtosis, sampleSkewness, sampleStandardDeviation, sampleVariance } from "simple-statistics";

/*
 * Volatility and risk metrics of a price series (simple-statistics). Conventions:
 * - returns are log returns of consecutive closes, in fractions;
 * - volatility is the sample standard deviation of returns, annualised with √(periods per year)
 *   (hourly: √8760), reported in pct;
 * - 1-day figures scale the per-period deviation by √(periods per day) (hourly: √24).
 */

/** Log returns of consecutive prices (oldest first). Non-positive prices are skipped. */
export function logReturns(prices: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < prices.length; i++) {
    const a = prices[i - 1]!;
    const b = prices[i]!;
    if (a > 0 && b > 0) out.push(Math.log(b / a));
  }
  return out;
}

/** Annualised volatility in pct from per-period returns; null with fewer than 2 returns. */
export function annualizedVolatilityPct(returns: readonly number[], periodsPerYear: number): number | null {
  if (returns.length < 2) return null;
  return sampleStandardDeviation([...returns]) * Math.sqrt(periodsPerYear) * 100;
}

/** Standard deviation of 1-day returns implied by per-period returns (fraction); null with fewer than 2 returns. */
export function dailyVolatility(returns: readonly number[], periodsPerDay: number): number | null {
  if (returns.length < 2) return null;
  return sampleStandardDeviation([...returns]) * Math.sqrt(periodsPerDay);
}

/** Parametric (normal) 1-day value at risk in pct of position: z × σ_day (95%: 1.6449, 99%: 2.3263). */
export function valueAtRiskPct(dailySigma: number, confidence: 0.95 | 0.99): number {
  const z = confidence === 0.95 ? 1.6448536269514722 : 2.3263478740408408;
  return z * dailySigma * 100;
}

/** Annualised Sharpe ratio with a zero risk-free rate: mean/σ of per-period returns × √(periods per year). */
export function sharpeRatio(returns: readonly number[], periodsPerYear: number): number | null {
  if (returns.length < 2) return null;
  const sd = sampleStandardDeviation([...returns]);
  return sd === 0 ? null : (mean([...returns]) / sd) * Math.sqrt(periodsPerYear);
}

/** Largest peak-to-trough fall of a price series (oldest first), pct (positive number). */
export function maxDrawdownPct(prices: readonly number[]): number {
  let peak = -Infinity;
  let worst = 0;
  for (const p of prices) {
    if (p > peak) peak = p;
    if (peak > 0) worst = Math.max(worst, (peak - p) / peak);
  }
  return worst * 100;
}

/** Beta and correlation of `asset` returns against `benchmark` returns (same length and times); nulls when undefined. */
export function betaAndCorrelation(asset: readonly number[], benchmark: readonly number[]): { beta: number | null; correlation: number | null } {
  const n = Math.min(asset.length, benchmark.length);
  if (n < 3) return { beta: null, correlation: null };
  const a = asset.slice(asset.length - n);
  const b = benchmark.slice(benchmark.length - n);
  const varB = sampleVariance(b);
  const sa = sampleStandardDeviation(a);
  return {
    beta: varB === 0 ? null : sampleCovariance(a, b) / varB,
    correlation: varB === 0 || sa === 0 ? null : sampleCorrelation(a, b),
  };
}

/** Moments of the return distribution: mean, standard deviation (fractions per period), skewness, excess kurtosis. */
export function distributionMoments(returns: readonly number[]): { mean: number; std_dev: number; skewness: number; kurtosis: number } | null {
  if (returns.length < 4) return null;
  const r = [...returns];
  return { mean: mean(r), std_dev: sampleStandardDeviation(r), skewness: sampleSkewness(r), kurtosis: sampleKurtosis(r) };
}

/**
 * Risk level from the 1-day volatility in pct (spec 2.2 thresholds are daily moves):
 * below 3 `low`, 3–8 `medium`, 8–15 `high`, above 15 `extreme`.
 */
export function riskLevel(dailyVolPct: number): "low" | "medium" | "high" | "extreme" {
  if (dailyVolPct < 3) return "low";
  if (dailyVolPct < 8) return "medium";
  if (dailyVolPct <= 15) return "high";
  return "extreme";
}
