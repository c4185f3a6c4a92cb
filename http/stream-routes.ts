import { Router, type Request } from "express";
import type { ToolContext } from "../src/core/context.js";
import type { LiveStreams } from "../src/live/service.js";
import { StreamSession } from "../src/live/session.js";
import { SseTransport } from "../src/live/sse.js";
import { SESSION_HEADER } from "../src/payments/credits/session.js";
import type { StreamDef } from "../src/registry/stream.js";
import type { UnpaidCaller } from "../src/registry/tool.js";
import { sendError } from "./errors.js";
import type { HttpPaymentGate } from "./payment-gate.js";
import type { FreeRateLimiter } from "../src/lib/rate-limit.js";
import { limitByClient } from "./rate-limit.js";
import { streamCaller, streamRefused } from "./stream-auth.js";

/** What the SSE routes need. */
export interface StreamRouteDeps {
  streams: readonly StreamDef[];
  live: LiveStreams;
  ctx: ToolContext;
  /** Validates a stream's symbol before payment; a new CVD symbol spends one of `caller`'s warm-ups (see tools/live/index.ts). */
  symbolOf(def: StreamDef, raw: string | undefined, ctx: ToolContext, caller: UnpaidCaller): Promise<string | undefined>;
  gate?: HttpPaymentGate;
  /** Opening a stream verifies a signature: budgeted per client like the other free routes that do work. */
  limiter: FreeRateLimiter;
}

/** `Last-Event-ID` (header, or `?lastEventId=` for clients that cannot set it), bounded. */
export function lastEventId(req: Request): string | undefined {
  const v = req.header("last-event-id") ?? (typeof req.query.lastEventId === "string" ? req.query.lastEventId : undefined);
  return v && v.length <= 100 ? v : undefined;
}

/**
 * The registry's streams as Server-Sent Events (`GET /stream/...`): the symbol is validated, the caller
 * signs in (SIWX or a session token) and the first minute is debited before the response starts; then
 * the session streams until the client leaves, the credits run out or it falls behind. HEAD opens nothing:
 * the unpaid 402 when payments are on (see `streamCaller`), else the stream's headers.
 */
export function streamRoutes(deps: StreamRouteDeps): Router {
  const router = Router();
  const limited = limitByClient(deps.limiter);
  for (const def of deps.streams) {
    router.get(def.path, limited, async (req, res) => {
      try {
        const raw = def.symbol === "required" ? (req.params as Record<string, string>).symbol : typeof req.query.symbol === "string" ? req.query.symbol : undefined;
        const symbol = await deps.symbolOf(def, raw, deps.ctx, { client: req.ip ?? "unknown" });
        const caller = await streamCaller(deps.gate, req, def);
        if ("required" in caller) return res.status(402).set(caller.required.headers).json(caller.required.body);
        const { settings } = deps.live;
        let transport: SseTransport | undefined;
        let gone = false;
        req.on("close", () => (gone = true));
        const lazy = {
          send: (e: Parameters<SseTransport["send"]>[0]) => (transport ??= open()).send(e),
          end: (e?: Parameters<SseTransport["end"]>[0]) => (transport ??= open()).end(e),
        };
        const open = () => new SseTransport(res, settings.bufferMaxBytes, settings.heartbeatMs, caller.session ? { [SESSION_HEADER]: caller.session } : {});
        // HEAD (express routes it here) gets the stream's headers only: no session is opened, nothing debited.
        if (req.method === "HEAD") return open().end();
        const session = await StreamSession.open(
          {
            hub: deps.live.hub,
            limits: deps.live.limits,
            def,
            symbol,
            lastEventId: lastEventId(req),
            wallet: caller.wallet,
            gate: deps.gate?.credits,
            minuteMs: settings.minuteMs,
            renewSession: caller.renew,
            receipt: deps.gate?.streamReceipt(deps.gate.resource(req, def).url),
          },
          lazy,
        );
        if ("refused" in session) {
          const r = await streamRefused(deps.gate!, req, def, session.refused);
          return res.status(402).set(r.headers).json(r.body);
        }
        transport ??= open();
        if (gone) return session.stop();
        res.on("close", () => session.stop());
      } catch (err) {
        if (!res.headersSent) sendError(res, err);
        else res.end();
      }
    });
  }
  return router;
}
