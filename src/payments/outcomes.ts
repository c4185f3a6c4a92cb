import type { PaymentRequired, ResourceInfo, SettleResponse } from "@x402/core/types";
import type { AnyTool } from "../registry/tool.js";

/*
 * The vocabulary of paying for one call, named once for every payment method (x402, MPP, prepaid credits)
 * and read by the call pipeline (src/core/call-pipeline.ts), which turns it into the transports' answers:
 *
 * | step                          | outcomes (`kind`)                          | who decides                        |
 * |-------------------------------|--------------------------------------------|------------------------------------|
 * | check, before the handler     | `payment_required`, `replay`, `verified`   | PaymentProcessor.check (x402, MPP), CreditGate.check |
 * | settle, after the handler     | `settled`, `payment_required`, `unknown`   | VerifiedPayment.settle             |
 * | debit, metered (stream minute)| `settled`, `payment_required`              | CreditGate.debit                   |
 *
 * - `payment_required`: this payment does not pay for this call (none sent, refused, or settlement refused):
 *   answer 402, release no data. x402 and MPP carry the `PaymentRequired` to send; credits carry the reason
 *   (the pipeline builds the 402 from it).
 * - `replay`: answered from an earlier payment of this very request, without a new charge: an idempotent
 *   retry (x402 `payment-identifier`, SIWX `requestId`), or the answer held for a settlement that was left
 *   unknown and is now confirmed on chain (released once).
 * - `verified`: run the handler, then `payment.settle(value)`, or `payment.abandon()` when it fails.
 * - `settled`: the money moved (or the credit debit is committed): release the answer with the receipt.
 * - `unknown`: the settlement's outcome could not be decided: withhold the answer; a retry with the same
 *   payment receives it once the transfer is confirmed.
 */

/**
 * One paid request as every payment method sees it, whatever the transport: the tool, the resource its 402
 * names, what identifies the request and its price (the tool's, or the input's for tools with `priceOf`).
 * `fingerprint` and `target` together bind every held or stored answer (a pending settlement's answer, an
 * idempotent record, an owed run) to this one request: a retry of another request with the same payment
 * gets a 409, never this request's answer, and a receipt only names the request that was run.
 */
export interface PaymentRequest {
  tool: AnyTool;
  resource: ResourceInfo;
  /**
   * Tool + canonical input (the cache key): the parsed path, query and body, so a body re-serialized by a
   * retrying client (key order, spacing) is the same request, and a different one is not.
   */
  fingerprint: string;
  /**
   * `<METHOD> <absolute URL>`, path and query as sent (MCP: `POST <public origin>/mcp`): the request line
   * the answer's receipt and content signature name.
   */
  target: string;
  /** Decimal USD. */
  priceUsd: string;
}

/** A verified payment, owned by one request: exactly one of `settle` or `abandon` is called. */
export interface VerifiedPayment {
  /** The paying wallet (x402 payer, or the SIWX wallet of credits), when known. */
  payer?: string;
  /** Unique reference of the payment (the authorization's ledger key), for handlers that act once per payment. */
  reference?: string;
  /**
   * Settles (or, for upfront tools, confirms the earlier settlement; for credits, commits the debit) and
   * records `value` as the paid answer. Rejects only when recording fails after the money may have moved
   * (a ledger outage): the caller treats that as `unknown`.
   */
  settle(value: unknown): Promise<SettleOutcome>;
  /**
   * The handler failed: free the authorization, the hold and the payment identifier (nothing was charged),
   * or, for a payment settled upfront, record the run the payment is owed. Resolves once that is recorded,
   * so that a retry right after sees it; never rejects (ledger errors are logged).
   */
  abandon(): Promise<void>;
}

/** The payment does not pay for this call: answer 402 with `required` (x402 and MPP). */
export interface PaymentRequiredOutcome {
  kind: "payment_required";
  required: PaymentRequired;
}

/** Checking an x402 or MPP payment before the handler runs. */
export type PaymentCheck =
  | PaymentRequiredOutcome
  /** Answered from an earlier settlement of this request (idempotent retry, or a now confirmed pending settlement). */
  | { kind: "replay"; value: unknown; receipt: SettleResponse }
  /** Verified (and, for upfront tools, already settled): run the handler, then `payment.settle`. */
  | { kind: "verified"; payment: VerifiedPayment };

/** Settling a verified payment after the handler succeeded. */
export type SettleOutcome =
  | { kind: "settled"; receipt: SettleResponse }
  /** Settlement refused (nothing moved): withhold the data and answer 402. */
  | PaymentRequiredOutcome
  /** Outcome unknown after reconciliation: withhold the data, keep it for a retry with the same authorization. */
  | { kind: "unknown"; retryAfterSec: number };

/** The wallet a credit-paid call is paid by, and its balance after this call's debit. */
export interface CreditHolder {
  wallet: string;
  /** Balance after this call's price is held (micro-USD): what remains once the answer is released. */
  remainingMicro: number;
  /** A fresh session token, when a SIWX proof verified (sent back to the client). */
  session?: string;
}

/** Checking a credit payment (SIWX proof or session token) before the handler runs. */
export type CreditCheck =
  /** The proof or the balance does not pay for this call: the 402 names `reason`. */
  | { kind: "payment_required"; reason: string }
  /** The same SIWX `requestId` already bought this very request: its stored answer, no new debit. */
  | ({ kind: "replay"; value: unknown } & CreditHolder)
  /** Reserved: run the handler, then `payment.settle` (debit) or `payment.abandon` (nothing debited). */
  | ({ kind: "verified"; payment: VerifiedPayment } & CreditHolder);

/** A metered debit (one stream minute). */
export type DebitOutcome = { kind: "settled"; remainingMicro: number } | { kind: "payment_required"; reason: string };
