import type { RunningSimulator } from "../sim/server.js";

/** Environment that points every venue adapter at a running simulator (sim data mode), with budgets sized for it. */
export function simEnv(sim: RunningSimulator): Record<string, string> {
  return {
    DATA_MODE: "sim",
    COINGECKO_BASE_URL: sim.urls.coingecko,
    COINGECKO_PLAN: "pro",
    BINANCE_FAPI_BASE_URL: sim.urls.binance,
    BINANCE_SPOT_BASE_URL: sim.urls.binance_spot,
    BYBIT_BASE_URL: sim.urls.bybit,
    OKX_BASE_URL: sim.urls.okx,
    HYPERLIQUID_BASE_URL: sim.urls.hyperliquid,
    DEXSCREENER_BASE_URL: sim.urls.dexscreener,
    GECKOTERMINAL_BASE_URL: sim.urls.geckoterminal,
    // The simulator has no rate limit (live: GeckoTerminal about 30 calls/min, DexScreener 300/min).
    GECKOTERMINAL_CALLS_PER_MIN: "600",
    DEXSCREENER_CALLS_PER_MIN: "6000",
    BINANCE_WS_URL: sim.wsUrls.binance,
    BYBIT_WS_URL: sim.wsUrls.bybit,
    OKX_WS_URL: sim.wsUrls.okx,
    HYPERLIQUID_WS_URL: sim.wsUrls.hyperliquid,
    // Sandbox and tests keep stream history in memory unless told otherwise.
    DATA_DIR: ":memory:",
  };
}
