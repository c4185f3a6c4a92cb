import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FacilitatorClient } from "@x402/core/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Readiness } from "../../src/doctor/readiness.js";
import { logger } from "../../src/lib/log.js";
import { startLocalSolana } from "../../src/payments/local-chain/solana/index.js";
import { RedisHandle } from "../../src/state/redis.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

/** A JSON-RPC endpoint answering `eth_chainId` with `chainIdHex`. */
async function fakeRpc(chainIdHex: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: chainIdHex })));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

const facilitator = (getSupported: FacilitatorClient["getSupported"]) => ({ getSupported }) as FacilitatorClient;

describe("GET /ready beside /health", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack({ STREAMS: "off", ALERTS: "off" });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("answers 200 with every component: unconfigured ones say so, each venue family is ok (probed, then from recent calls)", async () => {
    const r = await s.get("/ready");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toMatchObject({
      status: "ready",
      components: {
        redis: { status: "not_configured" },
        chain_rpc: { status: "not_configured" },
        solana_rpc: { status: "not_configured" },
        facilitator: { status: "not_configured" },
        perp_venues: { status: "ok" },
        dex_venues: { status: "ok" },
        cex_venues: { status: "ok" },
      },
    });
    expect(Date.parse(r.body.checked_at)).toBeGreaterThan(0);
    // A fresh readiness over the same venue health: the probes' successes are recent calls now, nothing is probed.
    const again = await new Readiness({ health: s.service.ctx.health, venues: s.service.ctx.venues }).check();
    for (const family of ["perp_venues", "dex_venues", "cex_venues"]) expect(again.components[family], family).toMatchObject({ status: "ok", via: "recent_call" });
    expect((await s.get("/health")).body).toEqual({ status: "ok" });
  });

  it("is listed among the free endpoints; Prometheus default metrics carry their standard names", async () => {
    expect((await s.get("/")).body.free_endpoints).toEqual(expect.arrayContaining(["GET /health", "GET /ready"]));
    const text = await (await fetch(`${s.url}/metrics`)).text();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).not.toContain("marketgate_process_");
    expect(text).not.toContain("marketgate_nodejs_");
    expect(text).toContain("marketgate_http_requests_total");
  });

  it("fails a family only when none of its venues answers; the report names each failure", async () => {
    const { health, venues } = s.service.ctx;
    // recentMs 0: every family is probed on every check.
    const probing = new Readiness({ health, venues, recentMs: 0, cacheMs: 0, timeoutMs: 2000 });
    s.sim.faults.inject("dexscreener", { kind: "server_error", status: 503 }, Infinity);
    try {
      const oneDown = await probing.check();
      expect(oneDown.status).toBe("ready");
      expect(oneDown.components.dex_venues).toMatchObject({ status: "ok", venue: "geckoterminal", via: "probe", failed: [{ venue: "dexscreener" }] });
      s.sim.faults.inject("geckoterminal", { kind: "server_error", status: 503 }, Infinity);
      const allDown = await probing.check();
      expect(allDown.status).toBe("not_ready");
      expect(allDown.components.dex_venues).toMatchObject({ status: "fail", error: "no dex venue reachable" });
      expect((allDown.components.dex_venues!.failed as Array<{ venue: string }>).map((f) => f.venue)).toEqual(["dexscreener", "geckoterminal"]);
      expect(allDown.components.perp_venues).toMatchObject({ status: "ok", via: "probe" });
    } finally {
      s.sim.faults.clear();
    }
  });

  it("does not wait for a hanging venue: the next one is probed after hedgeMs", async () => {
    const { health, venues } = s.service.ctx;
    const probing = new Readiness({ health, venues, recentMs: 0, cacheMs: 0, timeoutMs: 5000, hedgeMs: 300 });
    s.sim.faults.inject("binance", { kind: "timeout", delayMs: 8000 }, Infinity);
    try {
      const started = Date.now();
      const report = await probing.check();
      expect(report.components.perp_venues).toMatchObject({ status: "ok", venue: "bybit", via: "probe" });
      // Binance was still running, not failed, when Bybit answered.
      expect(report.components.perp_venues).not.toHaveProperty("failed");
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      s.sim.faults.clear();
    }
  });

  it("checks the Solana RPC the self facilitator settles through: the local VM's answers, a dead port fails", async () => {
    const { health, venues } = s.service.ctx;
    const solana = await startLocalSolana({ rpcPort: 0 });
    try {
      const good = await new Readiness({ health, venues, solanaRpcUrl: solana.rpc.url }).check();
      expect(good.components.solana_rpc).toMatchObject({ status: "ok" });
      expect(good.status).toBe("ready");
      const bad = await new Readiness({ health, venues, solanaRpcUrl: "http://127.0.0.1:1/", timeoutMs: 1000 }).check();
      expect(bad.components.solana_rpc).toMatchObject({ status: "fail" });
      expect(bad.status).toBe("not_ready");
    } finally {
      await solana.close();
    }
  });

  it("checks Redis, the chain RPC (chain id against NETWORK) and the facilitator when configured", async () => {
    const { health, venues } = s.service.ctx;
    const rpc = await fakeRpc("0x2105");
    const down = new RedisHandle({ url: "redis://127.0.0.1:1", prefix: "mg-ready:", log: logger });
    try {
      const good = await new Readiness({
        health,
        venues,
        rpcUrl: rpc.url,
        network: "eip155:8453",
        facilitator: facilitator(async () => ({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }], extensions: [], signers: {} })),
      }).check();
      expect(good.status).toBe("ready");
      expect(good.components.chain_rpc).toMatchObject({ status: "ok", chain_id: 8453 });
      expect(good.components.facilitator).toMatchObject({ status: "ok", kinds: 1 });

      const bad = await new Readiness({
        health,
        venues,
        redis: down,
        rpcUrl: rpc.url,
        network: "eip155:1",
        facilitator: facilitator(() => Promise.reject(new Error("connect ECONNREFUSED https://facilitator.example/secret-key/supported"))),
      }).check();
      expect(bad.status).toBe("not_ready");
      expect(bad.components.redis).toMatchObject({ status: "fail" });
      expect(bad.components.chain_rpc).toMatchObject({ status: "fail", error: "eth_chainId 8453, NETWORK expects 1" });
      expect(bad.components.facilitator).toMatchObject({ status: "fail" });
      // Errors are shown to anyone: URLs are redacted.
      expect(JSON.stringify(bad)).not.toContain("secret-key");
    } finally {
      await down.close();
      await rpc.close();
    }
  });
});

describe("GET /ready with an unreachable Redis", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack({ STREAMS: "off", ALERTS: "off", REDIS_URL: "redis://127.0.0.1:1", REDIS_PREFIX: "mg-ready-down:" });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("answers 503 naming the failed component while /health stays 200", async () => {
    const r = await s.get("/ready");
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ status: "not_ready", components: { redis: { status: "fail" }, perp_venues: { status: "ok" } } });
    expect((await s.get("/health")).status).toBe(200);
  });
});
