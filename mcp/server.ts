import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CallContext, McpCatalog } from "./catalog.js";

/** `tools/call` with any params: the SDK validates the real shape (-32602) before calling the handler. */
const LooseCallToolRequest = z.object({ method: z.literal("tools/call"), params: z.unknown() });

/** What the model reads about the server in `initialize`: how to pay, and where each tool's full method is. */
const INSTRUCTIONS =
  "Crypto market data tools. Paid tools follow the x402 MCP convention: put a PaymentPayload in params._meta['x402/payment']; an isError result whose text is a PaymentRequired object tells you what to pay. Identical calls within a tool's cache TTL are free. Each tool's full method (sources, formulas, limits, output fields) is in /llms-full.txt and /openapi.json of this server. This listing shows some toolsets; every tool is callable by name, and /mcp?toolsets=all lists them all.";

/** Server identity announced in `initialize`. */
export interface McpServerInfo {
  name: string;
  version: string;
}

/**
 * An MCP server over the catalogue. Cheap to build (the tool list is precomputed), so the stateless
 * Streamable HTTP mount builds one per request. `callContext` supplies per-call transport facts; `toolsets`
 * chooses what `tools/list` shows (mcp/toolsets.ts; default: the default toolsets), never what may be called.
 * @throws AppError BAD_REQUEST for an unknown toolset name.
 */
export function createMcpServer(catalog: McpCatalog, info: McpServerInfo, callContext: (meta?: Record<string, unknown>) => CallContext, opts: { toolsets?: string } = {}): Server {
  const tools = catalog.listFor(opts.toolsets);
  const server = new Server(info, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  // The SDK checks this schema before the handler and turns a failure into -32603 (internal error); this
  // loose one lets the SDK's own tools/call check answer -32602 for a malformed request, and our handler
  // answer an isError result for arguments that do not fit the tool.
  server.setRequestHandler(LooseCallToolRequest, (req) => {
    const { name, arguments: args, _meta } = req.params as { name: string; arguments?: unknown; _meta?: Record<string, unknown> };
    return catalog.call(name, args ?? {}, callContext(_meta));
  });
  return server;
}
