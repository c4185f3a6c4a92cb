/**
 * Statistics of the daily backtest: Spearman rank correlation (ties get their mean rank), Wilson score intervals
 * for proportions, a day-block bootstrap for everything else, and a seeded random generator so that reruns
 * print the same intervals.
 */

/** Ranks 1..n of `xs`, ties sharing their mean rank (a numeric sort, then each value's first and last position by bisection). */
export function ranks(xs: ArrayLike<number>): Float64Array {
  const n = xs.length;
  const sorted = Float64Array.from(xs).sort();
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (sorted[m]! < x) lo = m + 1;
      else hi = m;
    }
    const first = lo;
    hi = n;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (sorted[m]! <= x) lo = m + 1;
      else hi = m;
    }
    out[i] = (first + lo - 1) / 2 + 1;
  }
  return out;
}

/** Pearson correlation of two equally long series (NaN when either is constant or shorter than 3). */
export function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  if (n < 3 || b.length !== n) return NaN;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : NaN;
}

/** Spearman rank correlation of `a` and `b`. */
export function spearman(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return pearson(ranks(a), ranks(b));
}

/** Wilson score interval (95%) of `hits` successes in `n` trials, as [low, high] fractions ([0, 0] when n = 0). */
export function wilson(hits: number, n: number, z = 1.96): [number, number] {
  if (n <= 0) return [0, 0];
  const p = hits / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

/** Deterministic uniform [0, 1) generator (mulberry32) for the bootstrap. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The `q` quantile (0..1, linear interpolation) of `xs`; NaN when empty. */
export function quantile(xs: ArrayLike<number>, q: number): number {
  const s = Float64Array.from(xs).sort();
  if (!s.length) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/**
 * 95% percentile intervals of the statistics `statistics` returns, over `reps` day-block bootstrap resamples: whole
 * days are drawn with replacement (symbols of one day move together, so resampling symbol-days alone would give
 * too narrow an interval). `groups[i]` are the row indices of day i. One interval per returned statistic.
 */
export function bootstrapByDay(groups: readonly (readonly number[])[], statistics: (rows: number[]) => number[], reps: number, seed: number): [number, number][] {
  const rnd = seededRandom(seed);
  const values: number[][] = [];
  for (let r = 0; r < reps; r++) {
    const rows: number[] = [];
    for (let k = 0; k < groups.length; k++) rows.push(...groups[Math.floor(rnd() * groups.length)]!);
    statistics(rows).forEach((v, j) => {
      if (Number.isFinite(v)) (values[j] ??= []).push(v);
    });
  }
  return values.map((v) => [quantile(v, 0.025), quantile(v, 0.975)]);
}

/**
 * Agreement of two labellings of the same items: the share of equal labels, and Cohen's kappa, (p_o − p_e) ÷ (1 − p_e)
 * with p_e the agreement expected from each labelling's label shares alone (1 when both are one same label throughout).
 */
export function agreement<L>(a: readonly L[], b: readonly L[]): { share: number; kappa: number } {
  const n = Math.min(a.length, b.length);
  if (n === 0) return { share: NaN, kappa: NaN };
  const ca = new Map<L, number>();
  const cb = new Map<L, number>();
  let same = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) same++;
    ca.set(a[i]!, (ca.get(a[i]!) ?? 0) + 1);
    cb.set(b[i]!, (cb.get(b[i]!) ?? 0) + 1);
  }
  const po = same / n;
  let pe = 0;
  for (const [l, k] of ca) pe += (k / n) * ((cb.get(l) ?? 0) / n);
  return { share: po, kappa: pe >= 1 ? 1 : (po - pe) / (1 - pe) };
}
