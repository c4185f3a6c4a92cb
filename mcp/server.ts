import { Server } from "@modelcontextprotocol/server";
import type { CallContext, McpCatalog, McpServerInfoLike } from "./catalog.js";

/** What the model reads about the server (`initialize`, `server/discover`): how to pay, and where each tool's full method is. */
const INSTRUCTIONS =
  "Crypto market data tools. Paid tools follow the x402 MCP convention: put a PaymentPayload in params._meta['x402/payment']; an isError result whose structuredContent (and text) is a PaymentRequired object tells you what to pay. A credits session token pays from prepaid credits instead (params._meta['marketgate/credits-session'], or the HTTP header Authorization: Bearer <token>). Identical calls within a tool's cache TTL are free. Each tool's full method (sources, formulas, limits, output fields) is in /llms-full.txt and /openapi.json of this server. This listing shows some toolsets; every tool is callable by name, and /mcp?toolsets=all lists them all.";

/** Server identity announced in `initialize` and `server/discover`, and in 2026-07-28 results' `_meta`. */
export type McpServerInfo = McpServerInfoLike;

/**
 * An MCP server (SDK v2 `Server`) over the catalogue, for either protocol era: the serving entry binds it to one
 * (`2025-11-25` after `initialize`, or `2026-07-28` per request, see mcp/http.ts and mcp/stdio.ts). Cheap to build
 * (the tool list is precomputed), so HTTP builds one per request. `callContext` supplies per-call transport facts
 * from the call's `_meta` (the SDK has lifted the 2026 envelope keys out of it); `toolsets` chooses what
 * `tools/list` shows (mcp/toolsets.ts; default: the default toolsets), never what may be called.
 * @throws AppError BAD_REQUEST for an unknown toolset name.
 */
export function createMcpServer(catalog: McpCatalog, info: McpServerInfo, callContext: (meta?: Record<string, unknown>) => CallContext, opts: { toolsets?: string } = {}): Server {
  const tools = catalog.listFor(opts.toolsets);
  const server = new Server(info, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler("tools/list", () => ({ tools }));
  // The SDK validates the request's shape (-32602) before this handler and the result after it; arguments that
  // do not fit the tool are the handler's isError result.
  server.setRequestHandler("tools/call", (req) => {
    const { name, arguments: args, _meta } = req.params;
    return catalog.call(name, args ?? {}, callContext(_meta as Record<string, unknown> | undefined));
  });
  return server;
}
