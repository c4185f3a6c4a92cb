import type { Request } from "express";
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, ResourceInfo, SettleResponse } from "@x402/core/types";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { MppGate } from "../src/payments/mpp.js";
import type { PaymentProcessor, PaymentRequest, VerifiedPayment } from "../src/payments/processor.js";
import type { CreditGate, CreditProof } from "../src/payments/credits/gate.js";
import { SESSION_HEADER } from "../src/payments/credits/session.js";
import { microToUsd } from "../src/payments/credits/ledger.js";
import { siwxChallenge } from "../src/payments/credits/siwx.js";
import { SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x";
import { decodeBase64Json, readLegacyProof, toV1PaymentRequired } from "../src/payments/v1-compat.js";
import { v1OutputSchema } from "../src/docs/bazaar.js";
import type { AnyTool } from "../src/registry/tool.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";

/** An HTTP answer decided by the gate: status, headers and JSON body. */
export interface GateResponse {
  kind: "respond";
  status: number;
  headers: Record<string, string | string[]>;
  body: unknown;
}

/** A request answered from an earlier settlement (idempotent retry, or a reconciled pending settlement). */
export interface GateAnswer {
  kind: "answer";
  value: unknown;
  headers: Record<string, string>;
}

/** A verified payment: run the handler, then settle through `payment`; `receipt` gives the success headers. */
export interface GateVerified {
  kind: "verified";
  payment: VerifiedPayment;
  receipt(r: SettleResponse): Record<string, string>;
  /** `credits` when the call is paid from prepaid credits (its revenue was counted at top-up). */
  method?: "credits";
}

/** Headers of a successful settlement: `PAYMENT-RESPONSE`, mirrored in `X-PAYMENT-RESPONSE` for v1 clients. */
export function receiptHeaders(receipt: SettleResponse): Record<string, string> {
  const encoded = encodePaymentResponseHeader(receipt);
  return { "PAYMENT-RESPONSE": encoded, "X-PAYMENT-RESPONSE": encoded };
}

/**
 * The 402 for a PaymentRequired: v2 requirements in `PAYMENT-REQUIRED`, the v1 view in `X-PAYMENT` and
 * the body (spec 5.3), `Cache-Control: no-store`. The body's requirements carry the v1 `outputSchema`
 * (how to call, JSON Schema of the answer) when given; the `X-PAYMENT` header leaves it out, so that the
 * 402's headers stay within the 16 KB HTTP clients read.
 */
export function paymentRequiredResponse(required: PaymentRequired, mppChallenges: string[] = [], outputSchema?: Record<string, unknown>): GateResponse {
  const v1 = toV1PaymentRequired(required);
  return {
    kind: "respond",
    status: 402,
    headers: {
      "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required),
      "X-PAYMENT": Buffer.from(JSON.stringify(v1)).toString("base64"),
      "Cache-Control": "no-store",
      ...(mppChallenges.length ? { "WWW-Authenticate": mppChallenges } : {}),
    },
    body: outputSchema ? toV1PaymentRequired(required, outputSchema) : v1,
  };
}

/** CAIP-2 id of Tempo mainnet, named in the receipts of `tempo` payments. */
const TEMPO_NETWORK = "tempo:4217";

/** Success headers for an MPP `evm` payment: the MPP receipt plus the x402 receipt. */
function mppReceiptHeaders(receipt: SettleResponse): Record<string, string> {
  return { ...receiptHeaders(receipt), "Payment-Receipt": MppGate.receiptOf(receipt) };
}

/** What a 402 body says about credits, beside the x402 requirements (clients without credits ignore it). */
const CREDITS_HINT = {
  how: "Pay per call with x402 (PAYMENT-SIGNATURE) or MPP, or top up once and send a SIGN-IN-WITH-X proof on each call: the price is debited from your credits without a chain transaction.",
  top_up: { method: "POST", path: "/api/v1/credits", body: { amount_usd: "5" } },
  balance: { method: "GET", path: "/api/v1/credits", header: "SIGN-IN-WITH-X" },
};

/**
 * Payments for HTTP routes: x402 (`PAYMENT-SIGNATURE`, or a v1/v2 payload in `X-PAYMENT` /
 * `X-PAYMENT-PROOF`), MPP (`Authorization: Payment`) and prepaid credits (`SIGN-IN-WITH-X`). Proofs go
 * to the transport-agnostic {@link PaymentProcessor} or {@link CreditGate}, whose decisions are encoded
 * as HTTP. The caller never releases data unless the payment settled (or the debit was reserved).
 */
export class HttpPaymentGate {
  constructor(
    readonly processor: PaymentProcessor,
    private readonly origins: PublicOrigins,
    private readonly mpp?: MppGate,
    readonly credits?: CreditGate,
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
   * The 402 for `required`: the SIWX challenge (when credits are on) added to its extensions, how to
   * top up in the body, and fresh MPP challenges when MPP is on.
   */
  async required(r: PaymentRequest, required: PaymentRequired, origin?: string): Promise<GateResponse> {
    if (this.credits && origin) {
      const networks = [...new Set(required.accepts.map((a) => a.network))];
      required = { ...required, extensions: { ...required.extensions, [SIGN_IN_WITH_X]: siwxChallenge(required.resource.url, origin, networks) } };
    }
    // The v1 discovery data (outputSchema) goes with the v2 one: only where the 402 declares `bazaar`.
    const outputSchema = required.extensions?.bazaar ? v1OutputSchema(r.tool) : undefined;
    const response = paymentRequiredResponse(required, this.mpp ? await this.mpp.challenges(r.tool, r.priceUsd) : [], outputSchema);
    if (this.credits) response.body = { ...(response.body as object), credits: CREDITS_HINT };
    return response;
  }

  /**
   * The 402 of a sign-in-only request (a `siwx` tool without a valid proof): the SIWX challenge beside
   * the smallest top-up's requirements (`wrapFetchWithSIWx` signs for `accepts[0].network`; a client
   * without credits can top up with them), `error` saying why.
   */
  async signInRequired(req: Request, tool: Pick<AnyTool, "summary">, reason: string): Promise<GateResponse> {
    const credits = this.credits!;
    const r: PaymentRequest = { tool: credits.topUpTool, resource: this.resource(req, tool), fingerprint: "", priceUsd: credits.settings.minTopUpUsd };
    return this.required(r, await this.processor.paymentRequired(r, reason), this.origin(req));
  }

  /** The resource a request pays for (absolute URL under the configured origin, see {@link baseUrl}). */
  resource(req: Request, tool: Pick<AnyTool, "summary">): ResourceInfo {
    return { url: `${this.baseUrl(req)}${req.originalUrl}`, description: tool.summary, mimeType: "application/json" };
  }

  /**
   * The decoded payment payload of a request (any shape: the processor checks it), undefined when the
   * request carries none, or `{ refusal }` when a header is present but unreadable.
   */
  private async payload(req: Request, r: PaymentRequest): Promise<unknown> {
    const header = req.header("payment-signature");
    if (header) return decodeBase64Json(header) ?? { refusal: "invalid_payload: PAYMENT-SIGNATURE is not base64-encoded JSON" };
    const legacy = req.header("x-payment") ?? req.header("x-payment-proof");
    return legacy ? readLegacyProof(legacy, await this.processor.catalog.requirements(r.tool, r.priceUsd)) : undefined;
  }

  /**
   * Checks the payment of a request for a paid tool. Malformed payments (any header) answer 402 with an
   * `invalid_payload` reason; only a facilitator that cannot be reached is a 503. A `SIGN-IN-WITH-X`
   * proof (without another payment) pays from credits; a refused one answers the normal 402 with the
   * reason, so the client can top up or pay this call.
   * @param fingerprint canonical identity of the request (tool + input), for idempotent retries.
   * @param priceUsd the call's price (the tool's, or the input's for top-ups).
   * @throws AppError UPSTREAM_UNAVAILABLE when the facilitator or a ledger cannot be reached (nothing
   *   charged), CONFLICT for a reused payment identifier or SIWX requestId.
   */
  async check(req: Request, tool: AnyTool, fingerprint: string, priceUsd = tool.priceUsd): Promise<GateResponse | GateAnswer | GateVerified> {
    const r: PaymentRequest = { tool, resource: this.resource(req, tool), fingerprint, priceUsd };
    const origin = this.origin(req);
    const credential = this.mpp ? MppGate.credentialOf(req.header("authorization")) : null;
    const hasX402 = Boolean(req.header("payment-signature") || req.header("x-payment") || req.header("x-payment-proof"));
    if (credential && hasX402) {
      throw new AppError("BAD_REQUEST", "send either an MPP credential (Authorization: Payment) or an x402 payment header, not both");
    }
    const siwx = req.header(SIGN_IN_WITH_X);
    const session = req.header(SESSION_HEADER);
    if ((siwx || session) && this.credits && !credential && !hasX402) return this.fromCredits(r, { siwx, session }, origin);
    let check;
    let receipt = receiptHeaders;
    try {
      let payload: unknown;
      if (credential) {
        const mpp = await this.mpp!.accept(tool, credential, r.resource.url, priceUsd);
        if (mpp.method === "tempo") {
          check = await this.processor.checkExternal(r, mpp.key, async () => {
            const reference = await mpp.settle();
            return { success: true, transaction: reference, network: TEMPO_NETWORK };
          });
          receipt = (res) => ({ "Payment-Receipt": MppGate.receipt("tempo", res.transaction) });
        } else {
          payload = mpp.payload;
          receipt = mppReceiptHeaders;
        }
      } else {
        payload = await this.payload(req, r);
      }
      if (!check) {
        const refusal = (payload as { refusal?: unknown } | undefined)?.refusal;
        check = typeof refusal === "string" ? { kind: "required" as const, required: await this.processor.paymentRequired(r, refusal) } : await this.processor.check(r, payload);
      }
    } catch (err) {
      if (err instanceof AppError && err.code === "PAYMENT_REQUIRED") {
        return this.required(r, await this.processor.paymentRequired(r, err.message), origin);
      }
      if (err instanceof AppError) throw err;
      logger.warn({ err }, "payment facilitator unavailable");
      throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
    switch (check.kind) {
      case "required":
        return this.required(r, check.required, origin);
      case "replay":
      case "confirmed":
        return { kind: "answer", value: check.value, headers: receipt(check.receipt) };
      case "verified":
        return { kind: "verified", payment: check.payment, receipt };
    }
  }

  /** A call paid from credits: 402 with the reason when refused, else reserved (`X-Credits-Remaining`). */
  private async fromCredits(r: PaymentRequest, proof: CreditProof, origin: string): Promise<GateResponse | GateAnswer | GateVerified> {
    const c = await this.credits!.check(r, proof, origin);
    if (c.kind === "refused") return this.required(r, await this.processor.paymentRequired(r, c.reason), origin);
    const remaining: Record<string, string> = { "X-Credits-Remaining": microToUsd(c.remainingMicro), ...(c.session ? { [SESSION_HEADER]: c.session } : {}) };
    if (c.kind === "replay") return { kind: "answer", value: c.value, headers: remaining };
    return { kind: "verified", payment: c.payment, receipt: () => remaining, method: "credits" };
  }
}
