import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired, ResourceInfo } from "@x402/core/types";
import { BAZAAR } from "@x402/extensions/bazaar";
import { headerBytes } from "./header-budget.js";

/*
 * A 402's headers within a byte budget (http/header-budget.ts): `PAYMENT-REQUIRED` (x402 v2 clients read only
 * that header) and the MPP challenges (`WWW-Authenticate`: mppx clients read only that). What does not fit moves
 * to the body, which the x402 HTTP transport leaves to the server ("response bodies are a server implementation
 * concern"): the resource's service metadata under `resource`, the Bazaar declaration under `extensions` (as in a
 * PaymentRequired), and the MPP challenges under `mpp.challenges` (the quote endpoint lists them too).
 */

/** A 402 fitted to a budget: its headers, and what moved to its body. */
export interface Fitted402 {
  /** The `PAYMENT-REQUIRED` header's PaymentRequired. */
  header: PaymentRequired;
  /** The `WWW-Authenticate` values. */
  challenges: string[];
  /** What the body carries for want of room in the headers (empty when everything fits). */
  body: { extensions?: Record<string, unknown>; resource?: ResourceInfo; mpp?: { challenges: string[] } };
}

/** Bytes of the two headers of a fitted 402. */
function bytesOf(header: PaymentRequired, challenges: readonly string[]): number {
  return headerBytes("PAYMENT-REQUIRED", encodePaymentRequiredHeader(header)) + (challenges.length ? headerBytes("WWW-Authenticate", challenges) : 0);
}

/**
 * Fits `required` and `challenges` into `budget` bytes of header lines, moving what it must to the body, in this
 * order until they fit: the MPP challenges after the first (an mppx client signs the first it supports), the
 * resource's service metadata (tags, icon: also in the discovery documents), the Bazaar declaration (discovery
 * only, but a facilitator catalogues a route only from a 402 header that carries it), the first challenge when the request does not speak MPP (`speaksMpp` false),
 * the resource's description, then the first challenge. What every client needs to pay — the resource URL, the
 * `accepts` entries, the `payment-identifier` and `sign-in-with-x` declarations — always stays. The result may
 * still be over `budget` for a very long URL (the resource URL and the SIWX challenge repeat it): the tool routes
 * refuse those before payment (MAX_PAID_URL_BYTES, http/tool-routes.ts).
 */
export function fit402(required: PaymentRequired, challenges: readonly string[], budget: number, speaksMpp: boolean): Fitted402 {
  let header = required;
  let shown = [...challenges];
  const body: Fitted402["body"] = {};
  /** Keeps the first `keep` challenges in the header and moves the others to the body. */
  const keepChallenges = (keep: number) => {
    if (shown.length <= keep) return;
    body.mpp = { challenges: [...shown.slice(keep), ...(body.mpp?.challenges ?? [])] };
    shown = shown.slice(0, keep);
  };
  const moveBazaar = () => {
    const { [BAZAAR.key]: bazaar, ...rest } = header.extensions ?? {};
    if (bazaar === undefined) return;
    header = { ...header, extensions: rest };
    body.extensions = { [BAZAAR.key]: bazaar };
  };
  /** Leaves the URL and `keep` of the resource's fields in the header; the whole resource goes in the body. */
  const trimResource = (keep: ReadonlyArray<"description" | "mimeType">) => {
    const kept: ResourceInfo = { url: header.resource.url };
    for (const k of keep) if (header.resource[k] !== undefined) kept[k] = header.resource[k];
    if (Object.keys(kept).length === Object.keys(header.resource).length) return;
    header = { ...header, resource: kept };
    body.resource = required.resource;
  };
  const steps = [
    () => keepChallenges(1),
    () => trimResource(["description", "mimeType"]),
    moveBazaar,
    () => keepChallenges(speaksMpp ? 1 : 0),
    () => trimResource(["mimeType"]),
    () => keepChallenges(0),
  ];
  for (const step of steps) {
    if (bytesOf(header, shown) < budget) break;
    step();
  }
  return { header, challenges: shown, body };
}
