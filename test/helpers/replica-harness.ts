import { createHash } from "node:crypto";
import { createClient } from "redis";
import { logger } from "../../src/lib/log.js";
import { RedisHandle } from "../../src/state/redis.js";
import type { BackfillResult, TradeBackfill } from "../../src/ingestion/backfill/common.js";
import type { SubscribeResult, VenueFeed } from "../../src/ingestion/feeds/feed-base.js";
import { IngestionManager } from "../../src/ingestion/manager.js";
import { ReplicatedIngestion } from "../../src/ingestion/replication/replicated-ingestion.js";
import { StandbyFeeds } from "../../src/ingestion/replication/standby.js";
import { CvdStore, type CvdBucketRow } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES, type FeedState, type Liquidation, type StreamGap, type StreamVenue, type Trade } from "../../src/ingestion/types.js";

/*
 * Replicated ingestion in one process for tests: real Redis, scripted venue feeds and REST backfills over one
 * deterministic tape, so what each replica holds can be compared exactly with the tape.
 */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Two trades per venue and base at every multiple of this, ms. */
export const STEP_MS = 40;
/** Trades a latest-only REST backfill returns (Hyperliquid's `recentTrades`). */
export const LATEST_TRADES = 10;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every `pollMs` (default 25) until it returns a truthy value, or throws after `ms`. */
export async function until<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 10_000, pollMs = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

const hex = (s: string) => createHash("sha1").update(s).digest("hex");

/**
 * A tape trade id in the venue's own format: sequence numbers on Binance, Aster, Gate and OKX, a UUID on Bybit,
 * `<CCY>-<n>` on Deribit, a 48-bit hash on Hyperliquid and Bitget (whose real ids are too large to order as numbers).
 */
function tapeId(venue: StreamVenue, t: number, n: 0 | 1): string {
  const k = (t / STEP_MS) * 2 + n;
  if (venue === "binance") return String(1_000_000 + k);
  if (venue === "aster") return String(2_000_000 + k);
  if (venue === "gate") return String(3_000_000 + k);
  if (venue === "okx") return String(500_000 + 3 * k); // with holes, as OKX aggregates fills
  const h = hex(`${venue}${t}${n}`);
  if (venue === "bybit") return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  if (venue === "deribit") return `BTC-${parseInt(h.slice(0, 10), 16)}`;
  return String(parseInt(h.slice(0, 12), 16));
}

/** Venues of the tape; the others connect but trade nothing. */
export interface HarnessOptions {
  prefix: string;
  leaseTtlMs: number;
  pre: string[];
  traded: readonly StreamVenue[];
  /** Venues whose REST backfill returns only the latest {@link LATEST_TRADES} trades. */
  latestOnly?: readonly StreamVenue[];
  /** Venues on standby on followers. */
  standby?: readonly StreamVenue[];
}

/** A venue feed driven by the test: it delivers the tape from the moment it is started. */
export class FakeFeed {
  private readonly fns = { trades: new Set<(v: Trade[]) => void>(), liquidations: new Set<(v: Liquidation[]) => void>(), gap: new Set<(v: StreamGap) => void>() };
  private readonly subs = new Set<string>();
  running = false;
  startedAt = 0;
  emittedUntil = 0;
  lastMessageAt: number | null = null;

  constructor(
    readonly venue: StreamVenue,
    private readonly tape: (venue: StreamVenue, base: string, from: number, to: number) => Trade[],
  ) {}

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
  probe(): boolean {
    return this.running;
  }
  state(): FeedState {
    return {
      venue: this.venue,
      connected: this.running,
      connectedSince: this.running ? this.startedAt : null,
      lastMessageAt: this.lastMessageAt,
      reconnects: 0,
      subscribedSymbols: this.subs.size,
      lagMs: null,
    };
  }
  private silentFrom: number | null = null;
  private silentUntil = 0;

