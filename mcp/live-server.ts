import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { isInitializeRequest, Server, type Resource, type ResourceTemplateType as ResourceTemplate } from "@modelcontextprotocol/server";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import type { ToolContext } from "../src/core/context.js";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import type { LiveStreams } from "../src/live/service.js";
import { StreamSession } from "../src/live/session.js";
import type { StreamDef } from "../src/registry/stream.js";
import type { UnpaidCaller } from "../src/registry/tool.js";
import type { HttpPaymentGate } from "../http/payment-gate.js";
import { bearerToken } from "../src/payments/credits/bearer.js";
import { signInToStream } from "../src/payments/credits/stream-sign-in.js";
import { CREDITS_META, SESSION_META, SIWX_META } from "./catalog.js";
import { LiveResource, liveUri, parseLiveUri, LIVE_RING_SIZE, type ResourceHost, type ResourceTopic } from "./live-resources.js";
import type { McpServerInfo } from "./server.js";

/** The mount path of the stateful MCP endpoint. */
export const LIVE_MCP_PATH = "/mcp/live";
/** A session with no request, no open notification stream for this long is closed (its subscriptions end), ms. */
export const LIVE_MCP_IDLE_MS = 5 * 60_000;
/** Resources (subscribed, or ended and still readable) one session may hold. */
export const LIVE_MCP_RESOURCES_PER_SESSION = 16;

/** How to top up, in a refused subscribe (as in the streams' `payment_required` event). */
const TOP_UP = { method: "POST" as const, path: "/api/v1/credits", body: { amount_usd: "5" } };

/** JSON-RPC code of an unknown resource (MCP specification, resources); the SDK v2 sends it as -32602 (Invalid params). */
const RESOURCE_NOT_FOUND = -32002;

const INSTRUCTIONS =
  "Live market data as subscribable MCP resources: marketgate://liquidations (all symbols), marketgate://liquidations/{symbol} and marketgate://cvd/{symbol}. " +
  "resources/subscribe opens a live stream paid per minute from prepaid credits (POST /api/v1/credits tops up): put a Sign-In-With-X proof for this server's origin in params._meta['x402/sign-in-with-x'], or a credits session token in params._meta['marketgate/credits-session']. " +
  `notifications/resources/updated says that new events arrived; resources/read returns the last ${LIVE_RING_SIZE} events of the resource as JSON (seq grows by one per event). resources/unsubscribe stops the stream and its billing.`;

/** What the stateful MCP endpoint needs: the live streams (as the SSE routes), the payment gate and the server identity. */
export interface LiveMcpDeps {
  streams: readonly StreamDef[];
  live: LiveStreams;
  ctx: ToolContext;
  /** Validates a stream's symbol before payment; a new CVD symbol spends one of `caller`'s warm-ups (tools/live/index.ts). */
  symbolOf(def: StreamDef, raw: string | undefined, ctx: ToolContext, caller: UnpaidCaller): Promise<string | undefined>;
  /** Undefined when payments are off: subscriptions are then free and anonymous. */
  gate?: HttpPaymentGate;
  info: McpServerInfo;
  /** Sessions per process; default `LIVE_STREAMS_MAX`. */
  maxSessions?: number;
  /** Idle timeout, ms; default {@link LIVE_MCP_IDLE_MS}. */
  idleMs?: number;
}

/** A JSON-RPC error as the SDK sends it: `code`, `message` as given (McpError would prefix the message), `data`. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * JSON-RPC codes: -32602 bad params, -32002 unknown resource or symbol (on the wire -32602: the SDK v2 maps it),
 * -32603 internal, else the HTTP status (402, 429, 503).
 */
function toRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const e = toAppError(err);
  if (e.code === "INTERNAL") logger.error({ err: e.cause ?? e }, "live mcp request failed");
  const code = e.code === "BAD_REQUEST" ? -32602 : e.code === "NOT_FOUND" || e.code === "UNKNOWN_SYMBOL" ? RESOURCE_NOT_FOUND : e.code === "INTERNAL" ? -32603 : e.status;
  return new RpcError(code, e.message, e.toMcpBody());
}

async function rpc<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toRpcError(err);
  }
}

/** A JSON-RPC error on a plain HTTP answer (before the SDK transport is involved). */
function httpRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/**
 * One MCP session: its SDK server and transport, its resources, its open notification streams (GET) and
 * when it was last used.
 */
class LiveMcpSession implements ResourceHost {
  id?: string;
  readonly server: Server;
  readonly transport: NodeStreamableHTTPServerTransport;
  readonly resources = new Map<string, LiveResource>();
  /** Open GET (notification) streams: one at a time by the SDK's rule, 409 otherwise. */
  readonly streams = new Set<Response>();
  /** The server connected to the transport (before the first request is handled). */
  readonly ready: Promise<void>;
  lastSeen = Date.now();
  /** POST and DELETE requests in progress. */
  busy = 0;
  closed = false;
  private stalledSince?: number;

