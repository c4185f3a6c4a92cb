import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { REST_URL_SETTINGS, WS_URL_SETTINGS } from "../src/venues/endpoints.js";
import { configProblems } from "./helpers/config-problems.js";

/**
 * Every venue URL setting on a local simulator, as `simEnv` does (src/venues/endpoints.ts lists them: a venue's
 * settings come with its endpoints, so this covers a new venue without an edit).
 */
const SIM_URLS: Record<string, string> = Object.fromEntries([
  ...REST_URL_SETTINGS.map((s) => [s, `http://127.0.0.1:9/${s === "OKX_BASE_URL" ? "okx" : s.toLowerCase()}`]),
  ...WS_URL_SETTINGS.map((s) => [s, `ws://127.0.0.1:9/${s.toLowerCase()}`]),
]);

describe("DATA_MODE=sim needs the simulator's URLs", () => {
  it("refuses to start without them instead of calling the real venues and labelling their data simulated", () => {
    const [p] = configProblems({ DATA_MODE: "sim" });
    expect(p).toMatch(/DATA_MODE=sim needs every venue base URL set explicitly/);
    expect(Object.keys(SIM_URLS)).toEqual(expect.arrayContaining(["COINGECKO_BASE_URL", "BINANCE_FAPI_BASE_URL", "BINANCE_SPOT_BASE_URL", "BINANCE_WS_URL"]));
    for (const name of Object.keys(SIM_URLS)) expect(p).toContain(name);
    expect(p).toContain("marketgate mcp --sim");
  });

  it("names each missing URL; websocket bases only matter while streams are on", () => {
    const { OKX_BASE_URL: _okx, BYBIT_WS_URL: _ws, ...rest } = SIM_URLS;
    const [p] = configProblems({ DATA_MODE: "sim", ...rest });
    expect(p).toMatch(/missing: OKX_BASE_URL, BYBIT_WS_URL\./);
    expect(configProblems({ DATA_MODE: "sim", STREAMS: "off", ...rest })[0]).toMatch(/missing: OKX_BASE_URL\./);
  });

  it("refuses a real venue's host in sim mode", () => {
    expect(configProblems({ DATA_MODE: "sim", ...SIM_URLS, BINANCE_FAPI_BASE_URL: "https://fapi.binance.com" })).toEqual([
      "DATA_MODE=sim with a real venue's URL (answers would be live data labelled simulated): BINANCE_FAPI_BASE_URL",
    ]);
  });

  it("starts with every URL set (as simEnv does), and live mode needs none", () => {
    expect(loadConfig({ DATA_MODE: "sim", ...SIM_URLS }).dataMode).toBe("sim");
    expect(loadConfig({ DATA_MODE: "sim", STREAMS: "off", ...SIM_URLS }).venues.okx).toBe("http://127.0.0.1:9/okx");
    expect(loadConfig({}).venues.binanceFapi).toBe("https://fapi.binance.com");
  });
});
