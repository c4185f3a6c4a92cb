/**
 * Fault injection for the venue simulator: one controller shared by every venue router.
 *
 * Faults are queued per venue (FIFO). Each request to that venue consumes one use of the fault at
 * the head of the queue; when its uses run out the next queued fault applies, then normal service.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * A failure to impose on the next request(s) to a venue.
 * - `rate_limit`: HTTP 429 with a `Retry-After: <retryAfterSec>` header (seconds, integer >= 0).
 * - `server_error`: HTTP `status` (default 503), JSON error body.
 * - `timeout`: hold the request `delayMs` ms, then serve it normally. A non-finite or very large delay
 *   (> 2^31-1 ms) never answers; the request ends only when the client gives up or the server closes.
 * - `malformed`: HTTP 200 whose JSON body is cut in half (unparsable), whatever the handler produced.
 */
export type Fault = { kind: "rate_limit"; retryAfterSec: number } | { kind: "server_error"; status?: number } | { kind: "timeout"; delayMs: number } | { kind: "malformed" };

/** Venue-specific error bodies; each venue router can supply its own real-looking ones. */
export interface FaultResponses {
  /** JSON body of a 429 (default `{"error":"rate limited (simulated)"}`). */
  rateLimitBody?(retryAfterSec: number): unknown;
  /** JSON body of an injected 5xx (default `{"error":"simulated server error","status":<status>}`). */
  serverErrorBody?(status: number): unknown;
}

interface QueuedFault {
  readonly fault: Fault;
  remaining: number;
}

/** Largest delay `setTimeout` honours; longer holds never answer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Holds queued faults and per-venue request counters. Venue names are free-form keys (`"coingecko"`). */
export class FaultController {
  readonly #queues = new Map<string, QueuedFault[]>();
  readonly #counts = new Map<string, number>();

  /**
   * Queues `fault` for the next `times` requests to `venue` (after any faults already queued).
   * `times` is a positive integer or `Infinity`. Throws RangeError on invalid `times` or fault fields.
   */
  inject(venue: string, fault: Fault, times = 1): void {
    if (!(times === Infinity || (Number.isInteger(times) && times > 0))) {
      throw new RangeError(`times must be a positive integer or Infinity, got ${times}`);
    }
    validateFault(fault);
    const q = this.#queues.get(venue) ?? [];
    q.push({ fault, remaining: times });
    this.#queues.set(venue, q);
  }

  /** Drops queued faults for `venue`, or for every venue when omitted. Request counts are kept. */
  clear(venue?: string): void {
    if (venue === undefined) this.#queues.clear();
    else this.#queues.delete(venue);
  }

  /** Requests seen for `venue` since start (or the last `resetCounts`), including faulted ones. */
  requestCount(venue: string): number {
    return this.#counts.get(venue) ?? 0;
  }

  /** Zeroes request counters for `venue`, or all venues when omitted. */
  resetCounts(venue?: string): void {
    if (venue === undefined) this.#counts.clear();
    else this.#counts.delete(venue);
  }

  /** Faults still queued for `venue`, head first, with their remaining uses. */
  pending(venue: string): Array<{ fault: Fault; remaining: number }> {
    return (this.#queues.get(venue) ?? []).map((q) => ({ fault: q.fault, remaining: q.remaining }));
  }

  /** Counts one request for `venue` and returns the fault to apply to it, if any (consuming one use). */
  take(venue: string): Fault | undefined {
    this.#counts.set(venue, this.requestCount(venue) + 1);
    const q = this.#queues.get(venue);
    const head = q?.[0];
    if (!q || !head) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) q.shift();
    if (q.length === 0) this.#queues.delete(venue);
    return head.fault;
  }
}

function validateFault(fault: Fault): void {
  switch (fault.kind) {
    case "rate_limit":
      if (!(Number.isFinite(fault.retryAfterSec) && fault.retryAfterSec >= 0)) {
        throw new RangeError(`retryAfterSec must be a finite number >= 0, got ${fault.retryAfterSec}`);
      }
      return;
    case "server_error":
      if (fault.status !== undefined && !(Number.isInteger(fault.status) && fault.status >= 500 && fault.status <= 599)) {
        throw new RangeError(`server_error status must be an integer 500..599, got ${fault.status}`);
      }
      return;
    case "timeout":
      if (Number.isNaN(fault.delayMs) || fault.delayMs < 0) throw new RangeError(`delayMs must be >= 0, got ${fault.delayMs}`);
      return;
    case "malformed":
      return;
  }
}

/**
 * Express middleware for one venue: counts every request and applies the next queued fault, if any.
 * Mount it in front of the venue's router. `responses` customises the 429/5xx bodies.
 */
export function faultMiddleware(controller: FaultController, venue: string, responses: FaultResponses = {}): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    const fault = controller.take(venue);
    if (!fault) {
      next();
      return;
    }
    switch (fault.kind) {
      case "rate_limit": {
        const secs = Math.ceil(fault.retryAfterSec);
        res.setHeader("Retry-After", String(secs));
        res.status(429).json(responses.rateLimitBody?.(secs) ?? { error: "rate limited (simulated)" });
        return;
      }
      case "server_error": {
        const status = fault.status ?? 503;
        res.status(status).json(responses.serverErrorBody?.(status) ?? { error: "simulated server error", status });
        return;
      }
      case "timeout": {
        if (!Number.isFinite(fault.delayMs) || fault.delayMs > MAX_TIMER_MS) return; // never answer
        const timer = setTimeout(next, fault.delayMs);
        res.once("close", () => clearTimeout(timer));
        return;
      }
      case "malformed": {
        truncateNextBody(res);
        next();
        return;
      }
    }
  };
}

/** Makes the next string/Buffer body sent on `res` a 200 with only its first half (at least one byte dropped). */
function truncateNextBody(res: Response): void {
  const original = res.send.bind(res);
  let done = false;
  res.send = ((body?: unknown) => {
    if (done || !(typeof body === "string" || Buffer.isBuffer(body))) return original(body);
    done = true;
    res.status(200);
    const cut = Math.max(0, Math.min(body.length - 1, Math.floor(body.length / 2)));
    return original(typeof body === "string" ? body.slice(0, cut) : body.subarray(0, cut));
  }) as Response["send"];
}
