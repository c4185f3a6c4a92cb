import { Router, type Request, type Response } from "express";
import type { DataMode } from "../src/config.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { isFree, type AnyTool } from "../src/registry/tool.js";
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

function send(res: Response, status: number, headers: Record<string, string>, body: unknown): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(status).json(body);
}

/**
 * One express route per registry tool. Request path:
 * validate (400/404) -> cache hit: 200 free, `X-Cache: HIT`, not rate-limited -> rate limit on misses (429)
 * -> x402 (402, or verified) -> handler (single-flight) -> error: not charged -> settle -> failed: 402, no data
 * -> commit to cache -> 200 `X-Cache: MISS` + `PAYMENT-RESPONSE`.
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
        input = readInput(req);
        const hit = deps.runner.lookup(tool, input);
        if (hit) {
          return send(res, 200, { "X-Cache": "HIT", "Cache-Control": `public, max-age=${hit.ttlRemainingSec}` }, hit.value);
        }
        await deps.limiter.consume(req.ip ?? "unknown");
      } catch (err) {
        return sendError(res, err);
      }
      if (!paid) {
        try {
          const value = await deps.runner.execute(tool, input);
          deps.runner.commit(tool, input, value);
          return send(res, 200, { "X-Cache": "MISS" }, value);
        } catch (err) {
          return sendError(res, err);
        }
      }
      let payment;
      try {
        payment = await deps.gate!.begin(req, tool);
      } catch (err) {
        return sendError(res, err);
      }
      if (payment.kind === "respond") {
        if (req.header("payment-signature") || req.header("x-payment") || req.header("x-payment-proof")) {
          deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "verify" });
        }
        return send(res, payment.status, payment.headers, payment.body);
      }
      let value: unknown;
      try {
        value = await deps.runner.execute(tool, input);
      } catch (err) {
        const e = toAppError(err);
        await payment.cancel(e.status).catch((cancelErr: unknown) => logger.warn({ err: cancelErr }, "payment cancel failed"));
        return sendError(res, e);
      }
      try {
        const settled = await payment.settle();
        if (!settled.ok) {
          deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "settle" });
          return send(res, settled.response.status, settled.response.headers, settled.response.body);
        }
        deps.metrics.paymentsSettled.inc({ tool: tool.name, transport: "http" });
        deps.metrics.revenueUsdc.inc({ tool: tool.name }, Number(tool.priceUsd));
        deps.runner.commit(tool, input, value);
        return send(res, 200, { ...settled.headers, "X-Cache": "MISS", "Cache-Control": "private, no-store" }, value);
      } catch (err) {
        deps.metrics.paymentsFailed.inc({ tool: tool.name, stage: "settle" });
        logger.error({ err, tool: tool.name }, "settlement outcome unknown");
        return sendError(res, new AppError("UPSTREAM_ERROR", "payment settlement could not be confirmed; the data was withheld", { retryAfterSec: 5 }));
      }
    };
    const method = tool.method.toLowerCase() as "get" | "post" | "delete";
    router[method](tool.path, handle);
  }
  return router;
}
