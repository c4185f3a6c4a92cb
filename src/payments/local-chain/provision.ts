import { createPublicClient, createTestClient, createWalletClient, defineChain, getAddress, http, parseUnits, type Address, type Chain, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount, type DevAccount } from "./dev-accounts.js";
import { compileTestUsdc } from "./token.js";

/** USDC on Base mainnet (`eip155:8453`), the address x402's default asset table resolves "$0.01" to. */
export const BASE_USDC_ADDRESS: Address = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/** Options for {@link provisionLocalChain}. */
export interface ProvisionOptions {
  /** JSON-RPC URL of a local anvil node (it must support `anvil_setCode`). */
  rpcUrl: string;
  /** Chain id the node runs with; default 8453. Checked against `eth_chainId`. */
  chainId?: number;
  /** Where to plant the token's runtime code; default {@link BASE_USDC_ADDRESS}. */
  usdcAddress?: Address;
  /** Dev account indexes (0..9) to mint to; default [1..9]. */
  fundedAccounts?: number[];
  /** Whole USDC minted to each funded account; default 1000 (i.e. 1000e6 atomic units). */
  amountUsdc?: number;
}

/** Result of {@link provisionLocalChain}. */
export interface ProvisionedChain {
  /** Address carrying the TestUSDC code (checksummed). */
  usdcAddress: Address;
  /** Dev account #0: deployed the token; use it as the facilitator's gas payer. */
  relayer: DevAccount;
  /** The accounts that received `amountUsdc`, in the order requested. */
  funded: DevAccount[];
}

const balanceOfAbi = [
  {
    type: "function",
    name: "balanceOf",
    stateMutability: "view",
    inputs: [{ name: "account", type: "address" }],
    outputs: [{ name: "", type: "uint256" }],
  },
] as const;

/** A viem chain for a local node: `chainId` with `rpcUrl` as its only RPC endpoint. */
function localChain(rpcUrl: string, chainId: number): Chain {
  return defineChain({
    id: chainId,
    name: `local-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/**
 * Provisions a local anvil chain for x402 tests and demos: deploys TestUSDC with dev
 * account #0, copies its runtime code to `usdcAddress` with `anvil_setCode`, and mints
 * `amountUsdc` (6 decimals) at that address to each funded dev account. Calling it
 * again on the same chain re-plants the code (balances are kept) and mints again.
 *
 * @returns `{ usdcAddress, relayer, funded }`.
 * @throws Error if the node's chain id differs from `chainId`, an index is not in 0..9,
 *   `amountUsdc` is negative/non-finite, or any deploy/mint transaction fails.
 */
export async function provisionLocalChain(opts: ProvisionOptions): Promise<ProvisionedChain> {
  const chainId = opts.chainId ?? 8453;
  const usdcAddress = getAddress(opts.usdcAddress ?? BASE_USDC_ADDRESS);
  const funded = (opts.fundedAccounts ?? [1, 2, 3, 4, 5, 6, 7, 8, 9]).map(devAccount);
  const amountUsdc = opts.amountUsdc ?? 1000;
  if (!Number.isFinite(amountUsdc) || amountUsdc < 0) throw new Error(`amountUsdc must be >= 0, got ${amountUsdc}`);
  const amount = parseUnits(String(amountUsdc), 6);

  const chain = localChain(opts.rpcUrl, chainId);
  const transport = http(opts.rpcUrl);
  const relayer = devAccount(0);
  const account = privateKeyToAccount(relayer.privateKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const walletClient = createWalletClient({ account, chain, transport, pollingInterval: 50 });
  const testClient = createTestClient({ mode: "anvil", chain, transport });

  const actual = await publicClient.getChainId();
  if (actual !== chainId) throw new Error(`provisionLocalChain: node at ${opts.rpcUrl} has chain id ${actual}, expected ${chainId}`);

  const { abi, bytecode } = compileTestUsdc();
  const deployHash = await walletClient.deployContract({ abi, bytecode });
  const deployReceipt = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  if (deployReceipt.status !== "success" || !deployReceipt.contractAddress) {
    throw new Error(`provisionLocalChain: TestUSDC deployment failed (tx ${deployHash})`);
  }
  const runtime = await publicClient.getCode({ address: deployReceipt.contractAddress });
  if (!runtime || runtime === "0x") throw new Error("provisionLocalChain: deployed TestUSDC has no runtime code");
  await testClient.setCode({ address: usdcAddress, bytecode: runtime });

  if (amount > 0n) {
    // Sent one after another (so the relayer's nonces stay in order), awaited together.
    const hashes: Hex[] = [];
    for (const acct of funded) {
      hashes.push(await walletClient.writeContract({ address: usdcAddress, abi, functionName: "mint", args: [acct.address, amount] }));
    }
    const receipts = await Promise.all(hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash })));
    const failed = receipts.find((r) => r.status !== "success");
    if (failed) throw new Error(`provisionLocalChain: mint failed (tx ${failed.transactionHash})`);
  }

  return { usdcAddress, relayer, funded };
}

/**
 * Reads an ERC-20 balance (`balanceOf`) over JSON-RPC.
 * @param rpcUrl - node URL
 * @param usdcAddress - token contract address
 * @param address - holder address
 * @returns the balance in atomic units (USDC: 6 decimals, so 1 USDC = 1_000_000n).
 * @throws viem errors if the call fails (e.g. no contract at `usdcAddress`).
 */
export async function usdcBalanceOf(rpcUrl: string, usdcAddress: Address, address: Address): Promise<bigint> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return client.readContract({ address: usdcAddress, abi: balanceOfAbi, functionName: "balanceOf", args: [address] });
}
