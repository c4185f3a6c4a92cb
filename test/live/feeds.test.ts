import { describe, expect, it } from "vitest";
import { CvdFeed, CVD_CLOSE_GRACE_MS } from "../../src/live/cvd-feed.js";
import { FundingFeed, type FundingSnapshot } from "../../src/live/funding-feed.js";
import { LiveHub } from "../../src/live/hub.js";
import { LiquidationFeed } from "../../src/live/liquidation-feed.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { RESUME_MAX_EVENTS } from "../../src/live/resume.js";
import type { LiveEvent } from "../../src/live/types.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import type { Trade } from "../../src/ingestion/types.js";
import { cleanupAfterEach, manualClock } from "../helpers/scratch.js";
import { until } from "../helpers/wait.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const cleanup = cleanupAfterEach();

let seq = 0;
const trade = (p: Partial<Trade> & Pick<Trade, "time">): Trade => ({ venue: "binance", base: "BTC", price: 100, size: 1, side: "buy", id: String(++seq), ...p });

function cvdStore(now: () => number): CvdStore {
  const db = openStreamDb(":memory:");
  const s = new CvdStore(db, { now, flushMs: 60_000, purgeEveryMs: 0 });
  cleanup.push(() => s.close());
  cleanup.unshift(() => db.close());
  s.track("BTC");
  return s;
}

describe("CvdFeed: closed buckets with ids, running updates, resume from a bucket id", () => {
  it("publishes each closed bucket once after its grace time, updates of the open bucket only when they change, and replays buckets after Last-Event-ID", async () => {
    const c = manualClock(T0 + 2 * MIN);
    const store = cvdStore(c.now);
    const feed = new CvdFeed(store, "BTC", c.now);
    cleanup.push(() => feed.stop());
    const got: LiveEvent[] = [];
    feed.subscribe((e) => got.push(e));

    store.add([trade({ time: T0 + MIN, size: 2, side: "buy" }), trade({ time: T0 + 90_000, size: 0.5, side: "sell", venue: "okx", id: "a" })]);
    await until("a running update", async () => got.some((e) => e.event === "cvd_update"));
    const update = got.find((e) => e.event === "cvd_update")!;
    expect(update.id).toBeUndefined();
    expect(update.data).toMatchObject({ symbol: "BTC", cvd: 150, buy_volume: 200, sell_volume: 50, exchanges: { binance: { cvd: 200 }, okx: { cvd: -50 } } });
    await new Promise((r) => setTimeout(r, 1100));
    expect(got.filter((e) => e.event === "cvd_update")).toHaveLength(1);

    // The bucket [T0, T0+5m) closes at T0+5m and is published after the grace time.
    c.t = T0 + 5 * MIN + CVD_CLOSE_GRACE_MS / 2;
    await new Promise((r) => setTimeout(r, 1100));
    expect(got.filter((e) => e.event === "cvd_bucket")).toHaveLength(0);
    store.add([trade({ time: T0 + 6 * MIN, size: 1, side: "sell" })]);
    c.t = T0 + 10 * MIN + CVD_CLOSE_GRACE_MS;
    await until("two closed buckets", async () => got.filter((e) => e.event === "cvd_bucket").length === 2);
    const buckets = got.filter((e) => e.event === "cvd_bucket");
    expect(buckets.map((b) => b.id)).toEqual([`cvd_BTC_${T0}`, `cvd_BTC_${T0 + 5 * MIN}`]);
    expect(buckets[0]!.data).toMatchObject({ cvd: 150, bucket_start: new Date(T0).toISOString(), bucket_end: new Date(T0 + 5 * MIN).toISOString() });
    expect(buckets[1]!.data).toMatchObject({ cvd: -100, sell_volume: 100 });

    expect(feed.backlog(`cvd_BTC_${T0}`).map((e) => e.id)).toEqual([`cvd_BTC_${T0 + 5 * MIN}`]);
    expect(feed.backlog(`cvd_BTC_${T0 - 5 * MIN}`).map((e) => e.id)).toEqual([`cvd_BTC_${T0}`, `cvd_BTC_${T0 + 5 * MIN}`]);
    expect(feed.backlog(`cvd_ETH_${T0}`)).toEqual([]);
    expect(feed.backlog("garbage")).toEqual([]);
  });
});

