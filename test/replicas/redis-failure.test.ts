import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { until } from "../helpers/wait.js";
import { redisAvailable } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

/**
 * A replica whose Redis goes away and comes back: data requests keep being answered (cache and rate
 * limit fall back to the process), paid requests are refused with 503 and nothing is charged, alert
 * writes are refused with 503, and everything works again once Redis is back, without a restart.
 */
describe.skipIf(!redisAvailable)("a replica losing its Redis", () => {
  let stack: OfflineStack;
  let proxy: RedisProxy;
  const prefix = `test:${randomBytes(4).toString("hex")}:`;
  const get = (path: string) => fetch(`${stack.url}${path}`);

  beforeAll(async () => {
    proxy = await startRedisProxy();
    stack = await startOfflineStack({ env: { REDIS_URL: proxy.url, REDIS_PREFIX: prefix, STREAMS: "off", RATE_LIMIT_PER_MIN: "1000" } });
    await until("redis to connect", async () => stack.service.ctx.redis?.ready);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
    await deleteRedisPrefix(prefix);
  });

  it("keeps answering, refuses what it cannot record, and recovers by itself", async () => {
    const payer = stack.payers[8]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    const paid = await pay(`${stack.url}/api/v1/market/bitcoin`);
    expect(paid.status).toBe(200);

    await proxy.cut();
    // A cache hit is served from the replica's own level.
    const hit = await get("/api/v1/market/bitcoin");
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    // A miss still gets its 402 (the limit falls back to memory); paying is refused: 503, nothing charged.
    expect((await get("/api/v1/market/ethereum")).status).toBe(402);
    const before = await stack.balanceOf(payer.address);
    const refused = await pay(`${stack.url}/api/v1/market/ethereum`);
    expect(refused.status).toBe(503);
    expect((await json(refused)).error.message).toMatch(/payment ledger \(Redis\) is unreachable.*nothing was charged/);
    expect(await stack.balanceOf(payer.address)).toBe(before);
    // Alert writes are refused before payment rather than accepted and lost.
    const alert = await fetch(`${stack.url}/liquidation/alert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ symbol: "BTC", webhook_url: "https://93.184.215.14/hook" }),
    });
    expect(alert.status).toBe(503);
    expect((await get("/liquidation/alerts")).status).toBe(503);
    expect((await get("/health")).status).toBe(200);

    await proxy.restore();
    await until("redis to reconnect", async () => stack.service.ctx.redis?.ready, 10_000);
    const again = await pay(`${stack.url}/api/v1/market/ethereum`);
    expect(again.status).toBe(200);
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
    expect((await get("/liquidation/alerts")).status).toBe(200);
  }, 60_000);
});
