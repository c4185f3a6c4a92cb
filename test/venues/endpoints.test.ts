import { describe, expect, it } from "vitest";
import { loadConfig, SETTING_NAMES } from "../../src/config.js";
import { backfillDefaults } from "../../src/ingestion/backfill/common.js";
import {
  ASTER_ENDPOINTS,
  BINANCE_ENDPOINTS,
  BITGET_ENDPOINTS,
  BYBIT_ENDPOINTS,
  COINGECKO_ENDPOINTS,
  DERIBIT_ENDPOINTS,
  DEXSCREENER_ENDPOINTS,
  GECKOTERMINAL_ENDPOINTS,
  HYPERLIQUID_ENDPOINTS,
  LIVE_VENUE_HOSTS,
  OKX_ENDPOINTS,
  ENDPOINTS_BY_VENUE,
  REST_URL_SETTINGS,
  VENUE_ENDPOINTS,
  VENUE_REST_URLS,
  VENUE_WS_URLS,
  WS_URL_SETTINGS,
} from "../../src/venues/endpoints.js";
import type { VenueEndpoints } from "../../src/venues/endpoint-types.js";
import { configProblems } from "../helpers/config-problems.js";

/*
 * Each venue states its base URLs, live hosts and budgets once (src/venues/<venue>/endpoints.ts); config
 * defaults, sim-mode checks and the backfills read them there. These tests hold the pieces together, so a
 * venue added to the list is covered without a new test.
 */

const endpointsOf = (v: VenueEndpoints) => [...Object.values(v.rest), ...(v.ws ? [v.ws] : [])];

/** Every URL setting pointed at a local simulator, as simEnv does. */
const simUrls = () => Object.fromEntries([...REST_URL_SETTINGS, ...WS_URL_SETTINGS].map((s) => [s, `http://127.0.0.1:9/${s.toLowerCase()}`]));

describe("venue endpoints, stated once", () => {
  it("name only settings the configuration reads", () => {
    for (const v of VENUE_ENDPOINTS) for (const e of endpointsOf(v)) expect(SETTING_NAMES, e.setting).toContain(e.setting);
  });

  it("are the configuration's defaults (URLs and budgets)", () => {
    const c = loadConfig({});
    // Every venue but CoinGecko (its plan picks the URL): one key per REST setting, `<id>` or `<id><Role>` for several.
    expect(c.venues).toEqual(Object.fromEntries(VENUE_REST_URLS.map((u) => [u.key, u.url])));
    expect(c.streams?.wsUrls).toEqual(Object.fromEntries(VENUE_WS_URLS.map((u) => [u.key, u.url])));
    expect(c.venues).toMatchObject({
      binanceFapi: BINANCE_ENDPOINTS.rest.fapi.url,
      binanceSpot: BINANCE_ENDPOINTS.rest.spot.url,
      bitget: BITGET_ENDPOINTS.rest.api.url,
      aster: ASTER_ENDPOINTS.rest.fapi.url,
      geckoterminal: GECKOTERMINAL_ENDPOINTS.rest.api.url,
    });
    expect(c.streams?.wsUrls).toMatchObject({ binance: BINANCE_ENDPOINTS.ws.url, deribit: DERIBIT_ENDPOINTS.ws.url });
    expect(Object.keys(c.venues)).not.toContain("coingecko");
    for (const [id, v] of Object.entries(ENDPOINTS_BY_VENUE)) {
      if ("ws" in v) expect(c.streams?.wsUrls, id).toHaveProperty(id, v.ws.url);
      if (id !== "coingecko") for (const e of Object.values(v.rest)) expect(Object.values(c.venues), e.setting).toContain(e.url);
    }
    expect(c.dexscreenerCallsPerMin).toBe(DEXSCREENER_ENDPOINTS.rest.api.callsPerMin);
    expect(c.geckoterminalCallsPerMin).toBe(GECKOTERMINAL_ENDPOINTS.rest.api.callsPerMin);
    for (const plan of ["public", "demo", "pro"] as const) {
      const cg = loadConfig({ COINGECKO_PLAN: plan, COINGECKO_API_KEY: plan === "public" ? undefined : "k" }).coingecko;
      expect(cg).toMatchObject({ plan, baseUrl: COINGECKO_ENDPOINTS.rest[plan].url, callsPerMin: COINGECKO_ENDPOINTS.rest[plan].callsPerMin });
    }
  });

  it("give the live hosts sim mode refuses: the hosts of every REST and websocket URL", () => {
    // The first venues' hosts, and every host of every venue's URLs (a new venue is covered through VENUE_ENDPOINTS).
    expect([...LIVE_VENUE_HOSTS]).toEqual(
      expect.arrayContaining([
        "api.binance.com",
        "api.bitget.com",
        "api.bybit.com",
        "api.coingecko.com",
        "api.dexscreener.com",
        "api.gateio.ws",
        "api.geckoterminal.com",
        "api.hyperliquid.xyz",
        "fapi.asterdex.com",
        "fapi.binance.com",
        "fstream.asterdex.com",
        "fstream.binance.com",
        "fx-ws.gateio.ws",
        "pro-api.coingecko.com",
        "stream.bybit.com",
        "ws.bitget.com",
        "ws.okx.com",
        "www.okx.com",
        "www.deribit.com",
      ]),
    );
    expect(LIVE_VENUE_HOSTS).toEqual(new Set(VENUE_ENDPOINTS.flatMap((v) => endpointsOf(v).map((e) => new URL(e.url).hostname))));
    expect(loadConfig({ DATA_MODE: "sim", ...simUrls() }).dataMode).toBe("sim");
    for (const v of VENUE_ENDPOINTS) {
      for (const e of endpointsOf(v)) {
        expect(configProblems({ DATA_MODE: "sim", ...simUrls(), [e.setting]: e.url }), e.setting).toEqual([
          `DATA_MODE=sim with a real venue's URL (answers would be live data labelled simulated): ${e.setting}`,
        ]);
      }
    }
  });

  it("give each backfill its budget on the live URL of the REST base it names", () => {
    expect(backfillDefaults(BINANCE_ENDPOINTS)).toEqual({ baseUrl: "https://fapi.binance.com", callsPerMin: 60, windowSec: undefined });
    expect(backfillDefaults(OKX_ENDPOINTS)).toEqual({ baseUrl: "https://www.okx.com", callsPerMin: 300, windowSec: 2 });
    for (const v of [BYBIT_ENDPOINTS, HYPERLIQUID_ENDPOINTS]) expect(backfillDefaults(v).baseUrl).toBe(v.rest.api.url);
    expect(() => backfillDefaults({ rest: BINANCE_ENDPOINTS.rest, backfill: { rest: "futures", callsPerMin: 1 } })).toThrow(/names no REST base "futures"/);
  });
});
