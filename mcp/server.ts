import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, McpCatalog } from "./catalog.js";

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
  server.setRequestHandler(CallToolRequestSchema, (req) => catalog.call(req.params.name, req.params.arguments ?? {}, callContext(req.params._meta)));
  return server;
}
