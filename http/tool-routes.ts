import { Router, type Request, type RequestHandler, type Response } from "express";
import type { DataMode } from "../src/config.js";
import { CallPipeline, type CallOutcome, type CallSite } from "../src/core/call-pipeline.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { isFree, type AnyTool, type CallerCredentials } from "../src/registry/tool.js";
import { CacheHitPath } from "./cache-hits.js";
import { sendError } from "./errors.js";
import { inputReader } from "./input.js";
import { HEADER_BLOCK_BUDGET, headersBytes, MAX_PAID_URL_BYTES, sentHeaderBytes } from "./header-budget.js";
import { paidHeaders, receiptCarrier, type HttpPaymentGate } from "./payment-gate.js";
import type { MissRateLimiter } from "../src/lib/rate-limit.js";

/** What the tool routes need. `gate` is undefined when payments are off (every tool is then free). */
export interface ToolRouteDeps {
  tools: readonly AnyTool[];
  runner: ToolRunner;
  limiter: MissRateLimiter;
  gate?: HttpPaymentGate;
  metrics: Metrics;
  dataMode: DataMode;
  /** The app's CORS middleware, whose headers the cache-hit fast path sends itself (it runs before it). */
  cors: RequestHandler;
}

function send(res: Response, status: number, headers: Record<string, string | string[]>, body: unknown): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(status).json(body);
}

/** The 414 of a paid request whose URL its answer's headers could not carry (see {@link MAX_PAID_URL_BYTES}); nothing was read or charged. */
function urlTooLong(bytes: number): AppError {
  return new AppError(
    "URI_TOO_LONG",
    `this paid request's URL is ${bytes} bytes, over the ${MAX_PAID_URL_BYTES} a paid request may have (origin included): its 402 and its receipt repeat it, and a paid answer's headers must fit the 4 KB a reverse proxy reads. Shorten the query (fewer items per call). Nothing was charged.`,
  );
}

/** Credentials of a request (tools with `acceptsCredentials`): bearer token, owner-wallet signature. */
function credentialsOf(req: Request): CallerCredentials {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.header("authorization") ?? "")?.[1];
  return { bearerToken: bearer, walletSignature: req.header("x-wallet-signature"), signedAt: req.header("x-signed-at") };
}

/** The tool routes and their cache-hit fast path ({@link CacheHitPath}), which the app mounts first. */
export interface ToolMount {
  routes: Router;
  cacheHits: RequestHandler;
}

/**
 * One express route per registry tool, each a reading of the request and a switch over the call pipeline's
 * outcome (src/core/call-pipeline.ts, which runs the steps and states them): hit 200 `X-Cache: HIT`;
 * interim (202 + `Retry-After`, free, uncached); 402 (`PAYMENT-REQUIRED`, v1 body, MPP challenges, SIWX
 * challenge, see payment-gate.ts); answer 200 `X-Cache: MISS` with `PAYMENT-RESPONSE` / `Payment-Receipt` /
 * `X-Credits-Remaining`; errors as `{error}` with their status (a settlement of unknown outcome: 502 and
 * `Retry-After`, the data withheld for a retry with the same payment).
 * HEAD (express runs the GET route for it) is a call marked `unpaid`: a hit answers with the hit's headers; a
 * paid miss answers the unpaid 402 and never reads the payment, runs the handler or writes the cache. Node
 * sends no body for HEAD. Each parsed GET is remembered by the fast path, which answers the URL's later
 * cache hits before routing.
 */
