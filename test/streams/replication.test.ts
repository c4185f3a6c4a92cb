import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { logger } from "../../src/lib/log.js";
import { RedisHandle } from "../../src/state/redis.js";
import type { BackfillResult, TradeBackfill } from "../../src/streams/backfill/common.js";
import type { SubscribeResult, VenueFeed } from "../../src/streams/feeds/feed-base.js";
import { StreamManager } from "../../src/streams/manager.js";
import { ReplicatedStreams } from "../../src/streams/replication/replicated-streams.js";
import { CVD_BUCKET_MS } from "../../src/streams/store/cvd-math.js";
import { CvdStore, type CvdBucketRow, type CvdChanges } from "../../src/streams/store/cvd-store.js";
import { openStreamDb } from "../../src/streams/store/db.js";
import { LiquidationStore } from "../../src/streams/store/liquidation-store.js";
import { STREAM_VENUES, type FeedState, type Liquidation, type StreamVenue, type Trade } from "../../src/streams/types.js";

/*
 * Replicated streams in one process: real Redis, scripted venue feeds and REST backfills over one
 * deterministic tape, so what each replica holds can be compared exactly. The leader reaches Redis through
 * a TCP proxy the test can cut (a Redis outage, then the leader's "death" as the other replicas see it).
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `test:${randomBytes(4).toString("hex")}:`;
const LEASE_TTL_MS = 2000;
const PRE = ["BTC", "ETH"];
/** Venues of the tape; the others connect but trade nothing. */
const TRADED: readonly StreamVenue[] = ["binance", "bybit"];
const STEP_MS = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The tape: two trades at every multiple of STEP_MS (same millisecond), per traded venue and base. */
function tape(venue: StreamVenue, base: string, from: number, to: number): Trade[] {
  if (!TRADED.includes(venue) || !["BTC", "ETH", "WIF"].includes(base)) return [];
  const out: Trade[] = [];
  for (let t = Math.ceil(from / STEP_MS) * STEP_MS; t < to; t += STEP_MS) {
    const k = t / STEP_MS;
    for (const x of ["a", "b"]) {
      out.push({ venue, base, time: t, price: 100 + (k % 7), size: 1 + ((k + (x === "a" ? 0 : 1)) % 3), side: (k + (x === "a" ? 0 : 1)) % 2 ? "buy" : "sell", id: `${t}${x}` });
    }
  }
  return out;
}

/** A venue feed driven by the test: it delivers the tape from the moment it is started. */
class FakeFeed {
  private readonly fns = { trades: new Set<(v: Trade[]) => void>(), liquidations: new Set<(v: Liquidation[]) => void>(), gap: new Set<(v: unknown) => void>() };
  private readonly subs = new Set<string>();
  running = false;
  startedAt = 0;
  emittedUntil = 0;
  lastMessageAt: number | null = null;

  constructor(readonly venue: StreamVenue) {}

  on(event: "trades" | "liquidations" | "gap", fn: (v: never) => void): () => void {
    (this.fns[event] as Set<unknown>).add(fn);
    return () => (this.fns[event] as Set<unknown>).delete(fn);
  }
  start(): void {
    this.running = true;
    this.startedAt = this.emittedUntil = Date.now();
  }
  async stop(): Promise<void> {
    this.running = false;
  }
  async subscribe(bases: readonly string[]): Promise<SubscribeResult> {
    const out: SubscribeResult = { subscribed: [], unknown: [], rejected: [] };
    for (const b of bases) {
      if (b === "NOTAPERP") out.unknown.push(b);
      else {
        this.subs.add(b);
        out.subscribed.push(b);
      }
    }
    return out;
  }
  unsubscribe(bases: readonly string[]): void {
    for (const b of bases) this.subs.delete(b);
  }
  subscriptions(): string[] {
    return [...this.subs];
  }
  state(): FeedState {
    return { venue: this.venue, connected: this.running, connectedSince: null, lastMessageAt: this.lastMessageAt, reconnects: 0, subscribedSymbols: this.subs.size, lagMs: null };
  }
  /** Delivers the tape since the last delivery, up to `now`. */
  pump(now: number): void {
    if (!this.running) return;
    this.lastMessageAt = now;
    for (const base of this.subs) {
      const trades = tape(this.venue, base, this.emittedUntil + 1, now + 1);
      if (trades.length) for (const fn of this.fns.trades) fn(trades);
    }
    this.emittedUntil = now;
  }
}

