import { randomBytes } from "node:crypto";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { isBoundTo, MemoryPaymentLedger, RedisPaymentLedger, type AuthorizationState, type PaymentLedger, type PendingState } from "../../src/payments/ledger.js";
import { RedisHandle } from "../../src/state/redis.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

const RUN_PREFIX = `test:payledger:${randomBytes(4).toString("hex")}:`;
const TTL_MS = 60_000;
/** Concurrent callers in each race. */
const N = 12;

const requirements = {
  scheme: "exact",
  network: "eip155:8453",
  asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
  amount: "40000",
  payTo: "0x0000000000000000000000000000000000000001",
  maxTimeoutSeconds: 60,
  extra: { name: "USD Coin", version: "2" },
} as PaymentRequirements;
const payload = { x402Version: 2, accepted: requirements, payload: { signature: "0xabc", authorization: { nonce: "0x01" } } } as unknown as PaymentPayload;
/** A settlement of unknown outcome; its stored answer has what a JSON round trip through Redis must keep exact. */
const pending: PendingState = { state: "pending", value: { price_usd: 0.1 + 0.2, name: 'é€😀 "q"', rows: [1, null, "x"] }, payload, requirements };
const receipt = { success: true, transaction: "0xabc", network: "eip155:8453" as const, payer: "0x1" };

/** Async undo steps (closing Redis connections), run after each test. */
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
afterAll(async () => {
  if (redisAvailable) await deleteRedisPrefix(RUN_PREFIX);
});
let fresh = 0;

/** Ledgers over one store: one in memory, or three Redis ledgers on three connections ("replicas") under a fresh prefix. */
const kinds: Array<{ name: string; redis?: boolean; open: () => Promise<PaymentLedger[]> }> = [
  { name: "MemoryPaymentLedger", open: async () => [new MemoryPaymentLedger({ ttlMs: TTL_MS })] },
  {
    name: "RedisPaymentLedger",
    redis: true,
    open: async () => {
      const prefix = `${RUN_PREFIX}${fresh++}:`;
      const handles = [0, 1, 2].map(() => new RedisHandle({ url: TEST_REDIS_URL, prefix, log: logger }));
      for (const h of handles) h.start();
      await Promise.all(handles.map((h) => h.waitReady()));
      closers.push(() => Promise.all(handles.map((h) => h.close())));
      return handles.map((h) => new RedisPaymentLedger(h, TTL_MS));
    },
  },
];

/** Runs `op` on `n` concurrent callers spread over the ledgers. */
const race = <T>(ls: PaymentLedger[], op: (l: PaymentLedger) => Promise<T>, n = N) => Promise.all(Array.from({ length: n }, (_, i) => op(ls[i % ls.length]!)));

