import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements, SupportedResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner, type FacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, defineChain, http, publicActions, type Abi, type Address, type Chain, type Hex, type TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base, baseSepolia } from "viem/chains";
import { memoizeKeyed } from "../../lib/memo.js";
import { redactUrl, registerSecretUrl, scrubUrls } from "../../lib/redact.js";

/** Options for {@link createSelfFacilitator}. */
export interface SelfFacilitatorOptions {
  /** JSON-RPC URL of the chain the facilitator settles on (e.g. a Base mainnet RPC). */
  rpcUrl: string;
  /** Private key of the gas wallet that submits `transferWithAuthorization` (needs native ETH for gas). */
  privateKey: Hex;
  /** CAIP-2 network, `eip155:<chainId>`; default `"eip155:8453"` (Base mainnet). */
  network?: `${string}:${string}`;
  /** How long settle waits for the transaction receipt, in ms (x402's default when undefined). */
  confirmationTimeoutMs?: number;
  /** How often settle asks for the receipt of a transaction not mined yet, in ms; default {@link RECEIPT_POLL_MS}. */
  receiptPollMs?: number;
}

/**
 * Default receipt polling interval, ms (`SETTLE_RECEIPT_POLL_MS`). viem's own default for Base is half its
 * 2 s block time, which adds 500 ms on average between a block and the answer; a quarter second keeps that
 * to about 125 ms for a few cheap calls per settlement. Even a node that mines at once (anvil) sometimes
 * answers the first receipt call before the block is sealed (about one settlement in six here), and such a
 * settlement then waits one interval: the sandbox's local chain polls every 20 ms.
 */
export const RECEIPT_POLL_MS = 250;

/**
 * How long an `eth_getCode` answer is reused, ms. The x402 `exact` scheme reads the payer's code twice
 * in verify (ERC-6492 classification, then the signature check) and twice again in the pre-check of
 * settle, moments later: one read serves all four. Code changes only by a transaction (a deployment, an
 * EIP-7702 delegation), and a stale answer cannot move funds wrongly: the token checks the signature
 * again on chain, so a settlement the read misjudged reverts and is refused (402, nothing served).
 */
const CODE_TTL_MS = 5_000;

/** An in-process x402 facilitator usable wherever a `FacilitatorClient` is expected. */
export interface SelfFacilitator extends FacilitatorClient {
  /** Address of the gas wallet (derived from `privateKey`). */
  readonly address: Address;
  /** The single network this facilitator verifies and settles on. */
  readonly network: Network;
}

/**
 * Parses a CAIP-2 EVM network id.
 * @param network - e.g. `"eip155:8453"`
 * @returns the EIP-155 chain id as a number, e.g. 8453.
 * @throws Error if `network` is not `eip155:<positive decimal integer>`.
 */
export function chainIdOfNetwork(network: string): number {
  const match = /^eip155:([1-9][0-9]*)$/.exec(network);
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id)) {
    throw new Error(`unsupported network "${network}": expected a CAIP-2 EVM network like "eip155:8453"`);
  }
  return id;
}

