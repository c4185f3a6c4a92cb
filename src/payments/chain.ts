import { createPublicClient, http, parseAbiItem, type Address, type Hex, type PublicClient } from "viem";
import { registerSecretUrl } from "../lib/redact.js";

const authorizationStateAbi = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ name: "", type: "bool" }],
  },
] as const;

const authorizationUsedEvent = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");

/**
 * Reads EIP-3009 state from the chain, to reconcile settlements whose outcome the facilitator did not
 * report (timeouts). Source: the token's `authorizationState(address,bytes32)` and its
 * `AuthorizationUsed(authorizer, nonce)` event, over `RPC_URL`. viem's errors carry that URL (and any key
 * in it): it is registered as a secret, so the logger scrubs it (see `lib/redact.ts`).
 */
export class AuthorizationReader {
  private readonly client: PublicClient;

  constructor(rpcUrl: string) {
    registerSecretUrl(rpcUrl);
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) });
  }

  /** True once the authorization has been used (or cancelled) on chain. @throws on RPC failure. */
  async used(asset: Address, authorizer: Address, nonce: Hex): Promise<boolean> {
    return this.client.readContract({ address: asset, abi: authorizationStateAbi, functionName: "authorizationState", args: [authorizer, nonce] });
  }

  /** Hash of the transaction that used the authorization, searched in the last `lookbackBlocks` blocks; undefined if not found. */
  async transactionOf(asset: Address, authorizer: Address, nonce: Hex, lookbackBlocks = 5_000n): Promise<Hex | undefined> {
    const latest = await this.client.getBlockNumber();
    const logs = await this.client.getLogs({
      address: asset,
      event: authorizationUsedEvent,
      args: { authorizer, nonce },
      fromBlock: latest > lookbackBlocks ? latest - lookbackBlocks : 0n,
      toBlock: latest,
    });
    return logs.at(-1)?.transactionHash ?? undefined;
  }
}