  /** A disconnection: the tape of the next `ms` is lost, then the feed reports the gap (as a reconnect does). */
  interrupt(ms: number): void {
    this.silentFrom = Date.now();
    this.silentUntil = this.silentFrom + ms;
  }

  /** Delivers the tape since the last delivery, up to `now`. */
  pump(now: number): void {
    if (!this.running) return;
    if (this.silentFrom !== null) {
      this.emittedUntil = now;
      if (now < this.silentUntil) return;
      const gap: StreamGap = { venue: this.venue, from: this.silentFrom, to: now };
      this.silentFrom = null;
      for (const fn of this.fns.gap) fn(gap);
    }
    this.lastMessageAt = now;
    for (const base of this.subs) {
      const trades = this.tape(this.venue, base, this.emittedUntil + 1, now + 1);
      if (trades.length) for (const fn of this.fns.trades) fn(trades);
    }
    this.emittedUntil = now;
  }
}

export interface Replica {
  id: string;
  rs: ReplicatedIngestion;
  redis: RedisHandle;
  /** The feeds of every manager this replica ran, in order. */
  feeds: FakeFeed[];
  standbyFeeds: FakeFeed[];
}

/** Replicas of one deployment (one Redis prefix) over one tape, pumped every 50 ms. */
export class ReplicaHarness {
  readonly replicas: Replica[] = [];
  readonly backfillCalls: Array<{ venue: StreamVenue; base: string; from: number; to: number }> = [];
  /** The venues deliver while true. */
  pumping = true;
  private readonly pump: NodeJS.Timeout;
  private readonly backfills: Record<StreamVenue, TradeBackfill>;

  constructor(readonly opts: HarnessOptions) {
    this.backfills = Object.fromEntries(STREAM_VENUES.map((venue) => [venue, this.backfill(venue)])) as Record<StreamVenue, TradeBackfill>;
    this.pump = setInterval(() => {
      if (!this.pumping) return;
      const now = Date.now();
      for (const r of this.replicas) for (const f of [...r.feeds, ...r.standbyFeeds]) f.pump(now);
    }, 50);
  }

  /** The tape: two trades at every multiple of STEP_MS (same millisecond), per traded venue and base. */
  tape = (venue: StreamVenue, base: string, from: number, to: number): Trade[] => {
    if (!this.opts.traded.includes(venue) || !["BTC", "ETH", "WIF"].includes(base)) return [];
    const out: Trade[] = [];
    for (let t = Math.ceil(from / STEP_MS) * STEP_MS; t < to; t += STEP_MS) {
      const k = t / STEP_MS;
      for (const n of [0, 1] as const) {
        out.push({ venue, base, time: t, price: 100 + (k % 7), size: 1 + ((k + n) % 3), side: (k + n) % 2 ? "buy" : "sell", id: tapeId(venue, t, n) });
      }
    }
    return out;
  };

  /** The venue's REST trades: the whole interval, or (latest-only venues) the latest trades before now. */
  private backfill(venue: StreamVenue): TradeBackfill {
    return {
      venue,
      fetchTrades: async (base: string, from: number, to: number): Promise<BackfillResult> => {
        this.backfillCalls.push({ venue, base, from, to });
        if (!this.opts.latestOnly?.includes(venue)) return { trades: this.tape(venue, base, from, to), complete: true };
        const now = Date.now();
        const latest = this.tape(venue, base, now - 60_000, now + 1).slice(-LATEST_TRADES);
        return { trades: latest.filter((t) => t.time >= from && t.time < to), complete: latest.length > 0 && latest[0]!.time < from };
      },
    };
  }

