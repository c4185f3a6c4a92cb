import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../src/errors.js";
import type { RedisHandle } from "../src/state/redis.js";

/**
 * Per-client limit on requests that reach a venue (cache misses): `perMin` per rolling minute per key
 * (the client IP, as resolved under express `trust proxy`). Cache hits never consume points.
 *
 * With Redis (several replicas) the points are counted in Redis, so the limit holds in total across
 * replicas; while Redis is unreachable each replica falls back to an in-memory limiter of the same size
 * (rate-limiter-flexible's insurance limiter), so the service keeps answering.
 */
export class MissRateLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    readonly perMin: number,
    redis?: RedisHandle,
  ) {
    const memory = new RateLimiterMemory({ points: perMin, duration: 60 });
    this.limiter = redis
      ? new RateLimiterRedis({ storeClient: redis.client, useRedisPackage: true, keyPrefix: redis.key("rl"), points: perMin, duration: 60, insuranceLimiter: memory })
      : memory;
  }

  /** Consumes one point for `key`. @throws AppError RATE_LIMITED with `retryAfterSec`. */
  async consume(key: string): Promise<void> {
    try {
      await this.limiter.consume(key);
    } catch (r) {
      if (r instanceof RateLimiterRes) {
        throw new AppError("RATE_LIMITED", `rate limit of ${this.perMin} uncached requests per minute exceeded`, {
          retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
        });
      }
      throw r;
    }
  }
}
