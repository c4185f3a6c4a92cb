import type { Request, RequestHandler, Response } from "express";
import { LRUCache } from "lru-cache";
import type { Metrics } from "../src/core/metrics.js";
import type { DataSourceLabels } from "../src/core/request-scope.js";
import { hasSharedHits } from "../src/core/hit-answer.js";
import type { CacheHit, ToolRunner } from "../src/core/runner.js";
import type { AnyTool } from "../src/registry/tool.js";

/**
 * Characters of request URLs the fast path remembers (each URL maps to the cache key string the tool route
 * computed anyway). Past it the least recently used URLs are forgotten, so callers inventing URLs cannot
 * grow it; a forgotten URL only takes the full route again.
 */
const MAX_REMEMBERED_URL_CHARS = 4_000_000;

/** Origins whose CORS headers are kept. Callers choose the `Origin` header: past this many, all are dropped. */
const MAX_CORS_ORIGINS = 64;

/**
 * The headers the app's CORS middleware gives a simple GET from `origin` (nothing else of the request
 * matters to it), as a flat `[name, value, ...]` list: found by running the middleware itself on a
 * response that records them, so the fast path sends exactly what it would. Undefined when the middleware
 * does not finish synchronously (a CORS policy decided per request), which leaves such requests to it.
 */
function corsHeadersFor(cors: RequestHandler, origin: string | undefined): Array<string | string[]> | undefined {
  const set = new Map<string, [string, string | string[]]>();
  const recorder = {
    getHeader: (name: string) => set.get(name.toLowerCase())?.[1],
    setHeader(name: string, value: string | number | string[]) {
      set.set(name.toLowerCase(), [name, typeof value === "number" ? String(value) : value]);
      return recorder;
    },
  };
  let passed = false;
  cors({ method: "GET", headers: origin === undefined ? {} : { origin } } as Request, recorder as unknown as Response, (err?: unknown) => (passed = err === undefined));
  return passed ? [...set.values()].flat() : undefined;
}

/**
 * The CORS headers of the app's CORS middleware per `Origin`, for fast paths that answer before it runs.
 * The middleware treats every method but `OPTIONS` (the preflight, never answered by a fast path) like a
 * simple GET, so one list per origin serves GET and POST alike. At most {@link MAX_CORS_ORIGINS} origins are
 * kept: callers choose the header, so past that all are dropped and rebuilt on use.
 */
export class CorsHeaderCache {
  readonly #byOrigin = new Map<string | undefined, Array<string | string[]> | undefined>();

  constructor(private readonly cors: RequestHandler) {}