  constructor(
    private readonly endpoint: LiveMcpEndpoint,
    private readonly deps: LiveMcpDeps,
  ) {
    this.transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      keepAliveMs: deps.live.settings.heartbeatMs,
      onsessioninitialized: (id) => {
        this.id = id;
        endpoint.register(this);
      },
    });
    this.server = this.build();
    this.server.onclose = () => this.close("closed");
    this.ready = this.server.connect(this.transport);
  }

  notify(uri: string): boolean {
    if (this.closed || this.stalledMs() > 0) return false;
    this.server.sendResourceUpdated({ uri }).catch((err: unknown) => logger.debug({ err }, "resource update not sent"));
    return true;
  }

  stalledMs(): number {
    let stalled = false;
    for (const r of this.streams) stalled ||= r.writableNeedDrain;
    if (!stalled) {
      this.stalledSince = undefined;
      return 0;
    }
    const now = Date.now();
    this.stalledSince ??= now;
    return Math.max(1, now - this.stalledSince);
  }

  /** Ends every subscription (nothing more is debited) and the transport. Idempotent. */
  close(why: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const r of this.resources.values()) r.stop(why);
    this.resources.clear();
    this.endpoint.forget(this);
    void this.server.close().catch(() => undefined);
  }

  private def(topic: ResourceTopic): StreamDef {
    const def = this.deps.streams.find((d) => d.topic === topic);
    if (!def) throw new AppError("NOT_FOUND", `the ${topic} stream is not offered here`);
    return def;
  }

  private build(): Server {
    const server = new Server(
      { name: this.deps.info.name, version: this.deps.info.version },
      { capabilities: { resources: { subscribe: true, listChanged: false } }, instructions: INSTRUCTIONS },
    );
    const about = (def: StreamDef) =>
      `${def.summary}. ${def.pricePerMinuteUsd} USD per minute from prepaid credits while subscribed (resources/subscribe with a SIWX proof in params._meta["${SIWX_META}"]); resources/read returns the last ${LIVE_RING_SIZE} events as JSON.`;
    const meta = (def: StreamDef) => ({ "marketgate/price-per-minute-usd": def.pricePerMinuteUsd, "marketgate/sse": def.path });
    server.setRequestHandler("resources/list", () =>
      rpc(() => {
        const liq = this.def("liquidations");
        const resources: Resource[] = [
          { uri: liveUri("liquidations"), name: "liquidations", title: `${liq.title} (all symbols)`, description: about(liq), mimeType: "application/json", _meta: meta(liq) },
        ];
        return { resources };
      }),
    );
    server.setRequestHandler("resources/templates/list", () =>
      rpc(() => {
        const resourceTemplates: ResourceTemplate[] = (["liquidations", "cvd"] as const).map((topic) => {
          const def = this.def(topic);
          return {
            uriTemplate: `${liveUri(topic)}/{symbol}`,
            name: `${topic}-by-symbol`,
            title: def.title,
            description: about(def),
            mimeType: "application/json",
            _meta: meta(def),
          };
        });
        return { resourceTemplates };
      }),
    );
    server.setRequestHandler("resources/read", (r) =>
      rpc(() => {
        const u = parseLiveUri(r.params.uri);
        const def = this.def(u.topic);
        const held = this.resources.get(u.uri);
        const body = held
          ? held.read()
          : { uri: u.uri, topic: u.topic, symbol: u.base ?? null, status: "not_subscribed", price_per_minute_usd: def.pricePerMinuteUsd, billing: null, ended: null, events: [] };
        return { contents: [{ uri: r.params.uri, mimeType: "application/json", text: JSON.stringify(body) }] };
      }),
    );
    server.setRequestHandler("resources/subscribe", (r) => rpc(() => this.subscribe(r.params.uri, r.params._meta)));
    server.setRequestHandler("resources/unsubscribe", (r) =>
      rpc(() => {
        const u = parseLiveUri(r.params.uri);
        this.resources.get(u.uri)?.stop("unsubscribed");
        return {};
      }),
    );
    return server;
  }

  /**
   * `resources/subscribe`: validates the symbol, signs the caller in, then opens a stream session (the first
   * minute debited) whose events go to the resource. Subscribing again to a subscribed resource changes
   * nothing (and debits nothing).
   */
  private async subscribe(uri: string, meta: Record<string, unknown> | undefined): Promise<{ _meta?: Record<string, unknown> }> {
    const u = parseLiveUri(uri);
    const def = this.def(u.topic);
    const current = this.resources.get(u.uri);
    if (current?.live) return this.joined(current, uri);
    const req = this.endpoint.currentRequest();
    await this.deps.symbolOf(def, u.raw, this.deps.ctx, { client: req?.ip ?? "unknown" });
    const caller = await this.caller(meta, req, def);
    if (this.closed) throw new AppError("NOT_FOUND", "the session closed");
    let r = this.resources.get(u.uri);
    if (r?.live) return this.joined(r, uri);
    if (!r) {
      r = new LiveResource(def, u.base, u.uri, this);
      this.makeRoom();
      this.resources.set(u.uri, r);
    }
    r.aliases.add(uri);
    const { hub, limits, settings } = this.deps.live;
    const res = r;
    let refused: string | undefined;
    try {
      refused = await r.subscribe(caller.wallet, (t) =>
        StreamSession.open(
          { hub, limits, def, symbol: u.base, wallet: caller.wallet, gate: this.deps.gate?.credits, minuteMs: settings.minuteMs, receipt: this.deps.gate?.streamReceipt(u.uri) },
          t,
        ),
      );
    } finally {
      if (res.unused && this.resources.get(u.uri) === res) this.resources.delete(u.uri);
    }
    if (refused !== undefined) throw await this.paymentRequired(req, def, refused);
    if (!caller.wallet) return {};
    return { _meta: { [CREDITS_META]: { wallet: caller.wallet, remaining_usd: r.remainingUsd ?? null, ...(caller.session ? { session: caller.session } : {}) } } };
  }

  /** A subscribe to a resource already subscribed (or being subscribed) in this session. */
  private async joined(r: LiveResource, uri: string): Promise<{ _meta?: Record<string, unknown> }> {
    r.aliases.add(uri);
    const refused = await r.opening;
    if (refused !== undefined) throw await this.paymentRequired(this.endpoint.currentRequest(), r.def, refused);
    return {};
  }

  /** Room for one more resource: forgets the oldest ended one, or refuses. */
  private makeRoom(): void {
    if (this.resources.size < LIVE_MCP_RESOURCES_PER_SESSION) return;
    for (const [key, r] of this.resources) {
      if (!r.live) {
        this.resources.delete(key);
        return;
      }
    }
    throw new AppError("RATE_LIMITED", `a session holds at most ${LIVE_MCP_RESOURCES_PER_SESSION} subscriptions; unsubscribe from one first`);
  }

  /**
   * The paying wallet (and a session token to subscribe again without signing), or none when payments are off: the
   * shared stream sign-in (src/payments/credits/stream-sign-in.ts) with the proofs of `_meta`, or the request's
   * `Authorization: Bearer` credits session token.
   */
  private async caller(meta: Record<string, unknown> | undefined, req: Request | undefined, def: StreamDef): Promise<{ wallet?: string; session?: string }> {
    const gate = this.deps.gate;
    if (gate && !req) throw new Error("live mcp: no request in context");
    const proofs = { siwx: meta?.[SIWX_META], session: meta?.[SESSION_META] ?? bearerToken(req?.headers.authorization) };
    const hint = `put a SIGN-IN-WITH-X proof in params._meta["${SIWX_META}"] of resources/subscribe, or a credits session token in params._meta["${SESSION_META}"] or Authorization: Bearer`;
    const id = await signInToStream(gate?.credits, gate !== undefined, proofs, gate && req ? gate.origin(req) : "", { pricePerMinuteUsd: def.pricePerMinuteUsd, hint });
    if ("refusal" in id) throw await this.paymentRequired(req, def, id.refusal);
    return "renew" in id ? { wallet: id.wallet, session: id.session } : {};
  }

  /**
   * A refused subscribe: JSON-RPC error 402 whose data carries the reason, how to top up, and the x402
   * `PaymentRequired` of the smallest top-up with a fresh SIWX challenge for this origin.
   */
  private async paymentRequired(req: Request | undefined, def: StreamDef, reason: string): Promise<RpcError> {
    const paymentRequired = this.deps.gate?.credits && req ? (await this.deps.gate.signInPaymentRequired(req, { summary: def.summary }, reason)).required : undefined;
    return new RpcError(402, reason, {
      error: { code: "PAYMENT_REQUIRED", message: reason },
      reason,
      price_per_minute_usd: def.pricePerMinuteUsd,
      top_up: TOP_UP,
      sign_in: `a SIGN-IN-WITH-X proof for this origin in params._meta["${SIWX_META}"], or a credits session token in params._meta["${SESSION_META}"]`,
      ...(paymentRequired ? { payment_required: paymentRequired } : {}),
    });
  }
}

