import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import type { RedisHandle } from "../state/redis.js";
import { clientKey } from "./client-key.js";

/*
 * Per-client request budgets, free of any transport: HTTP (http/rate-limit.ts mounts them as express
 * middleware), MCP, WebSocket upgrades, credit-paid calls per wallet and stream warm-ups all consume them.
 */

/**
 * Where the IETF `RateLimit` headers of a consumed point go: an HTTP response (express's `Response` fits).
 * Nothing is written once `headersSent` is true.
 */
export interface RateLimitHeaderSink {
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
}

/** Options of a {@link ClientRateLimiter}. */
export interface ClientRateLimiterOptions {
  /** Points per rolling minute per client. */
  perMin: number;
  /** Redis key under the service prefix (`rl`, `rl-free`): each limiter counts in its own keys. */
  keyName: string;
  /** What is counted, for the 429 message: "uncached requests". */
  what: string;
  /** Policy name in the IETF `RateLimit` / `RateLimit-Policy` headers (`misses`, `free`). */
  policy: string;
  /** Shared state of several replicas; without it the count is per process. */
  redis?: RedisHandle;
}

/**
 * Per-client request budget: `perMin` points per rolling minute per client, the client being
 * {@link clientKey} of its address (IPv4 address or IPv6 /64; the address is `req.ip`, so as trustworthy
 * as the `TRUST_PROXY` setting).
 *
 * With Redis (several replicas) the points are counted in Redis, so the limit holds in total across
 * replicas; while Redis is unreachable each replica falls back to an in-memory limiter of the same size
 * (rate-limiter-flexible's insurance limiter), so the service keeps answering.
 */
export class ClientRateLimiter {
  readonly perMin: number;
  /** The static `RateLimit-Policy` header value (IETF draft-ietf-httpapi-ratelimit-headers): `"misses";q=500;w=60`. */
  readonly policyHeader: string;
  private readonly what: string;
  private readonly policy: string;
  private readonly limiter: RateLimiterAbstract;

  constructor(opts: ClientRateLimiterOptions) {
    this.perMin = opts.perMin;
    this.what = opts.what;
    this.policy = opts.policy;
    this.policyHeader = `"${opts.policy}";q=${opts.perMin};w=60`;
    const memory = new RateLimiterMemory({ points: opts.perMin, duration: 60 });
    this.limiter = opts.redis
      ? new RateLimiterRedis({
          storeClient: opts.redis.client,
          useRedisPackage: true,
          keyPrefix: opts.redis.key(opts.keyName),
          points: opts.perMin,
          duration: 60,
          insuranceLimiter: memory,
        })
      : memory;
  }

  /**
   * Consumes one point for the client at `ip` (an IP literal; anything else, e.g. `"unknown"` or
   * `"wallet:0x…"`, is a bucket of its own). With `res` (an HTTP response), sets the IETF `RateLimit-Policy`
   * and `RateLimit` (`r` remaining, `t` seconds to reset) headers, on success and on the 429.
   * @throws AppError RATE_LIMITED with `retryAfterSec`.
   */
  async consume(ip: string | undefined, res?: RateLimitHeaderSink): Promise<void> {
    try {
      const r = await this.limiter.consume(clientKey(ip));
      this.setHeaders(res, r);
    } catch (r) {
      if (r instanceof RateLimiterRes) {
        this.setHeaders(res, r);
        throw new AppError("RATE_LIMITED", `rate limit of ${this.perMin} ${this.what} per minute exceeded`, {
          retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
        });
      }
      throw r;
    }
  }

  private setHeaders(res: RateLimitHeaderSink | undefined, r: RateLimiterRes): void {
    if (!res || res.headersSent) return;
    res.setHeader("RateLimit-Policy", this.policyHeader);
    res.setHeader("RateLimit", `"${this.policy}";r=${Math.max(0, r.remainingPoints)};t=${Math.max(0, Math.ceil(r.msBeforeNext / 1000))}`);
  }
}

/**
 * The limit on requests that reach a venue (cache misses; `RATE_LIMIT_PER_MIN`). Cache hits never consume
 * points. Redis keys `<prefix>rl:<client>`.
 */
export class MissRateLimiter extends ClientRateLimiter {
  constructor(perMin: number, redis?: RedisHandle) {
    super({ perMin, keyName: "rl", what: "uncached requests", policy: "misses", redis });
  }
}

/**
 * The limit on free routes that do work on every call (the quote endpoint, `/metrics`, `POST /mcp` but a
 * cached `tools/call`, which is a cache hit; `FREE_RATE_LIMIT_PER_MIN`), larger than the miss limit and
 * counted apart from it. Redis keys `<prefix>rl-free:<client>`.
 */
export class FreeRateLimiter extends ClientRateLimiter {
  constructor(perMin: number, redis?: RedisHandle) {
    super({ perMin, keyName: "rl-free", what: "free requests", policy: "free", redis });
  }
}
