/*
 * Half-open time intervals `[from, to)` in epoch ms, kept as sorted, disjoint, non-touching lists. Used for
 * the unfilled parts of a CVD bucket and for the coverage a replica hands over. Pure; inputs are not mutated.
 */

/** `[from, to)`, epoch ms, from < to. */
export type Interval = [from: number, to: number];

/** `list` ∪ `[from, to)` (merging overlapping or touching intervals). An empty interval changes nothing. */
export function addInterval(list: readonly Interval[], from: number, to: number): Interval[] {
  if (!(to > from)) return list.slice();
  const out: Interval[] = [];
  let lo = from;
  let hi = to;
  let placed = false;
  for (const [a, b] of list) {
    if (b < lo) out.push([a, b]);
    else if (a > hi) {
      if (!placed) out.push([lo, hi]);
      placed = true;
      out.push([a, b]);
    } else {
      lo = Math.min(lo, a);
      hi = Math.max(hi, b);
    }
  }
  if (!placed) out.push([lo, hi]);
  return out;
}

/** `list` minus `[from, to)`. */
export function subtractInterval(list: readonly Interval[], from: number, to: number): Interval[] {
  if (!(to > from)) return list.slice();
  const out: Interval[] = [];
  for (const [a, b] of list) {
    if (b <= from || a >= to) {
      out.push([a, b]);
      continue;
    }
    if (a < from) out.push([a, from]);
    if (b > to) out.push([to, b]);
  }
  return out;
}

/** The parts of `list` inside `[from, to)`. */
export function clipIntervals(list: readonly Interval[], from: number, to: number): Interval[] {
  const out: Interval[] = [];
  for (const [a, b] of list) {
    const lo = Math.max(a, from);
    const hi = Math.min(b, to);
    if (hi > lo) out.push([lo, hi]);
  }
  return out;
}

/**
 * A well-formed interval list from untrusted input (replicated rows, stored JSON): finite pairs with
 * from < to, normalised (sorted, merged). Undefined when `raw` is not an array of such pairs.
 */
export function parseIntervals(raw: unknown): Interval[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  let out: Interval[] = [];
  for (const p of raw) {
    if (!Array.isArray(p) || p.length !== 2) return undefined;
    const [a, b] = p as unknown[];
    if (typeof a !== "number" || typeof b !== "number" || !Number.isFinite(a) || !Number.isFinite(b) || !(b > a)) return undefined;
    out = addInterval(out, a, b);
  }
  return out;
}

/** The empty list shared by the many CVD buckets without unfilled parts: frozen, never mutated (replaced instead). */
export const NO_INTERVALS = Object.freeze([]) as unknown as Interval[];

/** `list`, or the shared {@link NO_INTERVALS} when empty (so empty lists cost no memory each). */
export function intervalsOrNone(list: Interval[]): Interval[] {
  return list.length > 0 ? list : NO_INTERVALS;
}