/** viem chain for `chainId` (Base / Base Sepolia get their real definitions, e.g. 2 s block time). */
function chainFor(chainId: number, rpcUrl: string): Chain {
  const known = [base, baseSepolia].find((c) => c.id === chainId);
  const rpcUrls = { default: { http: [rpcUrl] } };
  if (known) return { ...known, rpcUrls };
  return defineChain({
    id: chainId,
    name: `eip155:${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls,
  });
}

/** Node errors meaning "this nonce is taken": the transaction was not accepted, so sending it again is safe. */
const NONCE_CLASH = /nonce too low|nonce has already been used|replacement transaction underpriced|already known|nonce.*(lower|too low)/i;

/**
 * Sends with a fresh nonce again when another settlement from the same relayer took it first: several
 * replicas (or concurrent requests) settling with one relayer key ask for the pending nonce at the same
 * moment. A refused transaction moved nothing, and an EIP-3009 authorization can be used once only, so a
 * retry can never transfer twice.
 */
async function retryOnNonceClash<T>(send: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await send();
    } catch (err) {
      if (i >= attempts || !NONCE_CLASH.test(String((err as Error).message))) throw err;
      await new Promise((r) => setTimeout(r, 30 + Math.random() * 120 * i));
    }
  }
}

/**
 * Builds the x402 facilitator signer: each method delegates to a viem wallet client
 * (extended with public actions) for `account` on `chain` over `rpcUrl`, polling receipts every
 * `receiptPollMs`; `getCode` answers are shared for {@link CODE_TTL_MS}.
 */
function buildSigner(rpcUrl: string, privateKey: Hex, chain: Chain, opts: Pick<SelfFacilitatorOptions, "confirmationTimeoutMs" | "receiptPollMs">): FacilitatorEvmSigner {
  const account = privateKeyToAccount(privateKey);
  const client = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: opts.receiptPollMs ?? RECEIPT_POLL_MS }).extend(publicActions);
  const codeOf = memoizeKeyed(CODE_TTL_MS, 10_000, async (address: { address: Address }) => ({ code: await client.getCode(address) }));
  const { confirmationTimeoutMs } = opts;
  return toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: async ({ address }) => (await codeOf(address.toLowerCase(), { address })).code,
      readContract: (args) => client.readContract({ address: args.address, abi: args.abi as Abi, functionName: args.functionName, args: args.args ?? [] }),
      verifyTypedData: (args) => client.verifyTypedData(args as typeof args & TypedDataDefinition),
      writeContract: (args) =>
        retryOnNonceClash(() =>
          client.writeContract({
            address: args.address,
            abi: args.abi as Abi,
            functionName: args.functionName,
            args: args.args,
            ...(args.gas !== undefined ? { gas: args.gas } : {}),
            ...(args.dataSuffix !== undefined ? { dataSuffix: args.dataSuffix } : {}),
          }),
        ),
      sendTransaction: (args) => client.sendTransaction({ to: args.to, data: args.data }),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    },
    confirmationTimeoutMs === undefined ? {} : { confirmationTimeoutMs },
  );
}

/**
 * Creates an in-process x402 facilitator ("self-facilitation"): an `x402Facilitator`
 * with the official EVM `exact` scheme registered for `network`, verifying signatures
 * and simulating over `rpcUrl`, and settling by sending `transferWithAuthorization`
 * from the `privateKey` wallet (which pays the gas). Works against any EVM RPC
 * (real Base or a local anvil). Before the first verify/settle it checks once that
 * the RPC's `eth_chainId` matches `network`.
 *
 * @returns a {@link SelfFacilitator} (a `FacilitatorClient` for `new x402ResourceServer(...)`).
 * @throws Error synchronously if `network` is not `eip155:<id>` or `privateKey` is invalid;
 *   verify/settle reject if the RPC is on another chain or unreachable.
 */
export function createSelfFacilitator(opts: SelfFacilitatorOptions): SelfFacilitator {
  const network: Network = opts.network ?? "eip155:8453";
  // viem pastes the RPC URL (often with an API key in its path) into every error it throws.
  registerSecretUrl(opts.rpcUrl);
  const shownRpc = redactUrl(opts.rpcUrl);
  const chainId = chainIdOfNetwork(network);
  const chain = chainFor(chainId, opts.rpcUrl);
  const signer = buildSigner(opts.rpcUrl, opts.privateKey, chain, opts);
  const facilitator = new x402Facilitator().register(network, new ExactEvmScheme(signer));
  const address = privateKeyToAccount(opts.privateKey).address;
  const chainClient = createWalletClient({ chain, transport: http(opts.rpcUrl) });

  // Memoised once it succeeds; retried on the next call after a failure.
  let chainChecked: Promise<void> | undefined;
  const ensureChain = (): Promise<void> => {
    chainChecked ??= chainClient.getChainId().then(
      (actual) => {
        if (actual !== chainId) {
          throw new Error(`self facilitator: RPC ${shownRpc} is on chain ${actual}, but network is ${network}`);
        }
      },
      (err: unknown) => {
        throw new Error(`self facilitator: cannot reach RPC ${shownRpc}: ${err instanceof Error ? scrubUrls(err.message) : String(err)}`);
      },
    );
    chainChecked.catch(() => {
      chainChecked = undefined;
    });
    return chainChecked;
  };

  return {
    address,
    network,
    async verify(payload: PaymentPayload, requirements: PaymentRequirements) {
      await ensureChain();
      return facilitator.verify(payload, requirements);
    },
    async settle(payload: PaymentPayload, requirements: PaymentRequirements) {
      await ensureChain();
      return facilitator.settle(payload, requirements);
    },
    // x402Facilitator.getSupported() is synchronous and types networks as plain strings.
    async getSupported() {
      return facilitator.getSupported() as SupportedResponse;
    },
  };
}
