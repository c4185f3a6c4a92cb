import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequiredV1, PaymentRequirements } from "@x402/core/types";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";

/*
 * x402 v1 compatibility. The spec's clients send the proof in `X-PAYMENT` / `X-PAYMENT-PROOF` and
 * read requirements from the 402 body. The EIP-3009 authorization and its signature are identical in
 * v1 and v2 (same EIP-712 domain and chain id), so a v1 payload becomes a v2 one by attaching the
 * requirements it was signed for.
 */

/** v1 network name of a CAIP-2 EVM network (`eip155:8453` -> `base`), or undefined. */
export function v1NetworkName(network: string): string | undefined {
  const m = /^eip155:(\d+)$/.exec(network);
  if (!m) return undefined;
  const id = Number(m[1]);
  return Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([, chainId]) => chainId === id)?.[0];
}

/** The v1-shaped 402 body equivalent to a v2 PaymentRequired (amount in `maxAmountRequired`, v1 network names). */
export function toV1PaymentRequired(pr: PaymentRequired, outputSchema: Record<string, unknown> = {}): PaymentRequiredV1 {
  return {
    x402Version: 1,
    error: pr.error ?? "Payment required",
    accepts: pr.accepts.map((r) => ({
      scheme: r.scheme,
      network: (v1NetworkName(r.network) ?? r.network) as PaymentRequiredV1["accepts"][number]["network"],
      maxAmountRequired: r.amount,
      resource: pr.resource.url,
      description: pr.resource.description ?? "",
      mimeType: pr.resource.mimeType ?? "application/json",
      outputSchema,
      payTo: r.payTo,
      maxTimeoutSeconds: r.maxTimeoutSeconds,
      asset: r.asset,
      extra: r.extra ?? {},
    })),
  };
}

function decodeJson(b64: string): unknown {
  try {
    return JSON.parse(Buffer.from(b64.trim(), "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Turns the value of an `X-PAYMENT` / `X-PAYMENT-PROOF` header into a v2 `PAYMENT-SIGNATURE` value.
 * A v2 payload passes through unchanged; a v1 payload is matched to the requirement with the same
 * scheme and network. Returns undefined when the value cannot be read or matches nothing (the request
 * is then answered with a 402 like an unpaid one).
 */
export function upgradeLegacyProof(value: string, accepts: readonly PaymentRequirements[]): string | undefined {
  const p = decodeJson(value) as Partial<PaymentPayload> & { x402Version?: number; scheme?: string; network?: string } | undefined;
  if (!p || typeof p !== "object") return undefined;
  if (p.x402Version === 2) return value.trim();
  if (p.x402Version !== 1 || !p.payload) return undefined;
  const accepted = accepts.find((r) => r.scheme === p.scheme && (v1NetworkName(r.network) === p.network || r.network === p.network));
  if (!accepted) return undefined;
  return encodePaymentSignatureHeader({ x402Version: 2, accepted, payload: p.payload } as PaymentPayload);
}