describe.each(kinds.filter((k) => redisAvailable || !k.redis))("$name: atomic state transitions", ({ open }) => {
  it("moves an observed pending state to in_flight for exactly one of many concurrent callers", async () => {
    const ls = await open();
    const [l] = ls as [PaymentLedger];
    await l.claim("auth-p");
    await l.set("auth-p", pending);
    // Every caller saw the same pending state (as concurrent retries do), then tries to take it.
    const observed = await Promise.all(ls.map((x) => x.claim("auth-p")));
    expect(observed.every((s) => s?.state === "pending")).toBe(true);
    const won = await race(ls, (x) => x.compareAndSet("auth-p", observed[0]!, { state: "in_flight" }));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await l.claim("auth-p")).toEqual({ state: "in_flight" });
  });

  it("changes nothing when the state is not exactly the expected one, nor when there is none", async () => {
    const ls = await open();
    const [l] = ls as [PaymentLedger];
    const held: PendingState = { ...pending, reconcilingUntilMs: Date.now() + 30_000 };
    await l.claim("auth-q");
    await l.set("auth-q", held);
    const stale: AuthorizationState[] = [pending, { ...held, reconcilingUntilMs: held.reconcilingUntilMs! + 1 }, { state: "in_flight" }, { state: "settled", receipt }];
    for (const expected of stale) expect(await l.compareAndSet("auth-q", expected, { state: "in_flight" })).toBe(false);
    expect(await l.claim("auth-q")).toEqual(held);
    expect(await l.compareAndSet("auth-none", { state: "in_flight" }, { state: "settled", receipt })).toBe(false);
    // Nothing was created: the key is still free to claim.
    expect(await l.claim("auth-none")).toBeUndefined();
  });

  it("chains transitions from the state it holds, and deletes when the next state is undefined", async () => {
    const ls = await open();
    const [l, other = l] = ls as [PaymentLedger, PaymentLedger?];
    await l.claim("auth-r");
    await l.set("auth-r", pending);
    const held: PendingState = { ...pending, reconcilingUntilMs: Date.now() + 30_000 };
    expect(await l.compareAndSet("auth-r", pending, held)).toBe(true);
    // A replica still holding the earlier observation loses; the holder goes on.
    expect(await other.compareAndSet("auth-r", pending, { state: "in_flight" })).toBe(false);
    expect(await other.compareAndSet("auth-r", held, undefined)).toBe(true);
    expect(await l.claim("auth-r")).toBeUndefined();
  });

  it("hands an owed run to exactly one of many concurrent retries", async () => {
    const ls = await open();
    const [l] = ls as [PaymentLedger];
    const owed: AuthorizationState = { state: "prepaid", fingerprint: "tool:{a}", digest: "d1", receipt };
    await l.claim("auth-o");
    await l.set("auth-o", owed);
    const observed = (await ls[ls.length - 1]!.claim("auth-o"))!;
    const won = await race(ls, (x) => x.compareAndSet("auth-o", observed, { state: "in_flight" }));
    expect(won.filter(Boolean)).toHaveLength(1);
  });

  it("starts a payment identifier's record for exactly one of many concurrent requests", async () => {
    const ls = await open();
    const claims = await race(ls, (x) => x.claimIdempotent("0xpayer:id-1", { fingerprint: "tool:{a}", digest: `d-${Math.random()}` }));
    const winners = claims.filter((c) => c === undefined);
    expect(winners).toHaveLength(1);
    const first = await ls[0]!.idempotent("0xpayer:id-1");
    expect(claims.filter((c) => c !== undefined).every((c) => c!.digest === first!.digest)).toBe(true);
  });
});

describe.skipIf(!redisAvailable)("RedisPaymentLedger: transitions keep the entry for the ledger TTL", () => {
  it("writes the new state with the ledger TTL", async () => {
    const prefix = `${RUN_PREFIX}ttl:`;
    const redis = new RedisHandle({ url: TEST_REDIS_URL, prefix, log: logger });
    redis.start();
    await redis.waitReady();
    closers.push(() => redis.close());
    const l = new RedisPaymentLedger(redis, TTL_MS);
    await l.claim("auth-t");
    await l.set("auth-t", pending);
    expect(await l.compareAndSet("auth-t", pending, { state: "in_flight" })).toBe(true);
    expect(await redis.client.pTTL(redis.key("pay:auth:auth-t"))).toBeGreaterThan(TTL_MS - 10_000);
  });
});

describe("records are bound to their request", () => {
  const btc = { fingerprint: 'cex_market:{"id":"bitcoin"}', target: "GET https://api.example/api/v1/market/bitcoin" };
  it("matches only the same fingerprint and request line", () => {
    expect(isBoundTo(btc, btc)).toBe(true);
    expect(isBoundTo(btc, { ...btc, target: "GET https://api.example/api/v1/market/bitcoin?x=1" })).toBe(false);
    expect(isBoundTo(btc, { ...btc, target: "POST https://api.example/mcp" })).toBe(false);
    expect(isBoundTo(btc, { ...btc, fingerprint: 'cex_market:{"id":"ethereum"}' })).toBe(false);
  });
  it("reads records written before the request line was bound: by fingerprint, and an unbound pending answer as before", () => {
    expect(isBoundTo({ fingerprint: btc.fingerprint }, btc)).toBe(true);
    expect(isBoundTo({ fingerprint: btc.fingerprint }, { ...btc, fingerprint: "other" })).toBe(false);
    expect(isBoundTo({}, btc)).toBe(true);
  });
});
