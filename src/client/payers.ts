import type { KeyPairSigner } from "@solana/kit";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { siwxHeader, solanaSiwxHeader } from "../payments/credits/client.js";
import { atomicToMicros, microsToUsd } from "./budget.js";

/*
 * The three ways the client signs: an x402 payment (official `@x402/core` client with the `@x402/evm` or `@x402/svm`
 * exact scheme), an MPP `evm` charge credential (official `mppx` client), and a Sign-In-With-X proof for prepaid
 * credits (official `createSIWxPayload`). Each reads the price from the 402 before it signs anything, so the caller
 * can check it against the caps first. Solana and MPP modules are loaded on first use only.
 */

/** Base mainnet (the service's x402 and MPP `evm` network; the sandbox's local chain has the same id). */
export const BASE = "eip155:8453";
/** Solana mainnet, CAIP-2 (as `@x402/svm`'s `SOLANA_MAINNET_CAIP2`). */
export const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

/** Which chain signs: Base (an EVM key) or Solana. */
export type Network = "base" | "solana";

/** The wallet the client signs with; only the key of the network in use is needed. */
export interface Wallet {
  /** 0x-prefixed 32-byte hex EVM private key (Base: x402, MPP, credits proofs). */
  evmPrivateKey?: `0x${string}`;
  /** Solana: base58 of the 64-byte secret key (the wallet export format), or a `@solana/kit` key-pair signer. */
  solanaSecretKey?: string | KeyPairSigner;
  /** Solana RPC the `@x402/svm` scheme reads the mint and a recent blockhash from (default: the scheme's public one). */
  solanaRpcUrl?: string;
}

/** An offer to pay read from a 402: its price in micro-USD, and how to sign for it. */
export interface Quote {
  micros: bigint;
  /** Signs and returns the request headers that carry the payment. */
  sign(): Promise<Record<string, string>>;
}

/** What a paid answer says about its settlement. */
export interface Settlement {
  network?: string;
  transaction?: string;
  payer?: string;
  /** Micro-USD actually settled, when the receipt says. */
  micros?: bigint;
  /** MPP's `Payment-Receipt` (decoded), when paid with MPP. */
  receipt?: unknown;
}

/** Reads a Solana signer from the wallet (memoized by the caller). @throws Error without a Solana key. */
async function solanaSigner(wallet: Wallet): Promise<KeyPairSigner> {
  const key = wallet.solanaSecretKey;
  if (!key) throw new Error("no Solana key: set solanaSecretKey");
  if (typeof key !== "string") return key;
  const { signerFromSecretKey } = await import("../payments/solana-keys.js");
  return signerFromSecretKey(key);
}

/** x402 over HTTP with one chain's key: reads `PAYMENT-REQUIRED`, signs `PAYMENT-SIGNATURE`, reads `PAYMENT-RESPONSE`. */
export class X402Payer {
  private http?: Promise<x402HTTPClient>;

  constructor(
    private readonly wallet: Wallet,
    readonly network: Network,
  ) {}

  /** Whether the wallet has this network's key. */
  get ready(): boolean {
    return this.network === "base" ? Boolean(this.wallet.evmPrivateKey) : Boolean(this.wallet.solanaSecretKey);
  }

  private client(): Promise<x402HTTPClient> {
    return (this.http ??= (async () => {
      // The caps are the client's own (SpendBudget); the official per-payment cap would refuse a top-up the caller allowed.
      const client = new x402Client().setSpendControls(false);
      if (this.network === "base") client.register("eip155:*", new ExactEvmScheme(privateKeyToAccount(this.wallet.evmPrivateKey!)));
      else {
        const { ExactSvmScheme } = await import("@x402/svm/exact/client");
        const rpcUrl = this.wallet.solanaRpcUrl;
        client.register(SOLANA, new ExactSvmScheme(await solanaSigner(this.wallet), rpcUrl ? { rpcUrl } : undefined));
      }
      return new x402HTTPClient(client);
    })());
  }

  /** The requirement this payer would sign among a 402's offers: the first on its network in USDC (6 decimals). */
  private pick(required: PaymentRequired): PaymentRequirements | undefined {
    const prefix = this.network === "base" ? "eip155:" : "solana:";
    return required.accepts.find((r) => r.network.startsWith(prefix) && r.scheme === "exact");
  }

