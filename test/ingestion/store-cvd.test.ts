import { describe, expect, it } from "vitest";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";
import { CVD_SLOTS, CvdStore, MAX_BUCKETS_PER_SYMBOL, type CvdStoreOptions } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb, streamDbPath, type Database } from "../../src/ingestion/store/db.js";
import { STREAM_VENUES, type StreamVenue, type Trade } from "../../src/ingestion/types.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

let idSeq = 0;
function trade(p: Partial<Trade> & Pick<Trade, "time">): Trade {
  return { venue: "binance", base: "BTC", price: 100, size: 1, side: "buy", id: `t${++idSeq}`, ...p };
}

/** Stores and databases of a test, closed after it. */
const cleanup = cleanupAfterEach();
const clock = (start = T0) => manualClock(start);

function open(db: Database, now: () => number, opts: CvdStoreOptions = {}): CvdStore {
  const s = new CvdStore(db, { now, flushMs: 60_000, purgeEveryMs: 0, ...opts });
  cleanup.push(() => s.close());
  return s;
}

function memDb(): Database {
  const db = openStreamDb(":memory:");
  cleanup.unshift(() => db.close()); // after the stores that use it
  return db;
}

describe("CvdStore buckets", () => {
  it("puts trades in 5-min UTC buckets, buy/sell in base and USD, split per venue", () => {
    const c = clock(T0 + 20 * MIN);
    const s = open(memDb(), c.now);
    const n = s.add([
      trade({ time: T0 + 10_000, size: 2, price: 100, side: "buy" }),
      trade({ time: T0 + 5 * MIN - 1, size: 1, price: 110, side: "sell" }),
      trade({ time: T0 + 5 * MIN, size: 0.5, price: 120, side: "buy" }),
      trade({ venue: "okx", time: T0 + 6 * MIN, size: 3, price: 10, side: "sell" }),
    ]);
    expect(n).toBe(4);
    const h = s.history("BTC", T0, T0 + 15 * MIN, 5 * MIN, { perVenue: true });
    expect(h.map((p) => p.start)).toEqual([T0, T0 + 5 * MIN, T0 + 10 * MIN]);
    expect(h[0]).toMatchObject({ buyBase: 2, sellBase: 1, buyUsd: 200, sellUsd: 110, trades: 2, cvdDelta: 90, missing: false });
    expect(h[1]).toMatchObject({ buyBase: 0.5, sellBase: 3, buyUsd: 60, sellUsd: 30, trades: 2, cvdDelta: 30 });
    expect(h[1]!.venues).toEqual({
      binance: { buyBase: 0.5, sellBase: 0, buyUsd: 60, sellUsd: 0, trades: 1 },
      okx: { buyBase: 0, sellBase: 3, buyUsd: 0, sellUsd: 30, trades: 1 },
    });
    // 12:10 has no data on any venue and is complete: missing.
    expect(h[2]).toMatchObject({ trades: 0, missing: true });

    const sum = s.cvd("BTC", T0, T0 + HOUR);
    expect(sum.total).toEqual({ buyBase: 2.5, sellBase: 4, buyUsd: 260, sellUsd: 140, trades: 4 });
    expect(Object.keys(sum.venues)).toEqual(["binance", "okx"]);
    expect(sum.venues.okx).toEqual({ buyBase: 0, sellBase: 3, buyUsd: 0, sellUsd: 30, trades: 1 });
    expect(sum.unfilled).toBe(false);
    // A range starting mid-slot includes the whole slot.
    expect(s.cvd("BTC", T0 + 6 * MIN, T0 + 7 * MIN).total.trades).toBe(2);
    expect(s.cumulative("BTC").total).toEqual(sum.total);
    expect(s.symbols()).toEqual(["BTC"]);
    expect(s.cvd("ETH", 0, Infinity)).toMatchObject({ trackedSince: null, venues: {}, total: { trades: 0 } });
  });

  it("ignores invalid trades and trades outside retention or far in the future", () => {
    const c = clock(T0);
    const s = open(memDb(), c.now);
    expect(
      s.add([
        trade({ time: T0, size: 0 }),
        trade({ time: T0, price: Number.NaN }),
        trade({ time: T0, venue: "novenue" as StreamVenue }),
        trade({ time: T0 - 8 * 24 * HOUR }),
        trade({ time: T0 + 10 * MIN }),
        trade({ time: T0 + 30_000 }), // within the 1-min clock skew allowance
      ]),
    ).toBe(1);
  });

  it("re-aggregates 5m buckets into 15m and 1h with aligned starts and equal sums", () => {
    const c = clock(T0 + 3 * HOUR);
    const s = open(memDb(), c.now);
    const trades: Trade[] = [];
    for (let m = 0; m < 120; m += 1) {
      trades.push(trade({ time: T0 + m * MIN + 1000, size: 1 + (m % 3), price: 100 + m, side: m % 4 === 0 ? "sell" : "buy", venue: STREAM_VENUES[m % 4]! }));
    }
    s.add(trades);
    const h5 = s.history("BTC", T0, T0 + 2 * HOUR, 5 * MIN);
    const h15 = s.history("BTC", T0, T0 + 2 * HOUR, 15 * MIN);
    const h60 = s.history("BTC", T0 + 7 * MIN, T0 + 2 * HOUR, HOUR);
    expect(h5).toHaveLength(24);
    expect(h15.map((p) => p.start)).toEqual(Array.from({ length: 8 }, (_, i) => T0 + i * 15 * MIN));
    expect(h60.map((p) => p.start)).toEqual([T0, T0 + HOUR]);
    for (let i = 0; i < 8; i++) {
      const parts = h5.slice(i * 3, i * 3 + 3);
      expect(h15[i]!.buyUsd).toBeCloseTo(
        parts.reduce((a, p) => a + p.buyUsd, 0),
        9,
      );
      expect(h15[i]!.sellUsd).toBeCloseTo(
        parts.reduce((a, p) => a + p.sellUsd, 0),
        9,
      );
      expect(h15[i]!.trades).toBe(15);
    }
    for (let i = 0; i < 2; i++) {
      const parts = h15.slice(i * 4, i * 4 + 4);
      expect(h60[i]!.cvdDelta).toBeCloseTo(
        parts.reduce((a, p) => a + p.cvdDelta, 0),
        9,
      );
      expect(h60[i]!.trades).toBe(60);
    }
    const total = s.cvd("BTC", T0, T0 + 2 * HOUR).total;
    expect(h60[0]!.buyUsd + h60[1]!.buyUsd).toBeCloseTo(total.buyUsd, 9);
    expect(() => s.history("BTC", T0, T0 + HOUR, 7 * MIN)).toThrow(RangeError);
  });
});

