import type { FacilitatorClient } from "@x402/core/server";
import { loadConfig } from "../config.js";
import { createFacilitators } from "../payments/x402.js";
import { startAnvil, type AnvilHandle } from "../payments/local-chain/anvil.js";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";
import { provisionLocalChain, usdcBalanceOf } from "../payments/local-chain/provision.js";
import type { AnyTool } from "../registry/tool.js";
import { createService, type Service } from "../service.js";
import { startSimulator, type RunningSimulator } from "../sim/server.js";
import { offlineServiceEnv } from "./sim-env.js";

/** Options of {@link startOfflineStack}. Ports 0 (default) pick free ones. */
export interface OfflineStackOptions {
  port?: number;
  chainPort?: number;
  simPort?: number;
  /** Simulator market seed. */
  seed?: number;
  /** Serve the real recordings of `src/sim/recordings` where one exists (`--replay`; see `src/sim/replay.ts`). */
  replay?: boolean;
  /** Extra environment for the service configuration (e.g. `RATE_LIMIT_PER_MIN`). */
  env?: Record<string, string>;
  /** Wraps the configured facilitator(s) (tests inject faults this way). */
  wrapFacilitator?: (f: FacilitatorClient) => FacilitatorClient;
  /** Serve this catalogue instead of the registry (tests of payment flows use tools of their own). */
  tools?: readonly AnyTool[];
  /** The service clock (alert expiry tests move it by hand); payments keep real time. */
  now?: () => number;
}

/** A running offline stack: venue simulator + anvil with test USDC + the service on loopback. */
export interface OfflineStack {
  service: Service;
  /** Service base URL. */
  url: string;
  rpcUrl: string;
  usdcAddress: `0x${string}`;
  /** Dev account #0: relayer (pays gas) and recipient of payments (`PAY_TO`). */
  operator: DevAccount;
  /** Dev accounts #1..#9, 1,000 test USDC each. */
  payers: DevAccount[];
  sim: RunningSimulator;
  /** USDC balance in atomic units (6 decimals). */
  balanceOf(address: `0x${string}`): Promise<bigint>;
  close(): Promise<void>;
}

/**
 * Starts everything offline: the venue simulator, anvil (chain id 8453) with our EIP-3009 test token
 * planted at the real Base USDC address, and the service in `sim` mode paying into dev account #0
 * through the in-process facilitator. Production code paths run unchanged; only base URLs differ.
 */
export async function startOfflineStack(opts: OfflineStackOptions = {}): Promise<OfflineStack> {
  const sim = await startSimulator({ port: opts.simPort ?? 0, seed: opts.seed, replay: opts.replay });
  let anvil: AnvilHandle | undefined;
  try {
    anvil = await startAnvil({ port: opts.chainPort ?? 0, chainId: 8453 });
    const chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
    const operator = chain.relayer;
    // A fixed port (the sandbox's 4021) is served under a PUBLIC_URL, as in production; with PORT=0 the
    // service binds SIWX proofs to its loopback address and the port it gets (src/lib/public-origins.ts).
    const publicEnv = opts.port ? { PUBLIC_URL: `http://127.0.0.1:${opts.port}`, PUBLIC_ORIGINS: `http://localhost:${opts.port}` } : {};
    const config = loadConfig({ ...offlineServiceEnv(sim, chain, anvil.rpcUrl), PORT: String(opts.port ?? 0), ...publicEnv, ...opts.env });
    const base = createFacilitators(config.payments)!;
    const service = await createService({ config, tools: opts.tools, now: opts.now, facilitator: opts.wrapFacilitator ? opts.wrapFacilitator(base) : base });
    const listening = await service.listen();
    const rpcUrl = anvil.rpcUrl;
    const stopAnvil = anvil.stop;
    return {
      service,
      url: listening.url,
      rpcUrl,
      usdcAddress: chain.usdcAddress,
      operator,
      payers: chain.funded,
      sim,
      balanceOf: (address) => usdcBalanceOf(rpcUrl, chain.usdcAddress, address),
      close: async () => {
        await listening.close();
        await Promise.all([sim.close(), stopAnvil()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([sim.close(), anvil?.stop()]);
    throw err;
  }
}
