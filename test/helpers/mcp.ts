import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "../../mcp/server.js";
import type { McpCatalog } from "../../mcp/catalog.js";

/** The stateless MCP protocol revision (per-request `_meta` envelope, `server/discover`, no `initialize`). */
export const MODERN = "2026-07-28";

/**
 * An MCP SDK client (v1, 1.32.2: old clients keep working) connected in memory to a server over `catalog` (no
 * transport-level rate limit), listing the `toolsets` of mcp/toolsets.ts (default `all`: every tool, so that the SDK
 * client knows each output schema).
 */
export async function connectInMemory(catalog: McpCatalog, toolsets = "all"): Promise<Client> {
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(catalog, { name: "marketgate", version: "test" }, (meta) => ({ meta }), { toolsets }).connect(st);
  const client = new Client({ name: "test", version: "0" });
  await client.connect(ct);
  return client;
}

/** A tools/call result as the wire carries it. */
export interface RawResult {
  isError?: boolean;
  content: unknown[];
  structuredContent?: unknown;
  resultType?: string;
  _meta?: Record<string, unknown>;
}

/** The JSON of a result's first content block (the text every result carries), typed loosely like helpers/json.ts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function textOf(r: { content: unknown[] }): any {
  return JSON.parse((r.content[0] as { text: string }).text);
}

/** The `_meta` envelope of a `2026-07-28` request from a client without capabilities. */
export const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
} as const;

/** The HTTP headers of a `2026-07-28` request for `method` (and, for `tools/call`, the tool `name`). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name === undefined ? {} : { "mcp-name": name }),
  };
}

/**
 * One raw `2026-07-28` request with fetch, as a stateless client sends it: no `initialize`, no session, the
 * `_meta` envelope merged into `params._meta`, the routing headers. Resolves with the status, headers and JSON body.
 */
export async function modernCall(
  url: string,
  method: string,
  params: { name?: string; arguments?: unknown; _meta?: Record<string, unknown> },
  headers: Record<string, string> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON-RPC answer, checked field by field
): Promise<{ status: number; headers: Headers; body: any }> {
  const body = { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: { ...ENVELOPE, ...params._meta } } };
  const res = await fetch(url, { method: "POST", headers: { ...modernHeaders(method, params.name), ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await res.json() };
}
