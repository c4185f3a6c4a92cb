import type { ProvisionedChain } from "../payments/local-chain/provision.js";
import type { RunningSimulator } from "../sim/server.js";

/**
 * Environment that points every venue adapter at a running simulator (sim data mode), with budgets sized for it;
 * `SIM_REPLAY=on` when the simulator replays recordings (answers built on them are labelled `replay`).
 */
export function simEnv(sim: RunningSimulator): Record<string, string> {
  return {
    DATA_MODE: "sim",
    SIM_REPLAY: sim.replay ? "on" : "off",
    COINGECKO_BASE_URL: sim.urls.coingecko,
    COINGECKO_PLAN: "pro",
    BINANCE_FAPI_BASE_URL: sim.urls.binance,
    BINANCE_SPOT_BASE_URL: sim.urls.binance_spot,
    BYBIT_BASE_URL: sim.urls.bybit,
    OKX_BASE_URL: sim.urls.okx,
    GATE_BASE_URL: sim.urls.gate,
    HYPERLIQUID_BASE_URL: sim.urls.hyperliquid,
    BITGET_BASE_URL: sim.urls.bitget,
    DERIBIT_BASE_URL: sim.urls.deribit,
    ASTER_FAPI_BASE_URL: sim.urls.aster,
    DEXSCREENER_BASE_URL: sim.urls.dexscreener,
    GECKOTERMINAL_BASE_URL: sim.urls.geckoterminal,
    // The simulator has no rate limit (live: GeckoTerminal about 30 calls/min, DexScreener 300/min).
    GECKOTERMINAL_CALLS_PER_MIN: "600",
    DEXSCREENER_CALLS_PER_MIN: "6000",
    BINANCE_WS_URL: sim.wsUrls.binance,
    BYBIT_WS_URL: sim.wsUrls.bybit,
    OKX_WS_URL: sim.wsUrls.okx,
    GATE_WS_URL: sim.wsUrls.gate,
    HYPERLIQUID_WS_URL: sim.wsUrls.hyperliquid,
    BITGET_WS_URL: sim.wsUrls.bitget,
    DERIBIT_WS_URL: sim.wsUrls.deribit,
    ASTER_WS_URL: sim.wsUrls.aster,
    // Sandbox and tests keep stream history in memory unless told otherwise.
    DATA_DIR: ":memory:",
  };
}

/**
 * Environment of a paid service on the offline stack: the simulator's venues ({@link simEnv}), payments
 * into dev account #0 settled by the in-process facilitator on the local chain at `rpcUrl`, on loopback
 * with a free port.
 */
export function offlineServiceEnv(sim: RunningSimulator, chain: ProvisionedChain, rpcUrl: string): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: "0",
    ...simEnv(sim),
    PAY_TO: chain.relayer.address,
    NETWORK: "eip155:8453",
    FACILITATOR: "self",
    RELAYER_PRIVATE_KEY: chain.relayer.privateKey,
    RPC_URL: rpcUrl,
    // The local chain mines each transaction at once: a receipt missed by the first call is there within ms.
    SETTLE_RECEIPT_POLL_MS: "20",
  };
}
