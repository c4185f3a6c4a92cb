import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";

describe("HTTP surface (payments off)", () => {
  let s: FreeStack;
  const get = (path: string, init?: RequestInit) => fetch(`${s.url}${path}`, init);
  const calls = () => s.sim.faults.requestCount("coingecko");

  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());
  beforeEach(() => s.sim.faults.clear());

  it("answers batch prices (docs/endpoints.md) and lists unsupported symbols", async () => {
    const res = await get("/api/v1/prices?symbols=eth,BTC,notacoin,eth");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-data-source")).toBe("simulated");
    const body = await json(res);
    expect(Object.keys(body.data).sort()).toEqual(["btc", "eth"]);
    expect(body.data.btc).toMatchObject({ source: "coingecko (simulated)" });
    expect(typeof body.data.btc.price).toBe("number");
    expect(body.meta).toMatchObject({ cached: false, count: 2, requested: 3, unsupported: ["notacoin"], unavailable: [] });
  });

  it("refuses a batch with no supported symbol (404) and more than 20 symbols (400)", async () => {
    const none = await get("/api/v1/prices?symbols=foo,bar");
    expect(none.status).toBe(404);
    expect(await json(none)).toMatchObject({ error: { code: "UNKNOWN_SYMBOL" } });
    const many = Array.from({ length: 21 }, (_, i) => `s${i}`).join(",");
    const tooMany = await get(`/api/v1/prices?symbols=${many}`);
    expect(tooMany.status).toBe(400);
    expect(await json(tooMany)).toMatchObject({ error: { code: "BAD_REQUEST", details: [{ field: "symbols" }] } });
    expect((await get("/api/v1/prices")).status).toBe(400);
  });

  it("validates days and unknown ids before any upstream call", async () => {
    const before = calls();
    const bad = await get("/api/v1/market/bitcoin/history?days=5");
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.details[0]).toMatchObject({ field: "days" });
    expect((await get("/api/v1/market/bitcoin/history?days=abc")).status).toBe(400);
    const unknown = await get("/api/v1/market/dogwifhat");
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ error: { code: "UNKNOWN_SYMBOL" } });
    expect(calls()).toBe(before);
  });

  it("answers market details and history (docs/endpoints.md), accepting a symbol as id", async () => {
    const m = await json(await get("/api/v1/market/eth"));
    expect(m.data).toMatchObject({ id: "ethereum", symbol: "ETH", name: "Ethereum" });
    for (const k of ["price", "change_24h", "change_7d", "change_30d", "volume_24h", "market_cap", "circulating_supply", "ath", "atl"]) {
      expect(typeof m.data[k]).toBe("number");
    }
    const h = await json(await get("/api/v1/market/avalanche-2/history?days=1"));
    expect(h.data).toMatchObject({ id: "avalanche-2", symbol: "AVAX", days: 1 });
    expect(h.meta.granularity).toBe("5m");
    expect(h.data.prices[0]).toHaveLength(2);
    expect(h.data.prices[1][0] - h.data.prices[0][0]).toBe(300_000);
  });

  it("answers an identical request from cache with X-Cache: HIT and cached: true", async () => {
    await get("/api/v1/prices?symbols=doge,shib");
    const before = calls();
    const hit = await get("/api/v1/prices?symbols=shib,doge");
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect((await json(hit)).meta.cached).toBe(true);
    expect(calls()).toBe(before);
  });

  it("makes one upstream call for a burst of identical concurrent misses", async () => {
    const before = calls();
    const res = await Promise.all(Array.from({ length: 20 }, () => get("/api/v1/market/near/history?days=90")));
    expect(res.every((r) => r.status === 200)).toBe(true);
    expect(calls() - before).toBe(1);
  });

  it("degrades a failing venue to 503 with Retry-After, never a crash", async () => {
    s.sim.faults.inject("coingecko", { kind: "rate_limit", retryAfterSec: 30 }, Infinity);
    const res = await get("/api/v1/market/tron");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await json(res)).toMatchObject({ error: { code: "UPSTREAM_UNAVAILABLE" } });
    const status = await json(await get("/api/v1/status"));
    expect(status.venues[0]).toMatchObject({ venue: "coingecko", reachable: false, last_error: "HTTP 429" });
    expect(status.replication).toEqual({ mode: "embedded", replica_id: null, redis_connected: null, leaders: null });
    expect(status.alerts).toEqual({ enabled: true, active: 0 });
  });

  it("answers unknown routes and malformed JSON with the error shape", async () => {
    const nf = await get("/nope");
    expect(nf.status).toBe(404);
    expect(await json(nf)).toMatchObject({ error: { code: "NOT_FOUND" } });
    const bad = await get("/mcp", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { code: "BAD_REQUEST" } });
  });

  it("serves the free endpoints", async () => {
    expect(await json(await get("/health"))).toEqual({ status: "ok" });
    const status = await json(await get("/api/v1/status"));
    expect(status).toMatchObject({ status: "ok", data_mode: "sim", simulated: true });
    const index = await json(await get("/"));
    expect(index.endpoints.map((e: { tool: string }) => e.tool)).toEqual(TOOLS.map((t) => t.name));
    expect(index.endpoints.find((e: { tool: string }) => e.tool === "cex_prices")).toMatchObject({ path: "/api/v1/prices", price_usd: "0.005", cache_ttl_sec: 10 });
    expect(index.venues.perpetuals).toEqual([...PERP_VENUES]);
    expect(index.venues.perpetuals.slice(0, 8)).toEqual(["binance", "bybit", "okx", "hyperliquid", "gate", "bitget", "deribit", "aster"]);
    expect(index.venues.streams).toHaveLength(PERP_VENUES.length);
    const metrics = await get("/metrics");
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    const text = await metrics.text();
    expect(text).toContain('marketgate_tool_cache_total{tool="cex_prices",result="hit"}');
    expect(text).toMatch(/marketgate_upstream_requests_total\{venue="coingecko",outcome="ok"\} \d+/);
    expect(text).toContain('marketgate_http_requests_total{route="/api/v1/prices",method="GET",status="200"}');
  });

  it("publishes an OpenAPI 3.1 document that validates, with x402 metadata per operation", async () => {
    const doc = await json(await get("/openapi.json"));
    await SwaggerParser.validate(structuredClone(doc));
    const op = doc.paths["/api/v1/market/{id}/history"].get;
    expect(op.operationId).toBe("cex_market_history");
    expect(op["x-cache-ttl"]).toBe(300);
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(["path:id", "query:days", "query:interval", "query:limit", "query:cursor"]);
    expect(doc.paths["/api/v1/status"].get["x-payment-info"]).toBeUndefined();
  });

  it("answers CORS preflights allowing the payment headers", async () => {
    const res = await get("/api/v1/prices", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "GET", "access-control-request-headers": "payment-signature,access-control-expose-headers" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-headers")).toMatch(/PAYMENT-SIGNATURE/i);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("rate limit on cache misses", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack({ RATE_LIMIT_PER_MIN: "3" });
  });
  afterAll(() => s?.close());

  it("allows the configured misses per minute, then 429 with Retry-After; cache hits stay free of the limit", async () => {
    const ids = ["bitcoin", "ethereum", "solana", "ripple"];
    const statuses = [];
    for (const id of ids) statuses.push((await fetch(`${s.url}/api/v1/market/${id}`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await fetch(`${s.url}/api/v1/market/cardano`);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await json(limited)).toMatchObject({ error: { code: "RATE_LIMITED" } });
    for (let i = 0; i < 10; i++) expect((await fetch(`${s.url}/api/v1/market/bitcoin`)).headers.get("x-cache")).toBe("HIT");
  });
});
