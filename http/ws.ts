import { STATUS_CODES, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Express, Request } from "express";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { StreamSession } from "../src/live/session.js";
import { eventDataJson } from "../src/live/sse.js";
import type { LiveEvent } from "../src/live/types.js";
import { streamPath, type StreamDef } from "../src/registry/stream.js";
import { foreignBrowserRequest, malformedHost } from "./host.js";
import { streamCaller, streamRefused } from "./stream-auth.js";
import type { StreamRouteDeps } from "./stream-routes.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";

/** The WebSocket path. */
export const WS_PATH = "/ws";
/** Largest client message, bytes. */
const MAX_MESSAGE_BYTES = 4096;
/** Client messages allowed per connection per 10 s; beyond, the connection is closed (1008). */
const MAX_MESSAGES_PER_10S = 100;

/** A client message: subscribe to or unsubscribe from one topic (symbol per topic as on the SSE routes). */
const ClientMessage = z.object({
  op: z.enum(["subscribe", "unsubscribe"]),
  topic: z.string().max(40),
  symbol: z.string().max(40).optional(),
  last_event_id: z.string().max(100).optional(),
});

/** What the WebSocket endpoint needs: the same as the SSE routes, plus the express app for request parsing. */
export interface WsDeps extends StreamRouteDeps {
  app: Express;
  /** Which Host and Origin an upgrade may come with (http/host.ts, `foreignBrowserRequest`). */
  origins: Pick<PublicOrigins, "acceptsHost" | "acceptsOrigin" | "loopbackBind">;
}

/**
 * Writes a plain HTTP answer with a JSON body on a socket express does not handle (a refused upgrade, a
 * CONNECT request), and closes it.
 */
