import type { Request, RequestHandler, Response } from "express";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { sendError } from "../http/errors.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";
import type { McpCatalog } from "./catalog.js";
import { createMcpServer, type McpServerInfo } from "./server.js";

/**
 * Stateless Streamable HTTP MCP endpoint (POST): a fresh lightweight server and transport per request,
 * JSON responses, no sessions, so any replica can answer. GET and DELETE answer 405. A `tools/call` whose
 * answer this process holds in its response cache never gets here: http/app.ts mounts cached-call.ts
 * (`McpCachedCalls`) in front of this handler and of the free-route budget, and it answers such calls with
 * the same bytes. `origins` gives the origin SIWX proofs in `_meta` are bound to (configuration only) and the
 * public URL 402s name. `?toolsets=` (comma-separated, mcp/toolsets.ts) chooses what `tools/list` shows.
 */
export function mcpHttpHandler(catalog: McpCatalog, info: McpServerInfo, origins: Pick<PublicOrigins, "origin" | "baseUrl">): RequestHandler {
  return async (req: Request, res: Response) => {
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return sendError(res, new AppError("METHOD_NOT_ALLOWED", "this MCP endpoint is stateless: use POST"));
    }
    // SIWX proofs over MCP are bound to the service's configured origin (the one the request's Host names
    // among PUBLIC_URL and PUBLIC_ORIGINS, else PUBLIC_URL's), never to whatever Host the request sends.
    const origin = origins.origin(req);
    const baseUrl = origins.baseUrl(req);
    // `?toolsets=perp,dex` chooses what tools/list shows (mcp/toolsets.ts); an unknown name is the caller's error.
    const toolsets = typeof req.query.toolsets === "string" ? req.query.toolsets : Array.isArray(req.query.toolsets) ? req.query.toolsets.join(",") : undefined;
    let server: ReturnType<typeof createMcpServer>;
    try {
      server = createMcpServer(catalog, info, (meta) => ({ rateLimitKey: req.ip ?? "unknown", meta, origin, baseUrl }), { toolsets });
    } catch (err) {
      return sendError(res, err instanceof AppError ? err : new AppError("BAD_REQUEST", "bad toolsets"));
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      logger.error({ err }, "mcp request failed");
      if (!res.headersSent) res.status(500).json({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null });
    }
  };
}
