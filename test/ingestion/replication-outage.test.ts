import { randomBytes } from "node:crypto";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { REDIS_URL, ReplicaHarness, sleep, until, type Replica } from "../helpers/replica-harness.js";
import { CVD_BUCKET_MS } from "../../src/ingestion/store/cvd-math.js";
import type { StreamVenue } from "../../src/ingestion/types.js";
import { redisAvailable } from "../helpers/redis-available.js";

/*
 * Items 9 and 10 of issue 15 across replicas (real Redis, scripted feeds over one tape): a leader keeps
 * ingesting through a Redis outage; when Redis answers again it either carries on (nobody led meanwhile)
 * or hands what it counted over to the replica that led meanwhile, which merges it by trade id. OKX's REST
 * serves only its latest trades here and it has no standby feed, so its takeover gap stays unfilled until
 * the handoff fills it; Hyperliquid's is filled by the standby feeds.
 */

const LEASE_TTL_MS = 2000;
const TRADED: readonly StreamVenue[] = ["binance", "okx", "hyperliquid"];
const harness = () =>
  new ReplicaHarness({
    prefix: `test:${randomBytes(4).toString("hex")}:`,
    leaseTtlMs: LEASE_TTL_MS,
    pre: ["BTC"],
    traded: TRADED,
    latestOnly: ["okx", "hyperliquid"],
    standby: ["hyperliquid"],
  });

/** Every tape trade of each traded venue from `a`'s first feeds on is counted once by `r`, and nothing is missing. */
function expectExact(h: ReplicaHarness, r: Replica, a: Replica): void {
  for (const venue of TRADED) {
    const x = h.exactness(r, venue, a.feeds.find((f) => f.venue === venue)!.startedAt + 1);
    expect(x.expected).toBeGreaterThan(100);
    expect({ venue, counted: x.counted }).toEqual({ venue, counted: x.expected });
    expect(x.buyUsd[0]).toBe(x.buyUsd[1]);
  }
  const now = Date.now();
  expect(r.rs.cvd.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS).filter((p) => p.missing)).toEqual([]);
  expect(r.rs.cvd.cvd("BTC", -Infinity, Infinity).unfilled).toBe(false);
}

describe.skipIf(!redisAvailable)("a leader cut off from Redis while another takes over: merged by trade id", () => {
  const h = harness();
  let proxy: RedisProxy;
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    proxy = await startRedisProxy();
    a = await h.startReplica("A", proxy.url);
    await until("A to lead", () => a.rs.isLeader, 5000);
    b = await h.startReplica("B");
  });
  afterAll(async () => {
    await h.close();
    await proxy?.close();
  });

  it("the new leader marks what it could not backfill; the cut-off replica hands its trades over when Redis answers; all counted once, nothing missing", async () => {
    await until("B to hold BTC", () => b.rs.cvd.cumulative("BTC").total.trades > 100);
    await sleep(500);
    void proxy.cut();
    await until("B to lead", () => b.rs.isLeader, LEASE_TTL_MS + 3000);
    await b.rs.takeoverDone();
    await until("A to notice its lease lapsed", () => a.rs.isCutOff, LEASE_TTL_MS);
    // OKX: REST returned its latest 10 trades, the takeover gap stays marked.
    const okx = () => b.rs.cvd.exportChanges().buckets.filter((x) => x.venue === "okx" && x.gap === "unfilled");
    expect(okx().length).toBeGreaterThan(0);
    const before = h.exactness(b, "okx", a.feeds.find((f) => f.venue === "okx")!.startedAt + 1);
    expect(before.counted).toBeLessThan(before.expected);
    await sleep(700); // A keeps ingesting, cut off

    void proxy.restore();
    await until("A to hand over and follow", () => !a.rs.isCutOff && !a.rs.isLeader, 10_000);
    await until("B to merge the handoff", () => okx().length === 0, 10_000);
    await sleep(300);
    const want = await h.settled(b, [a]); // A reloaded from Redis: the same buckets as B
    expect(want.length).toBeGreaterThan(0);
    expectExact(h, b, a);
    const after = h.exactness(b, "okx", a.feeds.find((f) => f.venue === "okx")!.startedAt + 1);
    console.info(`partition: OKX trades on the new leader ${before.counted}/${before.expected} after its takeover, ${after.counted}/${after.expected} after the merge`);
  });
});

