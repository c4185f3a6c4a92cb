import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { privateKeyToAccount } from "viem/accounts";

/** Fetches `url` unpaid and returns the decoded x402 v2 PaymentRequired of its 402. */
export async function paymentRequired(url: string, init?: RequestInit): Promise<PaymentRequired> {
  const res = await fetch(url, init);
  if (res.status !== 402) throw new Error(`expected 402 from ${url}, got ${res.status}`);
  return decodePaymentRequiredHeader(res.headers.get("payment-required")!);
}

/**
 * Signs a payment with the official x402 client for `pr`, optionally signing different requirements than
 * the ones declared as `accepted` (to forge underpayments, wrong recipients, short validity).
 */
export async function signPayment(
  pr: PaymentRequired,
  privateKey: `0x${string}`,
  opts: { signFor?: (r: PaymentRequirements) => PaymentRequirements; declare?: (r: PaymentRequirements) => PaymentRequirements } = {},
): Promise<PaymentPayload> {
  // Spend controls off: the tests forge requirements on purpose (other networks, other recipients).
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(privateKey))).setSpendControls(false);
  const original = pr.accepts[0]!;
  const signed = opts.signFor ? opts.signFor(original) : original;
  const payload = await client.createPaymentPayload({ ...pr, accepts: [signed] });
  return { ...payload, accepted: opts.declare ? opts.declare(original) : original };
}

/** A payment payload as a `PAYMENT-SIGNATURE` header value. */
export function header(p: PaymentPayload): string {
  return encodePaymentSignatureHeader(p);
}

/** Signs with the official v1 client from a v1 402 body and returns the base64 `X-PAYMENT` value. */
export async function signV1(body: unknown, privateKey: `0x${string}`): Promise<string> {
  const client = new x402Client().registerV1("base", new ExactEvmSchemeV1(privateKeyToAccount(privateKey)));
  const payload = await client.createPaymentPayload(body as PaymentRequired);
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}
