import { LRUCache } from "lru-cache";
import { z } from "zod";
import type { MissingExchange } from "../../src/core/fanout.js";
import { PERP_VENUES, type OpenInterest } from "../../src/venues/perp/types.js";

/**
 * Coverage of an aggregate perpetual answer (docs/methods/coverage.md): which venues it was built on, of how many it
 * asked, and for open-interest-weighted figures the share of the open interest the used venues hold. The reasons
 * the other venues are left out are in the answer's `missing_exchanges`.
 */
export const Coverage = z
  .object({
    exchanges_used: z.array(z.string()).describe("venues this answer is built on"),
    exchanges_asked: z.array(z.string()).describe("venues this answer asked (missing_exchanges says why each one not used is left out)"),
    exchanges_total: z.number().int().describe("perpetual venues the service reads"),
    oi_share_pct: z
      .number()
      .nullable()
      .optional()
      .describe(
        "open-interest-weighted figures only: the used venues' share, in pct, of the open interest of every asked venue that lists the symbol (a venue that could not be read counts with its last open interest read in the past 24 h); null when such a venue's open interest is unknown",
      ),
  })
  .describe("which venues the answer covers: an answer from eight venues is not one from three");

/** The `coverage` field of an aggregate answer. */
export type Coverage = z.infer<typeof Coverage>;

/** Last open interest read per venue and base (USD), for {@link oiSharePct}: bounded, kept 24 h. */
const lastOi = new LRUCache<string, { oiUsd: number; time: number }>({ max: 4096 });
const OI_MEMORY_MS = 24 * 3600_000;

/** Remembers open interest read from a venue, so a later answer missing that venue can still size its share. */
export function rememberOi(oi: Pick<OpenInterest, "venue" | "base" | "oiUsd" | "time">): void {
  if (Number.isFinite(oi.oiUsd) && oi.oiUsd >= 0) lastOi.set(`${oi.venue}:${oi.base}`, { oiUsd: oi.oiUsd, time: oi.time });
}

/**
 * The used venues' share of the open interest of `base` (pct, 0-100): `usedUsd` over itself plus the last open
 * interest read in the past 24 h of each venue in `unread` (venues that list the symbol but could not be read, or
 * whose open interest is not in the figure). Venues that do not list the symbol hold none and are not passed.
 * @returns null when one of `unread` has no open interest on record (the share cannot be sized).
 */
export function oiSharePct(base: string, usedUsd: number, unread: readonly string[], nowMs: number): number | null {
  let other = 0;
  for (const v of unread) {
    const known = lastOi.get(`${v}:${base}`);
    if (!known || nowMs - known.time > OI_MEMORY_MS) return null;
    other += known.oiUsd;
  }
  const total = usedUsd + other;
  return total > 0 ? Number(((usedUsd / total) * 100).toFixed(2)) : null;
}

/** Venues of `missing` that list the symbol but were not read (failed, or their datum is not in the figure). */
export function listedButUnread(missing: readonly MissingExchange[]): string[] {
  return missing.filter((m) => m.reason !== "not_listed" && m.reason !== "no_public_data").map((m) => m.exchange);
}

/** Builds the `coverage` field: `used` of `asked` (default: every perpetual venue). */
export function coverage(used: readonly string[], asked: readonly string[] = PERP_VENUES, oiShare?: number | null): Coverage {
  return { exchanges_used: [...used], exchanges_asked: [...asked], exchanges_total: PERP_VENUES.length, ...(oiShare === undefined ? {} : { oi_share_pct: oiShare }) };
}
