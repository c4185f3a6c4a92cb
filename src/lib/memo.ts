import { LRUCache } from "lru-cache";
import { staleSweeper } from "./stale-sweep.js";

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

/**
 * Like {@link memoize}, per key: `(key, arg)` loads `load(arg)` once per key and TTL; concurrent callers of a
 * key share one load; failed loads are not kept. At most `max` keys are remembered (least recently used go), and
 * expired ones are swept out once per TTL, so keys asked for once do not stay until `max` pushes them out.
 */
export function memoizeKeyed<A extends object, T extends object>(ttlMs: number, max: number, load: (arg: A) => Promise<T>): (key: string, arg: A) => Promise<T> {
  const cache = new LRUCache<string, T, { arg: A }>({ max, ttl: ttlMs, fetchMethod: (_key, _stale, { context }) => load(context.arg) });
  const sweep = staleSweeper(cache, ttlMs);
  return async (key, arg) => {
    sweep();
    const v = await cache.fetch(key, { context: { arg } });
    if (v === undefined) throw new Error("memoized load returned nothing");
    return v;
  };
}
