import cors from "cors";
import express, { type Express } from "express";
import type { Config } from "../src/config.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { buildX402Discovery, buildX402WellKnown } from "../src/docs/discovery.js";
import { buildOpenApi, type ServiceInfo } from "../src/docs/openapi.js";
import type { PriceBook } from "../src/docs/pricing.js";
import { AppError } from "../src/errors.js";
import { isFree, type AnyTool } from "../src/registry/tool.js";
import type { McpCatalog } from "../mcp/catalog.js";
import { mcpHttpHandler } from "../mcp/http.js";
import { errorHandler, sendError } from "./errors.js";
import type { HttpPaymentGate } from "./payment-gate.js";
import type { MissRateLimiter } from "./rate-limit.js";
import { quoteRoute } from "./quote.js";
import { toolRoutes } from "./tool-routes.js";

/** Everything the HTTP app is built from. */
export interface AppDeps {
  config: Config;
  info: ServiceInfo;
  tools: readonly AnyTool[];
  runner: ToolRunner;
  metrics: Metrics;
  limiter: MissRateLimiter;
  prices: PriceBook;
  mcp: McpCatalog;
  /** Undefined when payments are off. */
  gate?: HttpPaymentGate;
  /** Payment summary for `/` (undefined when off). */
  payment?: { network: string; payTo: string; asset?: string; facilitators: string[]; protocols: string[] };
}

/** Headers browsers must be allowed to send and read for x402 and MCP (x402.md §7.6). */
const ALLOWED_HEADERS = ["Content-Type", "Authorization", "PAYMENT-SIGNATURE", "X-PAYMENT", "X-PAYMENT-PROOF", "Access-Control-Expose-Headers", "Mcp-Session-Id", "Mcp-Protocol-Version"];
const EXPOSED_HEADERS = ["PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "X-PAYMENT", "X-PAYMENT-RESPONSE", "X-Cache", "X-Data-Source", "Retry-After"];

/** Builds the express app: CORS, metrics, the registry's routes, MCP at `/mcp` and the free documents. */
export function createApp(deps: AppDeps): Express {
  const { config, metrics, tools, info } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", config.trustProxy);
  app.use(cors({ origin: config.corsOrigins === "*" ? "*" : config.corsOrigins, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS }));
  app.use((req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.on("finish", () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? (res.statusCode === 404 ? "unmatched" : req.path);
      metrics.httpRequests.inc({ route, method: req.method, status: res.statusCode });
      end({ route, method: req.method });
    });
    next();
  });
  app.use(express.json({ limit: "64kb" }));

  const openapi = buildOpenApi(tools, deps.prices, info);
  const discovery = buildX402Discovery(tools, deps.prices, info, new Date().toISOString());
  const wellKnown = buildX402WellKnown(tools, info);
  const index = {
    name: info.name,
    version: info.version,
    description: info.description,
    data_mode: config.dataMode,
    simulated: config.dataMode === "sim",
    payment: deps.payment ? { x402_version: 2, scheme: "exact", currency: "USDC", ...deps.payment } : null,
    endpoints: tools.map((t) => ({ method: t.method, path: t.path, tool: t.name, price_usd: isFree(t) ? "free" : t.priceUsd, cache_ttl_sec: t.cacheTtlSec, summary: t.summary })),
    free_endpoints: ["GET /health", "GET /", "GET /openapi.json", "GET /.well-known/x402.json", "GET /.well-known/x402", "GET /metrics", "GET /api/v1/quote?path="],
    mcp: { streamable_http: "/mcp", stdio: "npx marketgate mcp" },
  };

  app.get("/health", (_req, res) => res.json({ status: "ok" }));
  app.get("/", (_req, res) => res.json(index));
  app.get("/openapi.json", (_req, res) => res.json(openapi));
  app.get("/.well-known/x402.json", (_req, res) => res.json(discovery));
  app.get("/.well-known/x402", (_req, res) => res.json(wellKnown));
  app.get("/metrics", async (req, res) => {
    if (req.query.format === "json") return res.json(await metrics.registry.getMetricsAsJSON());
    res.setHeader("Content-Type", metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.all("/mcp", mcpHttpHandler(deps.mcp, { name: info.name, version: info.version }));
  app.use(quoteRoute({ tools, runner: deps.runner, gate: deps.gate, publicUrl: config.publicUrl }));
  app.use(toolRoutes({ tools, runner: deps.runner, limiter: deps.limiter, gate: deps.gate, metrics, dataMode: config.dataMode }));
  app.use((req, res) => sendError(res, new AppError("NOT_FOUND", `no route ${req.method} ${req.path}; see GET / for the endpoint list`)));
  app.use(errorHandler);
  return app;
}
