import type { PaymentPayload, PaymentRequired, SettleResponse } from "@x402/core/types";
import type { PaymentCatalog } from "../src/payments/x402.js";
import type { AnyTool } from "../src/registry/tool.js";

/** `_meta` key of the payment on `tools/call` (x402 MCP transport, specs/transports-v2/mcp.md). */
export const PAYMENT_META = "x402/payment";
/** `_meta` key of the settlement receipt on the result. */
export const PAYMENT_RESPONSE_META = "x402/payment-response";

/** A payment that passed verification, to be settled after the tool succeeded. */
export interface McpVerifiedPayment {
  kind: "verified";
  settle(): Promise<{ ok: true; receipt: SettleResponse } | { ok: false; required: PaymentRequired }>;
}

/** Payment is missing or invalid: answer with this PaymentRequired. */
export interface McpPaymentRequired {
  kind: "required";
  required: PaymentRequired;
}

/**
 * x402 over MCP on the official `x402ResourceServer` (the `@x402/mcp` wrapper is not available to us):
 * find the matching requirement, verify, and later settle. `settlePayment` resolves `{success:false}`
 * instead of throwing; the caller must then withhold the result.
 */
export async function checkMcpPayment(catalog: PaymentCatalog, tool: AnyTool, payment: unknown): Promise<McpVerifiedPayment | McpPaymentRequired> {
  const accepts = await catalog.requirements(tool);
  const rs = catalog.resourceServer;
  const required = (error: string): McpPaymentRequired => ({
    kind: "required",
    required: { x402Version: 2, error, resource: { url: `mcp://tool/${tool.name}`, description: tool.summary, mimeType: "application/json" }, accepts },
  });
  if (!payment || typeof payment !== "object") return required("Payment required");
  const payload = payment as PaymentPayload;
  const match = rs.findMatchingRequirements(accepts, payload);
  if (!match) return required("No matching payment requirements");
  const verified = await rs.verifyPayment(payload, match);
  if (!verified.isValid) return required(verified.invalidReason ?? "invalid_payment");
  return {
    kind: "verified",
    settle: async () => {
      const receipt = await rs.settlePayment(payload, match);
      return receipt.success ? { ok: true, receipt } : { ok: false, required: required(receipt.errorReason ?? "settlement_failed").required };
    },
  };
}