export function refuseUpgrade(socket: Duplex, status: number, headers: Record<string, string | string[]>, body: unknown): void {
  const text = JSON.stringify(body);
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(text)}`, "Connection: close"];
  for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
  socket.end(`${lines.join("\r\n")}\r\n\r\n${text}`);
}

/**
 * The live streams over one WebSocket at `/ws`: the caller signs in on the upgrade request (SIWX header,
 * `?siwx=`, or a session token), then sends JSON `{op: "subscribe"|"unsubscribe", topic, symbol?,
 * last_event_id?}`. Each subscription is a stream session billed per minute like an SSE stream; its events
 * arrive as `{type: "event", topic, symbol, event, id?, data}`. A connection that leaves more than the
 * byte budget unread is closed (4008); a 402 on the upgrade carries the usual challenges.
 */
export function attachWebSocket(server: Server, deps: WsDeps): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  server.on("upgrade", (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    // The express request prototype gives the upgrade request `ip` (under trust proxy), `query`, `header`.
    const req = raw as Request;
    Object.setPrototypeOf(req, deps.app.request);
    req.app = deps.app;
    req.originalUrl = raw.url ?? "/";
    if (req.path !== WS_PATH) return refuseUpgrade(socket, 404, {}, { error: { code: "NOT_FOUND", message: `no WebSocket endpoint at ${req.path}; use ${WS_PATH}` } });
    // Upgrades skip the express app and its Host checks: the same 400 here (the origin is configuration
    // anyway), and the same 403 as MCP for what a foreign page could open (browsers send Origin on every upgrade).
    const badHost = malformedHost(req) ?? foreignBrowserRequest(req, deps.origins);
    if (badHost) return refuseUpgrade(socket, badHost.status, {}, badHost.toBody());
    void (async () => {
      try {
        await deps.limiter.consume(req.ip);
        const caller = await streamCaller(deps.gate, req, deps.streams[0]!);
        if ("required" in caller) return refuseUpgrade(socket, 402, caller.required.headers, caller.required.body);
        wss.handleUpgrade(req, socket, head, (ws) => serve(ws, req, caller, deps));
      } catch (err) {
        const e = toAppError(err);
        refuseUpgrade(socket, e.status, e.retryAfterSec ? { "Retry-After": String(e.retryAfterSec) } : {}, { error: { code: e.code, message: e.message } });
      }
    })();
  });
  return wss;
}

/** One signed-in connection: its subscriptions by `<topic>:<symbol|*>`. */
function serve(ws: WebSocket, req: Request, caller: { wallet?: string; session?: string; renew?: () => string | undefined }, deps: WsDeps): void {
  const subs = new Map<string, StreamSession | "opening">();
  /** `<topic>:<symbol as the client wrote it>` → subscription key, so an unsubscribe needs no symbol lookup. */
  const aliases = new Map<string, string>();
  const aliasOf = (topic: string, raw: string | undefined) => `${topic}:${(raw ?? "*").trim().toUpperCase()}`;
  const forget = (key: string) => {
    subs.delete(key);
    for (const [a, k] of aliases) if (k === key) aliases.delete(a);
  };
  const { settings } = deps.live;
  let messages = 0;
  const window = setInterval(() => (messages = 0), 10_000);
  window.unref();
  const sendJson = (m: unknown) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(m));
  sendJson({
    type: "welcome",
    session: caller.session ?? null,
    topics: deps.streams.map((d) => ({ topic: d.topic, symbol: d.symbol, price_per_minute_usd: d.pricePerMinuteUsd, events: Object.keys(d.events) })),
  });

  const subscribe = async (def: StreamDef, rawSymbol: string | undefined, lastEventId: string | undefined) => {
    const symbol = await deps.symbolOf(def, rawSymbol, deps.ctx, { client: req.ip ?? "unknown" });
    const key = `${def.topic}:${symbol ?? "*"}`;
    if (subs.has(key)) throw new AppError("CONFLICT", `already subscribed to ${key}`);
    subs.set(key, "opening");
    aliases.set(aliasOf(def.topic, rawSymbol), key);
    const tag = { topic: def.topic, symbol: symbol ?? null };
    const transport = {
      send: (e: LiveEvent, replay?: boolean) => {
        if (!replay && ws.bufferedAmount > settings.bufferMaxBytes) return false;
        if (ws.readyState !== ws.OPEN) return false;
        // The event's data is serialised once for all subscribers; only the small envelope is per subscription.
        ws.send(
          `{"type":"event","topic":${JSON.stringify(tag.topic)},"symbol":${JSON.stringify(tag.symbol)},"event":${JSON.stringify(e.event)}${e.id ? `,"id":${JSON.stringify(e.id)}` : ""},"data":${eventDataJson(e)}}`,
        );
        return true;
      },
      end: (last?: LiveEvent) => {
        forget(key);
        if (last) sendJson({ type: "event", ...tag, event: last.event, data: last.data });
        if (last?.event === "dropped" && ws.bufferedAmount > settings.bufferMaxBytes) return ws.close(4008, "slow consumer");
        sendJson({ type: "unsubscribed", ...tag, reason: last?.event ?? "closed" });
      },
    };
    let session: Awaited<ReturnType<typeof StreamSession.open>>;
    try {
      sendJson({ type: "subscribed", ...tag, price_per_minute_usd: def.pricePerMinuteUsd });
      session = await StreamSession.open(
        {
          hub: deps.live.hub,
          limits: deps.live.limits,
          def,
          symbol,
          lastEventId,
          wallet: caller.wallet,
          gate: deps.gate?.credits,
          minuteMs: settings.minuteMs,
          renewSession: caller.renew,
          // The stream's SSE URL names what the minute paid for (one URL per topic and symbol).
          receipt: deps.gate?.streamReceipt(`${deps.gate.baseUrl(req)}${streamPath(def, symbol)}`),
        },
        transport,
      );
    } catch (err) {
      forget(key);
      sendJson({ type: "unsubscribed", ...tag, reason: "error" });
      throw err;
    }
    if ("refused" in session) {
      forget(key);
      const r = await streamRefused(deps.gate!, req, def, session.refused);
      sendJson({ type: "unsubscribed", ...tag, reason: "payment_required" });
      throw new AppError("PAYMENT_REQUIRED", session.refused, { details: r.body });
    }
    if (ws.readyState !== ws.OPEN) return session.stop();
    if (subs.get(key) === "opening") subs.set(key, session);
  };

  ws.on("message", (data, isBinary) => {
    if (++messages > MAX_MESSAGES_PER_10S) return ws.close(1008, "too many messages");
    let request: z.infer<typeof ClientMessage> | undefined;
    void (async () => {
      try {
        const parsed = ClientMessage.safeParse(isBinary ? undefined : safeJson(data.toString()));
        if (!parsed.success) throw new AppError("BAD_REQUEST", 'expected {"op":"subscribe"|"unsubscribe","topic":"liquidations"|"cvd"|"funding","symbol"?,"last_event_id"?}');
        request = parsed.data;
        const def = deps.streams.find((d) => d.topic === request!.topic);
        if (!def) throw new AppError("BAD_REQUEST", `unknown topic '${request.topic}'; topics: ${deps.streams.map((d) => d.topic).join(", ")}`);
        if (request.op === "subscribe") return await subscribe(def, request.symbol, request.last_event_id);
        const key = aliases.get(aliasOf(def.topic, request.symbol));
        const s = key ? subs.get(key) : undefined;
        if (!key || !s || s === "opening") throw new AppError("NOT_FOUND", `not subscribed to ${aliasOf(def.topic, request.symbol)}`);
        forget(key);
        s.stop();
        const symbol = key.slice(def.topic.length + 1);
        sendJson({ type: "unsubscribed", topic: def.topic, symbol: symbol === "*" ? null : symbol, reason: "unsubscribe" });
      } catch (err) {
        const e = toAppError(err);
        if (e.code === "INTERNAL") logger.error({ err }, "websocket message failed");
        sendJson({ type: "error", request: request ?? null, error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } });
      }
    })();
  });
  ws.on("close", () => {
    clearInterval(window);
    for (const s of subs.values()) if (s !== "opening") s.stop();
    subs.clear();
  });
  ws.on("error", () => ws.terminate());
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
