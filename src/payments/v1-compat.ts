import type { PaymentPayload, PaymentRequired, PaymentRequiredV1, PaymentRequirements } from "@x402/core/types";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { V1_TO_V2_NETWORK_MAP as SVM_V1_NETWORKS } from "@x402/svm";

/*
 * x402 v1 compatibility. The spec's clients send the proof in `X-PAYMENT` / `X-PAYMENT-PROOF` and
 * read requirements from the 402 body. The EIP-3009 authorization and its signature are identical in
 * v1 and v2 (same EIP-712 domain and chain id), so a v1 payload becomes a v2 one by attaching the
 * requirements it was signed for.
 */

/** v1 network name of a CAIP-2 EVM or Solana network (`eip155:8453` -> `base`, `solana:5eykt4Us...` -> `solana`), or undefined. */
export function v1NetworkName(network: string): string | undefined {
  if (network.startsWith("solana:")) return Object.entries(SVM_V1_NETWORKS).find(([, caip2]) => caip2 === network)?.[0];
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

/**
 * Reads the value of an `X-PAYMENT` / `X-PAYMENT-PROOF` header as a v2 payment payload. A v2 payload
 * passes through unchanged; a v1 payload is matched to the requirement with the same scheme and network
 * and given it as `accepted`. The result's shape is checked later, like any payload.
 * @returns the payload, or `{ refusal }` with an `invalid_payload` reason for the 402.
 */
export function readLegacyProof(value: string, accepts: readonly PaymentRequirements[]): unknown {
  const p = decodeBase64Json(value) as (Partial<PaymentPayload> & { x402Version?: unknown; scheme?: unknown; network?: unknown }) | undefined;
  if (!p || typeof p !== "object" || Array.isArray(p)) return { refusal: "invalid_payload: X-PAYMENT is not base64-encoded JSON" };
  if (p.x402Version === 2) return p;
  if (p.x402Version !== 1) return { refusal: "invalid_payload: x402Version: expected 1 or 2" };
  const accepted = accepts.find((r) => r.scheme === p.scheme && (v1NetworkName(r.network) === p.network || r.network === p.network));
  if (!accepted) return { refusal: "invalid_payload: no payment requirement matches this scheme and network" };
  return { x402Version: 2, accepted, payload: p.payload };
}

/** JSON inside a base64 string, or undefined when it is not base64 JSON. */
export function decodeBase64Json(b64: string): unknown {
  const t = b64.trim();
  if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(t)) return undefined;
  try {
    return JSON.parse(Buffer.from(t, "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}
