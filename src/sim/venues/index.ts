/**
 * Registry of simulated venues. To add one (Binance, Bybit, OKX, ...), write `venues/<name>.ts`
 * exporting a {@link SimVenue} and append it to {@link SIM_VENUES}; the server mounts it, gives it
 * a fault middleware keyed by its name, and exposes its base URL as `urls.<name>`.
 */
import { coingeckoVenue } from "./coingecko.js";
import type { SimVenue } from "./types.js";

/** Every venue the simulator serves, in mount order. */
export const SIM_VENUES = [coingeckoVenue] as const satisfies readonly SimVenue[];

/** Names of the simulated venues (`"coingecko"`, ...): keys of fault injection and of `urls`. */
export type SimVenueName = (typeof SIM_VENUES)[number]["name"];

export type { SimVenue, VenueContext } from "./types.js";
