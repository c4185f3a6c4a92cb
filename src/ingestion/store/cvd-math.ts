/*
 * Pure CVD helpers: the pressure signal (docs/methods/streams.md, "CVD"), period → window and bucket sizes, and UTC bucket
 * alignment. No I/O, no clock.
 */
import { HOUR_MS as HOUR, MINUTE_MS } from "../../lib/time.js";

/** Storage resolution of CVD buckets: 5 minutes, in ms. */
export const CVD_BUCKET_MS = 5 * MINUTE_MS;

/** Periods accepted by `/cvd/:symbol` and `/cvd/history/:symbol`. */
export const CVD_PERIODS = ["1h", "4h", "24h", "7d"] as const;
/** A CVD period. */
export type CvdPeriod = (typeof CVD_PERIODS)[number];

/** Signal strings of `/cvd` (docs/methods/streams.md, "CVD"). */
export type CvdSignal = "strong_bullish_pressure" | "bullish_pressure" | "neutral" | "bearish_pressure" | "strong_bearish_pressure" | "insufficient_data";

const PERIOD_MS: Record<CvdPeriod, number> = { "1h": HOUR, "4h": 4 * HOUR, "24h": 24 * HOUR, "7d": 7 * 24 * HOUR };
const BUCKET_MS: Record<CvdPeriod, number> = { "1h": 5 * MINUTE_MS, "4h": 15 * MINUTE_MS, "24h": HOUR, "7d": HOUR };

/** True for one of {@link CVD_PERIODS}. */
export function isCvdPeriod(value: unknown): value is CvdPeriod {
  return typeof value === "string" && (CVD_PERIODS as readonly string[]).includes(value);
}

/** Length of a period's window, ms (`1h` → 3 600 000). */
export function periodMs(period: CvdPeriod): number {
  return PERIOD_MS[period];
}

/** History bucket size of a period, ms (docs/methods/streams.md): 1h → 5 min, 4h → 15 min, 24h and 7d → 1 h. */
export function bucketSizeFor(period: CvdPeriod): number {
  return BUCKET_MS[period];
}

/** Short label of a bucket size for display: `5m`, `15m`, `1h` (whole hours as `Nh`, else minutes). */
export function bucketSizeLabel(bucketMs: number): string {
  return bucketMs % HOUR === 0 ? `${bucketMs / HOUR}h` : `${bucketMs / 60_000}m`;
}

/**
 * Start of the bucket holding `ms`: floor to a multiple of `bucketMs` since the epoch. For sizes that
 * divide a day (5 min, 15 min, 1 h) this is UTC wall-clock alignment (12:07:30 → 12:05 for 5 min).
 * Floors toward −∞, so negative times align down too. Throws `RangeError` unless `bucketMs` is a positive
 * integer.
 */
export function alignBucket(ms: number, bucketMs: number): number {
  if (!Number.isInteger(bucketMs) || bucketMs <= 0) throw new RangeError(`bucket size must be a positive integer of ms, got ${bucketMs}`);
  return Math.floor(ms / bucketMs) * bucketMs;
}

/**
 * Start of the 5-minute CVD slot holding `ms` (epoch ms): {@link alignBucket}`(ms, CVD_BUCKET_MS)` without
 * the size check, for the per-trade path of the store.
 */
export function cvdSlot(ms: number): number {
  return Math.floor(ms / CVD_BUCKET_MS) * CVD_BUCKET_MS;
}

/**
 * Net taker pressure as a percentage of total volume: `100 × cvd / total`, rounded to 9 decimals so that
 * float noise (14.999999999999998 for an exact 15 %) does not move a value across a threshold. Null when
 * `totalVolumeUsd` is not positive.
 */
export function cvdPressurePct(periodCvdUsd: number, totalVolumeUsd: number): number | null {
  if (!(totalVolumeUsd > 0) || !Number.isFinite(periodCvdUsd)) return null;
  return Math.round((periodCvdUsd / totalVolumeUsd) * 100 * 1e9) / 1e9;
}

/**
 * Signal of `/cvd` (docs/methods/streams.md, "CVD") from the period's CVD and total (buy + sell) volume, both USD.
 *
 * With `p` = {@link cvdPressurePct}:
 * - `insufficient_data`: `trades` ≤ 0 or no volume (the table's "no trades");
 * - `strong_bullish_pressure`: p > 15 (the table's "> 15%"; exactly 15 is not above);
 * - `bullish_pressure`: 5 ≤ p ≤ 15 (the table's "5 to 15%", both ends closed);
 * - `neutral`: −5 < p < 5 (the table's "within ±5%"; the ends belong to the 5–15 bands, which name them);
 * - `bearish_pressure`: −15 ≤ p ≤ −5;
 * - `strong_bearish_pressure`: p < −15.
 */
export function cvdSignal(periodCvdUsd: number, totalVolumeUsd: number, trades: number): CvdSignal {
  const p = trades > 0 ? cvdPressurePct(periodCvdUsd, totalVolumeUsd) : null;
  if (p === null) return "insufficient_data";
  if (p > 15) return "strong_bullish_pressure";
  if (p >= 5) return "bullish_pressure";
  if (p > -5) return "neutral";
  if (p >= -15) return "bearish_pressure";
  return "strong_bearish_pressure";
}