describe("FundingFeed: changes and settlements from polls", () => {
  it("sends the state when it changes, a settlement when a venue's next funding time moves forward, and the latest state to a new subscriber", async () => {
    const snaps: FundingSnapshot[] = [
      {
        symbol: "BTC",
        timestamp: "t1",
        exchanges: { binance: { funding_rate: 0.0001, predicted_funding_rate: null, funding_interval_hours: 8, next_funding_time: "2026-11-23T16:00:00.000Z" } },
        missing_exchanges: [],
      },
      {
        symbol: "BTC",
        timestamp: "t2",
        exchanges: { binance: { funding_rate: 0.0001, predicted_funding_rate: null, funding_interval_hours: 8, next_funding_time: "2026-11-23T16:00:00.000Z" } },
        missing_exchanges: [],
      },
      {
        symbol: "BTC",
        timestamp: "t3",
        exchanges: { binance: { funding_rate: 0.0002, predicted_funding_rate: null, funding_interval_hours: 8, next_funding_time: "2026-11-24T00:00:00.000Z" } },
        missing_exchanges: [],
      },
    ];
    let k = 0;
    const feed = new FundingFeed("BTC", async () => snaps[Math.min(k++, snaps.length - 1)]!, Date.now, 100);
    cleanup.push(() => feed.stop());
    const got: LiveEvent[] = [];
    feed.subscribe((e) => got.push(e));
    await until("three polls", async () => k >= 3 && got.length >= 3);
    expect(got.map((e) => e.event)).toEqual(["funding", "funding_settlement", "funding"]);
    expect(got[1]!.data).toMatchObject({ exchange: "binance", settled_at: "2026-11-23T16:00:00.000Z", funding_rate: 0.0001 });
    expect(feed.backlog()).toEqual([got[2]]);
  });
});

describe("LiveHub: one feed per topic key, stopped with its last subscriber", () => {
  it("shares a feed between subscribers and refuses store topics without live stores", () => {
    const hub = new LiveHub({ readFunding: async () => ({ symbol: "BTC", timestamp: "", exchanges: {}, missing_exchanges: [] }), now: Date.now, fundingPollMs: 60_000 });
    const a = hub.subscribe("funding", "BTC", undefined, () => undefined);
    const b = hub.subscribe("funding", "BTC", undefined, () => undefined);
    expect(hub.activeFeeds).toBe(1);
    a.unsubscribe();
    expect(hub.activeFeeds).toBe(1);
    b.unsubscribe();
    expect(hub.activeFeeds).toBe(0);
    expect(() => hub.subscribe("cvd", "BTC", undefined, () => undefined)).toThrow(/STREAMS=off/);
  });
});

describe("LiquidationFeed on a replica", () => {
  it("publishes records replicated from the ingesting replica with their ids, filtered by base, and resumes after an id", () => {
    const db = openStreamDb(":memory:");
    const store = new LiquidationStore(db, { flushMs: 60_000 });
    cleanup.push(() => store.close());
    cleanup.unshift(() => db.close());
    const feed = new LiquidationFeed(store, "BTC");
    cleanup.push(() => feed.stop());
    const got: LiveEvent[] = [];
    feed.subscribe((e) => got.push(e));
    const t = Math.floor(Date.now() / 1000) * 1000 - 5000;
    const rec = (id: string, base: string, ms: number) => ({
      id,
      venue: "okx" as const,
      base,
      venueSymbol: `${base}-USDT-SWAP`,
      time: t + ms,
      side: "long" as const,
      price: 100,
      size: 1 + ms / 1e4,
      valueUsd: 100,
    });
    store.applyReplicated([rec(`liq_${t / 1000}_1`, "BTC", 0), rec(`liq_${t / 1000}_2`, "ETH", 1), rec(`liq_${t / 1000 + 1}_1`, "BTC", 1000)]);
    expect(got.map((e) => e.id)).toEqual([`liq_${t / 1000}_1`, `liq_${t / 1000 + 1}_1`]);
    expect(got[0]!.data).toMatchObject({ symbol: "BTCUSDT", exchange: "OKX", side: "long" });
    expect(feed.backlog(`liq_${t / 1000}_1`).map((e) => e.id)).toEqual([`liq_${t / 1000 + 1}_1`]);
    expect(feed.backlog(undefined)).toEqual([]);
    // A resume point older than the 24 h held says that it cannot be replayed in full.
    expect(feed.backlog("liq_1000_1")[0]).toMatchObject({ event: "gap" });
  });
});

