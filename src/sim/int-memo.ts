/**
 * A direct-mapped cache of a pure numeric function of (owner, integer key): `slots` entries per owner (a power of
 * two), one per `key & (slots - 1)`, a newer key evicting an older one. For the simulator's models, which are pure
 * functions of (seed, symbol or instrument, time index): a cached value is always the computed one. No allocation
 * per call; memory is `slots` × 16 bytes per owner.
 */
export function intMemo<O>(slots: number, compute: (owner: O, key: number) => number): (owner: O, key: number) => number {
  if (!Number.isInteger(Math.log2(slots))) throw new RangeError(`slots must be a power of two, got ${slots}`);
  const tables = new Map<O, { keys: Float64Array; values: Float64Array }>();
  return (owner, key) => {
    let t = tables.get(owner);
    if (!t) {
      t = { keys: new Float64Array(slots).fill(Number.NaN), values: new Float64Array(slots) };
      tables.set(owner, t);
    }
    const i = key & (slots - 1);
    if (t.keys[i] === key) return t.values[i] as number;
    const v = compute(owner, key);
    t.keys[i] = key;
    t.values[i] = v;
    return v;
  };
}
