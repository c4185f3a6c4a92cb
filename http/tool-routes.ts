import { Router, type Request, type RequestHandler, type Response } from "express";
import type { DataMode } from "../src/config.js";
import type { Metrics } from "../src/core/metrics.js";
import { DataSourceLabels, type DataSourceTracker } from "../src/core/request-scope.js";
import type { ToolRunner } from "../src/core/runner.js";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { handlerFailure } from "../src/payments/processor.js";
import { isFree, priceFor, type AnyTool, type CallerCredentials } from "../src/registry/tool.js";
import { CacheHitPath } from "./cache-hits.js";
import { sendError } from "./errors.js";
import { inputReader } from "./input.js";
import type { GateResponse, HttpPaymentGate } from "./payment-gate.js";
import type { MissRateLimiter } from "./rate-limit.js";

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

/** Credentials of a request (tools with `acceptsCredentials`): bearer token, owner-wallet signature. */
function credentialsOf(req: Request): CallerCredentials {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.header("authorization") ?? "")?.[1];
  return { bearerToken: bearer, walletSignature: req.header("x-wallet-signature"), signedAt: req.header("x-signed-at") };
}

/**
 * The wallet of a request to a `siwx` tool, proven by its `SIGN-IN-WITH-X` header; without a valid proof,
 * the 402 whose SIWX challenge `wrapFetchWithSIWx` answers by itself.
 * @throws AppError NOT_FOUND when credits are off (payments off or CREDITS=off: the feature does not exist here).
 */
async function signIn(gate: HttpPaymentGate | undefined, req: Request, tool: AnyTool): Promise<{ wallet: string } | GateResponse> {
  if (!gate?.credits) throw new AppError("NOT_FOUND", "credits are off on this service (CREDITS=off, or payments are off)");
  const proof = req.header("sign-in-with-x");
  const id = proof ? await gate.credits.authenticate(proof, gate.origin(req)) : { refusal: "Sign in with SIGN-IN-WITH-X to use this endpoint" };
  if ("wallet" in id) return id;
  return gate.signInRequired(req, tool, id.refusal);
}

/**
 * The answer to HEAD of a paid tool on a cache miss: the 402 an unpaid GET gets, with the same headers
 * (node sends no body for HEAD). Whatever payment the request carries (x402, MPP, a SIWX proof, a session
 * token) is left untouched: a HEAD releases no data, so verifying, settling or debiting for it would charge
 * for nothing, and an answer it produced would be cached for every later caller. The payment stays usable
 * for a GET.
 */
async function unpaidAnswer(gate: HttpPaymentGate, req: Request, tool: AnyTool, fingerprint: string, priceUsd: string): Promise<GateResponse> {
  const r = { tool, resource: gate.resource(req, tool), fingerprint, priceUsd };
  // The reason is the one the processor gives a request without a payload.
  return gate.required(r, await gate.processor.paymentRequired(r, "Payment required"), gate.origin(req));
}

/** The tool routes and their cache-hit fast path ({@link CacheHitPath}), which the app mounts first. */
export interface ToolMount {
  routes: Router;
  cacheHits: RequestHandler;
}

/**
 * One express route per registry tool. Request path:
 * validate (400/404) -> cache hit: 200 free, `X-Cache: HIT`, not rate-limited -> rate limit on misses (429)
 * -> tool precheck (e.g. symbol listed on some venue: 404, before any payment)
 * -> tool preflight (e.g. CVD warm-up: 202 + Retry-After, free, uncached)
 * -> payment check (402; an idempotent retry or a confirmed pending settlement is answered from the ledger)
 * -> handler (single-flight) -> error: not charged -> settle -> refused: 402, no data; unknown: 502, data
 * withheld for a retry -> commit to cache -> 200 `X-Cache: MISS` + `PAYMENT-RESPONSE`.
 * HEAD (express runs the GET route for it) takes the same path up to the payment check, so a hit answers
 * with the hit's headers; a paid miss answers the unpaid 402 ({@link unpaidAnswer}) and never reaches the
 * payment check, the handler or the cache. Node sends no body for HEAD.
 * Each parsed GET is remembered by the fast path, which answers the URL's later cache hits before routing.
 */
