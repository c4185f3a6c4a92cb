/**
 * Time sources for the venue simulator.
 *
 * Everything in `src/sim/` reads "now" through a {@link Clock} so that tests can pin or step time
 * and get byte-identical responses.
 */

/** A source of the current time. `now()` returns epoch milliseconds (UTC), like `Date.now()`. */
export interface Clock {
  now(): number;
}

/** The real wall clock (`Date.now()`). */
export const systemClock: Clock = {
  now: () => Date.now(),
};

/** A clock that always returns `epochMs`. Throws RangeError if `epochMs` is not a finite number. */
export function fixedClock(epochMs: number): Clock {
  assertFiniteMs(epochMs);
  return { now: () => epochMs };
}

/** A clock that tests move by hand: `set(ms)` jumps to an epoch-ms instant, `advance(ms)` moves forward (or back if negative). */
export interface ManualClock extends Clock {
  set(epochMs: number): void;
  advance(deltaMs: number): void;
}

/** Creates a {@link ManualClock} starting at `startMs` (epoch ms). Throws RangeError on non-finite input. */
export function manualClock(startMs: number): ManualClock {
  assertFiniteMs(startMs);
  let t = startMs;
  return {
    now: () => t,
    set(epochMs: number) {
      assertFiniteMs(epochMs);
      t = epochMs;
    },
    advance(deltaMs: number) {
      assertFiniteMs(deltaMs);
      t += deltaMs;
    },
  };
}

function assertFiniteMs(ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`clock time must be a finite number of ms, got ${ms}`);
}
