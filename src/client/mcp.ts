import type { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, SettleResponse } from "@x402/core/types";
import { PAYMENT_META, PAYMENT_RESPONSE_META, SESSION_META, SIWX_META } from "./mcp-meta.js";

/*
 * An x402 MCP client, after the x402 MCP transport spec (coinbase/x402 specs/transports-v2/mcp.md) and its
 * reference `x402MCPClient` (not published: `npm view @x402/mcp` answers 404). A paid tool answers an unpaid
 * call with an `isError` result carrying the PaymentRequired (in `structuredContent`, and as JSON in
 * `content[0].text`; older servers send the text only); the client signs a payment with the official
 * `x402Client` and calls again with it in `params._meta["x402/payment"]`; the receipt comes back in
 * `result._meta["x402/payment-response"]`. Calls may instead be paid from prepaid credits with a session
 * token (`_meta["marketgate/credits-session"]`) or a Sign-In-With-X proof (`_meta["x402/sign-in-with-x"]`).
 */

/** A `tools/call` result as far as payments read it (the v1 and v2 SDKs' `CallToolResult` both fit). */
export interface ToolResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** `tools/call` params. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What this client needs of an MCP SDK client: `callTool`. A connected v1 (`@modelcontextprotocol/sdk`) or v2 (`@modelcontextprotocol/client`) `Client` fits. */
export interface ToolCaller {
  callTool(params: ToolCallParams): Promise<unknown>;
}

/** JSON-RPC error code some servers use for "payment required" instead of an `isError` result (the reference client accepts it). */
export const MCP_PAYMENT_REQUIRED_CODE = 402;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether `v` has the shape of an x402 PaymentRequired (a version and a list of accepted requirements). */
function looksLikePaymentRequired(v: unknown): v is PaymentRequired {
  return isObject(v) && typeof v.x402Version === "number" && Array.isArray(v.accepts);
}

/**
 * The PaymentRequired of a "payment required" result: `structuredContent` when it is one, else the JSON of
 * `content[0].text` (servers before the spec's MUST on `structuredContent`). Undefined for any other result,
 * successful or not.
 */
export function paymentRequiredOf(result: ToolResult): PaymentRequired | undefined {
  if (!result.isError) return undefined;
  if (looksLikePaymentRequired(result.structuredContent)) return result.structuredContent;
  const first = result.content?.[0];
  if (!isObject(first) || first.type !== "text" || typeof first.text !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(first.text);
    return looksLikePaymentRequired(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The settlement receipt of a paid result (`_meta["x402/payment-response"]`), if it has one. */
export function settlementOf(result: ToolResult): SettleResponse | undefined {
  const s = result._meta?.[PAYMENT_RESPONSE_META];
  return isObject(s) && typeof s.success === "boolean" ? (s as unknown as SettleResponse) : undefined;
}

/** The PaymentRequired of a JSON-RPC error `{code: 402, data: PaymentRequired}`, if `err` is one. */
function paymentRequiredOfError(err: unknown): PaymentRequired | undefined {
  if (!isObject(err) || err.code !== MCP_PAYMENT_REQUIRED_CODE) return undefined;
  return looksLikePaymentRequired(err.data) ? err.data : undefined;
}

/**
 * Calls a tool; a JSON-RPC 402 error comes back as the equivalent `isError` result (with the PaymentRequired in
 * `structuredContent` and in the text), any other error is thrown as the SDK threw it.
 */
export async function callToolResult(mcp: ToolCaller, params: ToolCallParams): Promise<ToolResult> {
  try {
    return (await mcp.callTool(params)) as ToolResult;
  } catch (err) {
    const required = paymentRequiredOfError(err);
    if (!required) throw err;
    return { isError: true, structuredContent: required, content: [{ type: "text", text: JSON.stringify(required) }] };
  }
}

/** `params` with `meta` merged into its `_meta` (the caller's own keys kept). */
export function withMeta(params: ToolCallParams, meta: Record<string, unknown>): ToolCallParams {
  return { ...params, _meta: { ...params._meta, ...meta } };
}

/** One `tools/call` through {@link X402McpClient.callTool}. */
export interface X402ToolCall {
  /** The final result (the paid retry's when a payment was sent). */
  result: ToolResult;
  /** The PaymentRequired the first call answered, when the tool asked for payment. */
  paymentRequired?: PaymentRequired;
  /** The payment sent, when one was. */
  payment?: PaymentPayload;
  /** The settlement receipt of the paid result, when it carries one. */
  settlement?: SettleResponse;
  /** Why no payment was sent although one was asked for (the `approve` callback's refusal). */
  refused?: string;
}

/**
 * Decides whether to pay a PaymentRequired, before anything is signed: returns the PaymentRequired to sign
 * (the same, or with `accepts` narrowed to what may be paid; the `x402Client` picks among them), or a
 * string saying why not (nothing is signed nor sent).
 */
export type ApprovePayment = (required: PaymentRequired, params: ToolCallParams) => PaymentRequired | string | Promise<PaymentRequired | string>;

/**
 * x402 over MCP for any MCP SDK client: {@link callTool} calls a tool and, when it answers "payment required",
 * pays with the official `x402Client` (whose registered schemes say which networks this wallet pays on) and
 * calls again with the payment in `_meta["x402/payment"]`.
 */
export class X402McpClient {
  constructor(
    private readonly mcp: ToolCaller,
    private readonly payer: x402Client,
    private readonly approve: ApprovePayment = (r) => r,
  ) {}

  /**
   * Calls a tool, paying when asked (after `approve`, which may refuse). A refused or failed payment is
   * no exception: the result is the server's isError result.
   * @throws what the MCP client throws (transport errors), or the x402 client's error when no registered
   * scheme can pay any approved requirement.
   */
  async callTool(params: ToolCallParams, approve: ApprovePayment = this.approve): Promise<X402ToolCall> {
    const { result: first, paymentRequired } = await this.callUnpaid(params);
    if (!paymentRequired) return { result: first };
    const approved = await approve(paymentRequired, params);
    if (typeof approved === "string") return { result: first, paymentRequired, refused: approved };
    const payment = await this.payer.createPaymentPayload(approved);
    return { paymentRequired, payment, ...(await this.pay(params, payment)) };
  }

  /** Calls a tool without paying; its result, and its PaymentRequired when it asks for payment. */
  async callUnpaid(params: ToolCallParams): Promise<{ result: ToolResult; paymentRequired?: PaymentRequired }> {
    const result = await callToolResult(this.mcp, params);
    return { result, paymentRequired: paymentRequiredOf(result) };
  }

  /** Calls a tool with `payment` in `_meta["x402/payment"]`; the result and its settlement receipt. */
  async pay(params: ToolCallParams, payment: PaymentPayload): Promise<{ result: ToolResult; settlement?: SettleResponse }> {
    const result = await callToolResult(this.mcp, withMeta(params, { [PAYMENT_META]: payment }));
    return { result, settlement: settlementOf(result) };
  }

  /** Calls a tool paying from prepaid credits with a session token (`_meta["marketgate/credits-session"]`). */
  withSession(params: ToolCallParams, token: string): Promise<ToolResult> {
    return callToolResult(this.mcp, withMeta(params, { [SESSION_META]: token }));
  }

  /** Calls a tool paying from prepaid credits with a Sign-In-With-X proof (`_meta["x402/sign-in-with-x"]`, the header's base64 value). */
  withSiwx(params: ToolCallParams, proof: string): Promise<ToolResult> {
    return callToolResult(this.mcp, withMeta(params, { [SIWX_META]: proof }));
  }
}
