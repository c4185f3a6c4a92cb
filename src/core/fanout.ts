import { AppError, toAppError } from "../errors.js";

/** A venue left out of an answer, and why (`not_listed`, or the venue error's code and message). */
export interface MissingExchange {
  exchange: string;
  reason: string;
}

/** Per-venue results of a fan-out, plus the venues that failed or do not list the symbol. */
export interface FanOut<K extends string, T> {
  results: Partial<Record<K, T>>;
  /** Venues in call order that produced a result. */
  answered: K[];
  missing_exchanges: MissingExchange[];
}

/** Returned by a venue call to say the venue does not list the instrument (not an error). */
export const NOT_LISTED = Symbol("not_listed");

/**
 * Calls `fn` for every venue in parallel. Failures degrade the answer instead of failing it: each is
 * listed in `missing_exchanges` with a caller-safe reason. A venue returning {@link NOT_LISTED} is
 * listed with reason `not_listed`.
 * @throws AppError UPSTREAM_UNAVAILABLE (503) when no venue answered, or NOT_FOUND/UNKNOWN_SYMBOL (404)
 *   when every venue answered that it does not list the symbol.
 */
export async function fanOut<K extends string, T>(venues: readonly K[], fn: (venue: K) => Promise<T | typeof NOT_LISTED>): Promise<FanOut<K, T>> {
  const settled = await Promise.allSettled(venues.map((v) => fn(v)));
  const out: FanOut<K, T> = { results: {}, answered: [], missing_exchanges: [] };
  let notListed = 0;
  settled.forEach((s, i) => {
    const venue = venues[i]!;
    if (s.status === "fulfilled" && s.value !== NOT_LISTED) {
      out.results[venue] = s.value as T;
      out.answered.push(venue);
    } else if (s.status === "fulfilled") {
      notListed++;
      out.missing_exchanges.push({ exchange: venue, reason: "not_listed" });
    } else {
      const e = toAppError(s.reason);
      const reason = e.code === "INTERNAL" ? "internal error" : `${e.code}: ${e.message}`;
      out.missing_exchanges.push({ exchange: venue, reason });
    }
  });
  if (out.answered.length === 0) {
    if (notListed === venues.length) throw new AppError("UNKNOWN_SYMBOL", "no venue lists this symbol", { details: out.missing_exchanges });
    throw new AppError("UPSTREAM_UNAVAILABLE", "no venue answered", { details: out.missing_exchanges, retryAfterSec: 10 });
  }
  return out;
}
