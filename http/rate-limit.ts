import type { RequestHandler } from "express";
import type { ClientRateLimiter } from "../src/lib/rate-limit.js";
import { sendError } from "./errors.js";

/**
 * Express middleware consuming one point of `limiter` (src/lib/rate-limit.ts) per request, keyed by
 * `req.ip`, with the IETF `RateLimit` headers on the response: over the limit it answers 429 with
 * `Retry-After` and the route does not run.
 */
export function limitByClient(limiter: ClientRateLimiter): RequestHandler {
  return (req, res, next) => {
    limiter.consume(req.ip, res).then(
      () => next(),
      (err: unknown) => sendError(res, err),
    );
  };
}