describe.skipIf(!redisAvailable)("a renewal answered after the lease key expired, nobody else holding it", () => {
  const h = harness();
  let proxy: RedisProxy;
  let a: Replica;
  let direct: Awaited<ReturnType<typeof connectDirect>>;
  const connectDirect = () => createClient({ url: REDIS_URL }).connect();

  beforeAll(async () => {
    proxy = await startRedisProxy();
    direct = await connectDirect();
    a = await h.startReplica("A", proxy.url);
    await until("A to lead", () => a.rs.isLeader, 10_000);
  });
  afterAll(async () => {
    proxy?.resume();
    await h.close();
    await proxy?.close();
    await direct?.close();
  });

  it("the leader steps down at its deadline, keeps ingesting, takes the key back when Redis answers and carries on with the same feeds: nothing handed over, nothing lost", async () => {
    await until("A to count BTC", () => a.rs.cvd.cumulative("BTC").total.trades > 100);
    const managers = a.feeds.length;
    const backfills = h.backfillCalls.length;
    const key = `${h.opts.prefix}lease:streams`;
    proxy.stall(); // A's requests, its renewals among them, reach Redis only after resume()
    await until("A to step down", () => !a.rs.isLeader, 3 * LEASE_TTL_MS + 5000);
    expect(await direct.get(key)).toBe("A"); // before its key expires
    await until("the key to expire", async () => (await direct.get(key)) === null, 3 * LEASE_TTL_MS + 5000);
    await until("A to be cut off", () => a.rs.isCutOff, 10_000);
    const during = a.rs.cvd.cumulative("BTC").total.trades;
    await until("A to keep ingesting", () => a.rs.cvd.cumulative("BTC").total.trades > during + 20, 10_000);

    proxy.resume();
    await until("A to lead again", () => a.rs.isLeader && !a.rs.isCutOff, 20_000);
    expect(await direct.get(key)).toBe("A");
    // The same feeds carried on: no handover to itself, no takeover backfill.
    expect(a.feeds.length).toBe(managers);
    expect(h.backfillCalls.length).toBe(backfills);
    expect(await direct.xLen(`${h.opts.prefix}streams:handoff`)).toBe(0);
    // What A counted meanwhile was published: a replica started now loads every trade, once.
    const b = await h.startReplica("B");
    await sleep(300);
    await h.settled(a, [b]);
    expectExact(h, b, a);
  }, 90_000);
});

for (const first of ["A", "B"] as const) {
  describe.skipIf(!redisAvailable)(`a Redis outage longer than the lease, ${first === "A" ? "the leader" : "a follower"} reaching Redis first afterwards`, () => {
    const h = harness();
    const proxies: Record<"A" | "B", RedisProxy | undefined> = { A: undefined, B: undefined };
    let a: Replica;
    let b: Replica;

    beforeAll(async () => {
      proxies.A = await startRedisProxy();
      proxies.B = await startRedisProxy();
      a = await h.startReplica("A", proxies.A.url);
      await until("A to lead", () => a.rs.isLeader, 5000);
      b = await h.startReplica("B", proxies.B.url);
    });
    afterAll(async () => {
      await h.close();
      for (const p of Object.values(proxies)) await p?.close();
    });

    it("the leader keeps ingesting, nobody can lead meanwhile; afterwards the history has no hole and every trade is counted once", async () => {
      await until("B to hold BTC", () => b.rs.cvd.cumulative("BTC").total.trades > 100);
      await sleep(500);
      await Promise.all([proxies.A!.cut(), proxies.B!.cut()]);
      const cutAt = Date.now();
      await until("A's lease to lapse", () => a.rs.isCutOff, LEASE_TTL_MS + 8000);
      const during = a.rs.cvd.cumulative("BTC").total.trades;
      await sleep(1500);
      expect(a.rs.cvd.cumulative("BTC").total.trades).toBeGreaterThan(during); // still ingesting
      expect(b.rs.isLeader).toBe(false);
      const [early, late] = first === "A" ? [a, b] : [b, a];
      await proxies[early.id as "A" | "B"]!.restore();
      const leader = await until(`${early.id} to lead`, () => early.rs.isLeader && early, 20_000);
      await leader.rs.takeoverDone();
      await sleep(500);
      await proxies[late.id as "A" | "B"]!.restore();
      const outageMs = Date.now() - cutAt;
      await until("nobody cut off", () => !a.rs.isCutOff, 20_000);
      // If B led, its OKX takeover gap is filled by A's handoff; if A did, it published what it counted.
      const okx = () => h.exactness(leader, "okx", a.feeds.find((f) => f.venue === "okx")!.startedAt + 1);
      // The takeover's backfill reads the simulated OKX REST, which a full suite beside busy processes slows (seen
      // once past 20 s in CI's load: 2 busy processes and 2 test workers on 2 cores).
      await until("the leader to hold every trade", () => okx().counted >= okx().expected, 40_000);
      await sleep(300);
      await h.settled(leader, [late]);
      expectExact(h, leader, a);
      const hl = h.exactness(leader, "hyperliquid", a.feeds.find((f) => f.venue === "hyperliquid")!.startedAt + 1);
      console.info(`outage of ${outageMs} ms (lease ${LEASE_TTL_MS} ms), ${leader.id} leads afterwards: Hyperliquid ${hl.counted} trades counted, ${hl.expected} on the tape`);
    }, 90_000); // a full-suite run on 2 cores slows the lease and hand-over steps
  });
}

