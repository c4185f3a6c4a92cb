/**
 * Funding arithmetic (docs/methods/funding-basis-volatility.md). Rates are fractions per funding interval; every
 * annualisation uses the symbol's OWN interval (8h: ×1,095; 4h: ×2,190; 1h: ×8,760). A history whose
 * interval changed (Hyperliquid went from 8h to 1h in June 2023) is annualised row by row and averaged by
 * time ({@link settlementIntervals}, {@link timeWeightedFundingSummary}); docs/methods/funding-basis-volatility.md.
 */

const HOURS_PER_YEAR = 24 * 365;

/** Drops binary noise from derived values (12 significant digits): 0.1079 × 100 is 10.79, not 10.790000000000001. */
export function clean(x: number): number {
  return Number(x.toPrecision(12));
}

/** A fraction in pct, without binary noise. */
export function pct(fraction: number): number {
  return clean(fraction * 100);
}

/** Annualised funding in pct: `rate × (8760 / intervalHours) × 100`. */
export function annualizedPct(rate: number, intervalHours: number): number {
  return clean(rate * (HOURS_PER_YEAR / intervalHours) * 100);
}

/** The rate rescaled to an 8-hour interval (fraction), to compare venues that settle at different intervals. */
export function rate8h(rate: number, intervalHours: number): number {
  return clean(rate * (8 / intervalHours));
}

/** Who pays: a positive rate means longs pay shorts. */
export function fundingDirection(rate: number): "longs_paying" | "shorts_paying" | "neutral" {
  return rate > 0 ? "longs_paying" : rate < 0 ? "shorts_paying" : "neutral";
}

/**
 * Signal of the predicted rate, on its 8-hour equivalent in pct (baseline interest is 0.01% per 8h):
 * ≥ 0.05 `strongly_bullish`; [0.02, 0.05) `bullish`; [0.005, 0.02) `slightly_bullish`; (−0.005, 0.005)
 * `neutral`; (−0.02, −0.005] `slightly_bearish`; (−0.05, −0.02] `bearish`; ≤ −0.05 `strongly_bearish`.
 * "Bullish" describes positioning (longs paying to stay long), which contrarians read as crowding.
 */
export function fundingSignal(rate8hPct: number): string {
  if (rate8hPct >= 0.05) return "strongly_bullish";
  if (rate8hPct >= 0.02) return "bullish";
  if (rate8hPct >= 0.005) return "slightly_bullish";
  if (rate8hPct > -0.005) return "neutral";
  if (rate8hPct > -0.02) return "slightly_bearish";
  if (rate8hPct > -0.05) return "bearish";
  return "strongly_bearish";
}

/** One leg of a funding position: the venue, its rate per interval and interval. */
export interface FundingLeg {
  exchange: string;
  rate: number;
  intervalHours: number;
}

/** The best cross-venue funding arbitrage among legs (long the lower annualised rate, short the higher). */
export interface FundingArb {
  long_exchange: string;
  short_exchange: string;
  /** Short-leg rate minus long-leg rate, fractions per their own intervals (equal intervals: the per-settlement edge). */
  rate_spread: number;
  /** Same spread on an 8-hour basis (fraction), comparable across interval mixes. */
  rate_spread_8h: number;
  /** APR(short) − APR(long), each leg annualised with its own interval. */
  annualized_spread_pct: number;
  direction: string;
}

/**
 * Picks the pair with the largest annualised spread: long where funding is lowest (you receive or pay
 * least), short where it is highest. Undefined with fewer than two legs, or when every leg pays the same
 * annualised rate (no edge to trade).
 */
