/*
 * Market sentiment from positioning data (funding, long/short ratios, CVD). Each available component
 * maps to a score in [0, 1] (0.5 neutral); the score is their average.
 */

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** Positioning inputs, one number per venue observation. */
export interface SentimentInputs {
  /** Funding rates rescaled to 8h, pct (0.01 is the neutral interest baseline). */
  funding8hPct?: readonly number[];
  /** Long/short ratios (1 neutral). */
  longShortRatios?: readonly number[];
  /** CVD over total volume in the window, -1 to 1. */
  cvdRatios?: readonly number[];
}

/** Sentiment block of the volatility index (docs/methods/volatility.md). */
export interface Sentiment {
  score: number;
  label: "bullish" | "neutral" | "bearish";
  sources_analyzed: number;
  confidence: number;
  components: { funding: number | null; long_short: number | null; cvd: number | null };
}

const avg = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * Combines the components: funding 0.5 + (f − 0.01) / 0.1 (an 8h rate of 0.06% or more is fully bullish);
 * long/short 0.5 + (ratio − 1) / 2; CVD 0.5 + ratio / 2. label: score > 0.6 bullish, < 0.4 bearish.
 * `sources_analyzed` counts the venue observations used; `confidence` grows with the number of
 * components (up to 3) and shrinks when they disagree. Null when no input is available.
 */
export function positioningSentiment(inputs: SentimentInputs): Sentiment | null {
  const f = inputs.funding8hPct?.length ? clamp01(0.5 + (avg(inputs.funding8hPct) - 0.01) / 0.1) : null;
  const ls = inputs.longShortRatios?.length ? clamp01(0.5 + (avg(inputs.longShortRatios) - 1) / 2) : null;
  const cvd = inputs.cvdRatios?.length ? clamp01(0.5 + avg(inputs.cvdRatios) / 2) : null;
  const parts = [f, ls, cvd].filter((x): x is number => x !== null);
  if (parts.length === 0) return null;
  const score = avg(parts);
  const disagreement = Math.max(...parts) - Math.min(...parts);
  const n = (inputs.funding8hPct?.length ?? 0) + (inputs.longShortRatios?.length ?? 0) + (inputs.cvdRatios?.length ?? 0);
  return {
    score: Number(score.toFixed(4)),
    label: score > 0.6 ? "bullish" : score < 0.4 ? "bearish" : "neutral",
    sources_analyzed: n,
    confidence: Number(((parts.length / 3) * (1 - disagreement)).toFixed(4)),
    components: { funding: f, long_short: ls, cvd },
  };
}
