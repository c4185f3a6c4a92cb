/**
 * Registry of simulated venues. To add one, write `venues/<name>.ts` exporting a {@link SimVenue} and append it to
 * {@link SIM_VENUES}; the server mounts it, gives it a fault middleware keyed by its name, and exposes its base URL
 * as `urls.<name>`.
 *
 * Mount paths stand in for the real hosts: `urls.binance` ↔ `https://fapi.binance.com`, `urls.binance_spot` ↔
 * `https://api.binance.com`, `urls.bybit` ↔ `https://api.bybit.com`, `urls.okx` ↔ `https://www.okx.com`, `urls.gate` ↔ `https://api.gateio.ws/api/v4`,
 * `urls.hyperliquid` ↔ `https://api.hyperliquid.xyz`, `urls.bitget` ↔ `https://api.bitget.com`, `urls.coingecko` ↔ `https://api.coingecko.com/api/v3`,
 * `urls.dexscreener` ↔ `https://api.dexscreener.com`, `urls.geckoterminal` ↔ `https://api.geckoterminal.com/api/v2`, `urls.aster` ↔ `https://fapi.asterdex.com`, `urls.deribit` ↔ `https://www.deribit.com/api/v2`.
 */
import { asterVenue } from "./aster.js";
import { binanceSpotVenue, binanceVenue } from "./binance.js";
import { bitgetVenue } from "./bitget.js";
import { bybitVenue } from "./bybit.js";
import { coingeckoVenue } from "./coingecko.js";
import { deribitVenue } from "./deribit.js";
import { dexscreenerVenue } from "./dexscreener.js";
import { dydxVenue } from "./dydx.js";
import { gateVenue } from "./gate.js";
import { geckoterminalVenue } from "./geckoterminal.js";
import { htxVenue } from "./htx.js";
import { hyperliquidVenue } from "./hyperliquid.js";
import { krakenVenue } from "./kraken.js";
import { lighterVenue } from "./lighter.js";
import { okxVenue } from "./okx.js";
import type { PerpSimVenue } from "../perp/types.js";
import type { SimVenue } from "./types.js";

/** Every venue the simulator serves, in mount order. */
export const SIM_VENUES = [
  coingeckoVenue,
  binanceVenue,
  binanceSpotVenue,
  bybitVenue,
  okxVenue,
  gateVenue,
  hyperliquidVenue,
  bitgetVenue,
  deribitVenue,
  asterVenue,
  htxVenue,
  krakenVenue,
  dydxVenue,
  lighterVenue,
  dexscreenerVenue,
  geckoterminalVenue,
] as const satisfies readonly SimVenue[];

/** Names of the simulated venues (`"coingecko"`, `"binance"`, ...): keys of fault injection and of `urls`. */
export type SimVenueName = (typeof SIM_VENUES)[number]["name"];

/**
 * Every perp venue is served: a venue of the id list (src/venues/perp/types.ts) missing from {@link SIM_VENUES} fails
 * to compile here, naming it (the sandbox and the sim-mode tests would otherwise find no route for it).
 */
type UnservedPerpVenue = Exclude<PerpSimVenue, SimVenueName>;
export const EVERY_PERP_VENUE_SERVED: [UnservedPerpVenue] extends [never] ? true : { missingFromSimVenues: UnservedPerpVenue } = true;

export type { SimVenue, VenueContext } from "./types.js";
