import type { Request } from "express";
import { decodePaymentRequiredHeader, x402HTTPResourceServer, type HTTPAdapter, type HTTPRequestContext, type RoutesConfig } from "@x402/core/http";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { toV1PaymentRequired, upgradeLegacyProof } from "../src/payments/v1-compat.js";
import { paymentOption, type PaymentCatalog } from "../src/payments/x402.js";
import { isFree, type AnyTool } from "../src/registry/tool.js";

/** An HTTP answer the gate decided on its own (402, or 412 for permit2 allowance). */
export interface GateResponse {
  kind: "respond";
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Outcome of settling a verified payment after the handler succeeded. */
export type SettleOutcome =
  | { ok: true; headers: Record<string, string>; payer?: string; transaction: string }
  | { ok: false; response: GateResponse };

/** A verified (not yet settled) payment: settle it after the handler succeeded, or cancel it. */
export interface VerifiedPayment {
  kind: "verified";
  settle(): Promise<SettleOutcome>;
  cancel(responseStatus: number): Promise<void>;
}

/** Adapts an express request to x402's `HTTPAdapter`, with the payment header chosen by the gate. */
class RequestAdapter implements HTTPAdapter {
  constructor(
    private readonly req: Request,
    private readonly paymentHeader: string | undefined,
    private readonly publicUrl: string | undefined,
  ) {}
  getHeader(name: string): string | undefined {
    if (name.toLowerCase() === "payment-signature") return this.paymentHeader;
    return this.req.header(name);
  }
  getMethod(): string {
    return this.req.method;
  }
  getPath(): string {
    return this.req.path;
  }
  getUrl(): string {
    return `${this.publicUrl ?? `${this.req.protocol}://${this.req.get("host")}`}${this.req.originalUrl}`;
  }
  // Agents and SDKs get JSON 402s; no HTML paywall.
  getAcceptHeader(): string {
    return "application/json";
  }
  getUserAgent(): string {
    return this.req.header("user-agent") ?? "";
  }
  getQueryParams(): Record<string, string | string[]> {
    return this.req.query as Record<string, string | string[]>;
  }
  getQueryParam(name: string): string | string[] | undefined {
    return this.req.query[name] as string | string[] | undefined;
  }
  getBody(): unknown {
    return this.req.body;
  }
}

/** Adds the v1 view of a 402: the v1-shaped body, and the same requirements base64-encoded in `X-PAYMENT`. */
function withV1View(status: number, headers: Record<string, string>, body: unknown): GateResponse {
  const encoded = headers["PAYMENT-REQUIRED"];
  if (!encoded) return { kind: "respond", status, headers, body };
  const v1 = toV1PaymentRequired(decodePaymentRequiredHeader(encoded));
  return { kind: "respond", status, headers: { ...headers, "X-PAYMENT": Buffer.from(JSON.stringify(v1)).toString("base64") }, body: v1 };
}

/**
 * x402 for HTTP routes, on the official `x402HTTPResourceServer`: builds 402s (v2 header plus the v1
 * view), accepts `PAYMENT-SIGNATURE`, `X-PAYMENT` and `X-PAYMENT-PROOF`, verifies before the handler and
 * settles after it. The caller never releases data unless `settle()` returned `ok`.
 */
export class HttpPaymentGate {
  private readonly http: x402HTTPResourceServer;
  private ready?: Promise<void>;

  constructor(
    private readonly catalog: PaymentCatalog,
    tools: readonly AnyTool[],
    private readonly publicUrl?: string,
  ) {
    const routes: RoutesConfig = {};
    for (const t of tools) {
      if (isFree(t)) continue;
      routes[`${t.method} ${t.path}`] = { accepts: paymentOption(t, catalog.settings), description: t.summary, mimeType: "application/json" };
    }
    this.http = new x402HTTPResourceServer(catalog.resourceServer, routes);
  }

  private init(): Promise<void> {
    this.ready ??= this.http.initialize().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** The proof header of the request as a v2 `PAYMENT-SIGNATURE` value, upgrading v1 proofs. */
  private async paymentHeader(req: Request, tool: AnyTool): Promise<string | undefined> {
    const v2 = req.header("payment-signature");
    if (v2) return v2;
    const legacy = req.header("x-payment") ?? req.header("x-payment-proof");
    if (!legacy) return undefined;
    return upgradeLegacyProof(legacy, await this.catalog.requirements(tool));
  }

  /**
   * Checks the request's payment for a paid tool.
   * @returns a 402 to send, or a verified payment.
   * @throws AppError UPSTREAM_UNAVAILABLE when the facilitator cannot be reached.
   */
  async begin(req: Request, tool: AnyTool): Promise<GateResponse | VerifiedPayment> {
    let context: HTTPRequestContext;
    let result;
    try {
      await this.init();
      const paymentHeader = await this.paymentHeader(req, tool);
      context = { adapter: new RequestAdapter(req, paymentHeader, this.publicUrl), path: req.path, method: req.method, paymentHeader };
      result = await this.http.processHTTPRequest(context);
    } catch (err) {
      logger.warn({ err }, "payment facilitator unavailable");
      throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
    switch (result.type) {
      case "no-payment-required":
        throw new AppError("INTERNAL", "payment route missing");
      case "payment-error": {
        const r = result.response;
        return withV1View(r.status, r.headers, r.body ?? {});
      }
      case "payment-verified": {
        const { paymentPayload, paymentRequirements, declaredExtensions, beforeHandlerSettlement, cancellationDispatcher } = result;
        return {
          kind: "verified",
          settle: async () => {
            const s = await this.http.processSettlement(paymentPayload, paymentRequirements, declaredExtensions, { request: context }, undefined, beforeHandlerSettlement);
            if (!s.success) return { ok: false, response: withV1View(s.response.status, s.response.headers, s.response.body ?? {}) };
            const receipt = s.headers["PAYMENT-RESPONSE"];
            return { ok: true, headers: receipt ? { ...s.headers, "X-PAYMENT-RESPONSE": receipt } : s.headers, payer: s.payer, transaction: s.transaction };
          },
          cancel: async (responseStatus) => {
            await cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus });
          },
        };
      }
    }
  }
}
