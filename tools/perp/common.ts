import { z } from "zod";
import type { ToolContext } from "../../src/core/context.js";
import { fanOut, NOT_LISTED, type MissingExchange } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { NO_PUBLIC_DATA } from "../../src/venues/define.js";
import { type Capability, venue } from "../../src/venues/index.js";
import { PERP_VENUES, type PerpVenue, type PerpVenueClient } from "../../src/venues/perp/types.js";
export { venueList } from "../common.js";

/** Quote/contract suffixes accepted after a base symbol (`BTCUSDT`, `BTC-USDT-SWAP`, `BTC/USDT`, `BTC-PERP`). */
const SUFFIX = /([-_/]?USDT(-SWAP)?|[-_]?PERP(ETUAL)?|[-_/]?USDC|[-_/]USD)$/;

/** Canonical base of a perp symbol as callers write it: `btc`, `BTCUSDT`, `BTC-USDT-SWAP` -> `BTC`. */
export function perpBase(raw: string): string {
  return raw.trim().toUpperCase().replace(SUFFIX, "");
}

/**
 * A perpetual's symbol: the base (`BTC`) or a venue-style symbol (`BTCUSDT`, `BTC-USDT-SWAP`), resolved to
 * the base. Whether some venue lists it is checked before payment by {@link requireListed}.
 */
export const PerpSymbol = z
  .string()
  .min(1)
  .max(40)
  .describe("perpetual symbol: base (BTC) or quote-suffixed (BTCUSDT, BTC-USDT-SWAP)")
  .transform((raw, ctx) => {
    const base = perpBase(raw);
    if (!/^[A-Z0-9]{1,20}$/.test(base)) {
      ctx.addIssue({ code: "custom", message: `'${raw}' is not a perpetual symbol` });
      return z.NEVER;
    }
    return base;
  });

/** Exchange key of a perp venue. */
export const Exchange = z.enum(PERP_VENUES);

/** `missing_exchanges` items of a partial answer. */
export const MissingExchanges = z
  .array(z.object({ exchange: z.string(), reason: z.string() }))
  .describe("venues left out of this answer and why (not_listed, no_public_data, or the venue error)");

/** The perp venues' clients. */
export function perps(ctx: ToolContext): Record<PerpVenue, PerpVenueClient> {
  return ctx.venues.perps;
}

/**
 * Check before payment: 404 UNKNOWN_SYMBOL when every venue answered that it does not list `base`; 503 when no venue
 * could say. Instrument lists are cached by the clients, so this costs no venue call most of the time.
 */
export async function requireListed(base: string, ctx: ToolContext, venues: readonly PerpVenue[] = PERP_VENUES): Promise<void> {
  await fanOut(venues, async (v) => ((await perps(ctx)[v].instrument(base)) ? true : NOT_LISTED));
}

/**
 * Fans out a per-symbol venue call; venues that do not list the symbol are skipped as `not_listed`. A venue whose
 * definition lacks `needs` (src/venues/<venue>/index.ts, `capabilities`) is not called and is listed as
 * `no_public_data`, as is one whose call returns null (not a failure).
 * @throws AppError as {@link fanOut} (partial answers beyond its bound are refused).
 */
export async function perVenue<T>(
  ctx: ToolContext,
  base: string,
  call: (client: PerpVenueClient) => Promise<T | null>,
  opts: { venues?: readonly PerpVenue[]; needs?: Capability } = {},
): Promise<{ results: Partial<Record<PerpVenue, T>>; answered: PerpVenue[]; missing_exchanges: MissingExchange[] }> {
  const { venues = PERP_VENUES, needs } = opts;
  const noData: PerpVenue[] = [];
  const relabel = (list: MissingExchange[]) => list.map((m) => (noData.includes(m.exchange as PerpVenue) ? { ...m, reason: NO_PUBLIC_DATA } : m));
  const out = await fanOut(venues, async (v) => {
    const client = perps(ctx)[v];
    if (!(await client.instrument(base))) return NOT_LISTED;
    const r = needs && !venue(v).capabilities[needs] ? null : await call(client);
    if (r === null) {
      noData.push(v);
      return NOT_LISTED;
    }
    return r;
  }).catch((err: unknown) => {
    // A refused fan-out names the missing venues in its details: say no_public_data there too.
    if (err instanceof AppError && Array.isArray(err.details)) {
      throw new AppError(err.code, err.message, { details: relabel(err.details as MissingExchange[]), retryAfterSec: err.retryAfterSec });
    }
    throw err;
  });
  out.missing_exchanges = relabel(out.missing_exchanges);
  return out;
}

/** ISO time of an epoch-ms value, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** Rounds to `d` significant decimals for display fields that are derived (never raw venue values). */
export function round(x: number, d = 8): number {
  return Number(x.toFixed(d));
}