export function toolRoutes(deps: ToolRouteDeps): ToolMount {
  const router = Router();
  // X-Data-Source: live, simulated, or replay when a venue answer of the request was recorded data (request-scope.ts).
  const labels = new DataSourceLabels(deps.dataMode);
  const hits = new CacheHitPath({ runner: deps.runner, labels, metrics: deps.metrics, rateLimitPolicy: deps.limiter.policyHeader, cors: deps.cors });
  for (const tool of deps.tools) {
    const readInput = inputReader(tool);
    const paid = !isFree(tool) && deps.gate !== undefined;
    const handle = async (req: Request, res: Response, source: DataSourceTracker) => {
      let input: unknown;
      let key: string;
      try {
        input = readInput({ params: req.params, query: req.query as Record<string, unknown>, body: req.body });
        key = deps.runner.key(tool, input);
        source.key(key);
        hits.remember(req.originalUrl, tool, key);
        const hit = await deps.runner.lookupKey(tool, key);
        // Hits are not limited: only the static policy, no limiter lookup on this path.
        if (hit) return hits.send(res, hit);
        await deps.limiter.consume(req.ip ?? "unknown", res);
        await deps.runner.precheck(tool, input);
        const interim = await deps.runner.preflight(tool, input, { client: req.ip ?? "unknown" });
        if (interim) {
          const headers: Record<string, string> = { "Cache-Control": "no-store" };
          if (interim.retryAfterSec !== undefined) headers["Retry-After"] = String(interim.retryAfterSec);
          return send(res, interim.status, headers, interim.body);
        }
      } catch (err) {
        return sendError(res, err);
      }
      const credentials = tool.acceptsCredentials ? credentialsOf(req) : {};
      if (!paid) {
        try {
          let wallet: string | undefined;
          if (tool.auth === "siwx") {
            const signedIn = await signIn(deps.gate, req, tool);
            if ("status" in signedIn) return send(res, signedIn.status, signedIn.headers, signedIn.body);
            wallet = signedIn.wallet;
          }
          const value = await deps.runner.execute(tool, input, { credentials, wallet });
          await deps.runner.commit(tool, input, value);
          // Answers that depend on the caller's credentials (alert reads) must not be kept by shared caches.
          return send(res, tool.statusOf?.(value) ?? 200, { "X-Cache": "MISS", ...(tool.acceptsCredentials ? { "Cache-Control": "private, no-store" } : {}) }, value);
        } catch (err) {
          return sendError(res, err);
        }
      }
      let check;
      try {
        // Express routes HEAD to the GET handlers: a HEAD that is not a cache hit pays nothing and runs nothing.
        if (req.method === "HEAD") {
          const unpaid = await unpaidAnswer(deps.gate!, req, tool, key, priceFor(tool, input));
          return send(res, unpaid.status, unpaid.headers, unpaid.body);
        }
        check = await deps.gate!.check(req, tool, key, priceFor(tool, input));
      } catch (err) {
        return sendError(res, err);
      }
      if (check.kind === "respond") {
        if (req.header("payment-signature") || req.header("x-payment") || req.header("x-payment-proof") || req.header("authorization")) {
          deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "verify" });
        }
        return send(res, check.status, check.headers, check.body);
      }
      if (check.kind === "answer") {
        return send(res, 200, { ...check.headers, "X-Cache": "MISS", "Cache-Control": "private, no-store" }, check.value);
      }
      const { payment, receipt } = check;
      let value: unknown;
      try {
        value = await deps.runner.execute(tool, input, { payer: payment.payer, paymentReference: payment.reference, credentials });
      } catch (err) {
        payment.abandon();
        return sendError(res, handlerFailure(tool, err));
      }
      let settled;
      try {
        settled = await payment.settle(value);
      } catch (err) {
        logger.error({ err, tool: tool.name }, "settlement failed unexpectedly");
        settled = { kind: "unknown" as const, retryAfterSec: 5 };
      }
      switch (settled.kind) {
        case "failed": {
          deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "settle" });
          const r = await deps.gate!.required({ tool, resource: settled.required.resource, fingerprint: "", priceUsd: priceFor(tool, input) }, settled.required, deps.gate!.origin(req));
          return send(res, r.status, r.headers, r.body);
        }
        case "unknown":
          deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "settle_unknown" });
          return sendError(
            res,
            new AppError("UPSTREAM_ERROR", "payment settlement could not be confirmed yet; the data is withheld. Retry with the same payment to receive it once the transfer is confirmed.", {
              retryAfterSec: settled.retryAfterSec,
            }),
          );
        case "settled":
          deps.metrics.paymentsSettled.inc({ tool: tool.name, transport: check.method === "credits" ? "credits" : "http" });
          // Credit-paid calls spend revenue already counted at top-up.
          if (check.method !== "credits") deps.metrics.revenueUsdc.inc({ tool: tool.name }, Number(priceFor(tool, input)));
          await deps.runner.commit(tool, input, value);
          return send(res, 200, { ...receipt(settled.receipt), "X-Cache": "MISS", "Cache-Control": "private, no-store" }, value);
      }
    };
    const method = tool.method.toLowerCase() as "get" | "post" | "delete";
    router[method](tool.path, (req: Request, res: Response) =>
      labels.track((label) => void (res.headersSent || res.setHeader("X-Data-Source", label)), (source) => handle(req, res, source)),
    );
  }
  return { routes: router, cacheHits: hits.handler };
}
