/**
 * `marketgate/client`: the typed client of a marketgate service, with payment built in (docs/client.md).
 *
 * ```ts
 * const client = createClient({ url, wallet: { evmPrivateKey }, maxUsdPerSession: "1" });
 * const { data, cost } = await client.tools.funding_rate({ symbol: "BTC" });
 * ```
 */
export {
  createClient,
  MarketgateClient,
  type CallOptions,
  type CallResult,
  type ClientOptions,
  type ItemOf,
  type ItemsToolName,
  type PagedToolName,
  type ToolArgs,
  type ToolInput,
  type ToolMethods,
  type ToolName,
  type ToolOutput,
} from "./client.js";
export { MarketgateError, PaymentRequiredError, ServiceError, SpendCapError, type SpendCapDetails } from "./errors.js";
export { LiveStream, type StreamEvent, type StreamOptions, type StreamTopic } from "./stream.js";
export type { Cost, PayMethod, RawResponse } from "./transport.js";
export type { Network, Wallet } from "./payers.js";
export type { StreamRoute, ToolRoute } from "./routes.js";
export { STREAM_ROUTES, TOOL_ROUTES, type ControlEventTypes, type LooseInput, type LooseOutput, type StreamEventTypes, type ToolTypes } from "./tools.generated.js";
export { microsToUsd, usdToMicros } from "./budget.js";
// The x402 MCP client (pays `_meta["x402/payment"]`, reads `x402/payment-response`), until an official package exists.
export * from "./mcp.js";
