import cors from "cors";
import express, { type Express } from "express";
import type { Config } from "../src/config.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { apiReferenceHtml, scalarBundlePath } from "../src/docs/api-page.js";
import { ICON_PATH } from "../src/payments/bazaar.js";
import { buildX402Discovery, buildX402WellKnown } from "../src/docs/discovery.js";
import { ICON_SVG } from "../src/docs/icon.js";
import { llmsDocuments } from "../src/docs/llms.js";
import { buildOpenApi, type ServiceInfo } from "../src/docs/openapi.js";
import { paymentOffers, type PriceBook } from "../src/docs/pricing.js";
import { AppError } from "../src/errors.js";
import { STREAM_VENUES } from "../src/ingestion/types.js";
import { PERP_VENUES } from "../src/venues/perp/types.js";
import { isFree, type AnyTool } from "../src/registry/tool.js";
import type { PublicOrigins } from "../src/lib/public-origins.js";
import type { McpCatalog } from "../mcp/catalog.js";
import { McpCachedCalls } from "../mcp/cached-call.js";
import { mcpHttpHandler } from "../mcp/http.js";
import { liveMcpHandler } from "../mcp/live-server.js";
import { CorsHeaderCache } from "./cache-hits.js";
import { errorHandler, sendError } from "./errors.js";
import { foreignBrowserRequest, isBrowserGuardedPath, malformedHost } from "./host.js";
import type { HttpPaymentGate } from "./payment-gate.js";
import type { FreeRateLimiter, MissRateLimiter } from "../src/lib/rate-limit.js";
import { limitByClient } from "./rate-limit.js";
import { quoteRoute } from "./quote.js";
import type { Readiness } from "../src/doctor/readiness.js";
import { readyRoute } from "./ready.js";
import { toolRoutes } from "./tool-routes.js";
import { streamRoutes, type StreamRouteDeps } from "./stream-routes.js";

/** Everything the HTTP app is built from. */
export interface AppDeps {
  config: Config;
  info: ServiceInfo;
  tools: readonly AnyTool[];
  runner: ToolRunner;
  metrics: Metrics;
  limiter: MissRateLimiter;
  /** Budget of free routes that do work on every call (the quote endpoint). */
  freeLimiter: FreeRateLimiter;
  prices: PriceBook;
  mcp: McpCatalog;
  /** Undefined when payments are off. */
  gate?: HttpPaymentGate;
  /** The service's public origins (configuration only): SIWX binding over MCP, absolute URLs in documents. */
  origins: PublicOrigins;
  /** Payment summary for `/` (undefined when off). */
  payment?: { network: string; payTo: string; asset?: string; facilitators: string[]; protocols: string[]; solana?: { network: string; payTo: string; asset?: string } };
  /** Checks of `GET /ready` (src/doctor/readiness.ts); without them `/ready` answers 200 with no components. */
  readiness?: Readiness;
  /** The live streams (SSE routes `/stream/...`); the WebSocket is attached to the server by the service. */
  live?: Omit<StreamRouteDeps, "gate" | "limiter">;
}

/** Headers browsers must be allowed to send and read for x402 (https://github.com/coinbase/x402/blob/main/specs/transports-v2/http.md) and MCP. */
const ALLOWED_HEADERS = [
  "Content-Type",
  "Authorization",
  "PAYMENT-SIGNATURE",
  "X-PAYMENT",
  "X-PAYMENT-PROOF",
  "SIGN-IN-WITH-X",
  "X-Credits-Session",
  "Access-Control-Expose-Headers",
  "Mcp-Session-Id",
  "Mcp-Protocol-Version",
];
/**
 * Every response header is readable by a browser page: the wildcard, valid because no answer allows credentials
 * (no `Access-Control-Allow-Credentials`), so the payment headers (`PAYMENT-REQUIRED`, `PAYMENT-RESPONSE`,
 * `WWW-Authenticate`, `Payment-Receipt`), receipts and content signatures, `X-Credits-*`, `X-Cache`,
 * `X-Data-Source`, `Retry-After`, `RateLimit*` and `Mcp-Session-Id` are, in one byte instead of the 200 a list
 * takes in every answer's header block (which must fit a reverse proxy's 4 KB buffer: http/header-budget.ts).
 */
const EXPOSED_HEADERS = "*";

/** Longest request URL (path + query, bytes) the service accepts; longer ones answer 414 before payment. */
export const MAX_URL_BYTES = 2048;

