import { request } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A `tools/call` JSON-RPC request. */
function toolCall(id: unknown, args: Record<string, unknown>, meta?: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name: "cex_market_history", arguments: args, ...(meta ? { _meta: meta } : {}) } };
}

/** Status, headers (without `Date` and the free budget's moving `RateLimit` count) and body bytes. */
async function snapshot(res: Response): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "date" && k !== "ratelimit"));
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()).toString("utf8") };
}

/** A POST whose `Content-Type` header line is repeated (fetch would join them into one). */
function postTwoContentTypes(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST" }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.setHeader("accept", MCP_HEADERS.accept);
    req.setHeader("content-type", ["application/json", "application/json"]);
    req.on("error", reject);
    req.end(body);
  });
}

describe("MCP cached calls answered without the SDK server (mcp/cached-call.ts)", () => {
  let s: FreeStack;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());
  afterEach(() => vi.restoreAllMocks());

  it("sends the bytes and headers the SDK server sends for the same cached call", async () => {
    const args = { id: "bitcoin", days: 7 };
    const first = await post(toolCall(1, args)); // a miss, through the SDK: parsed, remembered, committed
    expect((await json(first)).result._meta).toMatchObject({ "marketgate/cache": "MISS" });

    const spy = vi.spyOn(s.service.mcp, "cachedResult");
    /** Sends one request, saying whether the cached-call path answered it. */
    const send = async (body: unknown) => {
      spy.mockClear();
      const r = await snapshot(await post(body));
      return { r, cached: spy.mock.results.some((x) => x.value !== undefined) };
    };
    for (const id of [7, 0, "id with \"quotes\", \\ and ☃", ""]) {
      // An unknown `_meta` key sends the same call through the SDK (the SDK looks at `_meta`), which answers the hit.
      const { r: sdk, cached: sdkCached } = await send(toolCall(id, args, { "example/trace": "x" }));
      expect(sdkCached).toBe(false);
      const { r: fast, cached } = await send(toolCall(id, args));
      expect(cached).toBe(true);
      expect(JSON.parse(fast.body).result._meta).toMatchObject({ "marketgate/cache": "HIT", "marketgate/data-source": "simulated" });
      expect(fast).toEqual(sdk);
      expect(Object.keys(fast.headers)).toEqual(Object.keys(sdk.headers));
    }
    // A hit is free: a payment or credits in `_meta` changes nothing.
    const paidHit = await send(toolCall(7, args, { "x402/payment": { x402Version: 2 } }));
    expect(paidHit.cached).toBe(true);
    expect(paidHit.r).toEqual((await send(toolCall(7, args))).r);
  });

  it("leaves to the SDK whatever it would answer otherwise (headers, batches, ids, other methods)", async () => {
    const args = { id: "ethereum", days: 7 };
    await post(toolCall(1, args));
    expect((await json(await post(toolCall(2, args)))).result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    const spy = vi.spyOn(s.service.mcp, "cachedResult");

    expect((await post(toolCall(3, args), { "mcp-protocol-version": "1999-01-01" })).status).toBe(400);
    expect((await post(toolCall(3, args), { accept: "application/json" })).status).toBe(406);
    expect(await postTwoContentTypes(`${s.url}/mcp`, JSON.stringify(toolCall(3, args)))).toBe(415);
    expect((await post(toolCall(1.5, args))).status).toBe(400);
    expect(spy).not.toHaveBeenCalled();

    const batch = await post([toolCall(4, args), toolCall(5, args)]);
    expect(batch.status).toBe(200);
    expect((await json(batch))[1].result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    const listed = await post({ jsonrpc: "2.0", id: 6, method: "tools/list" });
    expect((await json(listed)).result.tools.length).toBeGreaterThan(0);
    expect(spy).not.toHaveBeenCalled();
  });
});
