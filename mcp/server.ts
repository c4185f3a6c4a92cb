import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CallContext, McpCatalog } from "./catalog.js";

/** `tools/call` with any params: the SDK validates the real shape (-32602) before calling the handler. */
const LooseCallToolRequest = z.object({ method: z.literal("tools/call"), params: z.unknown() });

/** Server identity announced in `initialize`. */
export interface McpServerInfo {
  name: string;
  version: string;
}

/**
 * An MCP server over the catalogue. Cheap to build (the tool list is precomputed), so the stateless
 * Streamable HTTP mount builds one per request. `callContext` supplies per-call transport facts.
 */
export function createMcpServer(catalog: McpCatalog, info: McpServerInfo, callContext: (meta?: Record<string, unknown>) => CallContext): Server {
  const server = new Server(info, {
    capabilities: { tools: { listChanged: false } },
    instructions:
      "Crypto market data tools. Paid tools follow the x402 MCP convention: put a PaymentPayload in params._meta['x402/payment']; an isError result whose text is a PaymentRequired object tells you what to pay. Identical calls within a tool's cache TTL are free.",
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalog.list }));
  // The SDK checks this schema before the handler and turns a failure into -32603 (internal error); this
  // loose one lets the SDK's own tools/call check answer -32602 for a malformed request, and our handler
  // answer an isError result for arguments that do not fit the tool.
  server.setRequestHandler(LooseCallToolRequest, (req) => {
    const { name, arguments: args, _meta } = req.params as { name: string; arguments?: unknown; _meta?: Record<string, unknown> };
    return catalog.call(name, args ?? {}, callContext(_meta));
  });
  return server;
}
