import { request } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { ENVELOPE, MODERN, modernHeaders } from "../helpers/mcp.js";

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

/** Status, headers (without `Date` and `RateLimit`) and body of a raw POST of `body` to `url`. */
type RawAnswer = { status: number; headers: Record<string, unknown>; body: string };

/**
 * POSTs `body` with `Content-Length` (which the early path reads itself) or chunked (which it leaves to
 * the app's JSON body parser), so that the two readings of the same bytes can be compared.
 */
function rawPost(url: string, body: Buffer, chunked: boolean, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { ...MCP_HEADERS, ...headers, ...(chunked ? {} : { "content-length": String(body.length) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const { date: _date, ratelimit: _ratelimit, ...rest } = res.headers;
        resolve({ status: res.statusCode ?? 0, headers: rest, body: Buffer.concat(chunks).toString("utf8") });
      });
    });
    req.on("error", reject);
    if (chunked && body.length > 1) req.write(body.subarray(0, 1));
    req.end(chunked && body.length > 1 ? body.subarray(1) : body);
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
    for (const id of [7, 0, 'id with "quotes", \\ and ☃', ""]) {
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

  it("reads a body as the app's JSON body parser does: the same answer for the same bytes, whoever parses them", async () => {
    const args = { id: "solana", days: 7 };
    await post(toolCall(1, args)); // a miss: parsed, remembered, committed
    const call = JSON.stringify(toolCall(2, args));
    // Each body, and whether the early path answers it from the cache (everything else goes on to the SDK).
    const bodies: Array<[string | Buffer, boolean]> = [
      [call, true],
      [`\uFEFF${call}`, true], // a byte order mark, which the parser drops
      [` \r\n\t${call}\n`, true],
      [JSON.stringify(toolCall("☃ \u0000 id", args)), true],
      // Invalid UTF-8 in the id: decoded to U+FFFD by both.
      [
        Buffer.concat([
          Buffer.from('{"jsonrpc":"2.0","id":"'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(`","method":"tools/call","params":${JSON.stringify({ name: "cex_market_history", arguments: args })}}`),
        ]),
        true,
      ],
      ["{not json", false],
      ['"a string"', false],
      ["null", false],
      ["{}", false],
      ["[]", false],
      [`[${call}]`, false],
      [JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }), false],
    ];
    const spy = vi.spyOn(s.service.mcp, "cachedResult");
    for (const [body, fast] of bodies) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
      spy.mockClear();
      const early = await rawPost(`${s.url}/mcp`, bytes, false);
      expect(
        spy.mock.results.some((x) => x.value !== undefined),
        bytes.toString("utf8"),
      ).toBe(fast);
      const parser = await rawPost(`${s.url}/mcp`, bytes, true);
      expect(parser, bytes.toString("utf8")).toEqual(early);
    }
    // The cached ones were cache hits either way, and the refused ones the parser's own errors.
    expect(JSON.parse((await rawPost(`${s.url}/mcp`, Buffer.from(`\uFEFF${call}`), false)).body).result._meta).toMatchObject({ "marketgate/cache": "HIT" });
    const notJson = await rawPost(`${s.url}/mcp`, Buffer.from("{not json"), false);
    expect(notJson.status).toBe(400);
    expect(notJson.headers["access-control-allow-origin"]).toBe("*");
    expect(JSON.parse(notJson.body)).toMatchObject({ error: { code: "BAD_REQUEST", message: "request body is not valid JSON" } });
    // Larger than the parser's limit: its 413, without reading it here.
    const large = await rawPost(`${s.url}/mcp`, Buffer.from(JSON.stringify(toolCall(4, { ...args, pad: "x".repeat(70_000) }))), false);
    expect(large.status).toBe(413);
    // Other charsets and content types are the parser's (415), as before.
    const latin1 = await rawPost(`${s.url}/mcp`, Buffer.from(call), false, { "content-type": "application/json; charset=latin1" });
    expect(latin1.status).toBe(415);
    expect(JSON.parse((await rawPost(`${s.url}/mcp`, Buffer.from(call), false, { "content-type": "application/json; charset=UTF-8" })).body).result._meta).toMatchObject({
      "marketgate/cache": "HIT",
    });
  });

  it("answers 2026-07-28 cached calls with the bytes the SDK's modern leg sends (resultType, serverInfo), and leaves it the rest", async () => {
    const args = { id: "cardano", days: 7 };
    const modern = (id: unknown, meta: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      post(toolCall(id, args, { ...ENVELOPE, ...meta }), { ...modernHeaders("tools/call", "cex_market_history"), ...headers });
    expect((await json(await modern(1))).result._meta).toMatchObject({ "marketgate/cache": "MISS" });
    const spy = vi.spyOn(s.service.mcp, "cachedResult");
    const send = async (id: unknown, meta?: Record<string, unknown>, headers?: Record<string, string>) => {
      spy.mockClear();
      const r = await snapshot(await modern(id, meta, headers));
      return { r, cached: spy.mock.results.some((x) => x.value !== undefined) };
    };
    for (const id of [7, "modern ☃"]) {
      // A `_meta` key of its own sends the call through the SDK's modern leg, which answers the hit.
      const sdk = await send(id, { "example/trace": "x" });
      expect(sdk.cached).toBe(false);
      const fast = await send(id);
      expect(fast.cached).toBe(true);
      expect(JSON.parse(fast.r.body).result).toMatchObject({
        resultType: "complete",
        _meta: { "marketgate/cache": "HIT", "io.modelcontextprotocol/serverInfo": { name: "marketgate" } },
      });
      expect(fast.r).toEqual(sdk.r);
      expect(Object.keys(fast.r.headers)).toEqual(Object.keys(sdk.r.headers));
      // Paying `_meta` keys beside the envelope change nothing on a (free) hit.
      expect((await send(id, { "x402/payment": { x402Version: 2 } })).r).toEqual(fast.r);
    }
    // What the modern leg looks at more closely goes to it: a mismatched Mcp-Name, capabilities that fail the
    // schema, another version in the envelope than the header's.
    spy.mockClear();
    expect((await modern(8, {}, { "mcp-name": "cex_market" })).status).toBe(400);
    expect((await modern(8, { "io.modelcontextprotocol/clientCapabilities": { roots: "no" } })).status).toBe(400);
    expect((await modern(8, { "io.modelcontextprotocol/protocolVersion": "2025-11-25" })).status).toBe(400);
    expect(spy.mock.results.some((x) => x.value !== undefined)).toBe(false);
    // The legacy answer of the same entry is the 2025 shape (no resultType), from the same cache entry.
    const legacy = await json(await post(toolCall(9, args)));
    expect(legacy.result.resultType).toBeUndefined();
    expect(legacy.result._meta).toEqual({ "marketgate/data-source": "simulated", "marketgate/cache": "HIT" });
    expect(MODERN).toBe("2026-07-28");
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
