import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { RedisPaymentLedger } from "../../src/payments/ledger.js";
import { RedisHandle } from "../../src/state/redis.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";

const receipt = { success: true, transaction: "0xabc", network: "eip155:8453" as const, payer: "0x1" };

/** The payment ledger in Redis, as several replicas see it: claims and owed runs are atomic. */
describe.skipIf(!redisAvailable)("payment ledger in Redis", () => {
  const prefix = `test:${randomBytes(4).toString("hex")}:`;
  let redis: RedisHandle;
  let handles: RedisHandle[] = [];
  let ledgers: RedisPaymentLedger[];

  beforeAll(async () => {
    redis = new RedisHandle({ url: REDIS_URL, prefix, log: logger });
    redis.start();
    await redis.waitReady();
    // Three "replicas": three ledgers on three connections.
    handles = [redis, ...[1, 2].map(() => new RedisHandle({ url: REDIS_URL, prefix, log: logger }))];
    for (const h of handles.slice(1)) h.start();
    await Promise.all(handles.map((h) => h.waitReady()));
    ledgers = handles.map((h) => new RedisPaymentLedger(h, 60_000));
  });
  afterAll(async () => {
    for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await redis.client.del(keys);
    await Promise.all(handles.map((h) => h.close()));
  });

  it("lets exactly one of many concurrent claims of an authorization win", async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => ledgers[i % 3]!.claim("auth-a")));
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    expect(results.filter((r) => r?.state === "in_flight")).toHaveLength(11);
  });

  it("hands an owed run to exactly one retry of the same request, keeping the TTL", async () => {
    const owed = { state: "prepaid" as const, fingerprint: "tool:{a}", digest: "d1", receipt };
    await ledgers[0]!.claim("auth-b");
    await ledgers[0]!.set("auth-b", owed);
    expect(await ledgers[1]!.compareAndSet("auth-b", { ...owed, fingerprint: "tool:{other}" }, { state: "in_flight" })).toBe(false);
    const observed = await ledgers[1]!.claim("auth-b");
    const taken = await Promise.all(Array.from({ length: 9 }, (_, i) => ledgers[i % 3]!.compareAndSet("auth-b", observed!, { state: "in_flight" })));
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect(await ledgers[2]!.claim("auth-b")).toEqual({ state: "in_flight" });
    expect(await redis.client.pTTL(redis.key("pay:auth:auth-b"))).toBeGreaterThan(50_000);
  });

  it("refuses to record anything while Redis is unreachable: 503, nothing charged", async () => {
    const down = new RedisHandle({ url: "redis://127.0.0.1:1", prefix, log: logger });
    down.start();
    const ledger = new RedisPaymentLedger(down, 60_000);
    await expect(ledger.claim("auth-c")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("nothing was charged") });
    await down.close();
  });
});
