import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Request, RequestHandler, Response } from "express";
import { createMcpHandler, isLegacyRequest, type Server } from "@modelcontextprotocol/server";
import { NodeStreamableHTTPServerTransport, toWebRequest } from "@modelcontextprotocol/node";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { sendError } from "../http/errors.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";
import type { McpCatalog } from "./catalog.js";
import { createMcpServer, type McpServerInfo } from "./server.js";
import { bearerToken } from "../src/payments/credits/bearer.js";

/** `?toolsets=` as one string (repeated parameters joined by commas), or undefined. */
function toolsetsParam(req: Request): string | undefined {
  const q = req.query.toolsets;
  return typeof q === "string" ? q : Array.isArray(q) ? q.join(",") : undefined;
}

/**
 * Writes a web `Response` (the SDK's modern leg) on the express response: status and headers, then a JSON body
 * whole with its `Content-Length` (as the 2025 leg and the cache-hit path send it), or an event stream as it comes.
 */
async function sendWebResponse(res: Response, answer: globalThis.Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) return void res.end();
  if (!answer.headers.get("content-type")?.startsWith("text/event-stream")) {
    const bytes = Buffer.from(await answer.arrayBuffer());
    res.setHeader("content-length", String(bytes.length));
    return void res.end(bytes);
  }
  await new Promise<void>((resolve, reject) => {
    Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>)
      .on("error", reject)
      .pipe(res)
      .on("finish", resolve)
      .on("close", resolve);
  });
}

/**
 * The stateless Streamable HTTP MCP endpoint (POST `/mcp`), on the MCP TypeScript SDK v2, serving both protocol
 * eras, chosen per request by the SDK's own classifier (`isLegacyRequest`):
 * - `2025-11-25` (and older) clients, which `initialize` first: a fresh SDK server and a stateless Streamable HTTP
 *   transport per request with JSON answers, no session (`Mcp-Session-Id` is never issued), as before;
 * - `2026-07-28` clients (`server/discover`, the per-request `_meta` envelope, `MCP-Protocol-Version`, `Mcp-Method`
 *   and `Mcp-Name` headers): the SDK's `createMcpHandler` with a fresh server per request.
 * Both eras build their server from {@link createMcpServer} with the same call context, so payment `_meta`,
 * toolsets, output schemas, paging, rate limits and 402 results are the same. GET and DELETE answer 405.
 *
 * A `tools/call` whose answer this process holds in its response cache never gets here: http/app.ts mounts
 * cached-call.ts (`McpCachedCalls`) in front of this handler and of the free-route budget, and it answers such
 * calls with the bytes either era would get. `origins` gives the origin SIWX proofs in `_meta` and bearer tokens
 * are bound to (configuration only) and the public URL 402s name. `?toolsets=` (comma-separated,
 * mcp/toolsets.ts) chooses what `tools/list` shows. `Authorization: Bearer <credits session token>` pays paid
 * tools from credits (mcp/bearer.ts).
 */
export function mcpHttpHandler(catalog: McpCatalog, info: McpServerInfo, origins: Pick<PublicOrigins, "origin" | "baseUrl">): RequestHandler {
  // The server of each modern request, by its web Request (the SDK hands the factory the Request it was given).
  const servers = new WeakMap<globalThis.Request, () => Server>();
  const modern = createMcpHandler(
    (ctx) => {
      const make = ctx.requestInfo && servers.get(ctx.requestInfo);
      if (!make) throw new Error("mcp: no server for this request");
      return make();
    },
    { legacy: "reject", onerror: (err) => logger.debug({ err: err.message }, "mcp request refused") },
  );

  return async (req: Request, res: Response) => {
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return sendError(res, new AppError("METHOD_NOT_ALLOWED", "this MCP endpoint is stateless: use POST"));
    }
    // SIWX proofs and bearer tokens over MCP are bound to the service's configured origin (the one the request's
    // Host names among PUBLIC_URL and PUBLIC_ORIGINS, else PUBLIC_URL's), never to whatever Host the request sends.
    const origin = origins.origin(req);
    const baseUrl = origins.baseUrl(req);
    const toolsets = toolsetsParam(req);
    try {
      catalog.listFor(toolsets);
    } catch (err) {
      return sendError(res, err instanceof AppError ? err : new AppError("BAD_REQUEST", "bad toolsets"));
    }
    const bearer = bearerToken(req.headers.authorization);
    const rateLimitKey = req.ip ?? "unknown";
    const make = () => createMcpServer(catalog, info, (meta) => ({ rateLimitKey, meta, origin, baseUrl, bearer }), { toolsets });
    try {
      // A body the JSON parser did not read (another Content-Type) is the 2025 transport's to refuse (415).
      const web = req.body === undefined ? undefined : await toWebRequest(req, req.body);
      if (!web || (await isLegacyRequest(web, req.body))) return await serveLegacy(make(), req, res);
      servers.set(web, make);
      await sendWebResponse(res, await modern.fetch(web, { parsedBody: req.body }));
    } catch (err) {
      logger.error({ err }, "mcp request failed");
      if (!res.headersSent) res.status(500).json({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null });
    }
  };
}

/** One 2025-era request: a fresh server on a stateless Streamable HTTP transport answering JSON, closed with the response. */
async function serveLegacy(server: Server, req: Request, res: Response): Promise<void> {
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
