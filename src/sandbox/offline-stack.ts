import type { FacilitatorClient } from "@x402/core/server";
import type { FacilitatorSvmSigner } from "@x402/svm";
import { loadConfig } from "../config.js";
import { ByNetworkFacilitatorClient } from "../payments/facilitator/by-network.js";
import { createFacilitators } from "../payments/x402.js";
import { startAnvil, type AnvilHandle } from "../payments/local-chain/anvil.js";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";
import { provisionLocalChain, usdcBalanceOf } from "../payments/local-chain/provision.js";
import { startLocalSolana, type LocalSolana } from "../payments/local-chain/solana/index.js";
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
  /**
   * Offer Solana too: a local Solana VM (LiteSVM) with USDC at its real mint and funded payers, its
   * loopback RPC on `solanaPort` (0 picks one), `PAY_TO_SOLANA` set and the official SVM facilitator settling on the VM.
   */
  solana?: boolean;
  solanaPort?: number;
  /** Wraps the Solana facilitator's VM-backed signer (tests inject faults this way). */
  wrapSolanaSigner?: (s: FacilitatorSvmSigner) => FacilitatorSvmSigner;
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
  /** The local Solana (when started with `solana: true`): payers #1..#9 with 1,000 test USDC each, `payTo`, RPC URL, balances. */
  solana?: LocalSolana;
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
  let solana: LocalSolana | undefined;
  try {
    anvil = await startAnvil({ port: opts.chainPort ?? 0, chainId: 8453 });
    const chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
    if (opts.solana) solana = await startLocalSolana({ rpcPort: opts.solanaPort ?? 0, wrapSigner: opts.wrapSolanaSigner });
    const operator = chain.relayer;
    // A fixed port (the sandbox's 4021) is served under a PUBLIC_URL, as in production; with PORT=0 the
    // service binds SIWX proofs to its loopback address and the port it gets (src/lib/public-origins.ts).
    const publicEnv = opts.port ? { PUBLIC_URL: `http://127.0.0.1:${opts.port}`, PUBLIC_ORIGINS: `http://localhost:${opts.port}` } : {};
    // Solana's settings are the real ones of the local VM (its RPC, its fee payer), as `FACILITATOR=self` reads them.
    const solanaEnv = solana ? { PAY_TO_SOLANA: solana.payTo.address, SOLANA_RPC_URL: solana.rpc.url, SOLANA_FEE_PAYER_PRIVATE_KEY: solana.feePayer.secretKey } : {};
    const config = loadConfig({ ...offlineServiceEnv(sim, chain, anvil.rpcUrl), ...solanaEnv, PORT: String(opts.port ?? 0), ...publicEnv, ...opts.env });
    // The loopback RPC answers clients' two calls only: Solana settles through the facilitator signer backed by the VM itself.
    const evm = createFacilitators({ ...config.payments, solana: undefined })!;
    const base = solana ? new ByNetworkFacilitatorClient([evm, solana.facilitator]) : evm;
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
      solana,
      close: async () => {
        await listening.close();
        await Promise.all([sim.close(), stopAnvil(), solana?.close()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([sim.close(), anvil?.stop(), solana?.close()]);
    throw err;
  }
}
