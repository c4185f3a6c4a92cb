/**
 * The newest `n` of `points` gathered from several funding-history pages: one per settlement time (the first
 * seen wins, so pages may overlap), newest first. Pure; `points` is left as it is.
 */
export function newestFundingPoints<P extends { time: number }>(points: readonly P[], n: number): P[] {
  const seen = new Set<number>();
  return points
    .filter((p) => !seen.has(p.time) && seen.add(p.time))
    .sort((a, b) => b.time - a.time)
    .slice(0, n);
}
