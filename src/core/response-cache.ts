import { LRUCache } from "lru-cache";
import type { Logger } from "../lib/log.js";
import type { RedisHandle } from "../state/redis.js";

/** A cached answer and the milliseconds it has left. */
export interface CachedAnswer {
  value: unknown;
  ttlRemainingMs: number;
}

/** The response cache of the tool runner: answers keyed by tool + canonical input, each with its TTL. */
export interface ResponseCache {
  get(key: string): Promise<CachedAnswer | undefined>;
  /**
   * The answer if this process already holds it (no I/O, nothing awaited): the cache-hit fast paths read
   * this and fall back to {@link get} when it is undefined (an entry only another replica has written).
   */
  peek(key: string): CachedAnswer | undefined;
  has(key: string): Promise<boolean>;
  set(key: string, value: unknown, ttlMs: number): Promise<void>;
}

/** In-process LRU cache (embedded mode, and the first level of {@link RedisResponseCache}). */
export class MemoryResponseCache implements ResponseCache {
  private readonly lru: LRUCache<string, { value: unknown }>;

  constructor(maxEntries: number) {
    this.lru = new LRUCache({ max: maxEntries, ttlAutopurge: false });
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    return this.peek(key);
  }

  peek(key: string): CachedAnswer | undefined {
    const e = this.lru.get(key);
    return e ? { value: e.value, ttlRemainingMs: this.lru.getRemainingTTL(key) } : undefined;
  }

  async has(key: string): Promise<boolean> {
    return this.lru.has(key);
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    if (ttlMs > 0) this.lru.set(key, { value }, { ttl: ttlMs });
  }
}

/**
 * The cache shared by every replica: Redis (`<prefix>cache:<key>`, JSON, `PX` = the tool's TTL) behind an
 * in-process first level. An entry never changes during its TTL, so a local copy kept for the remaining
 * TTL is always right and hot keys cost no Redis round-trip. While Redis is unreachable the first level
 * alone serves (each replica then caches for itself) and misses fall through to the venues.
 */
export class RedisResponseCache implements ResponseCache {
  private readonly local: MemoryResponseCache;

  constructor(
    private readonly redis: RedisHandle,
    maxEntries: number,
    private readonly log: Logger,
  ) {
    this.local = new MemoryResponseCache(maxEntries);
  }

  private k(key: string): string {
    return this.redis.key(`cache:${key}`);
  }

  peek(key: string): CachedAnswer | undefined {
    return this.local.peek(key);
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const hit = this.local.peek(key);
    if (hit) return hit;
    try {
      const [raw, pttl] = await this.redis.client.multi().get(this.k(key)).pTTL(this.k(key)).exec();
      if (typeof raw !== "string" || typeof pttl !== "number" || pttl <= 0) return undefined;
      const value: unknown = JSON.parse(raw);
      await this.local.set(key, value, pttl);
      return { value, ttlRemainingMs: pttl };
    } catch (err) {
      this.log.debug({ err }, "shared cache read failed; serving from the local cache only");
      return undefined;
    }
  }

  async has(key: string): Promise<boolean> {
    return (await this.get(key)) !== undefined;
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    await this.local.set(key, value, ttlMs);
    try {
      await this.redis.client.set(this.k(key), JSON.stringify(value), { expiration: { type: "PX", value: ttlMs } });
    } catch (err) {
      this.log.debug({ err }, "shared cache write failed; kept in the local cache only");
    }
  }
}