/** HTTP methods kept as metric labels; any other method is counted as `OTHER`. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Builds the express app: CORS, metrics, the registry's routes, MCP at `/mcp` and the free documents. */
export function createApp(deps: AppDeps): Express {
  const { config, metrics, tools, info } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", config.trustProxy);
  const corsHandler = cors({ origin: config.corsOrigins === "*" ? "*" : config.corsOrigins, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS });
  // Cache hits of URLs the tool routes have already parsed are answered first, with the CORS headers
  // `corsHandler` would set (http/cache-hits.ts): a route that needs such a URL first, by a header, must be
  // mounted above this line. So are cached MCP `tools/call`s (mcp/cached-call.ts): hits are free, so they
  // consume no budget, REST or MCP.
  const toolMount = toolRoutes({ tools, runner: deps.runner, limiter: deps.limiter, gate: deps.gate, metrics, dataMode: config.dataMode, cors: corsHandler });
  const mcpHits = new McpCachedCalls({
    catalog: deps.mcp,
    metrics,
    rateLimitPolicy: deps.freeLimiter.policyHeader,
    info: { name: info.name, version: info.version },
    cors: new CorsHeaderCache(corsHandler),
    json: express.json({ limit: "64kb" }),
  });
  // One router layer for both (they split by method: REST hits are GETs, MCP calls POSTs), since each layer
  // costs every request a path match. Before anything, a malformed Host (or X-Forwarded-Host under trust
  // proxy) is the caller's error: 400, never a 500 from a URL built with it, and nothing logged. Then MCP
  // refuses what a foreign browser page could send (DNS rebinding, another Origin): 403.
  app.use((req, res, next) => {
    const badHost = malformedHost(req) ?? (isBrowserGuardedPath(req.path) ? foreignBrowserRequest(req, deps.origins) : undefined);
    if (badHost) return sendError(res, badHost);
    return req.method === "POST" ? mcpHits.early(req, res, next) : toolMount.cacheHits(req, res, next);
  });
  app.use(corsHandler);
  app.use((req, res, next) => {
    const started = performance.now();
    res.on("finish", () => {
      // Only the registry's route templates are labels: anything a caller can type (path, method) is bounded.
      const route = (req.route as { path?: string } | undefined)?.path ?? "unmatched";
      const method = KNOWN_METHODS.has(req.method) ? req.method : "OTHER";
      metrics.httpRequests.inc({ route, method, status: res.statusCode });
      metrics.httpDuration.observe({ route, method }, (performance.now() - started) / 1000);
    });
    next();
  });
  app.use((req, res, next) => {
    // Refused before anything else: the URL is echoed in the 402's headers three times, and beyond this
    // length they would outgrow what HTTP clients read (Node's fetch stops at 16 KB of headers).
    if (Buffer.byteLength(req.originalUrl) > MAX_URL_BYTES) {
      return sendError(res, new AppError("URI_TOO_LONG", `request URL longer than ${MAX_URL_BYTES} bytes`));
    }
    next();
  });
  // The JSON parser skips bodies `mcpHits.early` has read with it; it raises their errors here.
  app.use(mcpHits.bodyParser);
  // Free routes that do work on every call share the free budget per client (documents below are static).
  const free = limitByClient(deps.freeLimiter);
  // MCP first: its calls are the busiest requests after the cache hits answered above. Cached calls the
  // early path could not take (another charset, a compressed body...) are still answered before the budget.
  app.all("/mcp", mcpHits.beforeBudget, free, mcpHttpHandler(deps.mcp, { name: info.name, version: info.version }, deps.origins));
  if (deps.live) app.all("/mcp/live", free, liveMcpHandler({ ...deps.live, gate: deps.gate, info }));

  // What the documents offer beside x402 (MPP, credits) exists only when payments are on.
  const offers = deps.gate ? paymentOffers(config) : {};
  const streams = deps.live?.streams ?? [];
  const openapi = buildOpenApi(tools, deps.prices, info, offers, deps.live?.streams ?? []);
  const baseUrl = (req: express.Request) => deps.origins.baseUrl(req);
  // The x402 documents list absolute URLs: under the configured origin the request names (PUBLIC_URL,
  // PUBLIC_ORIGINS, the loopback bind), else, when none is configured (credits off), under the origin they
  // were asked from (a few kept; per-tool parts are computed once, so a rebuild is cheap).
  const lastUpdated = new Date().toISOString();
  const x402Docs = new Map<string, { discovery: Record<string, unknown>; wellKnown: Record<string, unknown> }>();
  const x402DocsFor = (req: express.Request) => {
    const base = baseUrl(req);
    let d = x402Docs.get(base);
    if (!d) {
      const at = { ...info, publicUrl: base };
      d = { discovery: buildX402Discovery(tools, deps.prices, at, lastUpdated, offers, streams), wellKnown: buildX402WellKnown(tools, at, offers, streams) };
      if (x402Docs.size >= 8) x402Docs.delete(x402Docs.keys().next().value!);
      x402Docs.set(base, d);
    }
    return d;
  };
  const index = {
    name: info.name,
    version: info.version,
    description: info.description,
    data_mode: config.dataMode,
    simulated: config.dataMode === "sim",
    payment: deps.payment ? { x402_version: 2, scheme: "exact", currency: "USDC", ...deps.payment } : null,
    endpoints: tools.map((t) => ({ method: t.method, path: t.path, tool: t.name, price_usd: isFree(t) ? "free" : t.priceUsd, cache_ttl_sec: t.cacheTtlSec, summary: t.summary })),
    streams: deps.live?.streams.map((d) => ({
      path: d.path,
      topic: d.topic,
      websocket: "/ws",
      price_per_minute_usd: d.pricePerMinuteUsd,
      paid_with: "prepaid credits (SIGN-IN-WITH-X)",
      events: Object.keys(d.events),
      summary: d.summary,
    })),
    // Which venues the perpetual answers and the streams read (each answer's `coverage` says which it used).
    venues: { perpetuals: PERP_VENUES, streams: STREAM_VENUES, coverage: "docs/methods/coverage.md" },
    free_endpoints: [
      "GET /health",
      "GET /ready",
      "GET /",
      "GET /openapi.json",
      "GET /.well-known/x402.json",
      "GET /.well-known/x402",
      "GET /metrics",
      "GET /api/v1/quote?path=",
      "GET /docs",
      "GET /llms.txt",
      "GET /llms-full.txt",
    ],
    // The package is not published yet: stdio runs from a checkout or from a tarball made with `npm pack`.
    mcp: {
      streamable_http: "/mcp",
      live_resources: "/mcp/live (stateful: resource subscriptions to liquidations and CVD)",
      stdio: `npm run mcp (in a checkout), or: npm pack && npx ./marketgate-${info.version}.tgz mcp`,
    },
  };

  app.get("/health", (_req, res) => res.json({ status: "ok" }));
  // Readiness (Redis, chain RPC, facilitator, one venue per family): 200 or 503 with per-component JSON.
  app.get("/ready", readyRoute(deps.readiness));
  app.get("/", (_req, res) => res.json(index));
  app.get("/openapi.json", (_req, res) => res.json(openapi));
  // The receipt keys (docs/receipts.md) per request: a retired key leaves the document when its grace period ends.
  const receipts = deps.gate?.receipts;
  app.get("/.well-known/x402.json", (req, res) => res.json(receipts ? { ...x402DocsFor(req).discovery, receipts: receipts.document() } : x402DocsFor(req).discovery));
  app.get("/.well-known/x402", (req, res) => res.json(x402DocsFor(req).wellKnown));
  app.get(ICON_PATH, (_req, res) => res.type("image/svg+xml").set("Cache-Control", "public, max-age=86400").send(ICON_SVG));
  // Documents for people and language models: the API reference (Scalar, served from vendor/scalar, no CDN)
  // and llms.txt, both generated from the registry like the documents above.
  const apiPage = apiReferenceHtml(info);
  const llms = llmsDocuments(tools, info, streams);
  const scalarJs = scalarBundlePath();
  app.get("/docs", (_req, res) => res.type("html").send(apiPage));
  app.get("/docs/scalar.js", (_req, res) => res.sendFile(scalarJs, { maxAge: "1d" }));
  app.get("/llms.txt", (req, res) => res.type("text/plain; charset=utf-8").send(llms.short(baseUrl(req))));
  app.get("/llms-full.txt", (req, res) => res.type("text/plain; charset=utf-8").send(llms.full(baseUrl(req))));
  app.get("/metrics", free, async (req, res) => {
    if (req.query.format === "json") return res.json(await metrics.registry.getMetricsAsJSON());
    res.setHeader("Content-Type", metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.use(quoteRoute({ tools, runner: deps.runner, limiter: deps.freeLimiter, gate: deps.gate }));
  if (deps.live) app.use(streamRoutes({ ...deps.live, gate: deps.gate, limiter: deps.freeLimiter }));
  app.use(toolMount.routes);
  app.use((req, res) => sendError(res, new AppError("NOT_FOUND", `no route ${req.method} ${req.path}; see GET / for the endpoint list`)));
  app.use(errorHandler);
  return app;
}