describe("resume limits: a resume replays a bounded window and says when it was cut (issue 20, finding 5)", () => {
  const LIMITS = { windowMs: 10 * MIN, maxEvents: RESUME_MAX_EVENTS };

  it("CvdFeed: an id older than the window gets replay_truncated and only the buckets that ended in it; a recent id gets exactly the buckets missed", () => {
    // 30 s into the bucket starting at T0 + 120 min: the newest closed bucket starts at T0 + 115 min.
    const c = manualClock(T0 + 120 * MIN + 30_000 + CVD_CLOSE_GRACE_MS);
    const store = cvdStore(c.now);
    for (let k = 0; k < 24; k++) store.add([trade({ time: T0 + k * 5 * MIN + 1000 })]);
    const feed = new CvdFeed(store, "BTC", c.now, LIMITS);
    cleanup.push(() => feed.stop());
    const id = (min: number) => `cvd_BTC_${T0 + min * MIN}`;

    // Two hours of buckets are held; the window (10 min) holds the two that ended in it.
    const old = feed.backlog(id(-5));
    expect(old[0]).toEqual({
      event: "replay_truncated",
      data: {
        reason: expect.stringContaining("at most the last 600 s and 200 events"),
        last_event_id: id(-5),
        oldest_id_served: id(110),
        window_start: new Date(c.t - 10 * MIN).toISOString(),
        window_sec: 600,
        max_events: RESUME_MAX_EVENTS,
        rest: "GET /cvd/history/BTC?period=7d",
      },
    });
    expect(old.slice(1).map((e) => e.id)).toEqual([id(110), id(115)]);
    // Away for less than the window: exactly the buckets missed, no notice.
    expect(feed.backlog(id(105)).map((e) => e.id)).toEqual([id(110), id(115)]);
    expect(feed.backlog(id(110)).map((e) => e.id)).toEqual([id(115)]);
    expect(feed.backlog(id(115))).toEqual([]);
    // One bucket before the window: cut, and said so.
    expect(feed.backlog(id(100)).map((e) => e.event)).toEqual(["replay_truncated", "cvd_bucket", "cvd_bucket"]);
  });

  it("LiquidationFeed: only the window's events and at most the newest 200; a recent id replays exactly what was missed", () => {
    const db = openStreamDb(":memory:");
    const store = new LiquidationStore(db, { flushMs: 60_000 });
    cleanup.push(() => store.close());
    cleanup.unshift(() => db.close());
    const feed = new LiquidationFeed(store, "BTC", Date.now, LIMITS);
    cleanup.push(() => feed.stop());
    const nowS = Math.floor(Date.now() / 1000);
    const rec = (sec: number, seq: number) => ({
      id: `liq_${sec}_${seq}`,
      venue: "okx" as const,
      base: "BTC",
      venueSymbol: "BTC-USDT-SWAP",
      time: sec * 1000 + seq,
      side: "long" as const,
      price: 100,
      size: 1,
      valueUsd: 100,
    });
    const hourAgo = Array.from({ length: 5 }, (_, k) => rec(nowS - 3600, k + 1));
    const recent = Array.from({ length: 250 }, (_, k) => rec(nowS - 120 + Math.floor(k / 10), (k % 10) + 1));
    store.applyReplicated([...hourAgo, ...recent]);

    const old = feed.backlog(`liq_${nowS - 7200}_1`);
    expect(old[0]).toMatchObject({
      event: "replay_truncated",
      data: { last_event_id: `liq_${nowS - 7200}_1`, oldest_id_served: recent[50]!.id, window_sec: 600, max_events: 200, rest: "GET /liquidation/recent?symbol=BTC&limit=1000" },
    });
    expect(old.slice(1).map((e) => e.id)).toEqual(recent.slice(50).map((r) => r.id));
    // From just before the recent burst: within the window, but 250 events: the newest 200, cut and said so.
    expect(feed.backlog(hourAgo[4]!.id).map((e) => e.id)).toEqual([undefined, ...recent.slice(50).map((r) => r.id)]);
    // Missed 10 events a moment ago: exactly those.
    expect(feed.backlog(recent[239]!.id).map((e) => e.id)).toEqual(recent.slice(240).map((r) => r.id));
  });
});
