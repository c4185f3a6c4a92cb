import { LRUCache } from "lru-cache";
import { describe, expect, it, vi } from "vitest";
import { memoizeKeyed } from "../../src/lib/memo.js";
import { staleSweeper } from "../../src/lib/stale-sweep.js";

describe("staleSweeper", () => {
  it("drops expired entries at most once per period, on the call after it ends", () => {
    let t = 10_000; // lru-cache treats a start time of 0 as "no TTL"
    const cache = new LRUCache<string, object>({ max: 100, ttl: 1000, ttlResolution: 0, perf: { now: () => t } });
    const sweep = staleSweeper(cache, 1000, () => t);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, {});
    t = 11_500;
    cache.set("live", {});
    expect(cache.size).toBe(11); // lru-cache alone keeps expired entries until read or pushed out by max
    const purge = vi.spyOn(cache, "purgeStale");
    sweep();
    expect(purge).toHaveBeenCalledTimes(1);
    expect([...cache.keys()]).toEqual(["live"]);
    t = 12_000;
    sweep(); // within the period of the last sweep: nothing to do
    expect(purge).toHaveBeenCalledTimes(1);
  });
});

describe("memoizeKeyed", () => {
  it("serves a key from cache within its TTL and loads it again after, sweeping as it goes", async () => {
    const loads: string[] = [];
    const get = memoizeKeyed(40, 10_000, async (a: { k: string }) => {
      loads.push(a.k);
      return { k: a.k };
    });
    for (let i = 0; i < 5; i++) await get(`k${i}`, { k: `k${i}` });
    expect(await get("k0", { k: "k0" })).toEqual({ k: "k0" });
    expect(loads).toHaveLength(5);
    await new Promise((r) => setTimeout(r, 60));
    expect(await get("k1", { k: "k1" })).toEqual({ k: "k1" }); // this call sweeps, then loads k1 again
    expect(await get("k1", { k: "k1" })).toEqual({ k: "k1" });
    expect(loads).toEqual(["k0", "k1", "k2", "k3", "k4", "k1"]);
  });
});
