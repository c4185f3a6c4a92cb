import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { ReplicaHarness, sleep, until, type Replica } from "../helpers/replica-harness.js";
import { CVD_BUCKET_MS } from "../../src/ingestion/store/cvd-math.js";
import { CvdStore, type CvdChanges } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES, type StreamVenue } from "../../src/ingestion/types.js";
import { redisAvailable } from "../helpers/redis-available.js";
import { leaseTimings } from "../../src/state/lease.js";

/*
 * Replicated ingestion in one process: real Redis, scripted venue feeds and REST backfills over one
 * deterministic tape (test/helpers/replica-harness.ts), so what each replica holds can be compared exactly.
 * The leader reaches Redis through a TCP proxy the test can cut (a Redis outage, then the leader's "death"
 * as the other replicas see it). Hyperliquid's REST serves only its latest trades, as the venue's does:
 * the followers' standby feeds fill its takeover gap.
 */

/** Long enough that a 750 ms cut right after a renewal stays well inside it on a loaded machine. */
const LEASE_TTL_MS = 3000;
/** Venues of the tape; the others connect but trade nothing. */
const TRADED: readonly StreamVenue[] = ["binance", "bybit", "hyperliquid"];
const h = new ReplicaHarness({
  prefix: `test:${randomBytes(4).toString("hex")}:`,
  leaseTtlMs: LEASE_TTL_MS,
  pre: ["BTC", "ETH"],
  traded: TRADED,
  latestOnly: ["hyperliquid"],
  standby: ["hyperliquid"],
});
const tape = h.tape;
const backfillCalls = h.backfillCalls;
const startReplica = (id: string, url?: string) => h.startReplica(id, url);
const settled = (leader: Replica, others: Replica[]) => h.settled(leader, others);

