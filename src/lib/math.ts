/** Small numeric helpers. */

/** `x` limited to `[lo, hi]` (`lo` ≤ `hi`); NaN stays NaN. */
export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
