import { LRUCache } from "lru-cache";

/**
 * A value loaded on demand and kept for `ttlMs` (lru-cache `fetch`): concurrent callers share one load,
 * and a failed load is not kept, so the next call retries.
 */
export function memoize<T extends object>(ttlMs: number, load: () => Promise<T>): () => Promise<T> {
  const cache = new LRUCache<"value", T>({ max: 1, ttl: ttlMs, fetchMethod: () => load() });
  return async () => {
    const v = await cache.fetch("value");
    if (v === undefined) throw new Error("memoized load returned nothing");
    return v;
  };
}