describe("CvdStore backfill idempotence", () => {
  it("counts the same trades once when sent twice, also across a restart", () => {
    const dir = tempDir(cleanup, "mg-cvd-");
    const c = clock(T0 + 10 * MIN);
    const batch = [trade({ time: T0 + 1000, size: 2 }), trade({ time: T0 + 2000, side: "sell" }), trade({ venue: "bybit", time: T0 + 3000, id: "t1" })];
    let db = openStreamDb(streamDbPath(dir));
    let s = new CvdStore(db, { now: c.now, flushMs: 60_000, purgeEveryMs: 0 });
    expect(s.add(batch)).toBe(3);
    expect(s.add(batch)).toBe(0);
    expect(s.add([...batch, trade({ time: T0 + 4000 })])).toBe(1);
    const before = s.cvd("BTC", T0, T0 + HOUR);
    expect(before.total.trades).toBe(4);
    expect(s.lastTradeTime("binance", "BTC")).toBe(T0 + 4000);
    s.close();
    db.close();

    db = openStreamDb(streamDbPath(dir));
    s = new CvdStore(db, { now: c.now, flushMs: 60_000, purgeEveryMs: 0 });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    expect(s.add(batch)).toBe(0);
    expect(s.cvd("BTC", T0, T0 + HOUR)).toEqual(before);
    expect(s.lastTradeTime("binance", "BTC")).toBe(T0 + 4000);
  });

  it("keeps the ids of open buckets in memory and the others in SQLite, where a late duplicate still finds them", () => {
    const c = clock(T0 + 2 * HOUR);
    const s = open(memDb(), c.now, { openIdsMs: 15 * MIN });
    const old = Array.from({ length: 500 }, (_, i) => trade({ venue: "bybit", time: T0 + i * 100 }));
    expect(s.add(old)).toBe(500);
    s.flush(); // those buckets ended long ago: their ids leave memory
    expect(s.stats().idsInMemory).toBe(0);
    s.add([trade({ venue: "bybit", time: c.t })]);
    expect(s.stats().idsInMemory).toBe(1);
    expect(s.add(old.slice(0, 10))).toBe(0); // read back from SQLite
    expect(s.cvd("BTC", T0, T0 + HOUR).total.trades).toBe(500);
  });
});

