import { Router, type Request, type Response } from "express";
import type { DataMode } from "../src/config.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { AppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { handlerFailure } from "../src/payments/processor.js";
import { isFree, type AnyTool, type CallerCredentials } from "../src/registry/tool.js";
import { sendError } from "./errors.js";
import { inputReader } from "./input.js";
import type { HttpPaymentGate } from "./payment-gate.js";
import type { MissRateLimiter } from "./rate-limit.js";

/** What the tool routes need. `gate` is undefined when payments are off (every tool is then free). */
export interface ToolRouteDeps {
  tools: readonly AnyTool[];
  runner: ToolRunner;
  limiter: MissRateLimiter;
  gate?: HttpPaymentGate;
  metrics: Metrics;
  dataMode: DataMode;
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
 * One express route per registry tool. Request path:
 * validate (400/404) -> cache hit: 200 free, `X-Cache: HIT`, not rate-limited -> rate limit on misses (429)
 * -> tool precheck (e.g. symbol listed on some venue: 404, before any payment)
 * -> tool preflight (e.g. CVD warm-up: 202 + Retry-After, free, uncached)
 * -> payment check (402; an idempotent retry or a confirmed pending settlement is answered from the ledger)
 * -> handler (single-flight) -> error: not charged -> settle -> refused: 402, no data; unknown: 502, data
 * withheld for a retry -> commit to cache -> 200 `X-Cache: MISS` + `PAYMENT-RESPONSE`.
 */
export function toolRoutes(deps: ToolRouteDeps): Router {
  const router = Router();
  const dataSource = deps.dataMode === "sim" ? "simulated" : "live";
  for (const tool of deps.tools) {
    const readInput = inputReader(tool);
    const paid = !isFree(tool) && deps.gate !== undefined;
    const handle = async (req: Request, res: Response) => {
      res.setHeader("X-Data-Source", dataSource);
      let input: unknown;
      try {
        input = readInput({ params: req.params, query: req.query as Record<string, unknown>, body: req.body });
        const hit = await deps.runner.lookup(tool, input);
        if (hit) {
          return send(res, 200, { "X-Cache": "HIT", "Cache-Control": `public, max-age=${hit.ttlRemainingSec}` }, hit.value);
        }
        await deps.limiter.consume(req.ip ?? "unknown");
        await deps.runner.precheck(tool, input);
        const interim = await deps.runner.preflight(tool, input);
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
          const value = await deps.runner.execute(tool, input, { credentials });
          await deps.runner.commit(tool, input, value);
          return send(res, 200, { "X-Cache": "MISS" }, value);
        } catch (err) {
          return sendError(res, err);
        }
      }
      let check;
      try {
        check = await deps.gate!.check(req, tool, deps.runner.key(tool, input));
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
        value = await deps.runner.execute(tool, input, { payer: payment.payer, credentials });
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
          const r = await deps.gate!.required(tool, settled.required);
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
          deps.metrics.paymentsSettled.inc({ tool: tool.name, transport: "http" });
          deps.metrics.revenueUsdc.inc({ tool: tool.name }, Number(tool.priceUsd));
          await deps.runner.commit(tool, input, value);
          return send(res, 200, { ...receipt(settled.receipt), "X-Cache": "MISS", "Cache-Control": "private, no-store" }, value);
      }
    };
    const method = tool.method.toLowerCase() as "get" | "post" | "delete";
    router[method](tool.path, handle);
  }
  return router;
}