const backfillCalls: Array<{ venue: StreamVenue; base: string; from: number; to: number }> = [];
const backfills = Object.fromEntries(
  STREAM_VENUES.map((venue) => [
    venue,
    {
      venue,
      fetchTrades: async (base: string, from: number, to: number): Promise<BackfillResult> => {
        backfillCalls.push({ venue, base, from, to });
        return { trades: tape(venue, base, from, to), complete: true };
      },
    } satisfies TradeBackfill,
  ]),
) as Record<StreamVenue, TradeBackfill>;


interface Replica {
  id: string;
  rs: ReplicatedStreams;
  redis: RedisHandle;
  feeds: FakeFeed[];
}

const replicas: Replica[] = [];

async function startReplica(id: string, url = REDIS_URL): Promise<Replica> {
  const redis = new RedisHandle({ url, prefix: PREFIX, log: logger });
  redis.start();
  await redis.waitReady();
  const db = openStreamDb(":memory:");
  const cvd = new CvdStore(db, { flushMs: 100 });
  const liquidations = new LiquidationStore(db, { flushMs: 100 });
  const feeds: FakeFeed[] = [];
  const rs = new ReplicatedStreams({
    redis,
    cvd,
    liquidations,
    replicaId: id,
    leaseTtlMs: LEASE_TTL_MS,
    preSubscribed: PRE,
    warmupMs: 500,
    statesEveryMs: 200,
    wantedPollMs: 100,
    tailBlockMs: 500,
    settleMs: 200,
    createManager: () => {
      const set = Object.fromEntries(STREAM_VENUES.map((v) => [v, new FakeFeed(v)])) as Record<StreamVenue, FakeFeed>;
      feeds.push(...Object.values(set));
      return new StreamManager(set as unknown as Record<StreamVenue, VenueFeed>, backfills, cvd, liquidations, { preSubscribed: PRE, warmupMs: 500, maxOnDemand: 1 });
    },
  });
  await rs.start();
  const r = { id, rs, redis, feeds };
  replicas.push(r);
  return r;
}

/** Delivers the tape to every running feed every 50 ms (the venues). */
let pumping = true;
const pump = setInterval(() => {
  if (!pumping) return;
  const now = Date.now();
  for (const r of replicas) for (const f of r.feeds) f.pump(now);
}, 50);

const sortRows = (rows: CvdBucketRow[]) => rows.filter((b) => b.trades > 0 || b.gap !== "none").sort((a, b) => `${a.base}${a.venue}${a.start}`.localeCompare(`${b.base}${b.venue}${b.start}`));
const buckets = (r: Replica) => sortRows(r.rs.cvd.exportChanges().buckets);

/** Pauses the venues until the replicas agree on what the leader holds, and returns it. */
async function settled(leader: Replica, others: Replica[]): Promise<CvdBucketRow[]> {
  pumping = false;
  try {
    await sleep(150); // the leader's last flush
    const want = buckets(leader);
    await until("the followers to hold the leader's buckets", () => others.every((o) => JSON.stringify(buckets(o)) === JSON.stringify(want)), 5000);
    return want;
  } finally {
    pumping = true;
  }
}

