import { BrokenCircuitError, CircuitState, circuitBreaker, ConsecutiveBreaker, handleWhenResult, type CircuitBreakerPolicy } from "cockatiel";
import { AppError } from "../errors.js";

/** When a venue's circuit opens and when it is probed again. */
export interface CircuitPolicy {
  /** Consecutive unhealthy calls (each already retried by the client) that open the circuit. */
  failures: number;
  /** Milliseconds the circuit stays open before one probe call is let through (half-open). */
  halfOpenAfterMs: number;
}

/** Defaults of `CIRCUIT_FAILURES` and `CIRCUIT_HALF_OPEN_MS`. */
export const DEFAULT_CIRCUIT_POLICY: CircuitPolicy = { failures: 5, halfOpenAfterMs: 30_000 };

/**
 * A circuit's state as published in `/api/v1/status` and `/metrics`: `closed` (calls go through), `open`
 * (calls fail fast until the half-open delay has passed; the first call after it becomes the probe),
 * `half_open` (a probe is in flight; other calls fail fast until it decides).
 */
export type CircuitStateName = (typeof CIRCUIT_STATES)[number];

/** The values of {@link CircuitStateName}. */
export const CIRCUIT_STATES = ["closed", "open", "half_open"] as const;

/**
 * What a finished call says about the venue: `healthy` (it answered, even with a 4xx or a 429),
 * `unhealthy` (timeout, network error, 5xx, malformed JSON), `inconclusive` (our own request budget or
 * request deadline ended it before the venue had a fair chance to answer).
 */
export type Evidence = "healthy" | "unhealthy" | "inconclusive";

/** Outcome of one call made through a {@link VenueCircuit}: the value, or the error with its evidence. */
export type CallResult<T> = { ok: true; value: T } | { ok: false; error: unknown; evidence: Evidence };

/** Carries an inconclusive failure past cockatiel in the closed state, where it must count neither way. */
class Inconclusive {
  constructor(readonly error: unknown) {}
}

/**
 * The circuit breaker of one venue (cockatiel `ConsecutiveBreaker`): after `failures` unhealthy calls in a
 * row the venue is skipped for `halfOpenAfterMs`, then one probe call decides: healthy closes the circuit,
 * anything else reopens it for another delay. Healthy calls reset the count; inconclusive calls do not
 * touch it, except as a probe, where they reopen the circuit (a probe that taught nothing must not close it).
 */
export class VenueCircuit {
  private readonly breaker: CircuitBreakerPolicy;
  private openedAt = 0;

  constructor(
    readonly venue: string,
    private readonly policy: CircuitPolicy = DEFAULT_CIRCUIT_POLICY,
  ) {
    const counts = (r: unknown) => !(r as CallResult<unknown>).ok && (r as { evidence: Evidence }).evidence !== "healthy";
    this.breaker = circuitBreaker(handleWhenResult(counts), { halfOpenAfter: policy.halfOpenAfterMs, breaker: new ConsecutiveBreaker(policy.failures) });
    this.breaker.onBreak(() => {
      this.openedAt = Date.now();
    });
  }

  /** The current state (see {@link CircuitStateName}). */
  get state(): CircuitStateName {
    switch (this.breaker.state) {
      case CircuitState.Closed:
        return "closed";
      case CircuitState.HalfOpen:
        return "half_open";
      default:
        return "open";
    }
  }

  /**
   * Runs `call` unless the circuit is open, and feeds its evidence to the breaker.
   * @returns the call's value. @throws the call's error; AppError UPSTREAM_UNAVAILABLE
   *   `<venue> circuit open…` (with `retryAfterSec`) without calling when the circuit is open or a probe is in flight.
   */
  async run<T>(call: () => Promise<CallResult<T>>): Promise<T> {
    // cockatiel queues calls behind an in-flight half-open probe; a request must not wait for a probe
    // that may hang until its own timeout, so it fails fast instead. The check and execute's own state
    // switch run in the same tick, so no probe can start in between.
    if (this.breaker.state === CircuitState.HalfOpen) throw this.openError();
    // Not closed here means open with the delay over (execute makes this call the probe) or still open (it throws).
    const probe = this.breaker.state !== CircuitState.Closed;
    let r: CallResult<T>;
    try {
      r = await this.breaker.execute(async () => {
        const res = await call();
        if (!res.ok && res.evidence === "inconclusive" && !probe) throw new Inconclusive(res.error);
        return res;
      });
    } catch (err) {
      if (err instanceof Inconclusive) throw err.error;
      if (err instanceof BrokenCircuitError) throw this.openError();
      throw err;
    }
    if (r.ok) return r.value;
    throw r.error;
  }

  private openError(): AppError {
    const left = this.openedAt + this.policy.halfOpenAfterMs - Date.now();
    return new AppError("UPSTREAM_UNAVAILABLE", `${this.venue} circuit open after repeated failures; skipped`, { retryAfterSec: Math.max(1, Math.ceil(left / 1000)) });
  }
}
