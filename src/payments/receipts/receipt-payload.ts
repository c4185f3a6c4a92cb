import type { ReceiptPayload } from "@x402/extensions/offer-receipt";
import { z } from "zod";

/*
 * What makes a signed artifact a receipt. The service signs offers (free, in every 402) and receipts with
 * one key, and the extension's JWS header is the same for both (`createJWS` writes only `alg` and `kid`),
 * so its `verifyReceiptSignatureJWS` accepts an offer as readily as a receipt. The type of a JWS is its
 * payload, as the extension's spec defines each (§4.2 offer, §5.2 receipt; its EIP-712 verifiers tell
 * them apart the same way): a receipt states `payer` and `issuedAt`, an offer states terms (`scheme`,
 * `asset`, `payTo`, `amount`, `validUntil`) and no payer. `marketgate verify-receipt` (verify.ts) checks
 * every receipt's payload with {@link receiptPayloadOf} once its signature verifies.
 */

/** Fields only an offer's payload has (spec §4.2). */
const OFFER_FIELDS = ["scheme", "asset", "payTo", "amount", "validUntil"] as const;

/** A receipt's payload, version 1 (spec §5.2), and nothing else: unknown fields are not best-effort read. */
const RECEIPT_V1 = z.strictObject({
  version: z.literal(1),
  network: z.string().min(1),
  resourceUrl: z.string().min(1),
  // Empty for an MPP `tempo` payment, whose settlement names no payer address.
  payer: z.string(),
  issuedAt: z.number().int().nonnegative(),
  transaction: z.string().optional(),
});

/**
 * `payload` (a verified JWS payload) as a receipt's payload.
 * @throws Error naming what it is instead: a signed offer, or a payload that is not a version-1 receipt.
 */
export function receiptPayloadOf(payload: unknown): ReceiptPayload {
  const fields = payload && typeof payload === "object" ? OFFER_FIELDS.filter((f) => f in payload) : [];
  if (fields.length > 0) throw new Error(`this is a signed offer (the terms of a 402: ${fields.join(", ")}), not a receipt`);
  const parsed = RECEIPT_V1.safeParse(payload);
  if (!parsed.success) throw new Error(`not a receipt (version 1: network, resourceUrl, payer, issuedAt, optional transaction): ${z.prettifyError(parsed.error)}`);
  return parsed.data as ReceiptPayload;
}
