import {
  BaseError,
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  keccak256,
  RpcRequestError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { registerSecretUrl } from "../../lib/redact.js";
import { chainIdOfNetwork } from "../facilitator/self.js";
import type { RefundTx } from "./ledger.js";

/** What a broadcast came to: accepted (or already known), refused because its nonce is taken, or refused for another reason. */
export type BroadcastOutcome = "sent" | "nonce_used" | "rejected";

/**
 * The chain side of refunds (see refunds.ts): the relayer's nonces, USDC transfers signed with a nonce
 * chosen by the caller, their broadcast and their fate. Methods reject on RPC failures.
 */
export interface RefundChain {
  /** The relayer's next nonce, counting its transactions waiting in the node's pool. */
  pendingNonce(): Promise<number>;
  /** Signs, without sending, a transfer of `amountMicro` USDC (6 decimals) to `wallet` with `nonce`. */
  signTransfer(wallet: string, amountMicro: number, nonce: number): Promise<RefundTx>;
  /** Sends a signed transaction. @throws when the outcome is unknown (no answer, a transport error, an unclassified node error). */
  broadcast(rawTx: string): Promise<BroadcastOutcome>;
  /** The outcome of a mined transaction, or undefined when it is not mined (as far as the node knows). */
  receipt(txHash: string): Promise<"success" | "reverted" | undefined>;
  /**
   * How many transactions of the relayer were mined by a block some confirmations below the head: a nonce
   * below this count is used for good, by whichever transaction.
   */
  usedNonces(): Promise<number>;
  /** Whether the node knows the transaction (waiting in its pool, or mined). */
  known(txHash: string): Promise<boolean>;
}

/** Node answers meaning the transaction's nonce is taken: it was not accepted, and can never be mined. */
const NONCE_USED = /nonce too low|nonce has already been used|replacement transaction underpriced|nonce.*(lower|too low)/i;
/** Node answers meaning this very transaction is already in its pool (or mined): it was accepted. */
const ALREADY_KNOWN = /already known|already imported|known transaction|already in (the )?(tx ?)?pool/i;
/** Node answers refusing the transaction for good (funds, gas, fees, signature, format). */
const REJECTED =
  /insufficient funds|intrinsic gas|gas limit|fee cap|less than (the )?block base fee|transaction underpriced|invalid sender|invalid signature|chain ?id|oversized|not supported/i;

/** Options of {@link RelayerRefundChain}. */
export interface RelayerRefundChainOptions {
  /** JSON-RPC URL (`RPC_URL`; registered as a secret: it often carries a key). */
  rpcUrl: string;
  /** The relayer's key (`RELAYER_PRIVATE_KEY`): pays the gas and holds the USDC it refunds. */
  privateKey: Hex;
  /** CAIP-2 network of the payments, `eip155:<chainId>`. */
  network: string;
  /** The USDC contract (resolved on first use: the payment catalog's asset). */
  asset: () => Promise<string>;
  /** Blocks below the head at which {@link RefundChain.usedNonces} counts; default 5 (10 s on Base). */
  confirmations?: number;
}

/**
 * {@link RefundChain} over JSON-RPC with viem, for the relayer key of the `self` facilitator (the same
 * account that settles x402 payments; both ask the node for the pending nonce and retry on a clash).
 * Transfers are EIP-1559 with a fee cap of twice the latest base fee plus the node's suggested tip
 * (legacy gas price on chains without base fee), and 20% over the estimated gas.
 */
export class RelayerRefundChain implements RefundChain {
  private readonly client: PublicClient;
  private readonly account: PrivateKeyAccount;
  private readonly chainId: number;
  private readonly confirmations: bigint;

  /** @throws Error for a network that is not `eip155:<id>` or an invalid key. */
  constructor(private readonly opts: RelayerRefundChainOptions) {
    registerSecretUrl(opts.rpcUrl);
    this.chainId = chainIdOfNetwork(opts.network);
    this.account = privateKeyToAccount(opts.privateKey);
    // cacheTime 0: a reconciliation must see the head of now, not of viem's last poll.
    this.client = createPublicClient({ transport: http(opts.rpcUrl, { timeout: 10_000, retryCount: 1 }), cacheTime: 0 });
    this.confirmations = BigInt(opts.confirmations ?? 5);
  }

  pendingNonce(): Promise<number> {
    return this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
  }

  async signTransfer(wallet: string, amountMicro: number, nonce: number): Promise<RefundTx> {
    const to = getAddress(await this.opts.asset());
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(wallet), BigInt(amountMicro)] });
    const [gas, block] = await Promise.all([this.client.estimateGas({ account: this.account.address, to, data }), this.client.getBlock({ blockTag: "latest" })]);
    const base = { chainId: this.chainId, nonce, to, data, gas: (gas * 6n) / 5n, value: 0n };
    let rawTx: Hex;
    if (block.baseFeePerGas != null) {
      const tip = await this.client.estimateMaxPriorityFeePerGas();
      rawTx = await this.account.signTransaction({ ...base, type: "eip1559", maxFeePerGas: 2n * block.baseFeePerGas + tip, maxPriorityFeePerGas: tip });
    } else {
      rawTx = await this.account.signTransaction({ ...base, type: "legacy", gasPrice: await this.client.getGasPrice() });
    }
    return { nonce, txHash: keccak256(rawTx), rawTx };
  }

  async broadcast(rawTx: string): Promise<BroadcastOutcome> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: rawTx as Hex });
      return "sent";
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (ALREADY_KNOWN.test(message)) return "sent";
      // Only an answer of the node says what became of the transaction; a timeout or an HTTP error does not.
      const answered = err instanceof BaseError && err.walk((e) => e instanceof RpcRequestError) !== null;
      if (answered && NONCE_USED.test(message)) return "nonce_used";
      if (answered && REJECTED.test(message)) return "rejected";
      throw err;
    }
  }

  async receipt(txHash: string): Promise<"success" | "reverted" | undefined> {
    try {
      return (await this.client.getTransactionReceipt({ hash: txHash as Hex })).status;
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    }
  }

  async usedNonces(): Promise<number> {
    const head = await this.client.getBlockNumber();
    const at = head > this.confirmations ? head - this.confirmations : 0n;
    return this.client.getTransactionCount({ address: this.account.address, blockNumber: at });
  }

  async known(txHash: string): Promise<boolean> {
    try {
      await this.client.getTransaction({ hash: txHash as Hex });
      return true;
    } catch (err) {
      if (err instanceof TransactionNotFoundError) return false;
      throw err;
    }
  }

  /** The relayer's address. */
  get address(): Address {
    return this.account.address;
  }
}