describe("CvdStore gaps and missing markers", () => {
  it("shows unfilled gaps as missing, filled ones not; stretches without data are missing", () => {
    const c = clock(T0);
    const s = open(memDb(), c.now);
    s.track("BTC");
    for (let m = 0; m < 60; m++) {
      c.t = T0 + m * MIN;
      s.heartbeat("BTC", ["binance", "bybit"]);
      if (m % 2 === 0) s.add([trade({ time: c.t })]);
    }
    c.t = T0 + HOUR + 30_000;
    s.add([trade({ time: c.t })]);
    let h = s.history("BTC", T0, T0 + 2 * HOUR, 5 * MIN);
    expect(h).toHaveLength(13); // 12:00 … 13:00 (in progress); nothing after now
    expect(h.every((p) => !p.missing)).toBe(true);

    expect(s.markGap({ venue: "bybit", from: T0 + 10 * MIN + 5, to: T0 + 20 * MIN, filled: false })).toBe(2);
    h = s.history("BTC", T0, T0 + 2 * HOUR, 5 * MIN);
    expect(h.filter((p) => p.missing).map((p) => p.start)).toEqual([T0 + 10 * MIN, T0 + 15 * MIN]);
    expect(s.history("BTC", T0, T0 + 2 * HOUR, 15 * MIN).map((p) => p.missing)).toEqual([true, true, false, false, false]);
    expect(s.cvd("BTC", T0, T0 + HOUR).unfilled).toBe(true);
    expect(s.cvd("BTC", T0 + 30 * MIN, T0 + HOUR).unfilled).toBe(false);

    // Backfilled afterwards: the same interval marked filled is no longer missing.
    s.markGap({ venue: "bybit", base: "BTC", from: T0 + 10 * MIN, to: T0 + 20 * MIN, filled: true });
    expect(s.history("BTC", T0, T0 + 2 * HOUR, 5 * MIN).some((p) => p.missing)).toBe(false);
    expect(s.cvd("BTC", T0, T0 + HOUR).unfilled).toBe(false);

    // A gap for a venue the base never had, or an untracked base, marks nothing.
    expect(s.markGap({ venue: "okx", from: T0, to: T0 + HOUR, filled: false })).toBe(0);
    expect(s.markGap({ venue: "okx", base: "DOGE", from: T0, to: T0 + HOUR, filled: false })).toBe(0);

    // No data at all (service down) for 13:05–13:20, then trades again at 13:20.
    c.t = T0 + HOUR + 22 * MIN;
    s.add([trade({ time: c.t })]);
    const late = s.history("BTC", T0 + HOUR, T0 + 2 * HOUR, 5 * MIN);
    expect(late.map((p) => [p.start - T0 - HOUR, p.missing])).toEqual([
      [0, false],
      [5 * MIN, true],
      [10 * MIN, true],
      [15 * MIN, true],
      [20 * MIN, false], // in progress
    ]);
  });

  it("two gaps in one bucket: the bucket is complete only once both were filled, whatever the order of the marks", () => {
    const c = clock(T0 + 20 * MIN);
    const s = open(memDb(), c.now);
    s.add([trade({ venue: "hyperliquid", time: T0 + 1000 }), trade({ venue: "binance", time: T0 + 1000 })]);
    const missing = () => s.history("BTC", T0, T0 + 5 * MIN, 5 * MIN)[0]!.missing;
    const a = { venue: "hyperliquid" as const, from: T0 + 60_000, to: T0 + 94_600 }; // 34.6 s, not backfilled
    const b = { venue: "hyperliquid" as const, from: T0 + 117_600, to: T0 + 120_600 }; // 3 s, 23 s later, backfilled
    s.markGap({ ...a, filled: false });
    s.markGap({ ...b, filled: true });
    expect(missing()).toBe(true);
    expect(s.cvd("BTC", T0, T0 + 5 * MIN).unfilled).toBe(true);
    const row = () => s.exportChanges().buckets.find((x) => x.venue === "hyperliquid" && x.start === T0)!;
    expect(row()).toMatchObject({ gap: "unfilled", unfilled: [[a.from, a.to]] });
    // Part of the first gap filled later: the rest stays unfilled.
    s.markGap({ venue: "hyperliquid", from: a.from, to: a.from + 30_000, filled: true });
    expect(row().unfilled).toEqual([[a.from + 30_000, a.to]]);
    expect(missing()).toBe(true);
    // The other order: a later unfilled gap over a filled bucket marks it unfilled; filling all of it clears it.
    s.markGap({ venue: "hyperliquid", from: T0, to: T0 + 5 * MIN, filled: true });
    expect(row()).toMatchObject({ gap: "filled", unfilled: [] });
    expect(missing()).toBe(false);
    s.markGap({ ...b, filled: false });
    expect(row()).toMatchObject({ gap: "unfilled", unfilled: [[b.from, b.to]] });
    // A gap spanning two buckets is split at the boundary.
    expect(s.markGap({ venue: "binance", from: T0 + 4 * MIN, to: T0 + 6 * MIN, filled: false })).toBe(2);
    expect(
      s
        .exportChanges()
        .buckets.filter((x) => x.venue === "binance")
        .map((x) => x.unfilled),
    ).toEqual([[[T0 + 4 * MIN, T0 + 5 * MIN]], [[T0 + 5 * MIN, T0 + 6 * MIN]]]);
    // settleGap (another replica's coverage) clears unfilled parts only; buckets without gaps stay "none".
    expect(s.settleGap({ venue: "binance", from: T0, to: T0 + 5 * MIN + 30_000 })).toBe(2);
    expect(
      s
        .exportChanges()
        .buckets.filter((x) => x.venue === "binance")
        .map((x) => [x.gap, x.unfilled]),
    ).toEqual([
      ["filled", []],
      ["unfilled", [[T0 + 5 * MIN + 30_000, T0 + 6 * MIN]]],
    ]);
    expect(s.settleGap({ venue: "okx", base: "BTC", from: T0, to: T0 + HOUR })).toBe(0);
  });

  it("leaves out history before tracking began", () => {
    const c = clock(T0 + 2 * HOUR);
    const s = open(memDb(), c.now);
    s.add([trade({ time: T0 + HOUR + 1 })]);
    const h = s.history("BTC", T0, T0 + 3 * HOUR, HOUR);
    expect(h.map((p) => p.start)).toEqual([T0 + HOUR, T0 + 2 * HOUR]);
    expect(h[0]!.missing).toBe(true); // 13:05–13:55 without any data
    expect(h[1]!.missing).toBe(false); // only the in-progress slot
    expect(s.history("ETH", T0, T0 + HOUR, HOUR)).toEqual([]);
  });
});