  /** The headers for a request from `origin`, as `[name, value, ...]`; undefined when the fast path must leave the request to the middleware. */
  get(origin: string | undefined): ReadonlyArray<string | string[]> | undefined {
    if (this.#byOrigin.has(origin)) return this.#byOrigin.get(origin);
    if (this.#byOrigin.size >= MAX_CORS_ORIGINS) this.#byOrigin.clear();
    const headers = corsHeadersFor(this.cors, origin);
    this.#byOrigin.set(origin, headers);
    return headers;
  }
}

/** The fixed parts of one tool's fast-path answers and metrics, built once per tool. */
interface ToolHits {
  tool: AnyTool;
  /** `marketgate_http_requests_total` labels of a hit: the route template, as the metrics middleware counts it. */
  requests: { route: string; method: "GET"; status: 200 };
  /** `marketgate_http_request_duration_seconds` labels of a hit. */
  duration: { route: string; method: "GET" };
}

/** Whether the fast path may answer a tool's cache hits: GET tools whose hits are shared ({@link hasSharedHits}). */
function fastHitTool(tool: AnyTool): boolean {
  return tool.method === "GET" && hasSharedHits(tool);
}

/** Dependencies of a {@link CacheHitPath}; `labels` is the tool routes' own labeller (it knows the replayed keys). */
export interface CacheHitPathDeps {
  runner: ToolRunner;
  labels: DataSourceLabels;
  metrics: Metrics;
  /** The miss limiter's static `RateLimit-Policy` header, which every cache hit carries. */
  rateLimitPolicy: string;
  /** The app's CORS middleware: the fast path runs before it and sends the headers it would set. */
  cors: RequestHandler;
}

/**
 * The cache-hit fast path of the tool routes. Once the full route has parsed a GET request, it tells
 * {@link remember} which tool and cache key the exact URL stands for; from then on {@link handler}, mounted
 * first in the app, answers that URL straight from the response cache while the entry lives: no routing, no
 * schema parse, no key canonicalisation, the serialized answer built once per entry and the CORS headers
 * once per `Origin`. Anything else (not remembered, not in this process's cache, HEAD, a request with a
 * body) goes on to CORS and the full route, which answer the same way.
 *
 * Why a URL may stand for its cache key: parsing a tool's input is a pure function of the request's path and
 * query (the registry's symbol tables are static), and the app routes by method and URL alone, so the same
 * URL always reaches the same tool with the same key. Only answers already committed to the cache (paid, or
 * free) are served here, exactly as the full route's hit branch serves them.
 */
export class CacheHitPath {
  readonly #byUrl = new LRUCache<string, { hits: ToolHits; key: string }>({ maxSize: MAX_REMEMBERED_URL_CHARS, sizeCalculation: (_v, url) => url.length });
  readonly #tools = new Map<AnyTool, ToolHits>();
  readonly #cors: CorsHeaderCache;

  constructor(private readonly deps: CacheHitPathDeps) {
    this.#cors = new CorsHeaderCache(deps.cors);
  }

  /** Remembers that GET `url` (path and query, as received) is a request for `tool` with cache key `key`. */
  remember(url: string, tool: AnyTool, key: string): void {
    if (!fastHitTool(tool) || this.#byUrl.get(url)?.key === key) return;
    let hits = this.#tools.get(tool);
    if (!hits) this.#tools.set(tool, (hits = { tool, requests: { route: tool.path, method: "GET", status: 200 }, duration: { route: tool.path, method: "GET" } }));
    this.#byUrl.set(url, { hits, key });
  }

  /**
   * Sends a cache hit: 200 with `X-Cache: HIT`, the entry's remaining TTL as `Cache-Control`, the miss
   * limiter's policy and the entry's JSON bytes, after the `first` headers (`[name, value, ...]`). Headers
   * already set on `res` (CORS, `X-Data-Source` on the full route) are kept.
   */
  send(res: Response, hit: CacheHit, first: ReadonlyArray<string | string[]> = []): void {
    const body = hit.answer.bytes;
    const headers = [
      ...first,
      "X-Cache",
      "HIT",
      "Cache-Control",
      `public, max-age=${hit.ttlRemainingSec}`,
      "RateLimit-Policy",
      this.deps.rateLimitPolicy,
      "Content-Type",
      "application/json; charset=utf-8",
      "Content-Length",
      String(body.length),
    ];
    res.writeHead(200, headers);
    res.end(body);
  }

  /** Express middleware answering remembered URLs whose entry this process holds; calls `next()` otherwise. */
  readonly handler: RequestHandler = (req, res, next) => {
    // A declared body (even on GET) goes to the body parser, which may refuse it: the full route decides.
    if (req.method !== "GET" || req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined) return next();
    const remembered = this.#byUrl.get(req.originalUrl);
    if (!remembered) return next();
    const started = performance.now();
    const cors = this.#cors.get(req.headers.origin);
    if (!cors) return next();
    const { hits, key } = remembered;
    const hit = this.deps.runner.peek(hits.tool, key);
    if (!hit) return next();
    this.send(res, hit, [...cors, "X-Data-Source", this.deps.labels.labelOfHit(key)]);
    const { metrics } = this.deps;
    metrics.httpRequests.inc(hits.requests);
    metrics.httpDuration.observe(hits.duration, (performance.now() - started) / 1000);
  };
}
