import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../src/config.js";
import { createService, type Service } from "../../src/service.js";
import { upgradeStatus } from "../helpers/ws-upgrade.js";
import { PAID_ENV_NO_CHAIN } from "../helpers/paid-env.js";

/** A paid service that needs no running chain until a payment arrives (credits on by default). */
const PAID = {
  ...PAID_ENV_NO_CHAIN,
  FREE_RATE_LIMIT_PER_MIN: "100000",
  RATE_LIMIT_PER_MIN: "100000",
};

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** The evil page's name, which DNS rebinding points at the victim's 127.0.0.1. */
const EVIL = "evil.example.com";

interface Running {
  /** `http://127.0.0.1:<port>`: where the test connects, whatever Host it sends. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a service from `env` listening on `host` (port 0). */
async function start(env: Record<string, string>, host: string): Promise<Running> {
  const service: Service = await createService({ config: loadConfig({ ...PAID, ...env }) });
  const l = await service.listen(0, host);
  const port = Number(new URL(l.url).port);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      await l.close();
      await service.close();
    },
  };
}

/** One request to 127.0.0.1 with exactly these headers (Node's fetch would set Host itself); status and parsed body. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: unknown }> {
  const to = new URL(base);
  return new Promise((resolve, reject) => {
    const r = request({ host: to.hostname, port: to.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON (an empty 204)
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    r.on("error", reject);
    r.end(body);
  });
}

/** The status of `POST <path>` (an MCP initialize) with Host `host` and, when given, `Origin`. */
async function initStatus(s: Running, path: string, host: string, origin?: string): Promise<number> {
  const res = await send(s.url, "POST", path, { ...MCP_HEADERS, host, ...(origin ? { origin } : {}) }, INITIALIZE);
  if (res.status === 403) expect(res.body, `${path} ${host} ${origin}`).toMatchObject({ error: { code: "FORBIDDEN" } });
  return res.status;
}

/** The status of a WebSocket upgrade at `/ws` with Host `host` and, when given, `Origin` ("open" never happens unsigned: 402). */
function wsStatus(s: Running, host: string, origin?: string): Promise<number | "open"> {
  return upgradeStatus(new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { host, ...(origin ? { origin } : {}) } }));
}

/**
 * Issue 31, finding 7: `POST /mcp` with `Host: evil.example.com` and `Origin: http://evil.example.com` answered
 * 200 on a loopback bind (DNS rebinding; the MCP transport spec: servers MUST validate Origin). Now a loopback
 * bind answers only loopback names and loopback or configured origins, a public bind only its configured
 * origins (PUBLIC_URL, PUBLIC_ORIGINS, CORS_ORIGINS when a list), on /mcp, /mcp/live and /ws. Clients without
 * an Origin (agents, curl, SDKs) are unaffected.
 */
