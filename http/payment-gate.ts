import type { Request } from "express";
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, ResourceInfo, SettleResponse } from "@x402/core/types";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { MppGate } from "../src/payments/mpp.js";
import type { PaymentProcessor, SettleResult, VerifiedPayment } from "../src/payments/processor.js";
import { toV1PaymentRequired, upgradeLegacyProof } from "../src/payments/v1-compat.js";
import type { AnyTool } from "../src/registry/tool.js";

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
export function paymentRequiredResponse(required: PaymentRequired, mppChallenges: string[] = []): GateResponse {
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
    body: v1,
  };
}

/** Success headers for an MPP `evm` payment: the MPP receipt plus the x402 receipt. */
function mppReceiptHeaders(receipt: SettleResponse): Record<string, string> {
  return { ...receiptHeaders(receipt), "Payment-Receipt": MppGate.receiptOf(receipt) };
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
    private readonly mpp?: MppGate,
  ) {}

  /** The 402 for `required`, with fresh MPP challenges when MPP is on. */
  async required(tool: AnyTool, required: PaymentRequired): Promise<GateResponse> {
    return paymentRequiredResponse(required, this.mpp ? await this.mpp.challenges(tool) : []);
  }

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
    const credential = this.mpp ? MppGate.credentialOf(req.header("authorization")) : null;
    const hasX402 = Boolean(req.header("payment-signature") || req.header("x-payment") || req.header("x-payment-proof"));
    if (credential && hasX402) {
      throw new AppError("BAD_REQUEST", "send either an MPP credential (Authorization: Payment) or an x402 payment header, not both");
    }
    let check;
    let receipt = receiptHeaders;
    try {
      let payload: PaymentPayload | undefined;
      if (credential) {
        const mpp = await this.mpp!.accept(tool, credential, resource.url);
        if (mpp.method === "tempo") return this.tempo(mpp.settle);
        payload = mpp.payload;
        receipt = mppReceiptHeaders;
      } else {
        payload = await this.payload(req, tool);
      }
      check = await this.processor.check(tool, payload, resource, fingerprint);
    } catch (err) {
      if (err instanceof AppError && err.code === "PAYMENT_REQUIRED") {
        return this.required(tool, await this.processor.paymentRequired(tool, resource, err.message));
      }
      if (err instanceof AppError) throw err;
      logger.warn({ err }, "payment facilitator unavailable");
      throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
    switch (check.kind) {
      case "required":
        return this.required(tool, check.required);
      case "replay":
      case "confirmed":
        return { kind: "answer", value: check.value, headers: receipt(check.receipt) };
      case "verified":
        return { kind: "verified", payment: check.payment, receipt };
    }
  }

  /** A validated Tempo credential: broadcast on Tempo after the handler succeeded. */
  private tempo(settle: () => Promise<string>): GateVerified {
    let reference = "";
    return {
      kind: "verified",
      payment: {
        settle: async (): Promise<SettleResult> => {
          try {
            reference = await settle();
            return { kind: "settled", receipt: { success: true, transaction: reference, network: "tempo:4217" } };
          } catch (err) {
            logger.warn({ err }, "tempo settlement failed");
            return { kind: "unknown", retryAfterSec: 5 };
          }
        },
        abandon: () => undefined,
      },
      receipt: () => ({ "Payment-Receipt": MppGate.receipt("tempo", reference) }),
    };
  }
}