describe("CvdStore retention and bounds", () => {
  it("purges buckets older than 7 days in memory and in SQLite", () => {
    const db = memDb();
    const c = clock(T0);
    const s = open(db, c.now);
    s.add([trade({ time: T0 - 6 * 24 * HOUR }), trade({ time: T0 - HOUR }), trade({ time: T0 })]);
    s.flush();
    expect(s.stats().buckets).toBe(3);
    c.t = T0 + 24 * HOUR + 10 * MIN; // the first bucket is now more than 7 days old
    expect(s.purge()).toBe(1);
    s.flush();
    expect(s.stats().buckets).toBe(2);
    expect(db.prepare("SELECT COUNT(*) AS n FROM cvd_bucket").get()).toEqual({ n: 2 });
    expect(s.cumulative("BTC").total.trades).toBe(2);
    expect(s.cumulative("BTC").trackedSince).toBeGreaterThan(T0 - 6 * 24 * HOUR);
    c.t = T0 + 8 * 24 * HOUR;
    s.add([trade({ time: c.t })]); // crossing a slot boundary purges on write
    expect(s.stats().buckets).toBe(1);
  });

  it("purges on load", () => {
    const dir = tempDir(cleanup, "mg-cvd-");
    const c = clock(T0);
    let db = openStreamDb(streamDbPath(dir));
    let s = new CvdStore(db, { now: c.now, purgeEveryMs: 0 });
    s.add([trade({ time: T0 - 6 * 24 * HOUR }), trade({ time: T0 })]);
    s.close();
    db.close();
    c.t = T0 + 2 * 24 * HOUR;
    db = openStreamDb(streamDbPath(dir));
    s = new CvdStore(db, { now: c.now, purgeEveryMs: 0 });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    expect(s.stats().buckets).toBe(1);
    expect(db.prepare("SELECT COUNT(*) AS n FROM cvd_bucket").get()).toEqual({ n: 1 });
  });

  it("holds at most 7 d × 288 × 4 buckets per symbol however long it runs", () => {
    const c = clock(T0);
    const s = open(memDb(), c.now);
    let peak = 0;
    for (let slot = 0; slot < 8 * 288; slot++) {
      c.t = T0 + slot * 5 * MIN + 1000;
      s.add(STREAM_VENUES.map((venue) => trade({ venue, time: c.t })));
      peak = Math.max(peak, s.stats().buckets);
    }
    expect(MAX_BUCKETS_PER_SYMBOL).toBe(2016 * STREAM_VENUES.length);
    expect(CVD_SLOTS).toBe(2016);
    expect(peak).toBe(MAX_BUCKETS_PER_SYMBOL);
    const st = s.stats();
    expect(st.buckets).toBe(MAX_BUCKETS_PER_SYMBOL);
    expect(st.approxBytes).toBeLessThan(MAX_BUCKETS_PER_SYMBOL * 160 + st.idsInMemory * 100 + 1);
    // The 7d window still spans 7 days less at most one slot.
    expect(s.history("BTC", c.t - 7 * 24 * HOUR, c.t, HOUR).length).toBeGreaterThanOrEqual(168);
  });
});