describe.skipIf(!redisAvailable)("replicated ingestion (real Redis, scripted feeds)", () => {
  let proxy: RedisProxy;
  let a: Replica;
  let b: Replica;
  let c: Replica | undefined;
  /** Sampled every 5 ms: the replicas seen leading, and the instants at which two did at once. */
  const everLed = new Set<string>();
  const overlaps: string[] = [];
  let sampler: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    proxy = await startRedisProxy();
    a = await startReplica("A", proxy.url);
    await until("A to lead", () => a.rs.isLeader, 10_000);
    b = await startReplica("B");
    sampler = setInterval(() => {
      const leading = h.replicas.filter((r) => r.rs.isLeader).map((r) => r.id);
      for (const id of leading) everLed.add(id);
      if (leading.length > 1) overlaps.push(`${leading.join("+")} at ${Date.now()}`);
    }, 5);
  });

  afterAll(async () => {
    clearInterval(sampler);
    await h.close();
    await proxy?.close();
  });

  it("a follower serves the leader's buckets, tracked symbols, feed states and liquidations (with the leader's ids)", async () => {
    expect(b.rs.isLeader).toBe(false);
    await until("B to count BTC", () => b.rs.cvd.cumulative("BTC").total.trades > 0);
    const want = await settled(a, [b]);
    expect(want.length).toBeGreaterThan(0);
    expect(b.rs.cvd.symbols()).toEqual(a.rs.cvd.symbols());
    const now = Date.now();
    expect(b.rs.cvd.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS)).toEqual(a.rs.cvd.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS));
    expect(b.rs.cvd.cumulative("ETH")).toEqual(a.rs.cvd.cumulative("ETH"));

    const t = Date.now() - 1000;
    const added = a.rs.liquidations.add([
      { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: t, side: "long", price: 50_000, size: 0.5, valueUsd: 25_000 },
      { venue: "okx", base: "ETH", venueSymbol: "ETH-USDT-SWAP", time: t + 1, side: "short", price: 1_300, size: 10, valueUsd: 13_000 },
    ]);
    expect(added).toHaveLength(2);
    await until("B to hold the liquidations", () => b.rs.liquidations.recent().length === 2);
    expect(b.rs.liquidations.recent()).toEqual(a.rs.liquidations.recent());
    expect(b.rs.liquidations.stats()).toEqual(a.rs.liquidations.stats());

    await until("B to read the leader's feed states", () => b.rs.activeConnections() === STREAM_VENUES.length);
    expect(b.rs.states().map((s) => [s.venue, s.connected, s.subscribedSymbols])).toEqual(a.rs.states().map((s) => [s.venue, s.connected, s.subscribedSymbols]));

    // A replica started now loads the same state from the hashes and the sorted set.
    c = await startReplica("C");
    const now2 = await settled(a, [b, c]);
    expect(now2.length).toBeGreaterThanOrEqual(want.length);
    expect(c.rs.liquidations.recent()).toEqual(a.rs.liquidations.recent());

    // The documented layout.
    const client = a.redis.client;
    const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    expect(await client.type(a.redis.key(`cvd:BTC:${day}`))).toBe("hash");
    expect(await client.pTTL(a.redis.key(`cvd:BTC:${day}`))).toBeGreaterThan(6 * 86_400_000);
    expect(await client.hGet(a.redis.key("cvd:symbols"), "BTC")).toMatch(/^\d+$/);
    expect(await client.type(a.redis.key("liq:events"))).toBe("zset");
    expect(await client.type(a.redis.key("streams:changes"))).toBe("stream");
    expect(JSON.parse((await client.get(a.redis.key("streams:states")))!)).toMatchObject({ leader: "A" });
    expect(await client.get(a.redis.key("lease:streams"))).toBe("A");
  });

  it("ensure() on a follower reaches the leader: warming up, then ready; unknown symbols are refused", async () => {
    expect(await b.rs.ensure("btc")).toBe("ready");
    expect(await b.rs.ensure("WIF")).toBe("warming_up");
    await until("the leader to subscribe WIF", () => a.rs.subscribedBases().includes("WIF"));
    await until("B to count WIF", () => b.rs.cvd.cumulative("WIF").total.trades > 0);
    await until("WIF to be ready on B", async () => (await b.rs.ensure("WIF")) === "ready", 5000);
    expect(b.rs.subscribedBases()).toContain("WIF");
    expect(b.rs.onDemandCount).toBe(1);
    // At the bound (1 on-demand symbol here) the leader evicts the least recently requested: dropped everywhere.
    expect(await b.rs.ensure("PEPE")).toBe("warming_up");
    await until("the leader to swap WIF for PEPE", () => a.rs.subscribedBases().includes("PEPE") && !a.rs.cvd.symbols().includes("WIF"));
    await until("B to drop WIF", () => !b.rs.cvd.symbols().includes("WIF") && b.rs.cvd.symbols().includes("PEPE"));
    expect(b.rs.cvd.cumulative("WIF").trackedSince).toBeNull();
    expect(await b.rs.ensure("NOTAPERP")).toBe("warming_up");
    await until("NOTAPERP to be refused on B", () =>
      b.rs.ensure("NOTAPERP").then(
        () => false,
        (e: { code?: string }) => e.code === "UNKNOWN_SYMBOL",
      ),
    );
    await expect(a.rs.ensure("NOTAPERP")).rejects.toMatchObject({ code: "UNKNOWN_SYMBOL" });
  });

  it("the leader keeps ingesting through a short Redis outage and republishes what changed: same leader, same feeds, nothing handed over", async () => {
    const managers = a.feeds.length;
    const backfills = backfillCalls.length;
    // Cut right after a renewal (read directly, not through the proxy): the outage, not the renewal phase, is tested.
    const lease = b.redis.key("lease:streams");
    await until("a renewal of A's lease", async () => (await b.redis.client.get(lease)) === "A" && (await b.redis.client.pTTL(lease)) >= LEASE_TTL_MS - 150, 10_000, 5);
    void proxy.cut();
    await sleep(250);
    const during = b.rs.cvd.cumulative("BTC").total.trades;
    await sleep(500);
    // Meanwhile the leader counted trades the followers could not receive.
    expect(b.rs.cvd.cumulative("BTC").total.trades).toBe(during);
    expect(a.rs.cvd.cumulative("BTC").total.trades).toBeGreaterThan(during + 20);
    void proxy.restore();
    await until("A to publish again", async () => b.rs.cvd.cumulative("BTC").total.trades > a.rs.cvd.cumulative("BTC").total.trades - 200, 10_000);
    await until("A to lead", () => a.rs.isLeader && !a.rs.isCutOff, 10_000);
    // The same manager carried on: no handover to itself or anyone, no takeover backfill.
    expect(a.feeds.length).toBe(managers);
    expect(backfillCalls.length).toBe(backfills);
    expect([...everLed]).toEqual(["A"]);
    await settled(a, [b, c!]);
  });

  it("when the leader is cut off, another replica leads within the lease TTL and backfills the gap (Hyperliquid from its standby feed): no hole, nothing twice", async () => {
    expect(a.rs.isLeader).toBe(true); // still the first leader: the previous outage handed nothing over
    await sleep(500);
    const callsBefore = backfillCalls.length;
    void proxy.cut(); // A can no longer renew, publish or be seen: dead to the others
    const cutAt = Date.now();
    const bound = leaseTimings(LEASE_TTL_MS).takeoverAfterCrashMs;
    const next = await until("another replica to lead", () => [b, c!].find((r) => r.rs.isLeader), bound + 10_000, 5);
    const tookMs = Date.now() - cutAt;
    console.info(`takeover ${tookMs} ms after the cut (documented bound ${bound} ms)`);
    expect(tookMs).toBeLessThan(bound + 1500);
    // A stopped leading at its safety deadline, before the takeover, and keeps ingesting locally, cut off
    // (it hands over when Redis answers again).
    expect(a.rs.isLeader).toBe(false);
    await until("A to be cut off", () => a.rs.isCutOff, 10_000);
    await until("the takeover backfill", () => backfillCalls.length > callsBefore, 5000);
    await next.rs.takeoverDone();
    expect(next.rs.backfillCount).toBeGreaterThan(0);
    await sleep(500); // live trades after the backfill
    const others = [b, c!].filter((r) => r !== next);
    await settled(next, others);

    // Every tape trade from A's start up to the newest one counted, exactly once, in the new leader's store;
    // Hyperliquid's REST served its latest 10 trades only: the standby buffer filled the rest.
    for (const venue of TRADED) {
      const from = a.feeds.find((f) => f.venue === venue)!.startedAt + 1;
      const x = h.exactness(next, venue, from);
      expect(x.expected).toBeGreaterThan(100);
      expect({ venue, counted: x.counted }).toEqual({ venue, counted: x.expected });
      expect(x.buyUsd[0]).toBe(x.buyUsd[1]);
      expect(x.sellBase[0]).toBe(x.sellBase[1]);
    }
    // The takeover bucket (the one holding the cut) on Hyperliquid, against the tape: what a single process counts.
    const slot = Math.floor(cutAt / CVD_BUCKET_MS) * CVD_BUCKET_MS;
    const hl = next.rs.cvd.exportChanges().buckets.find((x) => x.venue === "hyperliquid" && x.base === "BTC" && x.start === slot)!;
    const single = tape(
      "hyperliquid",
      "BTC",
      Math.max(slot, a.feeds.find((f) => f.venue === "hyperliquid")!.startedAt + 1),
      Math.min(slot + CVD_BUCKET_MS, next.rs.cvd.lastTradeTime("hyperliquid", "BTC")! + 1),
    );
    console.info(`takeover bucket, hyperliquid BTC: ${hl.trades} trades counted by the replicas, ${single.length} on the tape; gap ${hl.gap}`);
    expect(hl.trades).toBe(single.length);
    expect(hl.gap).not.toBe("unfilled");
    const now = Date.now();
    const hist = next.rs.cvd.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS);
    expect(hist.length).toBeGreaterThan(0);
    expect(hist.filter((p) => p.missing)).toEqual([]);
    // The followers see the new leader's data.
    for (const o of others) expect(o.rs.cvd.cumulative("BTC")).toEqual(next.rs.cvd.cumulative("BTC"));
    expect(overlaps).toEqual([]);
  });
});

