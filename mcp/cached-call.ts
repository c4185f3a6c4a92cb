import type { Request, RequestHandler, Response } from "express";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  specTypeSchemas,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import type { Metrics } from "../src/core/metrics.js";
import type { CorsHeaderCache } from "../http/cache-hits.js";
import type { McpCatalog, McpServerInfoLike } from "./catalog.js";
import { PAYMENT_META, SESSION_META, SIWX_META } from "./catalog.js";

type Json = Record<string, unknown>;

/** The stateless Streamable HTTP endpoint, exactly as the early path recognises it. */
const MCP_PATH = "/mcp";

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAM_KEYS = new Set(["name", "arguments", "_meta"]);
/** `_meta` keys a cached call may carry: payment and credits (a hit is free, so they are not read). */
const META_KEYS = new Set([PAYMENT_META, SIWX_META, SESSION_META]);
/** The stateless protocol revision: the `_meta` envelope on every request, no `initialize`. */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";
/** `_meta` keys a cached `2026-07-28` call may carry: ours and the envelope's (the SDK checks the envelope: so does {@link validEnvelope}). */
const MODERN_META_KEYS = new Set([...META_KEYS, PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);

/** The protocol era of a request, as the SDK's classifier would route it: `initialize` first, or the `_meta` envelope. */
type Era = "legacy" | "modern";

/** Envelope parts already checked, by JSON (clients send the same few); bounded so that invented ones cannot grow it. */
const checkedEnvelopes = new Map<string, boolean>();

/**
 * Whether a `2026-07-28` envelope's capabilities and client identity pass the SDK's schemas (the spec types the
 * SDK's 2026 envelope schema builds on: valid here is valid there), remembered per JSON.
 */
function validEnvelope(meta: Json): boolean {
  const caps = meta[CLIENT_CAPABILITIES_META_KEY];
  const client = meta[CLIENT_INFO_META_KEY];
  if (!isObject(caps) || (client !== undefined && !isObject(client))) return false;
  const key = JSON.stringify([caps, client ?? null]);
  let ok = checkedEnvelopes.get(key);
  if (ok === undefined) {
    ok = !specTypeSchemas.ClientCapabilities["~standard"].validate(caps).issues && (client === undefined || !specTypeSchemas.Implementation["~standard"].validate(client).issues);
    if (checkedEnvelopes.size < 256) checkedEnvelopes.set(key, ok);
  }
  return ok;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Json, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

/**
 * The id, tool and arguments of a body that is a single `tools/call` request the SDK accepts as it is in `era`:
 * the JSON-RPC request shape with nothing else, a string or safe-integer id, and params of name, optional
 * object arguments and a `_meta` with our payment keys only (`legacy`: optional) or with the `2026-07-28`
 * envelope beside them (`modern`: required, its version the header's). Undefined for anything else
 * (batches, notifications, other methods, task or progress requests), which the SDK then handles.
 */
function plainToolCall(body: unknown, era: Era): { id: string | number; name: string; args: Json } | undefined {
  if (!isObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call" || !onlyKeys(body, REQUEST_KEYS)) return undefined;
  const { id, params } = body;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  if (!isObject(params) || typeof params.name !== "string" || !onlyKeys(params, PARAM_KEYS)) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  const meta = params._meta;
  if (era === "legacy" ? meta !== undefined && !(isObject(meta) && onlyKeys(meta, META_KEYS)) : !modernMeta(meta)) return undefined;
  return { id: id as string | number, name: params.name, args: params.arguments ?? {} };
}

/** Whether `meta` is a `2026-07-28` call's `_meta` the SDK takes as it is: the envelope (this version) and our keys only. */
function modernMeta(meta: unknown): boolean {
  return isObject(meta) && onlyKeys(meta, MODERN_META_KEYS) && meta[PROTOCOL_VERSION_META_KEY] === MODERN_PROTOCOL_VERSION && validEnvelope(meta);
}

/** How many `Content-Type` header lines a request has (Node keeps only the first in `req.headers`). */
function contentTypeCount(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 12 && raw[i]!.toLowerCase() === "content-type") n++;
  return n;
}

/**
 * The era whose SDK leg would take this POST's headers as they are, or undefined: `Accept` lists both JSON and
 * SSE, one JSON `Content-Type` (the transport reads repeated ones joined, and refuses them), and either no
 * `Mcp-Protocol-Version` or a supported `2025` one (`legacy`), or `2026-07-28` with `Mcp-Method: tools/call`
 * (`modern`; the body must then agree, see {@link plainToolCall}, and `Mcp-Name` name its tool). Checked with
 * the SDK's own helpers; `jsonType` is whether the `Content-Type` is JSON, when the caller knows it already.
 */
function transportEra(req: Request, jsonType = isJsonContentType(req.headers["content-type"])): Era | undefined {
  const accept = req.headers.accept;
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (!jsonType || contentTypeCount(req.rawHeaders) !== 1) return undefined;
  const version = req.headers["mcp-protocol-version"];
  if (version === undefined || (typeof version === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return "legacy";
  return version === MODERN_PROTOCOL_VERSION && req.headers["mcp-method"] === "tools/call" ? "modern" : undefined;
}

/** What the app's `/mcp` pieces need. */
export interface McpCachedCallsDeps {
  catalog: McpCatalog;
  metrics: Metrics;
  /**
   * The free-route limiter's static `RateLimit-Policy` header: the budget every other `POST /mcp` consumes,
   * which a cached call carries (as a REST hit carries the miss policy) without consuming it.
   */
  rateLimitPolicy: string;
  /** The server's identity, which `2026-07-28` results carry in `_meta` (as the SDK server announces it). */
  info: McpServerInfoLike;
  /** The app's CORS headers per `Origin`: the early path runs before the CORS middleware. */
  cors: CorsHeaderCache;
  /**
   * The app's JSON body parser (express.json): the early path reads bodies with it, and the parser, mounted
   * again later in the app, skips a body already read.
   */
  json: RequestHandler;
}

/**
 * Cached `tools/call` requests over stateless Streamable HTTP, answered like the REST cache hits: free, so
 * before the free-route budget, and without the per-request SDK server and transport, with the bytes the
 * SDK's stateless JSON-response path would send (the result as {@link McpCatalog.cachedResult} serializes
 * it, in the SDK's `{result, jsonrpc, id}` response, `content-type: application/json`; test/mcp checks the
 * two match). Everything else (another method, a call not cached here, headers or a body the SDK would look
 * at more closely) goes on to the budget and the SDK, exactly as before.
 *
 * Three pieces, mounted by http/app.ts:
 * - {@link early}, first in the app beside the REST hits: a `POST /mcp` with the headers the SDK accepts has
 *   its body read by the app's own JSON parser (express.json) here, and a cached call is answered with the
 *   CORS headers the CORS middleware would set, counted in the HTTP metrics as the `/mcp` route counts it.
 *   Otherwise the parsed body (or the parser's error) is handed on (so the HTTP duration of such a request,
 *   measured by the app's metrics middleware, starts after its body).
 * - {@link bodyParser}, in place of the app's JSON body parser: raises a parser error the early path kept, so
 *   that it is answered where the parser's errors are (4xx, after CORS and metrics).
 * - {@link beforeBudget}, in the `/mcp` route before the free limiter: answers cached calls among the
 *   requests the early path did not take (a CORS policy that is not the same for every request), so that no
 *   cached call consumes budget.
 */
export class McpCachedCalls {
  /** Requests whose body the early path has read and found no cached call in (the route need not look again). */
  readonly #checked = new WeakSet<Request>();
  /** Parse and read errors of bodies the early path read, raised by {@link bodyParser}. */
  readonly #bodyErrors = new WeakMap<Request, unknown>();
  readonly #requestLabels = { route: MCP_PATH, method: "POST", status: 200 } as const;
  readonly #durationLabels = { route: MCP_PATH, method: "POST" } as const;

  constructor(private readonly deps: McpCachedCallsDeps) {}

  /**
   * Sends the cached answer of `body` when it is a plain `tools/call` this process holds the result of,
   * after the `first` headers. The head of the answer is built once per cache entry (catalog), so a hit
   * copies it and appends the id.
   * @returns true when the answer was sent; false when nothing was written.
   */
  #send(req: Request, res: Response, era: Era, first: ReadonlyArray<string | string[]>): boolean {
    const call = plainToolCall(req.body, era);
    if (!call || (era === "modern" && req.headers["mcp-name"] !== call.name)) return false;
    const cached = this.deps.catalog.cachedResult(call.name, call.args);
    if (!cached) return false;
    const head = (era === "legacy" ? cached.legacy : cached.modern(this.deps.info)).responseHead;
    const tail = `${JSON.stringify(call.id)}}`;
    const bytes = Buffer.allocUnsafe(head.length + Buffer.byteLength(tail));
    head.copy(bytes);
    bytes.write(tail, head.length);
    res.writeHead(200, [...first, "RateLimit-Policy", this.deps.rateLimitPolicy, "content-type", "application/json", "content-length", String(bytes.length)]);
    res.end(bytes);
    return true;
  }

  /** Express middleware mounted first in the app (see the class); calls `next()` for whatever it does not answer. */
  readonly early: RequestHandler = (req, res, next) => {
    const era = req.method === "POST" && req.url === MCP_PATH ? transportEra(req) : undefined;
    if (!era) return next();
    const cors = this.deps.cors.get(req.headers.origin);
    if (!cors) return next();
    const started = performance.now();
    this.deps.json(req, res, (parseError?: unknown) => {
      if (parseError) {
        // Answered where the parser's errors are (after CORS and metrics), by {@link bodyParser}.
        this.#bodyErrors.set(req, parseError);
        return next();
      }
      let sent: boolean;
      try {
        sent = this.#send(req, res, era, cors);
      } catch (err) {
        return next(err);
      }
      if (sent) {
        const { metrics } = this.deps;
        metrics.httpRequests.inc(this.#requestLabels);
        metrics.httpDuration.observe(this.#durationLabels, (performance.now() - started) / 1000);
        return;
      }
      this.#checked.add(req);
      next();
    });
  };

  /**
   * The app's JSON body parser in its place in the app: raises the error of a body the early path read,
   * else parses (a body already read is skipped by the parser itself).
   */
  readonly bodyParser: RequestHandler = (req, res, next) => {
    const err = this.#bodyErrors.get(req);
    if (err !== undefined) return next(err);
    this.deps.json(req, res, next);
  };

  /** Route middleware before the free limiter of `/mcp` (see the class); calls `next()` for whatever it does not answer. */
  readonly beforeBudget: RequestHandler = (req, res, next) => {
    const era = req.method === "POST" && !this.#checked.has(req) ? transportEra(req) : undefined;
    if (!era || !this.#send(req, res, era, [])) next();
  };
}
