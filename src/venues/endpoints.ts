import { ASTER_ENDPOINTS } from "./aster/endpoints.js";
import { BINANCE_ENDPOINTS } from "./binance/endpoints.js";
import { BITGET_ENDPOINTS } from "./bitget/endpoints.js";
import { BYBIT_ENDPOINTS } from "./bybit/endpoints.js";
import { COINGECKO_ENDPOINTS } from "./coingecko/endpoints.js";
import { DERIBIT_ENDPOINTS } from "./deribit/endpoints.js";
import { DEXSCREENER_ENDPOINTS } from "./dexscreener/endpoints.js";
import { DYDX_ENDPOINTS } from "./dydx/endpoints.js";
import type { VenueEndpoints } from "./endpoint-types.js";
import { GATE_ENDPOINTS } from "./gate/endpoints.js";
import { GECKOTERMINAL_ENDPOINTS } from "./geckoterminal/endpoints.js";
import { HTX_ENDPOINTS } from "./htx/endpoints.js";
import { HYPERLIQUID_ENDPOINTS } from "./hyperliquid/endpoints.js";
import { KRAKEN_ENDPOINTS } from "./kraken/endpoints.js";
import { LIGHTER_ENDPOINTS } from "./lighter/endpoints.js";
import { OKX_ENDPOINTS } from "./okx/endpoints.js";

/**
 * Every venue's endpoints (`src/venues/<venue>/endpoints.ts`) by venue id, in the order settings are reported. A new
 * venue is one line here (docs/adding-a-venue.md): src/config.ts derives from this list its URL settings (with their
 * defaults), their secret classification, `Config.venues`, `Config.streams.wsUrls` and the sim-mode checks, and the
 * venues with a trade feed (`ws`) are the perpetual venues, in answer order (`PERP_VENUES`, src/venues/perp/types.ts).
 */
export const ENDPOINTS_BY_VENUE = {
  coingecko: COINGECKO_ENDPOINTS,
  binance: BINANCE_ENDPOINTS,
  bybit: BYBIT_ENDPOINTS,
  okx: OKX_ENDPOINTS,
  hyperliquid: HYPERLIQUID_ENDPOINTS,
  gate: GATE_ENDPOINTS,
  bitget: BITGET_ENDPOINTS,
  deribit: DERIBIT_ENDPOINTS,
  aster: ASTER_ENDPOINTS,
  htx: HTX_ENDPOINTS,
  kraken: KRAKEN_ENDPOINTS,
  dydx: DYDX_ENDPOINTS,
  lighter: LIGHTER_ENDPOINTS,
  dexscreener: DEXSCREENER_ENDPOINTS,
  geckoterminal: GECKOTERMINAL_ENDPOINTS,
} as const satisfies Readonly<Record<string, VenueEndpoints>>;

type ById = typeof ENDPOINTS_BY_VENUE;
/** A venue id of {@link ENDPOINTS_BY_VENUE} (`binance`, `coingecko`, …). */
export type EndpointVenue = keyof ById;

/** Every venue's endpoints, in {@link ENDPOINTS_BY_VENUE} order. */
export const VENUE_ENDPOINTS: ReadonlyArray<ById[EndpointVenue]> = Object.values(ENDPOINTS_BY_VENUE);

type AnyVenue = ById[EndpointVenue];
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
export const WS_URL_SETTINGS: readonly WsUrlSetting[] = VENUE_ENDPOINTS.flatMap((v: VenueEndpoints) => (v.ws ? [v.ws.setting as WsUrlSetting] : []));

/**
 * The hosts of every venue's live URLs, REST and websocket (`fapi.binance.com`, `ws.okx.com`, …): a URL
 * naming one in sim mode would label live data simulated.
 */
export const LIVE_VENUE_HOSTS: ReadonlySet<string> = new Set(
  VENUE_ENDPOINTS.flatMap((v: VenueEndpoints) => [...restOf(v), ...(v.ws ? [v.ws] : [])].map((e) => new URL(e.url).hostname)),
);

/*
 * The venues whose REST bases `Config.venues` holds: every one but CoinGecko, whose plan picks its URL and budget
 * (`Config.coingecko`, its setting optional). A venue whose REST bases share one setting is `venues.<id>` (`venues.okx`,
 * `venues.bitget` for its two budgets); one with several settings is `venues.<id><Role>` (`venues.binanceFapi`).
 */
type ConfiguredVenue = Exclude<EndpointVenue, "coingecko">;
type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;
type RolesOf<Id extends ConfiguredVenue> = keyof ById[Id]["rest"] & string;
type SettingsOf<Id extends ConfiguredVenue> = SettingOf<ById[Id]["rest"][RolesOf<Id>]>;
type RestKeysOf<Id extends ConfiguredVenue> = true extends IsUnion<SettingsOf<Id>> ? `${Id}${Capitalize<RolesOf<Id>>}` : Id;

/** The REST base URLs of `Config.venues`, by key (`binanceFapi`, `okx`, …); no trailing slash. */
export type VenueRestUrls = { [K in { [Id in ConfiguredVenue]: RestKeysOf<Id> }[ConfiguredVenue]]: string };
/** The settings of {@link VenueRestUrls} (every REST URL setting but `COINGECKO_BASE_URL`). */
export type VenueRestSetting = { [Id in ConfiguredVenue]: SettingsOf<Id> }[ConfiguredVenue];
/** The websocket bases of `Config.streams.wsUrls`, by venue id (the venues with a trade feed). */
export type VenueWsUrls = { [Id in EndpointVenue as ById[Id] extends { ws: unknown } ? Id : never]: string };

/** One URL setting of a venue: the `Config` key it fills, the setting's name, the live URL it defaults to. */
export interface UrlSetting<Key extends string, Setting extends string> {
  readonly key: Key;
  readonly setting: Setting;
  readonly url: string;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Every REST base setting `Config.venues` reads (see {@link VenueRestUrls}), in {@link ENDPOINTS_BY_VENUE} order. */
export const VENUE_REST_URLS: ReadonlyArray<UrlSetting<keyof VenueRestUrls, VenueRestSetting>> = Object.entries(ENDPOINTS_BY_VENUE as Readonly<Record<string, VenueEndpoints>>)
  .filter(([id]) => id !== "coingecko")
  .flatMap(([id, v]) => {
    const bySetting = new Map<string, { role: string; url: string }>();
    for (const [role, e] of Object.entries(v.rest)) if (!bySetting.has(e.setting)) bySetting.set(e.setting, { role, url: e.url });
    const key = (role: string) => (bySetting.size > 1 ? `${id}${capitalize(role)}` : id) as keyof VenueRestUrls;
    return [...bySetting].map(([setting, { role, url }]) => ({ key: key(role), setting: setting as VenueRestSetting, url }));
  });

/** Every websocket base setting `Config.streams.wsUrls` reads (see {@link VenueWsUrls}), in {@link ENDPOINTS_BY_VENUE} order. */
export const VENUE_WS_URLS: ReadonlyArray<UrlSetting<keyof VenueWsUrls, WsUrlSetting>> = Object.entries(ENDPOINTS_BY_VENUE as Readonly<Record<string, VenueEndpoints>>).flatMap(
  ([id, v]) => (v.ws ? [{ key: id as keyof VenueWsUrls, setting: v.ws.setting as WsUrlSetting, url: v.ws.url }] : []),
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