export function toolRoutes(deps: ToolRouteDeps): ToolMount {
  const router = Router();
  const gate = deps.gate;
  const pipeline = new CallPipeline({
    runner: deps.runner,
    metrics: deps.metrics,
    dataMode: deps.dataMode,
    transport: "http",
    payments: gate?.processor,
    credits: gate?.credits,
    mpp: gate?.mpp,
    receipts: gate?.receipts,
  });
  // X-Data-Source: live, simulated, or replay when a venue answer of the request was recorded data (request-scope.ts).
  const hits = new CacheHitPath({ runner: deps.runner, labels: pipeline.labels, metrics: deps.metrics, rateLimitPolicy: deps.limiter.policyHeader, cors: deps.cors });
  for (const tool of deps.tools) {
    const readInput = inputReader(tool);
    const site = (req: Request): CallSite => {
      const resource = gate!.resource(req, tool);
      return {
        resource,
        origin: gate!.origin(req),
        challengeUrl: resource.url,
        signInHint: "sign_in_required: send a SIGN-IN-WITH-X proof to use this endpoint",
        method: req.method,
        receiptCarrier: (paid, receipt) => receiptCarrier(paid, receipt, gate!.settlementHeader(req)),
      };
    };
    const answer = async (req: Request, res: Response, outcome: CallOutcome): Promise<void> => {
      if (!res.headersSent) res.setHeader("X-Data-Source", outcome.source);
      switch (outcome.kind) {
        case "hit":
          return hits.send(res, outcome.hit);
        case "interim": {
          const { interim } = outcome;
          return send(
            res,
            interim.status,
            { "Cache-Control": "no-store", ...(interim.retryAfterSec !== undefined ? { "Retry-After": String(interim.retryAfterSec) } : {}) },
            interim.body,
          );
        }
        case "payment_required":
        case "sign_in_required": {
          const reply = await gate!.required(outcome.request, outcome.required, gate!.mppAsk(req), sentHeaderBytes(res));
          return send(res, reply.status, reply.headers, reply.body);
        }
        case "answer": {
          // Answers that depend on the caller (paid, credentials, a signed-in wallet) must not be kept by shared caches.
          const headers = {
            ...(outcome.paid ? paidHeaders(outcome.paid, outcome.sealed, gate!.settlementHeader(req)) : {}),
            "X-Cache": "MISS",
            ...(outcome.private ? { "Cache-Control": "private, no-store" } : {}),
          };
          // Bounded by MAX_PAID_URL_BYTES; should it ever grow past a proxy's buffer, the payer gets it back by a retry with the same payment.
          const bytes = outcome.paid ? headersBytes(headers) + sentHeaderBytes(res) : 0;
          if (bytes >= HEADER_BLOCK_BUDGET) logger.warn({ tool: tool.name, bytes }, "a paid answer's header block is over a reverse proxy's default 4 KB buffer");
          // A sealed answer is sent as the very bytes its Content-Digest covers.
          if (outcome.sealed) {
            for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
            res.status(outcome.status).type("application/json").send(outcome.sealed.body);
            return;
          }
          return send(res, outcome.status, headers, outcome.value);
        }
        case "error":
          return sendError(res, outcome.error);
      }
    };
    const method = tool.method.toLowerCase() as "get" | "post" | "delete";
    router[method](tool.path, async (req: Request, res: Response) => {
      if (gate && !isFree(tool)) {
        const bytes = Buffer.byteLength(gate.resource(req, tool).url);
        if (bytes > MAX_PAID_URL_BYTES) return sendError(res, urlTooLong(bytes));
      }
      const outcome = await pipeline.run({
        tool,
        parse: () => readInput({ params: req.params, query: req.query as Record<string, unknown>, body: req.body }),
        onKey: (key) => hits.remember(req.originalUrl, tool, key),
        limit: () => deps.limiter.consume(req.ip ?? "unknown", res),
        client: req.ip ?? "unknown",
        credentials: tool.acceptsCredentials ? credentialsOf(req) : {},
        proofs: gate ? gate.proofs(req) : {},
        site: () => site(req),
        // Express routes HEAD to the GET handlers: a HEAD that is not a cache hit pays nothing and runs nothing.
        unpaid: req.method === "HEAD",
      });
      await answer(req, res, outcome).catch((err: unknown) => sendError(res, err));
    });
  }
  return { routes: router, cacheHits: hits.handler };
}
