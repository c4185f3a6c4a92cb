import { createHash } from "node:crypto";
import { PaymentPayloadV2Schema } from "@x402/core/schemas";
import type { PaymentPayload } from "@x402/core/types";
import { isAddress, type Address, type Hex } from "viem";
import { z } from "zod";
import { solanaPayment } from "./solana-payload.js";

/** The EIP-3009 authorization inside an `exact` EVM payload (x402 `exact` scheme, EIP-3009 transfer method). */
export interface Authorization {
  from: Address;
  to: Address;
  /** Atomic units of the asset (USDC: 6 decimals), decimal string. */
  value: string;
  /** Unix seconds, decimal string. */
  validAfter: string;
  /** Unix seconds, decimal string. */
  validBefore: string;
  /** 32-byte hex nonce chosen by the payer. */
  nonce: Hex;
}

/** A decoded payment whose shape is known to be safe for the resource server, the facilitator and the ledger. */
export interface CheckedPayload {
  payload: PaymentPayload;
  /** The payer's address as the payment spells it (EVM: the authorization's `from`; Solana: the transfer's authority). */
  from: string;
  /** {@link from} normalised for comparison and ledger keys: EVM lower case, Solana base58 as is (it is case-sensitive). */
  payer: string;
  /**
   * What makes the payment single-use, as the exactly-once ledger claims it: EVM the EIP-3009 nonce (lower
   * case); Solana the payer's signature of the transaction (base58), one per transaction message.
   */
  nonce: string;
  /** The EIP-3009 authorization (EVM payloads only: reconciliation reads its state on chain). */
  auth?: Authorization;
  /** SHA-256 (hex) of the signed part: proves "the same signed payment" without a signature check. */
  digest: string;
}

const Address_ = z.string().refine((v) => isAddress(v), "must be a 0x-prefixed 20-byte address (EIP-55 checksum or lower case)");
// uint256 fits in 78 decimal digits; timestamps in 20.
const Uint = (digits: number) => z.string().regex(new RegExp(`^\\d{1,${digits}}$`), `must be an unsigned decimal integer string of at most ${digits} digits`);

/**
 * The signed part of an `exact` EVM payload with an EIP-3009 authorization. The signature may be an
 * EOA signature (65 bytes) or a smart-wallet one (ERC-1271 / ERC-6492 wrapped), hence the generous bound.
 */
const ExactEvmEip3009 = z.object({
  authorization: z.object({
    from: Address_,
    to: Address_,
    value: Uint(78),
    validAfter: Uint(20),
    validBefore: Uint(20),
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex nonce"),
  }),
  signature: z.string().regex(/^0x[0-9a-fA-F]{2,8192}$/, "must be 0x-prefixed hex of at most 4096 bytes"),
});

/** Why a payload was refused, as the `error` of the 402 (x402's `invalid_payload` reason plus the field). */
export type PayloadRefusal = { reason: string };

function refusal(path: readonly PropertyKey[], message: string): PayloadRefusal {
  const field = path.length ? path.map(String).join(".") : "(payload)";
  return { reason: `invalid_payload: ${field}: ${message}` };
}

/**
 * Validates a decoded x402 payment payload (from `PAYMENT-SIGNATURE`, an upgraded `X-PAYMENT` /
 * `X-PAYMENT-PROOF`, an MPP `evm` credential or MCP `_meta["x402/payment"]`) before anything else reads
 * it: the x402 v2 envelope (official `@x402/core` schema) and, inside it, by the network of `accepted`:
 * an EIP-3009 authorization and signature of bounded size (EVM), or a bounded Solana transaction with a
 * signed token transfer (`solana:*`, see `solana-payload.ts`). Pure and cheap; never throws.
 * @returns the checked payload, or the refusal reason for a 402.
 */
export function checkPaymentPayload(raw: unknown): CheckedPayload | PayloadRefusal {
  const envelope = PaymentPayloadV2Schema.safeParse(raw);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    return refusal(issue?.path ?? [], issue?.message ?? "not an x402 v2 PaymentPayload");
  }
  if (envelope.data.accepted.network.startsWith("solana:")) {
    const sol = solanaPayment(envelope.data.payload);
    if ("field" in sol) return refusal(["payload", sol.field], sol.message);
    return { payload: raw as PaymentPayload, from: sol.payer, payer: sol.payer, nonce: sol.signature, digest: sol.digest };
  }
  const inner = ExactEvmEip3009.safeParse(envelope.data.payload);
  if (!inner.success) {
    const issue = inner.error.issues[0];
    return refusal(["payload", ...(issue?.path ?? [])], issue?.message ?? "not an exact EVM EIP-3009 payload");
  }
  const auth = inner.data.authorization as Authorization;
  return {
    payload: raw as PaymentPayload,
    from: auth.from,
    payer: auth.from.toLowerCase(),
    nonce: auth.nonce.toLowerCase(),
    auth,
    digest: signedDigest(auth, inner.data.signature),
  };
}

/** SHA-256 (hex) of an authorization and its signature, case-normalised. */
function signedDigest(a: Authorization, signature: string): string {
  const parts = [a.from.toLowerCase(), a.to.toLowerCase(), a.value, a.validAfter, a.validBefore, a.nonce.toLowerCase(), signature.toLowerCase()];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** Whether `address` (e.g. a facilitator's `payer`) is the payer of `checked`, compared as {@link CheckedPayload.payer} is normalised. */
export function isPayerOf(address: string | undefined, checked: CheckedPayload): boolean {
  if (!address) return false;
  return (checked.auth ? address.toLowerCase() : address) === checked.payer;
}

/** Narrows the result of {@link checkPaymentPayload}. */
export function isRefusal(r: CheckedPayload | PayloadRefusal): r is PayloadRefusal {
  return "reason" in r;
}