  async startReplica(id: string, url = REDIS_URL): Promise<Replica> {
    const { prefix, leaseTtlMs, pre } = this.opts;
    const redis = new RedisHandle({ url, prefix, log: logger });
    redis.start();
    await redis.waitReady();
    const db = openStreamDb(":memory:");
    const cvd = new CvdStore(db, { flushMs: 100 });
    const liquidations = new LiquidationStore(db, { flushMs: 100 });
    const feeds: FakeFeed[] = [];
    const standbyFeeds: FakeFeed[] = [];
    const standby = this.opts.standby ?? [];
    const rs = new ReplicatedIngestion({
      redis,
      cvd,
      liquidations,
      replicaId: id,
      leaseTtlMs,
      preSubscribed: pre,
      warmupMs: 500,
      statesEveryMs: 200,
      wantedPollMs: 100,
      tailBlockMs: 500,
      settleMs: 200,
      createManager: () => {
        const set = Object.fromEntries(STREAM_VENUES.map((v) => [v, new FakeFeed(v, this.tape)])) as Record<StreamVenue, FakeFeed>;
        feeds.push(...Object.values(set));
        return new IngestionManager(set as unknown as Record<StreamVenue, VenueFeed>, this.backfills, cvd, liquidations, { preSubscribed: pre, warmupMs: 500, maxOnDemand: 1 });
      },
      createStandby:
        standby.length === 0
          ? undefined
          : () => {
              const set = standby.map((v) => new FakeFeed(v, this.tape));
              standbyFeeds.push(...set);
              return new StandbyFeeds({ feeds: Object.fromEntries(set.map((f) => [f.venue, f as unknown as VenueFeed])), keepMs: 3 * leaseTtlMs + 5000 });
            },
    });
    await rs.start();
    const r = { id, rs, redis, feeds, standbyFeeds };
    this.replicas.push(r);
    return r;
  }

  /** Buckets with data or a gap mark, sorted (what replicas must agree on). */
  buckets(r: Replica): CvdBucketRow[] {
    return r.rs.cvd
      .exportChanges()
      .buckets.filter((b) => b.trades > 0 || b.gap !== "none")
      .sort((a, b) => `${a.base}${a.venue}${a.start}`.localeCompare(`${b.base}${b.venue}${b.start}`));
  }

  /** Pauses the venues until the replicas agree on what the leader holds, and returns it. */
  async settled(leader: Replica, others: Replica[]): Promise<CvdBucketRow[]> {
    this.pumping = false;
    try {
      await sleep(150); // the leader's last flush
      const want = this.buckets(leader);
      await until("the followers to hold the leader's buckets", () => others.every((o) => JSON.stringify(this.buckets(o)) === JSON.stringify(want)), 5000);
      return want;
    } finally {
      this.pumping = true;
    }
  }

  /**
   * Checks `r` counted every tape trade of `venue` for BTC from `fromMs` up to its newest one exactly once;
   * returns the counts (what it holds, what the tape has) for the caller's assertions.
   */
  exactness(r: Replica, venue: StreamVenue, fromMs: number): { counted: number; expected: number; buyUsd: [number, number]; sellBase: [number, number] } {
    const last = r.rs.cvd.lastTradeTime(venue, "BTC")!;
    const exact = this.tape(venue, "BTC", fromMs, last + 1);
    const got = r.rs.cvd.cvd("BTC", -Infinity, Infinity).venues[venue]!;
    return {
      counted: got.trades,
      expected: exact.length,
      buyUsd: [got.buyUsd, exact.filter((x) => x.side === "buy").reduce((sum, x) => sum + x.size * x.price, 0)],
      sellBase: [got.sellBase, exact.filter((x) => x.side === "sell").reduce((sum, x) => sum + x.size, 0)],
    };
  }

  /** Stops every replica and deletes the deployment's keys. */
  async close(): Promise<void> {
    clearInterval(this.pump);
    for (const r of this.replicas) {
      await r.rs.stop();
      // Closing a client that is reconnecting through a cut proxy can wait for ever (node-redis).
      await Promise.race([r.redis.close(), sleep(3000)]);
    }
    const client = await createClient({ url: REDIS_URL }).connect();
    for await (const keys of client.scanIterator({ MATCH: `${this.opts.prefix}*`, COUNT: 500 })) if (keys.length) await client.del(keys);
    await client.close();
  }
}