describe("store hooks of replication", () => {
  it("CvdStore: a flush reports absolute rows; applying them elsewhere reproduces history, persisted, with the newest trades", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-repl-store-"));
    try {
      const now = Date.now();
      const src = new CvdStore(openStreamDb(":memory:"), { flushMs: 60_000 });
      const seen: CvdChanges[] = [];
      const off = src.observe({ flushed: (c) => seen.push(c) });
      src.track("BTC");
      src.add(tape("binance", "BTC", now - 20 * 60_000, now));
      src.flush();
      src.add(tape("bybit", "BTC", now - 60_000, now));
      src.flush();
      src.flush(); // nothing changed: nothing reported
      expect(seen).toHaveLength(2);
      expect(seen[1]!.buckets.every((b) => b.venue === "bybit")).toBe(true);
      // Binance ids are sequence numbers: its ledger (mark, the hole below the first trade) goes with the buckets.
      expect(seen[0]!.ledgers).toEqual([
        {
          venue: "binance",
          base: "BTC",
          newest: expect.any(Number),
          sequence: { mark: expect.any(Number), markTime: expect.any(Number), floor: null, holes: [expect.anything()] },
        },
      ]);
      // Bybit ids are UUIDs: each bucket reports the ids it counted.
      expect(seen[1]!.buckets.every((b) => b.ids?.length === b.trades && b.idCount === b.trades)).toBe(true);

      const path = join(dir, "replica.sqlite");
      const db = openStreamDb(path);
      const dst = new CvdStore(db, { flushMs: 60_000 });
      const reported: CvdChanges[] = [];
      dst.observe({ flushed: (c) => reported.push(c) });
      for (const c of seen) dst.applyReplicated(c);
      dst.applyReplicated(seen[0]!); // again, out of order: absolute values converge
      dst.applyReplicated(seen[1]!);
      dst.flush();
      expect(reported).toEqual([]); // replicated rows are not reported again
      const h = (st: CvdStore) => st.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS, { perVenue: true });
      expect(h(dst)).toEqual(h(src));
      expect(dst.lastTradeTime("binance", "BTC")).toBe(src.lastTradeTime("binance", "BTC"));
      // The newest trades' ids are remembered: a backfill from there counts nothing twice.
      const last = src.lastTradeTime("binance", "BTC")!;
      expect(dst.add(tape("binance", "BTC", last, last + 1))).toBe(0);
      expect(
        dst.applyReplicated({
          buckets: [
            { ...seen[0]!.buckets[0]!, venue: "nope" as StreamVenue },
            { ...seen[0]!.buckets[0]!, trades: -1 },
          ],
        }),
      ).toBe(0);
      dst.close();
      db.close();
      const reopened = new CvdStore(openStreamDb(path), { flushMs: 60_000 });
      expect(h(reopened)).toEqual(h(src));
      reopened.close();
      off();
      src.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("LiquidationStore: replicated records keep their ids and later local ids continue after them", () => {
    const now = Date.now();
    const leader = new LiquidationStore(openStreamDb(":memory:"), { flushMs: 0 });
    const got: string[] = [];
    leader.observe((added) => got.push(...added.map((r) => r.id)));
    const t = Math.floor(now / 1000) * 1000 - 5000;
    const recs = leader.add([
      { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: t, side: "long", price: 50_000, size: 0.5, valueUsd: 25_000 },
      { venue: "bybit", base: "BTC", venueSymbol: "BTCUSDT", time: t + 1, side: "short", price: 50_000, size: 1, valueUsd: 50_000 },
    ]);
    expect(got).toEqual(recs.map((r) => r.id));
    const follower = new LiquidationStore(openStreamDb(":memory:"), { flushMs: 0 });
    expect(follower.applyReplicated([...recs, ...recs])).toBe(2);
    expect(follower.recent()).toEqual(leader.recent());
    const mine = follower.add([{ venue: "okx", base: "ETH", venueSymbol: "ETH-USDT-SWAP", time: t + 2, side: "long", price: 1300, size: 1, valueUsd: 1300 }]);
    expect(mine[0]!.id).toBe(`liq_${t / 1000}_3`);
    expect(follower.applyReplicated([{ ...recs[0]!, id: "bogus" }])).toBe(0);
    leader.close();
    follower.close();
  });
});
