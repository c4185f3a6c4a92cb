/*
 * The `_meta` keys of paid MCP calls, shared by the server (mcp/catalog.ts) and the clients (src/client/mcp.ts,
 * the `marketgate connect` bridge). This file imports nothing, so either side may import it.
 */

/** `_meta` key of the payment on `tools/call`: a PaymentPayload object (x402 MCP transport, specs/transports-v2/mcp.md). */
export const PAYMENT_META = "x402/payment";
/** `_meta` key of the settlement receipt on a paid result: a SettleResponse object. */
export const PAYMENT_RESPONSE_META = "x402/payment-response";
/**
 * `_meta` key of a Sign-In-With-X proof on `tools/call` (the `SIGN-IN-WITH-X` header's base64 value, or the
 * decoded payload object): pays the call from prepaid credits. Named like the x402 MCP convention's `x402/payment`.
 */
export const SIWX_META = "x402/sign-in-with-x";
/** `_meta` key of a credit-paid result: `{ wallet, remaining_usd, session? }` (a fresh session token after a SIWX proof). */
export const CREDITS_META = "marketgate/credits";
/** `_meta` key of a credits session token (from an earlier result's `marketgate/credits.session`), instead of a new SIWX proof. */
export const SESSION_META = "marketgate/credits-session";
/**
 * `_meta` key the `marketgate connect` bridge adds to every result it returns: what the call cost,
 * `{ price_usd, method: "free" | "x402" | "credits", network?, transaction?, remaining_usd?, spent_today_usd }`.
 */
export const COST_META = "marketgate/cost";
