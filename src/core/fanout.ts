import { AppError, toAppError } from "../errors.js";
import { currentScope } from "./request-scope.js";

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

/** Reason given for a venue that does not list the symbol: not a failure. */
const NOT_LISTED_REASON = "not_listed";

/**
 * Calls `fn` for every venue in parallel. Failures degrade the answer instead of failing it: each is
 * listed in `missing_exchanges` with a caller-safe reason. A venue returning {@link NOT_LISTED} is
 * listed with reason `not_listed` and is neither an answer nor a failure.
 *
 * Partial answers are bounded (the answer of a paid request is charged only when it is worth its price):
 * when more than half of the venues that list the symbol failed, or when the request asks for every venue
 * (`require=all`, read from the request scope) and any failed, the fan-out fails instead, so the request
 * is answered 503 and not charged.
 * @throws AppError UNKNOWN_SYMBOL (404) when every venue answered that it does not list the symbol;
 *   UPSTREAM_UNAVAILABLE (503, `details`: the missing venues with their reasons) when no venue answered,
 *   more than half failed, or any failed under `require=all`.
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
      out.missing_exchanges.push({ exchange: venue, reason: NOT_LISTED_REASON });
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
  const listing = venues.length - notListed;
  const failed = listing - out.answered.length;
  const requireAll = currentScope()?.require === "all";
  if (failed * 2 > listing || (requireAll && failed > 0)) {
    const why = requireAll ? "require=all" : "more than half of the venues failed";
    throw new AppError("UPSTREAM_UNAVAILABLE", `${failed} of ${listing} venues failed (${why}); partial answer withheld`, {
      details: out.missing_exchanges,
      retryAfterSec: 10,
    });
  }
  return out;
}

/**
 * A supplementary venue read (a reference price, an enrichment): its failure degrades the answer to
 * `undefined`, except when the request asks for every venue (`require=all`), where it fails the request.
 * NOT_FOUND / UNKNOWN_SYMBOL (the venue does not have it) is never a failure.
 * @throws what `read` throws, under `require=all` only.
 */
export async function optionalRead<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    const code = err instanceof AppError ? err.code : undefined;
    if (currentScope()?.require === "all" && code !== "NOT_FOUND" && code !== "UNKNOWN_SYMBOL") throw err;
    return undefined;
  }
}
