/** What {@link staleSweeper} needs of a cache: lru-cache's `purgeStale`. */
export interface StaleEntries {
  /** Drops every entry whose TTL has run out. */
  purgeStale(): boolean;
}

/**
 * lru-cache drops an entry whose TTL has run out only when its key is read again or when `max` pushes it out,
 * so entries written once and never asked for again (distinct inputs, one-off ids) pile up to `max` and the
 * process grows for hours (issue 16). The function returned sweeps them out (one pass over the cache) at most
 * once per `everyMs`: call it on every write, and the cache holds little more than its live entries. Cheaper
 * than lru-cache's `ttlAutopurge`, which keeps a timer per entry.
 */
export function staleSweeper(cache: StaleEntries, everyMs: number, now: () => number = () => performance.now()): () => void {
  let last = now();
  return () => {
    const t = now();
    if (t - last < everyMs) return;
    last = t;
    cache.purgeStale();
  };
}
