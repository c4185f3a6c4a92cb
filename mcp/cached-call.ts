import type { Request, Response } from "express";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { McpCatalog } from "./catalog.js";
import { PAYMENT_META, SESSION_META, SIWX_META } from "./catalog.js";

type Json = Record<string, unknown>;

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAM_KEYS = new Set(["name", "arguments", "_meta"]);
/** `_meta` keys a cached call may carry: payment and credits (a hit is free, so they are not read). */
const META_KEYS = new Set([PAYMENT_META, SIWX_META, SESSION_META]);

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Json, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

/**
 * The id, tool and arguments of a body that is a single `tools/call` request the SDK accepts as it is: the
 * JSON-RPC request shape with nothing else, a string or safe-integer id, and params of name, optional
 * object arguments and an optional `_meta` with our payment keys only. Undefined for anything else
 * (batches, notifications, other methods, task or progress requests), which the SDK then handles.
 */
function plainToolCall(body: unknown): { id: string | number; name: string; args: Json } | undefined {
  if (!isObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call" || !onlyKeys(body, REQUEST_KEYS)) return undefined;
  const { id, params } = body;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  if (!isObject(params) || typeof params.name !== "string" || !onlyKeys(params, PARAM_KEYS)) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  if (params._meta !== undefined && !(isObject(params._meta) && onlyKeys(params._meta, META_KEYS))) return undefined;
  return { id: id as string | number, name: params.name, args: params.arguments ?? {} };
}

/** How many `Content-Type` header lines a request has (Node keeps only the first in `req.headers`). */
function contentTypeCount(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 12 && raw[i]!.toLowerCase() === "content-type") n++;
  return n;
}

/**
 * Whether the SDK's Streamable HTTP transport (stateless, JSON responses) would take this POST's headers:
 * `Accept` lists both JSON and SSE, one JSON `Content-Type` (the transport reads repeated ones joined, and
 * refuses them), and no `Mcp-Protocol-Version` or a supported one. Checked with the SDK's own helpers.
 */
function transportAccepts(req: Request): boolean {
  const accept = req.headers.accept;
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return false;
  if (!isJsonContentType(req.headers["content-type"]) || contentTypeCount(req.rawHeaders) !== 1) return false;
  const version = req.headers["mcp-protocol-version"];
  return version === undefined || (typeof version === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(version));
}

/**
 * Answers a Streamable HTTP `tools/call` whose result this process holds in its response cache, without
 * building the per-request SDK server and transport: the SDK's stateless JSON-response path would send
 * the same bytes (the result as {@link McpCatalog.cachedResult} serializes it, in the SDK's
 * `{result, jsonrpc, id}` response, `content-type: application/json`; test/mcp checks the two match).
 * Everything else (another method, a call not cached here, headers or a body the SDK would look at more
 * closely) is left to the SDK.
 * @returns true when the answer was sent; false when nothing was written and the SDK must handle the request.
 */
export function answerCachedCall(catalog: McpCatalog, req: Request, res: Response): boolean {
  const call = plainToolCall(req.body);
  if (!call || !transportAccepts(req)) return false;
  const result = catalog.cachedResult(call.name, call.args);
  if (result === undefined) return false;
  const body = `{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
  res.writeHead(200, ["content-type", "application/json", "content-length", String(Buffer.byteLength(body))]);
  res.end(body);
  return true;
}
