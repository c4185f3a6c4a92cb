import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { RedisHandle } from "../../src/state/redis.js";
import { PaidUseRelay } from "../../src/ingestion/paid-relay.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";
import { until } from "../helpers/wait.js";

/** Paid use recorded on any replica reaches the ingest leader's manager through Redis (finding 4, replicas). */
describe.skipIf(!redisAvailable)("PaidUseRelay on a real Redis", () => {
  const prefix = `mg-test-paid-${randomUUID().slice(0, 8)}:`;
  let a: RedisHandle;
  let b: RedisHandle;
  beforeAll(async () => {
    [a, b] = [new RedisHandle({ url: TEST_REDIS_URL, prefix, log: logger }), new RedisHandle({ url: TEST_REDIS_URL, prefix, log: logger })];
    a.start();
    b.start();
    await Promise.all([a.waitReady(), b.waitReady()]);
  });
  afterAll(async () => {
    await deleteRedisPrefix(prefix);
    await Promise.all([a?.close(), b?.close()]);
  });

  it("a follower's paid use is applied on the leader, the leader's own at once; entries older than the hold time are deleted, not applied", async () => {
    const HOLD_MS = 60_000;
    const applied: Array<[string, number]> = [];
    const followerApplied: string[] = [];
    const leader = new PaidUseRelay({ redis: a, holdMs: HOLD_MS, leading: () => true, apply: (base, at) => applied.push([base, at]), log: logger });
    const follower = new PaidUseRelay({ redis: b, holdMs: HOLD_MS, leading: () => false, apply: (base) => followerApplied.push(base), log: logger });
    leader.start();
    follower.start();
    try {
      await a.client.hSet(a.key("streams:paid"), "OLD", String(Date.now() - 2 * HOLD_MS));
      const before = Date.now();
      follower.record("WIF");
      follower.record("WIF"); // within 10 s: not written again
      leader.record("INJ");
      expect(applied.map(([base]) => base)).toEqual(["INJ"]);
      await until("WIF applied on the leader", async () => applied.some(([base]) => base === "WIF"));
      const [, at] = applied.find(([base]) => base === "WIF")!;
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(Date.now());
      expect(applied.some(([base]) => base === "OLD")).toBe(false);
      await until("the stale entry deleted", async () => (await a.client.hExists(a.key("streams:paid"), "OLD")) === 0);
      expect(Object.keys(await a.client.hGetAll(a.key("streams:paid"))).sort()).toEqual(["INJ", "WIF"]);
      // A follower applies nothing: only the leader's manager evicts.
      expect(followerApplied).toEqual([]);
    } finally {
      leader.stop();
      follower.stop();
    }
  });
});
