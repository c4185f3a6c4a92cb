import { aster } from "./aster/index.js";
import { binance } from "./binance/index.js";
import { bitget } from "./bitget/index.js";
import { bybit } from "./bybit/index.js";
import type { Capability, PerpVenueDefinition } from "./define.js";
import { deribit } from "./deribit/index.js";
import { dydx } from "./dydx/index.js";
import { gate } from "./gate/index.js";
import { htx } from "./htx/index.js";
import { hyperliquid } from "./hyperliquid/index.js";
import { kraken } from "./kraken/index.js";
import { lighter } from "./lighter/index.js";
import { okx } from "./okx/index.js";
import { PERP_VENUES, type PerpVenue } from "./perp/types.js";
import { validateVenues } from "./validate.js";

/**
 * Every perpetual-futures venue, in answer order: the one list every per-venue table is derived from (clients,
 * feeds, backfills, doctor checks, tool descriptions, `missing_exchanges` reasons). A new venue is its folder and one
 * line here (docs/adding-a-venue.md). Validated at load (`validateVenues`).
 */
export const VENUES: readonly PerpVenueDefinition[] = [binance, bybit, okx, hyperliquid, gate, bitget, deribit, aster, htx, kraken, dydx, lighter];

validateVenues(VENUES, PERP_VENUES);

const BY_ID = new Map<string, PerpVenueDefinition>(VENUES.map((v) => [v.id, v]));

/** The definition of venue `id`. @throws Error for an id no venue has (a programming error). */
export function venue(id: string): PerpVenueDefinition {
  const v = BY_ID.get(id);
  if (!v) throw new Error(`no venue ${id}`);
  return v;
}

/** The ids of the venues with `capability`, in {@link VENUES} order. */
export function venuesWith(capability: Capability): PerpVenue[] {
  return VENUES.filter((v) => v.capabilities[capability]).map((v) => v.id);
}

export type { Capability, PerpVenueDefinition } from "./define.js";
