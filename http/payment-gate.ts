import type { Request } from "express";
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, ResourceInfo, SettleResponse } from "@x402/core/types";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import type { PaymentProcessor, VerifiedPayment } from "../src/payments/processor.js";
import { toV1PaymentRequired, upgradeLegacyProof } from "../src/payments/v1-compat.js";
import type { AnyTool } from "../src/registry/tool.js";

/** An HTTP answer decided by the gate: status, headers and JSON body. */
export interface GateResponse {
  kind: "respond";
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A request answered from an earlier settlement (idempotent retry, or a reconciled pending settlement). */
export interface GateAnswer {
  kind: "answer";
  value: unknown;
  headers: Record<string, string>;
}

/** A verified payment: run the handler, then settle through `payment`. */
export interface GateVerified {
  kind: "verified";
  payment: VerifiedPayment;
}

/** Headers of a successful settlement: `PAYMENT-RESPONSE`, mirrored in `X-PAYMENT-RESPONSE` for v1 clients. */
export function receiptHeaders(receipt: SettleResponse): Record<string, string> {
  const encoded = encodePaymentResponseHeader(receipt);
  return { "PAYMENT-RESPONSE": encoded, "X-PAYMENT-RESPONSE": encoded };
}

/**
 * The 402 for a PaymentRequired: v2 requirements in `PAYMENT-REQUIRED`, the v1 view in `X-PAYMENT` and
 * the body (spec 5.3), `Cache-Control: no-store`.
 */
export function paymentRequiredResponse(required: PaymentRequired): GateResponse {
  const v1 = toV1PaymentRequired(required);
  return {
    kind: "respond",
    status: 402,
    headers: {
      "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required),
      "X-PAYMENT": Buffer.from(JSON.stringify(v1)).toString("base64"),
      "Cache-Control": "no-store",
    },
    body: v1,
  };
}

/**
 * x402 for HTTP routes: reads the proof (`PAYMENT-SIGNATURE`, or a v1/v2 payload in `X-PAYMENT` /
 * `X-PAYMENT-PROOF`), hands it to the transport-agnostic {@link PaymentProcessor}, and encodes its
 * decisions as HTTP. The caller never releases data unless the settlement succeeded.
 */
export class HttpPaymentGate {
  constructor(
    readonly processor: PaymentProcessor,
    private readonly publicUrl?: string,
  ) {}

  /** The resource a request pays for (absolute URL under `PUBLIC_URL` when set). */
  resource(req: Request, tool: AnyTool): ResourceInfo {
    const base = this.publicUrl ?? `${req.protocol}://${req.get("host")}`;
    return { url: `${base}${req.originalUrl}`, description: tool.summary, mimeType: "application/json" };
  }

  /** The payment payload of a request, or undefined when it carries none (or an unreadable one). */
  private async payload(req: Request, tool: AnyTool): Promise<PaymentPayload | undefined> {
    let header = req.header("payment-signature");
    if (!header) {
      const legacy = req.header("x-payment") ?? req.header("x-payment-proof");
      if (legacy) header = upgradeLegacyProof(legacy, await this.processor.catalog.requirements(tool));
    }
    if (!header) return undefined;
    try {
      return decodePaymentSignatureHeader(header);
    } catch {
      return undefined;
    }
  }

  /**
   * Checks the payment of a request for a paid tool.
   * @param fingerprint canonical identity of the request (tool + input), for idempotent retries.
   * @throws AppError UPSTREAM_UNAVAILABLE when the facilitator cannot be reached (nothing charged),
   *   CONFLICT for a reused payment identifier.
   */
  async check(req: Request, tool: AnyTool, fingerprint: string): Promise<GateResponse | GateAnswer | GateVerified> {
    const resource = this.resource(req, tool);
    let check;
    try {
      check = await this.processor.check(tool, await this.payload(req, tool), resource, fingerprint);
    } catch (err) {
      if (err instanceof AppError) throw err;
      logger.warn({ err }, "payment facilitator unavailable");
      throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
    switch (check.kind) {
      case "required":
        return paymentRequiredResponse(check.required);
      case "replay":
      case "confirmed":
        return { kind: "answer", value: check.value, headers: receiptHeaders(check.receipt) };
      case "verified":
        return { kind: "verified", payment: check.payment };
    }
  }
}
