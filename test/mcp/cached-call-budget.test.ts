import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A `tools/call` of `cex_market` for coin `id` (a free-stack tool with shared cache hits). */
function marketCall(rpcId: number, id: string): Record<string, unknown> {
  return { jsonrpc: "2.0", id: rpcId, method: "tools/call", params: { name: "cex_market", arguments: { id } } };
}

/** A chunked POST (no `Content-Length`), which the early path leaves to the JSON body parser. */
function postChunked(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });
}

describe("cached MCP calls and the free-route budget (FREE_RATE_LIMIT_PER_MIN)", () => {
  let s: FreeStack;
  /** One client per test (TRUST_PROXY=1: the service believes the last X-Forwarded-For entry). */
  const post = (client: string, body: unknown) =>
    fetch(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, "x-forwarded-for": client }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const mcpHits = async () => {
    const metric = await s.service.metrics.registry.getSingleMetric("marketgate_http_requests_total")!.get();
    return metric.values.find((v) => v.labels.route === "/mcp" && v.labels.method === "POST" && String(v.labels.status) === "200")?.value ?? 0;
  };

  beforeAll(async () => {
    s = await startFreeStack({ TRUST_PROXY: "1", FREE_RATE_LIMIT_PER_MIN: "3", RATE_LIMIT_PER_MIN: "1000", STREAMS: "off", ALERTS: "off" });
  });
  afterAll(() => s?.close());

  it("answers cached calls without consuming the budget, while every other POST /mcp consumes one point", async () => {
    const client = "198.51.100.40";
    const miss = await post(client, marketCall(1, "bitcoin"));
    expect(miss.status).toBe(200);
    expect(miss.headers.get("ratelimit")).toBe('"free";r=2;t=60');
    expect((await json(miss)).result._meta).toMatchObject({ "marketgate/cache": "MISS" });

    // Far more cached calls than the budget: all answered, none counted; each carries the static policy only.
    const before = await mcpHits();
    for (let i = 0; i < 10; i++) {
      const hit = await post(client, marketCall(100 + i, "bitcoin"));
      expect(hit.status).toBe(200);
      expect(hit.headers.get("ratelimit")).toBeNull();
      expect(hit.headers.get("ratelimit-policy")).toBe('"free";q=3;w=60');
      const body = await json(hit);
      expect(body.id).toBe(100 + i);
      expect(body.result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    }
    // Counted in the HTTP metrics as the `/mcp` route counts its answers.
    expect((await mcpHits()) - before).toBe(10);

    // A cached call sent chunked skips the early path, and is still answered before the budget.
    const chunked = await postChunked(`${s.url}/mcp`, { ...MCP_HEADERS, "x-forwarded-for": client }, JSON.stringify(marketCall(200, "bitcoin")));
    expect(chunked.status).toBe(200);
    expect(chunked.headers.ratelimit).toBeUndefined();
    expect(JSON.parse(chunked.body).result._meta).toMatchObject({ "marketgate/cache": "HIT" });

    // The rest of the budget goes to requests that are not cache hits: a listing, a JSON-RPC request the
    // SDK refuses, and then an uncached call is refused.
    const listed = await post(client, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("ratelimit")).toBe('"free";r=1;t=60');
    const invalid = await post(client, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: 5 } });
    expect(invalid.headers.get("ratelimit")).toBe('"free";r=0;t=60');
    expect((await json(invalid)).error.code).toBe(-32602);
    const refused = await post(client, marketCall(4, "ethereum"));
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ error: { code: "RATE_LIMITED", message: "rate limit of 3 free requests per minute exceeded" } });
    const initialize = await post(client, {
      jsonrpc: "2.0",
      id: 5,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    expect(initialize.status).toBe(429);

    // Cache hits stay unlimited once the budget is spent, as REST hits are.
    const hit = await post(client, marketCall(6, "bitcoin"));
    expect(hit.status).toBe(200);
    expect((await json(hit)).result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    // A body that is not JSON is refused by the body parser, as before (no work, no budget).
    const bad = await post(client, "{not json");
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { code: "BAD_REQUEST", message: "request body is not valid JSON" } });
  });

  it("charges the uncached call of one client without touching another client's budget", async () => {
    expect((await post("198.51.100.41", marketCall(1, "solana"))).headers.get("ratelimit")).toBe('"free";r=2;t=60');
    // Another client's cached call of the same entry is free for it too.
    const other = await post("198.51.100.42", marketCall(1, "solana"));
    expect(other.headers.get("ratelimit")).toBeNull();
    expect((await json(other)).result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    expect((await post("198.51.100.42", { jsonrpc: "2.0", id: 2, method: "tools/list" })).headers.get("ratelimit")).toBe('"free";r=2;t=60');
  });
});
