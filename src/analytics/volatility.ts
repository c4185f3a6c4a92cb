import { mean, sampleCorrelation, sampleCovariance, sampleKurtosis, sampleSkewness, sampleStandardDeviation, sampleVariance } from "simple-statistics";
import { HOUR_MS } from "../lib/time.js";

/*
 * Volatility and risk metrics of a price series (simple-statistics). Conventions (docs/methods/funding-basis-volatility.md):
 * - returns are log returns of consecutive closes, in fractions;
 * - a series with missing intervals (DEX candles exist only for hours with swaps) is windowed by TIME
 *   ({@link windowReturns}) and each return is divided by √(elapsed intervals), so it reads as a one-interval return;
 * - volatility is the sample standard deviation of returns, annualised with √(periods per year)
 *   (hourly: √8760), reported in pct;
 * - 1-day figures scale the per-period deviation by √(periods per day) (hourly: √24);
 * - value at risk is log-normal, so a long position never loses more than 100%.
 */

/** A close and the start of its candle (epoch ms). */
export interface TimedClose {
  time: number;
  close: number;
}

/** The returns of one time window of a possibly gapped series (see {@link windowReturns}). */
export interface WindowReturns {
  /** Log returns between consecutive closes inside the window, oldest first (fractions, over `elapsed[i]` intervals). */
  raw: number[];
  /** Intervals each raw return spans (1 without a gap; 3 when two hours without trades lie between the closes). */
  elapsed: number[];
  /** `raw[i] / √elapsed[i]`: per-interval returns, what the volatility, VaR and moment functions take. */
  scaled: number[];
  /** Closes used (the window's candles, preceded by the anchor candle when there is one), oldest first. */
  closes: TimedClose[];
  /** Intervals of the window that have a candle (for DEX candles: hours with at least one swap). */
  intervalsWithTrades: number;
  /** Intervals the window spans. */
  intervalsInWindow: number;
}

/** Log returns divided by √(elapsed intervals) (same lengths; elapsed > 0): multi-interval returns as one-interval returns. */
export function scaleReturns(raw: readonly number[], elapsed: readonly number[]): number[] {
  return raw.map((r, i) => r / Math.sqrt(elapsed[i]!));
}

/**
 * Returns of the last `intervals` intervals of a series by TIME, not by candle count: the window holds the candles
 * starting in `(endMs − intervals × intervalMs, endMs]` (`endMs` = start of the newest interval, e.g. the current hour).
 * The price at the window's start is the close of the last candle at or before `endMs − intervals × intervalMs` (the
 * anchor; a pool price moves only on swaps, so an interval without a candle kept the previous close), and that first
 * return is timed from the window's start. Each return spans the intervals between its two candles (`elapsed`) and is
 * scaled by 1/√elapsed. Closes ≤ 0 are skipped. `series` is oldest first, candle times aligned to `intervalMs`.
 */
export function windowReturns(series: readonly TimedClose[], endMs: number, intervals: number, intervalMs = HOUR_MS): WindowReturns {
  const startSlot = endMs - intervals * intervalMs;
  const usable = series.filter((c) => c.close > 0 && c.time <= endMs);
  const inWindow = usable.filter((c) => c.time > startSlot);
  const anchor = usable.findLast((c) => c.time <= startSlot);
  const closes = anchor ? [anchor, ...inWindow] : inWindow;
  const raw: number[] = [];
  const elapsed: number[] = [];
  for (let i = 1; i < closes.length; i++) {
    const prev = closes[i - 1]!;
    const cur = closes[i]!;
    raw.push(Math.log(cur.close / prev.close));
    elapsed.push(Math.max(1, Math.round((cur.time - Math.max(prev.time, startSlot)) / intervalMs)));
  }
  return { raw, elapsed, scaled: scaleReturns(raw, elapsed), closes, intervalsWithTrades: inWindow.length, intervalsInWindow: intervals };
}

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

/**
 * Parametric log-normal 1-day value at risk of a LONG position, pct of its value: `(1 − e^(−z × σ_day)) × 100`
 * (95%: z = 1.6449, 99%: z = 2.3263; zero drift), with σ_day the deviation of 1-day LOG returns. It stays below 100%
 * however large σ is (a normal VaR, z × σ, exceeds 100% once σ_day > 61% at 95%); for small σ both agree (σ 2% → 3.24%).
 */
export function valueAtRiskPct(dailySigma: number, confidence: 0.95 | 0.99): number {
  const z = confidence === 0.95 ? 1.6448536269514722 : 2.3263478740408408;
  return -Math.expm1(-z * dailySigma) * 100;
}

/**
 * Annualised Sharpe ratio with a zero risk-free rate: drift / σ per period × √(periods per year), where the drift is
 * Σ returns / Σ elapsed periods and σ the deviation of the returns scaled by 1/√elapsed ({@link scaleReturns}).
 * Without `elapsed` (every return one period) this is mean / σ of the returns. Null with fewer than 2 returns or σ = 0.
 */
export function sharpeRatio(returns: readonly number[], periodsPerYear: number, elapsed?: readonly number[]): number | null {
  if (returns.length < 2) return null;
  const sd = sampleStandardDeviation(elapsed ? scaleReturns(returns, elapsed) : [...returns]);
  const drift = elapsed ? returns.reduce((s, r) => s + r, 0) / elapsed.reduce((s, k) => s + k, 0) : mean([...returns]);
  return sd === 0 ? null : (drift / sd) * Math.sqrt(periodsPerYear);
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
 * Risk level from the 1-day volatility in pct (docs/methods/volatility.md: the thresholds are daily moves):
 * below 3 `low`, 3–8 `medium`, 8–15 `high`, above 15 `extreme`.
 */
export function riskLevel(dailyVolPct: number): "low" | "medium" | "high" | "extreme" {
  if (dailyVolPct < 3) return "low";
  if (dailyVolPct < 8) return "medium";
  if (dailyVolPct <= 15) return "high";
  return "extreme";
}
