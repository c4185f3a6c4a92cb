import { randomBytes } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { KEPT_ANSWER_TTL_MS, MAX_KEPT_ANSWER_BYTES, MemoryPaymentLedger, RedisPaymentLedger, type KeptAnswer, type PaymentLedger } from "../../src/payments/ledger.js";
import { RedisHandle } from "../../src/state/redis.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

/*
 * The answers of settled payments kept for a retry with the same payment (src/payments/ledger.ts): exact through
 * the store, bounded per answer and, in memory, in total; in Redis with their own TTL.
 */

const RUN_PREFIX = `test:kept:${randomBytes(4).toString("hex")}:`;
const receipt = { success: true, transaction: "0xabc", network: "eip155:8453" as const, payer: "0x1" };
const answer = (value: unknown): KeptAnswer => ({ fingerprint: "tool:{}", target: "GET https://x.example/a?b=1", digest: "d1", value, receipt });

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
afterAll(async () => {
  if (redisAvailable) await deleteRedisPrefix(RUN_PREFIX);
});

async function redisLedger(): Promise<{ ledger: RedisPaymentLedger; handle: RedisHandle }> {
  const handle = new RedisHandle({ url: TEST_REDIS_URL, prefix: RUN_PREFIX, log: logger });
  handle.start();
  await handle.waitReady();
  closers.push(() => handle.close());
  return { ledger: new RedisPaymentLedger(handle, 60_000), handle };
}

const kinds: Array<{ name: string; redis?: boolean; open: () => Promise<PaymentLedger> }> = [
  { name: "MemoryPaymentLedger", open: async () => new MemoryPaymentLedger({ ttlMs: 60_000 }) },
  { name: "RedisPaymentLedger", redis: true, open: async () => (await redisLedger()).ledger },
];

describe.each(kinds.filter((k) => redisAvailable || !k.redis))("$name: kept answers", ({ open }) => {
  it("keeps an answer exactly (JSON round trip) under its authorization's key, and nothing under another", async () => {
    const ledger = await open();
    const kept = answer({ price_usd: 0.1 + 0.2, name: 'é€😀 "q"', rows: [1, null, "x"] });
    await ledger.keepAnswer("k1", kept);
    expect(await ledger.keptAnswer("k1")).toEqual(kept);
    expect(await ledger.keptAnswer("k2")).toBeUndefined();
  });

  it(`does not keep an answer over ${MAX_KEPT_ANSWER_BYTES} bytes`, async () => {
    const ledger = await open();
    await ledger.keepAnswer("big", answer({ blob: "x".repeat(MAX_KEPT_ANSWER_BYTES) }));
    expect(await ledger.keptAnswer("big")).toBeUndefined();
    await ledger.keepAnswer("small", answer({ blob: "x".repeat(MAX_KEPT_ANSWER_BYTES - 1024) }));
    expect(await ledger.keptAnswer("small")).toBeDefined();
  });
});

describe("memory: the kept answers are bounded in total bytes", () => {
  it("drops the least recently kept first", async () => {
    const ledger = new MemoryPaymentLedger({ ttlMs: 60_000, maxAnswerBytes: 10_000 });
    for (let i = 0; i < 10; i++) await ledger.keepAnswer(`k${i}`, answer({ blob: "x".repeat(2_000) }));
    const kept = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.keptAnswer(`k${i}`)));
    expect(kept.filter(Boolean).length).toBeLessThanOrEqual(4);
    expect(kept.at(-1)).toBeDefined();
    expect(kept[0]).toBeUndefined();
  });
});

describe.skipIf(!redisAvailable)("redis: a kept answer expires on its own TTL, not the ledger's", () => {
  it(`sets a TTL of ${KEPT_ANSWER_TTL_MS} ms`, async () => {
    const { ledger, handle } = await redisLedger();
    await ledger.keepAnswer("ttl", answer({ ok: true }));
    const ttl = await handle.client.pTTL(handle.key("pay:answer:ttl"));
    expect(ttl).toBeGreaterThan(KEPT_ANSWER_TTL_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(KEPT_ANSWER_TTL_MS);
  });
});