  /** The offer of a 402 response for this payer, or undefined when it carries none it can pay. */
  async quote(res: Response, body: unknown): Promise<Quote | undefined> {
    const http = await this.client();
    let required: PaymentRequired;
    try {
      required = http.getPaymentRequiredResponse((n) => res.headers.get(n), body);
    } catch {
      return undefined;
    }
    const accepted = this.pick(required);
    if (!accepted) return undefined;
    return {
      micros: atomicToMicros(accepted.amount, 6),
      sign: async () => http.encodePaymentSignatureHeader(await http.createPaymentPayload({ ...required, accepts: [accepted] })),
    };
  }

  /** The settlement of a paid answer (`PAYMENT-RESPONSE`), if it has one. */
  settlement(res: Response): Settlement | undefined {
    const header = res.headers.get("payment-response") ?? res.headers.get("x-payment-response");
    if (!header) return undefined;
    let s: SettleResponse;
    try {
      s = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as SettleResponse;
    } catch {
      return undefined;
    }
    return { network: s.network, transaction: s.transaction, payer: s.payer, ...(s.amount ? { micros: atomicToMicros(s.amount, 6) } : {}) };
  }
}

/** The `Accept-Payment` an MPP client sends: the `evm` charge (Base USDC), the method this client pays with. */
export const MPP_ACCEPT = "evm/charge";

/** MPP (`Authorization: Payment`) with the EVM key: the `evm` charge method, settled on Base. */
export class MppPayer {
  private mppx?: Promise<{ createCredential(res: Response): Promise<string> }>;

  constructor(private readonly wallet: Wallet) {}

  get ready(): boolean {
    return Boolean(this.wallet.evmPrivateKey);
  }

  private client(maxUsd: string) {
    // One client per cap: mppx checks `maxAmount` itself too (a second guard behind the budget).
    return (async () => {
      const { Mppx, evm } = await import("mppx/client");
      return Mppx.create({
        polyfill: false,
        methods: [evm.charge({ account: privateKeyToAccount(this.wallet.evmPrivateKey!), networks: [8453], currencies: [evm.assets.base.USDC], maxAmount: maxUsd })],
      });
    })();
  }

  /** The `evm` challenge of a 402 response (`WWW-Authenticate: Payment`), or undefined when it has none. */
  async quote(res: Response): Promise<Quote | undefined> {
    const { Challenge } = await import("mppx");
    let challenges: ReturnType<typeof Challenge.fromResponseList>;
    try {
      challenges = Challenge.fromResponseList(res);
    } catch {
      return undefined;
    }
    const evm = challenges.find((c) => c.method === "evm" && c.intent === "charge");
    const request = evm?.request as { amount?: string; methodDetails?: { decimals?: number } } | undefined;
    if (!request?.amount) return undefined;
    const micros = atomicToMicros(request.amount, request.methodDetails?.decimals ?? 6);
    return {
      micros,
      sign: async () => {
        this.mppx = this.client(microsToUsd(micros));
        return { authorization: await (await this.mppx).createCredential(res) };
      },
    };
  }

  /** The settlement of an MPP-paid answer: its `Payment-Receipt` (and the x402 settlement an `evm` charge also carries). */
  async settlement(res: Response): Promise<Settlement | undefined> {
    const header = res.headers.get("payment-receipt");
    if (!header) return undefined;
    const { Receipt } = await import("mppx");
    const receipt = Receipt.deserialize(header);
    return { network: BASE, transaction: receipt.reference, receipt };
  }
}

/** Sign-In-With-X proofs for credits and signed-in tools, bound to the URL they are sent to. */
export class SiwxSigner {
  private solana?: Promise<KeyPairSigner>;

  constructor(
    private readonly wallet: Wallet,
    readonly network: Network,
  ) {}

  get ready(): boolean {
    return this.network === "base" ? Boolean(this.wallet.evmPrivateKey) : Boolean(this.wallet.solanaSecretKey);
  }

  /** A `SIGN-IN-WITH-X` header value for one request of `url` (a fresh nonce: one round trip, no challenge first). */
  async proof(url: string): Promise<string> {
    if (this.network === "base") return siwxHeader(this.wallet.evmPrivateKey!, url);
    return solanaSiwxHeader(await (this.solana ??= solanaSigner(this.wallet)), url);
  }
}
