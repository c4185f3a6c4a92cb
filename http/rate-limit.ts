import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../src/errors.js";

/**
 * Per-client limit on requests that reach a venue (cache misses): `perMin` per rolling minute per key
 * (the client IP, as resolved under express `trust proxy`). Cache hits never consume points.
 */
export class MissRateLimiter {
  private readonly limiter: RateLimiterMemory;

  constructor(readonly perMin: number) {
    this.limiter = new RateLimiterMemory({ points: perMin, duration: 60 });
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
