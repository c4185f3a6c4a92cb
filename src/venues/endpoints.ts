import { ASTER_ENDPOINTS } from "./aster/endpoints.js";
import { BINANCE_ENDPOINTS } from "./binance/endpoints.js";
import { BITGET_ENDPOINTS } from "./bitget/endpoints.js";
import { BYBIT_ENDPOINTS } from "./bybit/endpoints.js";
import { COINGECKO_ENDPOINTS } from "./coingecko/endpoints.js";
import { DERIBIT_ENDPOINTS } from "./deribit/endpoints.js";
import { DEXSCREENER_ENDPOINTS } from "./dexscreener/endpoints.js";
import type { VenueEndpoints } from "./endpoint-types.js";
import { GATE_ENDPOINTS } from "./gate/endpoints.js";
import { GECKOTERMINAL_ENDPOINTS } from "./geckoterminal/endpoints.js";
import { HYPERLIQUID_ENDPOINTS } from "./hyperliquid/endpoints.js";
import { OKX_ENDPOINTS } from "./okx/endpoints.js";

/**
 * Every venue's endpoints (`src/venues/<venue>/endpoints.ts`), in the order settings are reported. A new
 * venue is added here (docs/adding-a-venue.md); src/config.ts derives its sim-mode checks from this list.
 */
export const VENUE_ENDPOINTS = [
  COINGECKO_ENDPOINTS,
  BINANCE_ENDPOINTS,
  BYBIT_ENDPOINTS,
  OKX_ENDPOINTS,
  HYPERLIQUID_ENDPOINTS,
  GATE_ENDPOINTS,
  BITGET_ENDPOINTS,
  DERIBIT_ENDPOINTS,
  ASTER_ENDPOINTS,
  DEXSCREENER_ENDPOINTS,
  GECKOTERMINAL_ENDPOINTS,
] as const satisfies readonly VenueEndpoints[];

type AnyVenue = (typeof VENUE_ENDPOINTS)[number];
/** Distributes over the venues: each one's REST endpoints, and each endpoint's setting name. */
type RestOf<V> = V extends { rest: infer R } ? R[keyof R] : never;
type SettingOf<E> = E extends { setting: infer S extends string } ? S : never;
/** The name of a setting holding a venue's REST base URL (`BINANCE_FAPI_BASE_URL`, …). */
export type RestUrlSetting = SettingOf<RestOf<AnyVenue>>;
/** The name of a setting holding a venue's websocket base URL (`BINANCE_WS_URL`, …). */
export type WsUrlSetting = SettingOf<Extract<AnyVenue, { ws: unknown }>["ws"]>;

const restOf = (v: VenueEndpoints) => Object.values(v.rest);

/** The REST base URL settings of every venue, each once (CoinGecko's plans share one). */
export const REST_URL_SETTINGS: readonly RestUrlSetting[] = [...new Set(VENUE_ENDPOINTS.flatMap((v) => restOf(v).map((r) => r.setting as RestUrlSetting)))];

/** The websocket base URL settings of the venues with a trade feed. */
export const WS_URL_SETTINGS: readonly WsUrlSetting[] = VENUE_ENDPOINTS.flatMap((v) => ("ws" in v ? [v.ws.setting] : []));

/**
 * The hosts of every venue's live URLs, REST and websocket (`fapi.binance.com`, `ws.okx.com`, …): a URL
 * naming one in sim mode would label live data simulated.
 */
export const LIVE_VENUE_HOSTS: ReadonlySet<string> = new Set(
  VENUE_ENDPOINTS.flatMap((v: VenueEndpoints) => [...restOf(v), ...(v.ws ? [v.ws] : [])].map((e) => new URL(e.url).hostname)),
);

export {
  ASTER_ENDPOINTS,
  BINANCE_ENDPOINTS,
  BITGET_ENDPOINTS,
  BYBIT_ENDPOINTS,
  COINGECKO_ENDPOINTS,
  DERIBIT_ENDPOINTS,
  DEXSCREENER_ENDPOINTS,
  GATE_ENDPOINTS,
  GECKOTERMINAL_ENDPOINTS,
  HYPERLIQUID_ENDPOINTS,
  OKX_ENDPOINTS,
};
