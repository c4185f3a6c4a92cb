import type { ProvisionedChain } from "../payments/local-chain/provision.js";
import type { RunningSimulator } from "../sim/server.js";
import type { SimVenueName } from "../sim/venues/index.js";
import { VENUE_REST_URLS, VENUE_WS_URLS } from "../venues/endpoints.js";

/** The simulated venue serving a `Config.venues` key: the venue's id, except Binance's two REST bases. */
const SIM_REST_NAME: Readonly<Record<string, SimVenueName>> = { binanceFapi: "binance", binanceSpot: "binance_spot" };

/**
 * Every venue URL setting (src/venues/endpoints.ts) pointed at the simulator: REST bases at `sim.urls.<venue>`,
 * websocket bases at `sim.wsUrls.<venue>`. @throws Error naming a setting the simulator serves nothing for (a venue
 * missing from `SIM_VENUES`), rather than a config error about a missing URL later.
 */
function venueUrls(sim: RunningSimulator): Record<string, string> {
  const urls: Readonly<Record<string, string | undefined>> = sim.urls;
  const wsUrls: Readonly<Record<string, string | undefined>> = sim.wsUrls;
  const pick = (setting: string, url: string | undefined): [string, string] => {
    if (url === undefined) throw new Error(`the simulator serves no venue for ${setting} (src/sim/venues/index.ts, src/sim/ws/hub.ts)`);
    return [setting, url];
  };
  return Object.fromEntries([...VENUE_REST_URLS.map((u) => pick(u.setting, urls[SIM_REST_NAME[u.key] ?? u.key])), ...VENUE_WS_URLS.map((u) => pick(u.setting, wsUrls[u.key]))]);
}

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
    ...venueUrls(sim),
    // The simulator has no rate limit (live: GeckoTerminal about 30 calls/min, DexScreener 300/min).
    GECKOTERMINAL_CALLS_PER_MIN: "600",
    DEXSCREENER_CALLS_PER_MIN: "6000",
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