/**
 * The stateful Streamable HTTP MCP endpoint of the live resources (`/mcp/live`): sessions in memory (so a
 * load balancer must route by `Mcp-Session-Id`), at most `maxSessions` per process (when full, the least
 * recently used session without subscriptions is closed, else 503), closed after `idleMs` without a
 * request or an open notification stream, and all closed at shutdown (registered with the stream limits).
 */
export class LiveMcpEndpoint {
  private readonly sessions = new Map<string, LiveMcpSession>();
  private readonly requests = new AsyncLocalStorage<Request>();
  private sweeper?: NodeJS.Timeout;
  readonly maxSessions: number;
  readonly idleMs: number;

  constructor(private readonly deps: LiveMcpDeps) {
    this.maxSessions = deps.maxSessions ?? deps.live.settings.maxStreams;
    this.idleMs = deps.idleMs ?? LIVE_MCP_IDLE_MS;
    deps.live.limits.track(() => this.closeAll());
  }

  /** Open sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** The HTTP request being handled (subscribe needs its origin). */
  currentRequest(): Request | undefined {
    return this.requests.getStore();
  }

  register(s: LiveMcpSession): void {
    if (s.id) this.sessions.set(s.id, s);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(100, this.idleMs / 4)));
      this.sweeper.unref();
    }
  }

  forget(s: LiveMcpSession): void {
    if (s.id && this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    if (this.sessions.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Ends every session and its subscriptions (shutdown). */
  closeAll(): void {
    for (const s of [...this.sessions.values()]) s.close("shutdown");
  }

  private sweep(): void {
    const now = Date.now();
    for (const s of [...this.sessions.values()]) if (s.streams.size === 0 && s.busy === 0 && now - s.lastSeen > this.idleMs) s.close("idle");
  }

  /** Closes the least recently used session without subscriptions or a request in progress; false when none. */
  private evict(): boolean {
    let victim: LiveMcpSession | undefined;
    for (const s of this.sessions.values()) {
      if (s.busy > 0 || [...s.resources.values()].some((r) => r.live)) continue;
      if (!victim || s.lastSeen < victim.lastSeen) victim = s;
    }
    victim?.close("evicted");
    return victim !== undefined;
  }

  readonly handler: RequestHandler = async (req, res) => {
    const id = req.header("mcp-session-id");
    let s: LiveMcpSession | undefined;
    if (id !== undefined) {
      s = this.sessions.get(id);
      if (!s) {
        return httpRpcError(
          res,
          404,
          -32001,
          `Session not found: it expired, was closed, or lives on another replica (a load balancer must route ${LIVE_MCP_PATH} by Mcp-Session-Id); initialize a new session`,
        );
      }
    } else if (req.method === "POST" && (Array.isArray(req.body) ? (req.body as unknown[]).some((m) => isInitializeRequest(m)) : isInitializeRequest(req.body))) {
      if (this.sessions.size >= this.maxSessions && !this.evict()) {
        res.setHeader("Retry-After", "10");
        return httpRpcError(res, 503, -32000, `this instance serves its maximum of ${this.maxSessions} live MCP sessions; retry shortly`);
      }
      s = new LiveMcpSession(this, this.deps);
    } else if (req.method === "GET" || req.method === "POST" || req.method === "DELETE") {
      return httpRpcError(
        res,
        400,
        -32000,
        "Bad Request: initialize first (POST an initialize request without Mcp-Session-Id), then send the Mcp-Session-Id it returns on every request",
      );
    } else {
      res.setHeader("Allow", "GET, POST, DELETE");
      return httpRpcError(res, 405, -32000, "Method not allowed: use POST, GET (notification stream) or DELETE (end the session)");
    }
    const session = s;
    session.lastSeen = Date.now();
    if (req.method === "GET") {
      session.streams.add(res);
      res.on("close", () => {
        session.streams.delete(res);
        session.lastSeen = Date.now();
      });
    } else {
      session.busy++;
      res.on("close", () => {
        session.busy--;
        session.lastSeen = Date.now();
      });
    }
    try {
      await session.ready;
      await this.requests.run(req, () => session.transport.handleRequest(req, res, req.body));
    } catch (err) {
      logger.error({ err }, "live mcp request failed");
      if (!res.headersSent) httpRpcError(res, 500, -32603, "Internal server error");
    }
    // An initialize that did not open a session (406, malformed): nothing to keep.
    if (!session.id) session.close("not initialized");
  };
}

/** The `/mcp/live` request handler (see {@link LiveMcpEndpoint}); `endpoint` is there for tests and metrics. */
export function liveMcpHandler(deps: LiveMcpDeps): RequestHandler & { endpoint: LiveMcpEndpoint } {
  const endpoint = new LiveMcpEndpoint(deps);
  return Object.assign(endpoint.handler, { endpoint });
}
