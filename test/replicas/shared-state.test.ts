import { randomBytes } from "node:crypto";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { provisionLocalChain, usdcBalanceOf, type ProvisionedChain } from "../../src/payments/local-chain/provision.js";
import { offlineServiceEnv } from "../../src/sandbox/sim-env.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { paymentRequired } from "../helpers/pay.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

/**
 * Three service processes (the production entry) behind no load balancer but one Redis: the response
 * cache, the single-flight of misses, the rate limit and the payment ledger behave as one service.
 */
describe.skipIf(!redisAvailable)("three replicas sharing one Redis", () => {
  let sim: RunningSimulator;
  let anvil: AnvilHandle;
  let chain: ProvisionedChain;
  let replicas: ServiceProcess[] = [];
  const prefix = `test:${randomBytes(4).toString("hex")}:`;
  const balance = (address: `0x${string}`) => usdcBalanceOf(anvil.rpcUrl, chain.usdcAddress, address);
  const payer = (i: number) => chain.funded[i]!;
  const payFetch = (i: number) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
  const url = (r: number, path: string) => `${replicas[r]!.url}${path}`;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11 });
    anvil = await startAnvil({ port: 0, chainId: 8453 });
    chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
    const env = {
      ...offlineServiceEnv(sim, chain, anvil.rpcUrl),
      REDIS_URL,
      REDIS_PREFIX: prefix,
      STREAMS: "off",
      ALERTS: "off",
      // The limit test speaks for one client address of its own (X-Forwarded-For), as a load balancer on
      // loopback would forward it (TRUST_PROXY=true is refused: it would trust what clients write).
      TRUST_PROXY: "loopback",
    };
    replicas = await Promise.all([0, 1, 2].map(() => startServiceProcess(env)));
  }, 300_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.kill()));
    await Promise.allSettled([sim?.close(), anvil?.stop()]);
    await deleteRedisPrefix(prefix);
  });

  it("a cache miss paid on one replica is a free hit on the others", async () => {
    const before = await balance(payer(0).address);
    const paid = await payFetch(0)(url(0, "/api/v1/market/bitcoin"));
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-cache")).toBe("MISS");
    const body: unknown = await paid.json();
    for (const r of [1, 2]) {
      const hit = await fetch(url(r, "/api/v1/market/bitcoin"));
      expect(hit.status).toBe(200);
      expect(hit.headers.get("x-cache")).toBe("HIT");
      expect(((await hit.json()) as { data: unknown }).data).toEqual((body as { data: unknown }).data);
    }
    expect(await balance(payer(0).address)).toBe(before - 5000n);
  });

  it("one authorization runs the handler once across replicas: one paid 200, no other charge, one transfer", async () => {
    const path = "/api/v1/market/ethereum";
    const required = await paymentRequired(url(0, path));
    const client = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(1).privateKey)));
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    const before = await balance(payer(1).address);
    const calls = sim.faults.requestCount("coingecko");
    const answers = await Promise.all([0, 1, 2, 0, 1, 2].map((r) => fetch(url(r, path), { headers: { "PAYMENT-SIGNATURE": header } })));
    // One paid answer; the others are refused (authorization in use or spent), or, arriving after the paid
    // one was cached, free cache hits without a charge.
    const paid = answers.filter((a) => a.status === 200 && a.headers.get("x-cache") === "MISS");
    expect(paid).toHaveLength(1);
    expect(paid[0]!.headers.get("payment-response")).toBeTruthy();
    const rest = answers.filter((a) => a !== paid[0]);
    expect(rest.every((a) => a.status === 402 || (a.status === 200 && a.headers.get("x-cache") === "HIT" && !a.headers.get("payment-response")))).toBe(true);
    expect(await balance(payer(1).address)).toBe(before - 5000n);
    expect(sim.faults.requestCount("coingecko") - calls).toBe(1);
  });

  it("a burst of identical paid misses on every replica makes one upstream call", async () => {
    const path = "/api/v1/market/solana";
    // Slow the venue so that the six executions overlap.
    sim.faults.inject("coingecko", { kind: "timeout", delayMs: 600 }, 1);
    const calls = sim.faults.requestCount("coingecko");
    const answers = await Promise.all([2, 3, 4, 5, 6, 7].map((p, i) => payFetch(p)(url(i % 3, path))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as Array<{ data: unknown }>;
    expect(new Set(bodies.map((b) => JSON.stringify(b.data))).size).toBe(1);
    expect(sim.faults.requestCount("coingecko") - calls).toBe(1);
  });

  it("the 500 per minute per IP limit of uncached requests holds in total across three replicas", async () => {
    const client = { "X-Forwarded-For": "198.51.100.7" };
    const statuses: number[] = [];
    // 510 uncached requests (402s: each consumes a point before the payment check), round-robin, 30 at a time.
    for (let i = 0; i < 17; i++) {
      statuses.push(...(await Promise.all(Array.from({ length: 30 }, (_, j) => fetch(url((i * 30 + j) % 3, "/funding-rate/BTC"), { headers: client }).then((r) => r.status)))));
    }
    expect(statuses.filter((s) => s === 402)).toHaveLength(500);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const refused = await fetch(url(1, "/funding-rate/ETH"), { headers: client });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another client is not affected.
    expect((await fetch(url(2, "/funding-rate/ETH"), { headers: { "X-Forwarded-For": "198.51.100.8" } })).status).toBe(402);
  });
});