describe("replicated streams (real Redis, scripted feeds)", () => {
  let proxy: RedisProxy;
  let a: Replica;
  let b: Replica;
  let c: Replica | undefined;

  beforeAll(async () => {
    proxy = await startRedisProxy();
    a = await startReplica("A", proxy.url);
    await until("A to lead", () => a.rs.isLeader, 5000);
    b = await startReplica("B");
  });

  afterAll(async () => {
    clearInterval(pump);
    for (const r of replicas) {
      await r.rs.stop();
      await r.redis.close();
    }
    await proxy?.close();
    const client = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of client.scanIterator({ MATCH: `${PREFIX}*`, COUNT: 500 })) if (keys.length) await client.del(keys);
    expect(await client.keys(`${PREFIX}*`)).toEqual([]);
    await client.close();
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

    await until("B to read the leader's feed states", () => b.rs.activeConnections() === 4);
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
    await until("NOTAPERP to be refused on B", () => b.rs.ensure("NOTAPERP").then(() => false, (e: { code?: string }) => e.code === "UNKNOWN_SYMBOL"));
    await expect(a.rs.ensure("NOTAPERP")).rejects.toMatchObject({ code: "UNKNOWN_SYMBOL" });
  });

  it("the leader keeps ingesting through a short Redis outage and republishes what changed", async () => {
    void proxy.cut();
    await sleep(250);
    const during = b.rs.cvd.cumulative("BTC").total.trades;
    await sleep(500);
    // Meanwhile the leader counted trades the followers could not receive.
    expect(b.rs.cvd.cumulative("BTC").total.trades).toBe(during);
    expect(a.rs.cvd.cumulative("BTC").total.trades).toBeGreaterThan(during + 20);
    void proxy.restore();
    await until("A to publish again", async () => b.rs.cvd.cumulative("BTC").total.trades > a.rs.cvd.cumulative("BTC").total.trades - 200, 5000);
    expect(a.rs.isLeader).toBe(true);
    await settled(a, [b, c!]);
  });

  it("when the leader is cut off, another replica leads within the lease TTL and backfills the gap: no hole, nothing twice", async () => {
    await sleep(500);
    const callsBefore = backfillCalls.length;
    void proxy.cut(); // A can no longer renew, publish or be seen: dead to the others
    const cutAt = Date.now();
    const next = await until("another replica to lead", () => [b, c!].find((r) => r.rs.isLeader), LEASE_TTL_MS + 3000);
    const tookMs = Date.now() - cutAt;
    expect(tookMs).toBeLessThan(LEASE_TTL_MS + 1500);
    await until("A to stop its feeds", () => !a.rs.isLeader, LEASE_TTL_MS + 2000);
    await until("the takeover backfill", () => backfillCalls.length > callsBefore, 5000);
    await next.rs.takeoverDone();
    expect(next.rs.backfillCount).toBeGreaterThan(0);
    await sleep(500); // live trades after the backfill
    const others = [b, c!].filter((r) => r !== next);
    await settled(next, others);

    // Every tape trade from A's start up to the newest one counted, exactly once, in the new leader's store.
    for (const venue of TRADED) {
      const from = a.feeds.find((f) => f.venue === venue)!.startedAt + 1;
      const last = next.rs.cvd.lastTradeTime(venue, "BTC")!;
      const exact = tape(venue, "BTC", from, last + 1);
      const got = next.rs.cvd.cvd("BTC", -Infinity, Infinity).venues[venue]!;
      expect(exact.length).toBeGreaterThan(100);
      expect(got.trades).toBe(exact.length);
      expect(got.buyUsd).toBe(exact.filter((x) => x.side === "buy").reduce((sum, x) => sum + x.size * x.price, 0));
      expect(got.sellBase).toBe(exact.filter((x) => x.side === "sell").reduce((sum, x) => sum + x.size, 0));
    }
    const now = Date.now();
    const hist = next.rs.cvd.history("BTC", now - 3_600_000, now + 1, CVD_BUCKET_MS);
    expect(hist.length).toBeGreaterThan(0);
    expect(hist.filter((p) => p.missing)).toEqual([]);
    // The followers see the new leader's data.
    for (const o of others) expect(o.rs.cvd.cumulative("BTC")).toEqual(next.rs.cvd.cumulative("BTC"));
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
      expect(seen[0]!.lastTrades).toEqual([{ venue: "binance", base: "BTC", time: expect.any(Number), ids: expect.arrayContaining([expect.stringMatching(/a$/), expect.stringMatching(/b$/)]) }]);

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
      expect(dst.applyReplicated({ buckets: [{ ...seen[0]!.buckets[0]!, venue: "nope" as StreamVenue }, { ...seen[0]!.buckets[0]!, trades: -1 }] })).toBe(0);
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
