import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RETRY_AFTER_META } from "../../mcp/catalog.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";

/* An MCP tools/call error says how long to wait, as the HTTP answer of the same error does with Retry-After. */
describe("MCP tools/call errors carry the Retry-After of HTTP", () => {
  let s: FreeStack;
  const clients: Client[] = [];

  /** An MCP SDK client on /mcp, as client `ip` (TRUST_PROXY=1: the service believes X-Forwarded-For). */
  const connect = async (ip: string): Promise<Client> => {
    const client = new Client({ name: "retry-after-test", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { "x-forwarded-for": ip } } }));
    clients.push(client);
    return client;
  };
  /** The error JSON of an isError result (its one text content). */
  const errorOf = (result: CallToolResult) => {
    expect(result.isError).toBe(true);
    return JSON.parse((result.content[0] as { text: string }).text);
  };
  const httpGet = (path: string, ip: string) => fetch(`${s.url}${path}`, { headers: { "x-forwarded-for": ip } });

  beforeAll(async () => {
    // One uncached call per client and minute; the free routes (each POST /mcp) are not what is tested here.
    s = await startFreeStack({ TRUST_PROXY: "1", RATE_LIMIT_PER_MIN: "1", FREE_RATE_LIMIT_PER_MIN: "10000", STREAMS: "off", ALERTS: "off" });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await s?.close();
  });
  beforeEach(() => s.sim.faults.clear());

  it("RATE_LIMITED: retry_after_sec in the error JSON and in _meta, as HTTP's 429 sends Retry-After", async () => {
    const ip = "198.51.100.71";
    const client = await connect(ip);
    const first = (await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as CallToolResult;
    expect(first.isError).toBeFalsy();

    const refused = (await client.callTool({ name: "cex_market", arguments: { id: "ethereum" } })) as CallToolResult;
    const body = errorOf(refused);
    expect(body.error).toMatchObject({ code: "RATE_LIMITED", message: "rate limit of 1 uncached requests per minute exceeded" });
    expect(body.retry_after_sec).toBeGreaterThanOrEqual(1);
    expect(body.retry_after_sec).toBeLessThanOrEqual(60);
    expect(refused._meta?.[RETRY_AFTER_META]).toBe(body.retry_after_sec);

    // The same client over HTTP, in the same window: the same limit, and the wait as a header.
    const res = await httpGet("/api/v1/market/solana", ip);
    expect(res.status).toBe(429);
    expect((await json(res)).error.code).toBe("RATE_LIMITED");
    expect(Math.abs(Number(res.headers.get("retry-after")) - body.retry_after_sec)).toBeLessThanOrEqual(1);
  });

  it("UPSTREAM_UNAVAILABLE (most venues down): the same 10 s over MCP as Retry-After over HTTP; errors without a wait carry none", async () => {
    // More than half of the venues down.
    for (const v of PERP_VENUES.slice(0, Math.floor(PERP_VENUES.length / 2) + 1)) s.sim.faults.inject(v, { kind: "server_error", status: 500 }, Infinity);
    const client = await connect("198.51.100.72");
    const failed = (await client.callTool({ name: "open_interest", arguments: { symbol: "ETH" } })) as CallToolResult;
    const body = errorOf(failed);
    expect(body.error.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(body.retry_after_sec).toBe(10);
    expect(failed._meta?.[RETRY_AFTER_META]).toBe(10);

    const res = await httpGet("/futures/open-interest/ETH", "198.51.100.73");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("10");

    // An error with nothing to wait for (bad input) has no retry_after_sec, as HTTP has no Retry-After.
    const bad = (await client.callTool({ name: "open_interest", arguments: { symbol: "NOT A SYMBOL" } })) as CallToolResult;
    expect(errorOf(bad)).not.toHaveProperty("retry_after_sec");
    expect(bad._meta?.[RETRY_AFTER_META]).toBeUndefined();
  });
});
