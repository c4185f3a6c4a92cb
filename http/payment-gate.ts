import type { Request } from "express";
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, ResourceInfo } from "@x402/core/types";
import { signInRequired, type Paid, type PaymentProofs } from "../src/core/call-pipeline.js";
import { MppGate, type MppAsk } from "../src/payments/mpp.js";
import type { PaymentRequest } from "../src/payments/outcomes.js";
import type { ReceiptCarrier } from "../src/payments/receipts/content-signature.js";
import { receiptHeaderCarrier, withReceipt, type ReceiptIssuer, type Sealed } from "../src/payments/receipts/issuer.js";
import type { PaymentProcessor } from "../src/payments/processor.js";
import type { CreditGate } from "../src/payments/credits/gate.js";
import { SESSION_HEADER } from "../src/payments/credits/session.js";
import { SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x";
import { OFFER_RECEIPT, type SignedReceipt } from "@x402/extensions/offer-receipt";
import { logger } from "../src/lib/log.js";
import { decodeBase64Json, readLegacyProof, toV1PaymentRequired } from "../src/payments/v1-compat.js";
import { v1OutputSchema } from "../src/payments/bazaar.js";
import type { AnyTool } from "../src/registry/tool.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";
import { fit402 } from "./fit-402.js";
import { HEADER_BLOCK_BUDGET, headerBytes } from "./header-budget.js";

/** An HTTP answer: status, headers and JSON body. */
export interface HttpReply {
  status: number;
  headers: Record<string, string | string[]>;
  body: unknown;
}

/** The x402 header a paid answer's settlement goes in: v2 clients read `PAYMENT-RESPONSE`, v1 clients (`X-PAYMENT`) `X-PAYMENT-RESPONSE`. */
export type SettlementHeader = "PAYMENT-RESPONSE" | "X-PAYMENT-RESPONSE";

/**
 * The header that carries a paid answer's signed receipt, once: the x402 settlement header the client reads
 * (x402, and MPP `evm`, which settles through x402), at `extensions["offer-receipt"].info.receipt` where the
 * extension's `extractReceiptFromResponse` reads it; else `X402-Receipt` (credits, MPP `tempo`). The answer's
 * content signature covers it (docs/receipts.md).
 */
export function receiptCarrier(paid: Paid, receipt: SignedReceipt, settlement: SettlementHeader): ReceiptCarrier {
  if (paid.method === "credits" || (paid.method === "mpp" && paid.mppMethod === "tempo")) return receiptHeaderCarrier(receipt);
  const name = paid.method === "x402" ? settlement : "PAYMENT-RESPONSE";
  return { name: name.toLowerCase() as ReceiptCarrier["name"], value: encodePaymentResponseHeader(withReceipt(paid.receipt, receipt)) };
}

/** How a receipt header's name is sent. */
const SENT_NAME: Record<ReceiptCarrier["name"], string> = { "payment-response": "PAYMENT-RESPONSE", "x-payment-response": "X-PAYMENT-RESPONSE", "x402-receipt": "X402-Receipt" };

/**
 * The 402 for a PaymentRequired: v2 requirements in `PAYMENT-REQUIRED`, the v1 view in the body,
 * `Cache-Control: no-store` (docs/payments.md; x402 HTTP transport:
 * https://github.com/coinbase/x402/blob/main/specs/transports-v2/http.md). The body's requirements carry the
 * v1 `outputSchema` (how to call, JSON Schema of the answer) when given. Nothing else goes in the headers: no
 * transport puts requirements in an `X-PAYMENT` response header (v1 reads the body); the header block must
 * fit a reverse proxy's buffer ({@link HttpPaymentGate.required} fits it).
 */
export function paymentRequiredResponse(required: PaymentRequired, mppChallenges: string[] = [], outputSchema?: Record<string, unknown>): HttpReply {
  return {
    status: 402,
    headers: {
      "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required),
      "Cache-Control": "no-store",
      ...(mppChallenges.length ? { "WWW-Authenticate": mppChallenges } : {}),
    },
    body: toV1PaymentRequired(required, outputSchema),
  };
}

/**
 * The success headers of a paid answer: the settlement (`settlement`: `PAYMENT-RESPONSE`, or `X-PAYMENT-RESPONSE`
 * for a v1 client) for x402; for MPP the `Payment-Receipt` (plus the x402 settlement for `evm`); for credits the
 * balance left (`X-Credits-Remaining`) and a fresh session token. With `sealed` (receipts on), the signed receipt
 * once, in the header {@link receiptCarrier} chose, with `Content-Digest` and the content signature (docs/receipts.md).
 */
export function paidHeaders(paid: Paid, sealed?: Sealed, settlement: SettlementHeader = "PAYMENT-RESPONSE"): Record<string, string> {
  const signed = sealed ? { [SENT_NAME[sealed.carrier.name]]: sealed.carrier.value, ...sealed.headers } : {};
  switch (paid.method) {
    case "x402":
      return sealed ? signed : { [settlement]: encodePaymentResponseHeader(paid.receipt) };
    case "mpp":
      return paid.mppMethod === "tempo"
        ? { "Payment-Receipt": MppGate.receipt("tempo", paid.receipt.transaction), ...signed }
        : { "Payment-Receipt": MppGate.receiptOf(paid.receipt), ...(sealed ? signed : { "PAYMENT-RESPONSE": encodePaymentResponseHeader(paid.receipt) }) };
    case "credits":
      return { "X-Credits-Remaining": paid.credits.remaining_usd, ...(paid.credits.session ? { [SESSION_HEADER]: paid.credits.session } : {}), ...signed };
  }
}

/** Header bytes a 402 leaves to its other headers when the caller does not measure them ({@link HttpPaymentGate.required}). */
const DEFAULT_RESERVED_BYTES = 1024;

/** Whether a request speaks MPP (`Accept-Payment` or a Payment credential; a quote asks for every method): its challenge then matters more than the 402's optional x402 parts. */
function speaksMpp(ask: MppAsk): boolean {
  return ask === "all" || ask.acceptPayment !== undefined || ask.credential;
}

/** What a 402 body says about credits, beside the x402 requirements (clients without credits ignore it). */
const CREDITS_HINT = {
  how: "Pay per call with x402 (PAYMENT-SIGNATURE) or MPP, or top up once and send a SIGN-IN-WITH-X proof on each call: the price is debited from your credits without a chain transaction.",
  top_up: { method: "POST", path: "/api/v1/credits", body: { amount_usd: "5" } },
  balance: { method: "GET", path: "/api/v1/credits", header: "SIGN-IN-WITH-X" },
};

/**
 * Payments as HTTP: reads a request's proofs from its headers — x402 (`PAYMENT-SIGNATURE`, or a v1/v2 payload
 * in `X-PAYMENT` / `X-PAYMENT-PROOF`), MPP (`Authorization: Payment`), prepaid credits (`SIGN-IN-WITH-X`,
 * `X-Credits-Session`) — for the call pipeline (src/core/call-pipeline.ts), which decides, and encodes its
 * 402s and receipts as HTTP headers and bodies.
 */
export class HttpPaymentGate {
  constructor(
    readonly processor: PaymentProcessor,
    private readonly origins: PublicOrigins,
    readonly mpp?: MppGate,
    readonly credits?: CreditGate,
    /** Signed offers and receipts (docs/receipts.md), when on. */
    readonly receipts?: ReceiptIssuer,
  ) {}

  /**
   * The origin SIWX proofs and session tokens of `req` must be bound to: a configured one (PUBLIC_URL,
   * PUBLIC_ORIGINS, or the loopback bind), never the request's Host (see {@link PublicOrigins.origin}).
   */
  origin(req: Request): string {
    return this.origins.origin(req);
  }

  /** The base of absolute URLs in the answer to `req`: PUBLIC_URL where set (see {@link PublicOrigins.baseUrl}). */
  baseUrl(req: Request): string {
    return this.origins.baseUrl(req);
  }

  /**
   * The 402 for `required` (which carries the SIWX challenge already when the pipeline built it): how to
   * top up in the body when credits are on, fresh MPP challenges when MPP is on, and the v1 `outputSchema`
   * where the 402 declares `bazaar`. `ask` chooses the MPP challenges ({@link MppGate.methodsFor}: a 402 passes
   * {@link mppAsk} of its request; default every method). Its two headers are fitted ({@link fit402}) into what
   * a reverse proxy's buffer leaves once the other headers are counted: `reservedBytes`, the bytes of every other
   * header line, the status line and the blank line (the tool routes measure them: `sentHeaderBytes`, http/header-budget.ts).
   */
  async required(r: PaymentRequest, required: PaymentRequired, ask: MppAsk = "all", reservedBytes = DEFAULT_RESERVED_BYTES): Promise<HttpReply> {
    // The v1 discovery data (outputSchema) goes with the v2 one: only where the 402 declares `bazaar`.
    const outputSchema = required.extensions?.bazaar ? v1OutputSchema(r.tool) : undefined;
    // Signed offers (about 1 KB per accepts entry) go in the body, under `extensions` as in a PaymentRequired
    // (`extractOffersFromPaymentRequired` reads it): in PAYMENT-REQUIRED they would take the header block
    // past a reverse proxy's 4 KB buffer (test/http/header-block-size.test.ts).
    const { [OFFER_RECEIPT]: offers, ...others } = required.extensions ?? {};
    const inHeader = offers ? { ...required, extensions: others } : required;
    const challenges = this.mpp ? await this.mpp.challenges(r.tool, r.priceUsd, ask) : [];
    const budget = HEADER_BLOCK_BUDGET - reservedBytes - headerBytes("Cache-Control", "no-store");
    const fitted = fit402(inHeader, challenges, budget, speaksMpp(ask));
    const response = paymentRequiredResponse(fitted.header, fitted.challenges);
    const extensions = { ...fitted.body.extensions, ...(offers ? { [OFFER_RECEIPT]: offers } : {}) };
    response.body = {
      ...toV1PaymentRequired(inHeader, outputSchema),
      ...(Object.keys(extensions).length ? { extensions } : {}),
      ...(fitted.body.resource ? { resource: fitted.body.resource } : {}),
      ...(fitted.body.mpp ? { mpp: fitted.body.mpp } : {}),
      ...(this.credits ? { credits: CREDITS_HINT } : {}),
    };
    return response;
  }

  /** The x402 header `req`'s settlement goes in: `X-PAYMENT-RESPONSE` when it paid with a v1 header only (`X-PAYMENT`, `X-PAYMENT-PROOF`). */
  settlementHeader(req: Request): SettlementHeader {
    return !req.header("payment-signature") && (req.header("x-payment") || req.header("x-payment-proof")) ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE";
  }

  /**
   * The 402 of a sign-in-only request (a stream without a valid proof): the SIWX challenge beside the
   * smallest top-up's requirements (see {@link signInRequired}), `error` saying why. Credits must be on.
   */
  async signInRequired(req: Request, about: Pick<AnyTool, "summary">, reason: string): Promise<HttpReply> {
    const s = await this.signInPaymentRequired(req, about, reason);
    return this.required(s.request, s.required, this.mppAsk(req));
  }

  /** What `req` says about MPP, for the challenges of its 402: its `Accept-Payment` and whether it carried a Payment credential. */
  mppAsk(req: Request): MppAsk {
    return { acceptPayment: req.header("accept-payment") || undefined, credential: MppGate.credentialOf(req.header("authorization")) !== null };
  }

  /** The PaymentRequired (and its request) of {@link signInRequired}, for answers that are not HTTP 402s (`/mcp/live`). */
  signInPaymentRequired(req: Request, about: Pick<AnyTool, "summary">, reason: string): Promise<{ request: PaymentRequest; required: PaymentRequired }> {
    const resource = this.resource(req, about);
    return signInRequired(this.processor, this.credits!, { resource, origin: this.origin(req), challengeUrl: resource.url }, reason, this.receipts);
  }

  /**
   * The receipt signer of a stream's paid minutes for `resourceUrl` (payer: the wallet; network: the one
   * credits are topped up on), or undefined when receipts are off. Signing failures are logged and the
   * minute's `debit` event goes without a receipt (the minute is paid).
   */
  streamReceipt(resourceUrl: string): ((wallet: string) => Promise<SignedReceipt | undefined>) | undefined {
    const receipts = this.receipts;
    if (!receipts) return undefined;
    const network = this.processor.catalog.settings.network;
    return (wallet) =>
      receipts.receipt(resourceUrl, { payer: wallet, network }).catch((err: unknown) => {
        logger.error({ err }, "stream receipt signing failed; the debit event goes without one");
        return undefined;
      });
  }

  /** The resource a request pays for (absolute URL under the configured origin, see {@link baseUrl}). */
  resource(req: Request, tool: Pick<AnyTool, "summary">): ResourceInfo {
    return { url: `${this.baseUrl(req)}${req.originalUrl}`, description: tool.summary, mimeType: "application/json" };
  }

  /**
   * The payment proofs of a request, as headers carry them (empty values count as absent). The MPP
   * credential is read only when MPP is on (else `Authorization` is left to the tools' credentials).
   */
  proofs(req: Request): PaymentProofs {
    const hasX402 = Boolean(req.header("payment-signature") || req.header("x-payment") || req.header("x-payment-proof"));
    return {
      x402: hasX402 ? (r) => this.payload(req, r) : undefined,
      mpp: (this.mpp && MppGate.credentialOf(req.header("authorization"))) || undefined,
      siwx: req.header(SIGN_IN_WITH_X) || undefined,
      session: req.header(SESSION_HEADER) || undefined,
    };
  }

  /**
   * The decoded x402 payment payload of a request (any shape: the processor checks it; a v1 proof matched to
   * the call's requirements), or `{ refusal }` when the header is unreadable.
   */
  private async payload(req: Request, r: PaymentRequest): Promise<unknown> {
    const header = req.header("payment-signature");
    if (header) return decodeBase64Json(header) ?? { refusal: "invalid_payload: PAYMENT-SIGNATURE is not base64-encoded JSON" };
    const legacy = req.header("x-payment") || req.header("x-payment-proof");
    return legacy ? readLegacyProof(legacy, await this.processor.catalog.requirements(r.tool, r.priceUsd)) : undefined;
  }
}