describe("MCP and WebSocket endpoints refuse requests a foreign browser page could send", () => {
  let loop: Running;
  let open: Running;
  let proxied: Running;

  beforeAll(async () => {
    [loop, open, proxied] = await Promise.all([
      start({ HOST: "127.0.0.1", CORS_ORIGINS: "https://app.example" }, "127.0.0.1"),
      start(
        {
          HOST: "0.0.0.0",
          PUBLIC_URL: "https://data.example.com/mg",
          PUBLIC_ORIGINS: "https://alt.example.com",
          CORS_ORIGINS: "https://app.example.com, https://data.example.com",
        },
        "0.0.0.0",
      ),
      // Behind a reverse proxy on the same machine: loopback bind, PUBLIC_URL the proxy's.
      start({ HOST: "127.0.0.1", PUBLIC_URL: "https://data.example.com", TRUST_PROXY: "loopback" }, "127.0.0.1"),
    ]);
  });
  afterAll(async () => {
    await Promise.all([loop?.close(), open?.close(), proxied?.close()]);
  });

  it("loopback bind: the conformance suite's rebinding request (evil Host and Origin) is a 403 on /mcp and /mcp/live; loopback names pass", async () => {
    const self = `127.0.0.1:${loop.port}`;
    for (const path of ["/mcp", "/mcp/live"]) {
      expect(await initStatus(loop, path, EVIL, `http://${EVIL}`), path).toBe(403);
      // Either header alone is enough to refuse.
      expect(await initStatus(loop, path, EVIL), path).toBe(403);
      expect(await initStatus(loop, path, `${EVIL}:${loop.port}`), path).toBe(403);
      expect(await initStatus(loop, path, self, `http://${EVIL}`), path).toBe(403);
      expect(await initStatus(loop, path, self, "null"), path).toBe(403);
      expect(await initStatus(loop, path, self, `http://${EVIL}:${loop.port}`), path).toBe(403);
      // Non-browser clients send no Origin: every loopback name, any port (an SSH tunnel, a port forward).
      for (const host of [self, `localhost:${loop.port}`, "localhost:8080", `[::1]:${loop.port}`, "127.0.0.2", "LOCALHOST"])
        expect(await initStatus(loop, path, host), `${path} ${host}`).toBe(200);
      // Browser pages: loopback origins (local tools on other ports) and the CORS_ORIGINS list.
      for (const origin of [`http://${self}`, "http://localhost:6274", "https://[::1]", "https://app.example"])
        expect(await initStatus(loop, path, self, origin), `${path} ${origin}`).toBe(200);
      expect(await initStatus(loop, path, self, "http://app.example"), path).toBe(403);
    }
    // Express routes /MCP and /mcp/ to /mcp: guarded the same.
    for (const path of ["/MCP", "/mcp/", "/Mcp/Live/", "/mcp?toolsets=perp"]) expect(await initStatus(loop, path, EVIL, `http://${EVIL}`), path).toBe(403);
    // A CORS preflight from the evil page is refused too; one from an allowed page is answered.
    expect((await send(loop.url, "OPTIONS", "/mcp", { host: self, origin: `http://${EVIL}`, "access-control-request-method": "POST" })).status).toBe(403);
    expect((await send(loop.url, "OPTIONS", "/mcp", { host: self, origin: "http://localhost:6274", "access-control-request-method": "POST" })).status).toBe(204);
  });

  it("loopback bind: /ws refuses an evil Host or Origin before sign-in (403), and asks the others to sign in (402)", async () => {
    const self = `127.0.0.1:${loop.port}`;
    expect(await wsStatus(loop, EVIL, `http://${EVIL}`)).toBe(403);
    expect(await wsStatus(loop, EVIL)).toBe(403);
    expect(await wsStatus(loop, self, `http://${EVIL}`)).toBe(403);
    expect(await wsStatus(loop, self, "null")).toBe(403);
    expect(await wsStatus(loop, self)).toBe(402);
    expect(await wsStatus(loop, `localhost:${loop.port}`, "http://localhost:3000")).toBe(402);
    expect(await wsStatus(loop, self, "https://app.example")).toBe(402);
  });

  it("the REST routes keep answering every Host and Origin (CORS decides what a page may read)", async () => {
    expect((await send(loop.url, "GET", "/health", { host: EVIL, origin: `http://${EVIL}` })).status).toBe(200);
    expect((await send(open.url, "GET", "/health", { host: EVIL, origin: `http://${EVIL}` })).status).toBe(200);
  });

  it("public bind: any Host without an Origin (agents); browser Origins only from PUBLIC_URL, PUBLIC_ORIGINS and the CORS_ORIGINS list", async () => {
    for (const path of ["/mcp", "/mcp/live"]) {
      for (const host of [EVIL, "data.example.com", "10.0.0.5:4021", `127.0.0.1:${open.port}`]) expect(await initStatus(open, path, host), `${path} ${host}`).toBe(200);
      for (const origin of ["https://data.example.com", "https://alt.example.com", "https://DATA.example.com:443", "https://app.example.com"])
        expect(await initStatus(open, path, "data.example.com", origin), `${path} ${origin}`).toBe(200);
      for (const origin of [`http://${EVIL}`, "http://data.example.com", "https://data.example.com:8443", "http://localhost:6274", `http://127.0.0.1:${open.port}`, "null"])
        expect(await initStatus(open, path, "data.example.com", origin), `${path} ${origin}`).toBe(403);
    }
    expect(await wsStatus(open, EVIL)).toBe(402);
    expect(await wsStatus(open, "data.example.com", "https://alt.example.com")).toBe(402);
    expect(await wsStatus(open, "data.example.com", `http://${EVIL}`)).toBe(403);
    expect(await wsStatus(open, "data.example.com", "http://localhost:6274")).toBe(403);
  });

  it("loopback bind behind a reverse proxy: PUBLIC_URL's host and origin pass, as the proxy forwards them; another still does not", async () => {
    const self = `127.0.0.1:${proxied.port}`;
    expect(await initStatus(proxied, "/mcp", "data.example.com", "https://data.example.com")).toBe(200);
    expect(await initStatus(proxied, "/mcp", self, "https://data.example.com")).toBe(200);
    // Under TRUST_PROXY the name checked is the one the proxy forwards (X-Forwarded-Host).
    const forwarded = (xfh: string) => send(proxied.url, "POST", "/mcp", { ...MCP_HEADERS, host: self, "x-forwarded-host": xfh }, INITIALIZE).then((r) => r.status);
    expect(await forwarded("data.example.com")).toBe(200);
    expect(await forwarded(EVIL)).toBe(403);
    expect(await initStatus(proxied, "/mcp", EVIL, `http://${EVIL}`)).toBe(403);
    expect(await wsStatus(proxied, "data.example.com", "https://data.example.com")).toBe(402);
    expect(await wsStatus(proxied, EVIL)).toBe(403);
  });
});