describe.skipIf(!redisAvailable)("two gaps in one bucket across three replicas (issue 15, item 9)", () => {
  const h = harness();
  let a: Replica;
  let b: Replica;
  let c: Replica;

  beforeAll(async () => {
    a = await h.startReplica("A");
    await until("A to lead", () => a.rs.isLeader, 5000);
    b = await h.startReplica("B");
    c = await h.startReplica("C");
  });
  afterAll(() => h.close());

  it("a gap the leader could not fill stays marked after a takeover filled its own gap in the same bucket, on every replica", async () => {
    await until("B and C to hold BTC", () => [b, c].every((r) => r.rs.cvd.cumulative("BTC").total.trades > 100));
    // Both gaps must land in one 5-minute bucket.
    const room = CVD_BUCKET_MS - (Date.now() % CVD_BUCKET_MS);
    if (room < 30_000) await sleep(room + 100);
    const slot = Math.floor(Date.now() / CVD_BUCKET_MS) * CVD_BUCKET_MS;
    const hlBucket = (r: Replica) => r.rs.cvd.exportChanges().buckets.find((x) => x.venue === "hyperliquid" && x.base === "BTC" && x.start === slot);
    // 1. A's Hyperliquid stream drops for 1.5 s; its REST serves the latest 10 trades only: unfilled.
    const feed = a.feeds.find((f) => f.venue === "hyperliquid")!;
    const gapFrom = Date.now();
    feed.interrupt(1500);
    await until("A to mark the gap unfilled", () => hlBucket(a)?.gap === "unfilled", 5000);
    const first = hlBucket(a)!.unfilled;
    expect(first).toHaveLength(1);
    expect(first[0]![0]).toBeGreaterThanOrEqual(gapFrom);
    await until("B and C to see it", () => [b, c].every((r) => hlBucket(r)?.gap === "unfilled"), 5000);
    // 2. A stops; a follower takes over and fills its own takeover gap (standby feed and REST) in the same bucket.
    await a.rs.stop();
    const next = await until("B or C to lead", () => [b, c].find((r) => r.rs.isLeader), LEASE_TTL_MS + 3000);
    await next.rs.takeoverDone();
    const other = next === b ? c : b;
    await sleep(300);
    await h.settled(next, [other]);
    expect(Math.floor(Date.now() / CVD_BUCKET_MS) * CVD_BUCKET_MS).toBe(slot);
    for (const r of [next, other]) {
      expect(hlBucket(r)).toMatchObject({ gap: "unfilled", unfilled: first });
      expect(r.rs.cvd.history("BTC", slot, slot + CVD_BUCKET_MS, CVD_BUCKET_MS)[0]!.missing).toBe(true);
      expect(r.rs.cvd.cvd("BTC", slot, slot + CVD_BUCKET_MS).unfilled).toBe(true);
    }
    // The takeover did backfill (and marked) its own gap: nothing else in the bucket is unfilled.
    expect(h.backfillCalls.some((x) => x.venue === "hyperliquid" && x.from >= gapFrom + 1500)).toBe(true);
  }, 60_000); // may wait up to 30 s for a fresh bucket
});
