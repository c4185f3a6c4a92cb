import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { configProblems } from "./helpers/config-problems.js";

/** What `simEnv` sets: every venue on a local simulator. */
const SIM_URLS = {
  COINGECKO_BASE_URL: "http://127.0.0.1:9/coingecko/api/v3",
  BINANCE_FAPI_BASE_URL: "http://127.0.0.1:9/binance",
  BINANCE_SPOT_BASE_URL: "http://127.0.0.1:9/binance-spot",
  BYBIT_BASE_URL: "http://127.0.0.1:9/bybit",
  OKX_BASE_URL: "http://127.0.0.1:9/okx",
  GATE_BASE_URL: "http://127.0.0.1:9/gate/api/v4",
  HYPERLIQUID_BASE_URL: "http://127.0.0.1:9/hyperliquid",
  BITGET_BASE_URL: "http://127.0.0.1:9/bitget",
  DERIBIT_BASE_URL: "http://127.0.0.1:9/deribit/api/v2",
  ASTER_FAPI_BASE_URL: "http://127.0.0.1:9/aster",
  DEXSCREENER_BASE_URL: "http://127.0.0.1:9/dexscreener",
  GECKOTERMINAL_BASE_URL: "http://127.0.0.1:9/geckoterminal/api/v2",
  BINANCE_WS_URL: "ws://127.0.0.1:9/binance-ws",
  BYBIT_WS_URL: "ws://127.0.0.1:9/bybit-ws",
  OKX_WS_URL: "ws://127.0.0.1:9/okx-ws",
  GATE_WS_URL: "ws://127.0.0.1:9/gate-ws",
  HYPERLIQUID_WS_URL: "ws://127.0.0.1:9/hyperliquid-ws",
  BITGET_WS_URL: "ws://127.0.0.1:9/bitget-ws",
  DERIBIT_WS_URL: "ws://127.0.0.1:9/deribit-ws",
  ASTER_WS_URL: "ws://127.0.0.1:9/aster-ws",
};

describe("DATA_MODE=sim needs the simulator's URLs", () => {
  it("refuses to start without them instead of calling the real venues and labelling their data simulated", () => {
    const [p] = configProblems({ DATA_MODE: "sim" });
    expect(p).toMatch(/DATA_MODE=sim needs every venue base URL set explicitly/);
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