describe("CvdStore persistence", () => {
  it("returns identical history and cvd after a restart from the same file", () => {
    const dir = tempDir(cleanup, "mg-cvd-");
    const path = streamDbPath(dir);
    const c = clock(T0 + 3 * 24 * HOUR);
    let rnd = 42;
    const rand = () => (rnd = (rnd * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const trades: Trade[] = [];
    for (let i = 0; i < 5000; i++) {
      const base = i % 5 === 0 ? "ETH" : "BTC";
      trades.push(
        trade({
          venue: STREAM_VENUES[Math.floor(rand() * 4)]!,
          base,
          time: T0 + Math.floor(rand() * 3 * 24 * HOUR),
          price: 40_000 * (1 + rand() / 10),
          size: rand() * 0.37,
          side: rand() < 0.52 ? "buy" : "sell",
        }),
      );
    }
    const snapshot = (s: CvdStore) => ({
      symbols: s.symbols(),
      h5: s.history("BTC", c.t - HOUR, c.t, 5 * MIN, { perVenue: true }),
      h15: s.history("BTC", c.t - 4 * HOUR, c.t, 15 * MIN, { perVenue: true }),
      h60: s.history("BTC", c.t - 7 * 24 * HOUR, c.t, HOUR, { perVenue: true }),
      eth: s.history("ETH", c.t - 24 * HOUR, c.t, HOUR),
      cvd1h: s.cvd("BTC", c.t - HOUR, c.t),
      cvd24h: s.cvd("BTC", c.t - 24 * HOUR, c.t),
      cum: s.cumulative("BTC"),
      buckets: s.stats().buckets, // (remembered ids differ: a reload keeps only the window behind the newest)
    });

    let db = openStreamDb(path);
    let s = new CvdStore(db, { now: c.now, flushMs: 5, purgeEveryMs: 0 });
    for (let i = 0; i < trades.length; i += 250) s.add(trades.slice(i, i + 250));
    s.markGap({ venue: "okx", from: T0 + HOUR, to: T0 + 2 * HOUR, filled: false });
    s.markGap({ venue: "bybit", base: "BTC", from: T0 + 5 * HOUR, to: T0 + 6 * HOUR, filled: true });
    const before = snapshot(s);
    expect(before.h60.some((p) => p.missing)).toBe(true);
    s.close();
    db.close();

    db = openStreamDb(path);
    s = new CvdStore(db, { now: c.now, flushMs: 5, purgeEveryMs: 0 });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    const after = snapshot(s);
    expect(after).toEqual(before);
    // Bit-for-bit, not merely close.
    expect(after.cum.total.buyUsd).toBe(before.cum.total.buyUsd);
    expect(after.h60.map((p) => p.cvdDelta)).toEqual(before.h60.map((p) => p.cvdDelta));
  });

  it("writes through within flushMs without close (crash-safe up to the last flush)", async () => {
    const dir = tempDir(cleanup, "mg-cvd-");
    const path = streamDbPath(dir);
    const c = clock(T0 + HOUR);
    const db = openStreamDb(path);
    const s = new CvdStore(db, { now: c.now, flushMs: 20, purgeEveryMs: 0 });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    s.add([trade({ time: T0 + 1000, size: 3 })]);
    expect(s.stats().dirty).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(s.stats().dirty).toBe(0);
    // A second connection (another process after a crash) sees it.
    const db2 = openStreamDb(path);
    const s2 = new CvdStore(db2, { now: c.now, purgeEveryMs: 0 });
    cleanup.push(
      () => db2.close(),
      () => s2.close(),
    );
    expect(s2.cvd("BTC", T0, T0 + HOUR).total.buyBase).toBe(3);
  });

  it("drops a base from memory and the database", () => {
    const db = memDb();
    const c = clock(T0 + HOUR);
    const s = open(db, c.now);
    s.add([trade({ time: T0 }), trade({ base: "ETH", time: T0 })]);
    s.flush();
    expect(s.drop("ETH")).toBe(true);
    expect(s.drop("ETH")).toBe(false);
    expect(s.symbols()).toEqual(["BTC"]);
    for (const table of ["cvd_bucket", "cvd_symbol", "cvd_bucket_ids", "cvd_ledger"]) {
      expect(db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE base = 'ETH'`).get()).toEqual({ n: 0 });
    }
    s.flush();
    expect(db.prepare(`SELECT COUNT(*) AS n FROM cvd_bucket`).get()).toEqual({ n: 1 });
  });
});

describe("CvdStore per-trade path (one-group batches, the cached bucket of a track)", () => {
  it("a batch of one (venue, base) and a mixed batch count the same, and observers hear the counted trades in order", () => {
    const c = clock(T0 + HOUR);
    const heard: string[][] = [];
    const run = (batches: Trade[][]) => {
      const s = open(memDb(), c.now);
      const off = s.observe({ counted: (ts) => heard.push(ts.map((t) => t.id)) });
      const n = batches.reduce((sum, b) => sum + s.add(b), 0);
      off();
      s.add([trade({ time: T0 + 7 * MIN })]); // no observer any more: nothing heard
      return { n, summary: s.cvd("BTC", T0, T0 + HOUR), eth: s.cvd("ETH", T0, T0 + HOUR).total };
    };
    const ts = [
      trade({ time: T0 + MIN, id: "11" }),
      trade({ time: T0 + 2 * MIN, id: "12", side: "sell" }),
      trade({ time: T0 + 2 * MIN, id: "12" }), // the same aggregate trade again
      trade({ venue: "bybit", time: T0 + 6 * MIN, id: "u-1" }),
      trade({ base: "ETH", time: T0 + 3 * MIN, id: "11" }),
      trade({ time: T0 + 3 * MIN, id: "" }), // invalid: ignored
    ];
    const split = run([ts.slice(0, 3), [ts[3]!], [ts[4]!], [ts[5]!]]);
    const mixed = run([ts]);
    expect(split.n).toBe(4);
    expect(mixed).toEqual(split);
    expect(heard).toEqual([["11", "12"], ["u-1"], ["11"], ["11", "12", "u-1", "11"]]);
  });

  it("a trade in the cached bucket's slot after a replica moved trackedSince later extends the tracked range again", () => {
    const c = clock(T0 + HOUR);
    const s = open(memDb(), c.now);
    s.add([trade({ time: T0 + 1000 })]);
    expect(s.cumulative("BTC").trackedSince).toBe(T0);
    s.applyReplicated({ symbols: [{ base: "BTC", trackedSince: T0 + 30 * MIN }] });
    expect(s.cumulative("BTC").trackedSince).toBe(T0 + 30 * MIN);
    s.add([trade({ time: T0 + 2000 })]); // the slot of the cached bucket
    expect(s.cumulative("BTC").trackedSince).toBe(T0);
    expect(s.cvd("BTC", T0, T0 + 5 * MIN).total.trades).toBe(2);
  });

  it("after a purge and a drop, trades go to live buckets, not to the cached ones that left", () => {
    const db = memDb();
    const c = clock(T0);
    const s = open(db, c.now);
    s.add([trade({ time: T0 - 1000, id: "100" })]); // keeps the track past the purge
    s.add([trade({ time: T0 - 7 * 24 * HOUR + 6 * MIN, id: "50" })]); // the oldest slot kept: the track's cached bucket
    c.t = T0 + 10 * MIN; // that slot leaves retention
    s.purge();
    // A clock stepping back (a test clock, an NTP step) brings the slot back: the trade lands in a new bucket.
    c.t = T0;
    s.add([trade({ time: T0 - 7 * 24 * HOUR + 7 * MIN, id: "51" })]);
    expect(s.cumulative("BTC").total.trades).toBe(2);
    s.add([trade({ venue: "bybit", time: T0 })]);
    expect(s.drop("BTC")).toBe(true);
    s.add([trade({ venue: "bybit", time: T0 + 1000 })]);
    expect(s.cumulative("BTC").total.trades).toBe(1);
    s.flush();
    expect(db.prepare("SELECT SUM(trades) AS n FROM cvd_bucket WHERE base = 'BTC'").get()).toEqual({ n: 1 });
  });
});
