/**
 * Long/short positioning and open-interest descriptions.
 */

/**
 * Sentiment of a long/short ratio (docs/methods/perpetuals.md, `/futures/long-short`):
 * > 2.0 `extremely_bullish`; [1.5, 2.0] `bullish`; (1.05, 1.5) `slightly_bullish`; [0.95, 1.05] `neutral`;
 * [0.67, 0.95) `slightly_bearish`; [0.5, 0.67) `bearish`; < 0.5 `extremely_bearish`.
 */
export function longShortSentiment(ls: number): string {
  if (ls > 2.0) return "extremely_bullish";
  if (ls >= 1.5) return "bullish";
  if (ls > 1.05) return "slightly_bullish";
  if (ls >= 0.95) return "neutral";
  if (ls >= 0.67) return "slightly_bearish";
  if (ls >= 0.5) return "bearish";
  return "extremely_bearish";
}

/** Human reading of an aggregate long/short ratio. */
export function longShortInterpretation(avg: number, venues: number): string {
  const side = avg >= 1 ? "longs" : "shorts";
  const ratio = avg >= 1 ? avg : 1 / avg;
  if (Math.abs(avg - 1) < 0.05) return `Positioning is balanced across ${venues} venue(s) (average L/S ${avg.toFixed(2)}).`;
  return `${side[0]!.toUpperCase()}${side.slice(1)} outnumber the other side ${ratio.toFixed(2)} to 1 on average across ${venues} venue(s); crowded positioning raises squeeze risk against ${side}.`;
}

/** Compact USD amount (`$12.3B`, `$450.0M`, `$12.5K`). */
export function usd(amount: number): string {
  const a = Math.abs(amount);
  const [div, unit] = a >= 1e9 ? [1e9, "B"] : a >= 1e6 ? [1e6, "M"] : a >= 1e3 ? [1e3, "K"] : [1, ""];
  return `$${(amount / div).toFixed(unit ? 1 : 2)}${unit}`;
}

/** Reading of open interest shares: the leader, its share and how concentrated the market is (HHI). */
export function openInterestInterpretation(shares: ReadonlyArray<{ exchange: string; share_pct: number }>, totalUsd: number): string {
  if (shares.length === 0) return "No open interest reported.";
  const sorted = [...shares].sort((a, b) => b.share_pct - a.share_pct);
  const hhi = sorted.reduce((s, x) => s + x.share_pct ** 2, 0);
  const concentration = hhi > 5000 ? "highly concentrated" : hhi > 2500 ? "concentrated" : "spread across venues";
  return `${usd(totalUsd)} open interest on ${shares.length} venue(s); ${sorted[0]!.exchange} leads with ${sorted[0]!.share_pct.toFixed(1)}%, ${concentration}.`;
}
