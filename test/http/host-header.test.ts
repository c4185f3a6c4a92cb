import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { logger } from "../../src/lib/log.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { upgradeStatus } from "../helpers/ws-upgrade.js";

/** Host values that are not `name[:port]` / `[IPv6][:port]` (issue 20, finding 6). */
const BAD_HOSTS = ["[::1", "a b", "%zz", "@@", "x:99999", "[not-ipv6]:80", "a/b", "u@h"];

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** One request with exactly these headers (Node's fetch would replace Host); the answer's status, type and body. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; type: string; body: string }> {
  const to = new URL(base);
  return new Promise((resolve, reject) => {
    const r = request({ host: to.hostname, port: to.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body: Buffer.concat(chunks).toString("utf8") }));
    });
    r.on("error", reject);
    r.end(body);
  });
}

/** The raw HTTP/1.1 answer to `head` (request line and headers) sent on its own connection (Node's client never sends an empty Host). */
function sendRaw(base: string, head: string): Promise<string> {
  const to = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(to.port), to.hostname, () => socket.write(`${head}\r\nConnection: close\r\n\r\n`));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
  });
}

describe("a malformed Host header is the caller's error: 400 with the JSON error body, never a 500, nothing logged at error level", () => {
  let stack: OfflineStack;
  const errorLines = () => [...vi.mocked(logger.error).mock.calls, ...vi.mocked(logger.fatal).mock.calls];

  beforeAll(async () => {
    // Payments on (the paid routes build origins and resource URLs); TRUST_PROXY so that X-Forwarded-Host is read.
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", TRUST_PROXY: "loopback" } });
    vi.spyOn(logger, "error");
    vi.spyOn(logger, "fatal");
  });
  afterEach(() => vi.mocked(logger.error).mockClear());
  afterAll(async () => {
    vi.restoreAllMocks();
    await stack?.close();
  });

  const routes: Array<[string, string, Record<string, string>, string?]> = [
    ["GET", "/api/v1/prices?symbols=btc", {}],
    ["POST", "/liquidation/alert", { "content-type": "application/json" }, JSON.stringify({ symbol: "BTC" })],
    ["POST", "/api/v1/credits", { "content-type": "application/json" }, JSON.stringify({ amount_usd: "1" })],
    ["GET", "/health", {}],
    ["GET", "/.well-known/x402", {}],
    ["GET", "/stream/liquidations", {}],
    ["POST", "/mcp", { "content-type": "application/json", accept: "application/json, text/event-stream" }, INITIALIZE],
    ["POST", "/mcp/live", { "content-type": "application/json", accept: "application/json, text/event-stream" }, INITIALIZE],
  ];

  it("Host [::1, a b, %zz, @@ (and other junk) on paid routes, free routes, /mcp and /mcp/live: 400 BAD_REQUEST", async () => {
    for (const host of BAD_HOSTS) {
      for (const [method, path, headers, body] of routes) {
        const res = await send(stack.url, method, path, { ...headers, host }, body);
        const what = `${method} ${path} with Host ${JSON.stringify(host)}`;
        expect(res.status, what).toBe(400);
        expect(res.type, what).toMatch(/^application\/json/);
        expect(JSON.parse(res.body), what).toEqual({ error: { code: "BAD_REQUEST", message: "malformed Host header: expected host[:port]" } });
      }
    }
    for (const path of ["/api/v1/prices?symbols=btc", "/health"]) {
      const raw = await sendRaw(stack.url, `GET ${path} HTTP/1.1\r\nHost: `);
      expect(raw, `empty Host on ${path}`).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw).toContain('"code":"BAD_REQUEST"');
    }
    expect(errorLines()).toEqual([]);
  });

  it("a malformed X-Forwarded-Host from a trusted proxy is refused the same way; the WebSocket upgrade too", async () => {
    for (const xfh of ["[::1", "a b", "%zz", "@@"]) {
      const res = await send(stack.url, "GET", "/api/v1/prices?symbols=btc", { "x-forwarded-host": xfh });
      expect(res.status, xfh).toBe(400);
      expect(JSON.parse(res.body).error.message).toMatch(/X-Forwarded-Host/);
      expect(await upgradeStatus(new WebSocket(`${stack.url.replace("http", "ws")}/ws`, { headers: { host: xfh } })), xfh).toBe(400);
    }
    expect(errorLines()).toEqual([]);
  });

  it("well-formed Host values still reach the routes: names with ports, IPv6 literals, and the paid route's 402", async () => {
    for (const host of [new URL(stack.url).host, "localhost", "[::1]:4021", "api.example.com:443", "other-x402-service.example"]) {
      expect((await send(stack.url, "GET", "/health", { host })).status, host).toBe(200);
      const paid = await send(stack.url, "GET", "/api/v1/prices?symbols=btc", { host });
      expect(paid.status, host).toBe(402);
    }
    expect(errorLines()).toEqual([]);
  });
});