export function bestFundingArb(legs: readonly FundingLeg[]): FundingArb | undefined {
  if (legs.length < 2) return undefined;
  const apr = (l: FundingLeg) => annualizedPct(l.rate, l.intervalHours);
  const sorted = [...legs].sort((a, b) => apr(a) - apr(b));
  const long = sorted[0]!;
  const short = sorted[sorted.length - 1]!;
  const spread = clean(apr(short) - apr(long));
  if (spread <= 0) return undefined;
  return {
    long_exchange: long.exchange,
    short_exchange: short.exchange,
    rate_spread: clean(short.rate - long.rate),
    rate_spread_8h: clean(rate8h(short.rate, short.intervalHours) - rate8h(long.rate, long.intervalHours)),
    annualized_spread_pct: spread,
    direction: `long_${long.exchange}_short_${short.exchange}`,
  };
}

/** Summary of settled funding: averages are time-weighted, extremes as settled. */
export interface FundingSummary {
  /** Time-weighted average rate per `intervalHours` of the summary (fraction): Σ rate / Σ hours × intervalHours. */
  avg_rate: number;
  /** Largest and smallest rate as settled, each per its own interval (fractions). */
  max_rate: number;
  min_rate: number;
  /** Time-weighted annualised average, pct: Σ rate / Σ hours × 8760 × 100 (the funding accrued over the hours covered, per year). */
  annualized_avg: number;
}

/**
 * Summary of settlements that may have different intervals: each rate is funding accrued over its own
 * `intervalHours`, so the average rate per hour is Σ rate / Σ intervalHours, reported per `intervalHours` (`avg_rate`)
 * and per year (`annualized_avg`). With one interval throughout this is the plain mean (× 8760 / interval for the
 * annualised figure). Zeros for an empty series.
 */
export function timeWeightedFundingSummary(rows: ReadonlyArray<{ rate: number; intervalHours: number }>, intervalHours: number): FundingSummary {
  if (rows.length === 0) return { avg_rate: 0, max_rate: 0, min_rate: 0, annualized_avg: 0 };
  const perHour = rows.reduce((s, r) => s + r.rate, 0) / rows.reduce((s, r) => s + r.intervalHours, 0);
  const rates = rows.map((r) => r.rate);
  return { avg_rate: clean(perHour * intervalHours), max_rate: Math.max(...rates), min_rate: Math.min(...rates), annualized_avg: clean(perHour * HOURS_PER_YEAR * 100) };
}

/** Average, extremes and the annualised average of a rate series settled at ONE interval (fractions). */
export function fundingSummary(rates: readonly number[], intervalHours: number): FundingSummary {
  return timeWeightedFundingSummary(
    rates.map((rate) => ({ rate, intervalHours })),
    intervalHours,
  );
}

/**
 * The interval of each settlement, in whole hours, in the order of `times` (settlement times, epoch ms, newest or
 * oldest first): the time since the previous settlement, rounded to the hour (at least 1), so a history that
 * spans a change of interval is read row by row. The oldest settlement has no predecessor and takes the interval
 * of the next one. Undefined with fewer than two times. Limit: a settlement missing from the data makes the
 * next one read as a longer interval (its rate is then spread over both).
 */
export function settlementIntervals(times: readonly number[]): number[] | undefined {
  if (times.length < 2) return undefined;
  const order = times.map((t, i) => ({ t, i })).sort((a, b) => a.t - b.t);
  const out = new Array<number>(times.length);
  for (let k = 1; k < order.length; k++) out[order[k]!.i] = Math.max(1, Math.round((order[k]!.t - order[k - 1]!.t) / 3_600_000));
  out[order[0]!.i] = out[order[1]!.i]!;
  return out;
}

/**
 * Detects a funding interval from settlement times (newest or oldest first): the most common gap, in
 * whole hours; undefined with fewer than two points.
 */
export function detectIntervalHours(times: readonly number[]): number | undefined {
  if (times.length < 2) return undefined;
  const sorted = [...times].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  for (let i = 1; i < sorted.length; i++) {
    const h = Math.round((sorted[i]! - sorted[i - 1]!) / 3_600_000);
    if (h > 0) counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];
}
