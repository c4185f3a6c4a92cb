import { describe, expect, it } from "vitest";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";
import { openStreamDb, streamDbPath, type Database } from "../../src/ingestion/store/db.js";
import { LiquidationStore, formatLiquidation, liquidationFilterBase, type LiquidationStoreOptions } from "../../src/ingestion/store/liquidation-store.js";
import type { Liquidation } from "../../src/ingestion/types.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const SEC0 = T0 / 1000;

let n = 0;
function liq(p: Partial<Liquidation> = {}): Liquidation {
  n++;
  return { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: T0, side: "long", price: 40_000 + n, size: 0.5, valueUsd: 20_000 + n / 2, ...p };
}

/** Stores and databases of a test, closed after it. */
const cleanup = cleanupAfterEach();
const clock = (start = T0) => manualClock(start);

function mem(now: () => number, opts: LiquidationStoreOptions = {}): { db: Database; s: LiquidationStore } {
  const db = openStreamDb(":memory:");
  const s = new LiquidationStore(db, { now, flushMs: 60_000, ...opts });
  cleanup.push(
    () => db.close(),
    () => s.close(),
  );
  return { db, s };
}

function tempPath(): string {
  const dir = tempDir(cleanup, "mg-liq-");
  return streamDbPath(dir);
}

describe("LiquidationStore ids", () => {
  it("assigns liq_<unix_seconds>_<sequence>, sequence per event second", () => {
    const c = clock(T0 + 10_000);
    const { s } = mem(c.now);
    const ids = s.add([liq({ time: T0 + 100 }), liq({ time: T0 + 900 }), liq({ time: T0 + 1000 }), liq({ time: T0 + 999 })]).map((e) => e.id);
    expect(ids).toEqual([`liq_${SEC0}_1`, `liq_${SEC0}_2`, `liq_${SEC0 + 1}_1`, `liq_${SEC0}_3`]);
    for (const id of ids) expect(id).toMatch(/^liq_\d{10}_\d+$/);
  });

  it("continues sequences across a restart, even for seconds whose events were evicted", () => {
    const path = tempPath();
    const c = clock(T0 + 10_000);
    let db = openStreamDb(path);
    let s = new LiquidationStore(db, { now: c.now, maxEvents: 2 });
    s.add([liq({ time: T0 + 1 }), liq({ time: T0 + 2 }), liq({ time: T0 + 5000 }), liq({ time: T0 + 5001 })]);
    expect(s.recent().map((e) => e.id)).toEqual([`liq_${SEC0 + 5}_2`, `liq_${SEC0 + 5}_1`]);
    s.close();
    db.close();

    db = openStreamDb(path);
    s = new LiquidationStore(db, { now: c.now, maxEvents: 10 });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    expect(s.recent().map((e) => e.id)).toEqual([`liq_${SEC0 + 5}_2`, `liq_${SEC0 + 5}_1`]);
    expect(s.add([liq({ time: T0 + 5500 }), liq({ time: T0 + 10 })]).map((e) => e.id)).toEqual([`liq_${SEC0 + 5}_3`, `liq_${SEC0}_3`]);
  });
});

describe("LiquidationStore caps", () => {
  it("keeps the newest 1000 events and says the 24 h stats are capped", () => {
    const c = clock(T0 + HOUR);
    const { s, db } = mem(c.now);
    const events = Array.from({ length: 1200 }, (_, i) => liq({ time: T0 + i * 1000 }));
    expect(s.add(events)).toHaveLength(1200);
    expect(s.size).toBe(1000);
    const r = s.recent({ limit: 5000 });
    expect(r).toHaveLength(1000);
    expect(r[0]!.time).toBe(T0 + 1199 * 1000);
    expect(r[999]!.time).toBe(T0 + 200 * 1000);
    const st = s.stats();
    expect(st.capped).toBe(true);
    expect(st.last_24h.total_events).toBe(1000);
    // Older than everything held: refused without taking an id.
    expect(s.add([liq({ time: T0 + 50 })])).toEqual([]);
    s.flush();
    expect(db.prepare("SELECT COUNT(*) AS n FROM liq_event").get()).toEqual({ n: 1000 });
  });

  it("keeps 24 h at most, on add, on read and after a restart", () => {
    const path = tempPath();
    const c = clock(T0);
    let db = openStreamDb(path);
    let s = new LiquidationStore(db, { now: c.now, flushMs: 0 });
    expect(s.add([liq({ time: T0 - 25 * HOUR })])).toEqual([]);
    expect(s.add([liq({ time: T0 + 10 * MIN })])).toEqual([]); // beyond the 1-min clock skew allowance
    s.add([liq({ time: T0 - 23 * HOUR }), liq({ time: T0 - HOUR }), liq({ time: T0 })]);
    expect(s.size).toBe(3);
    expect(s.stats().capped).toBe(false);
    c.t = T0 + 2 * HOUR; // the first event is now 25 h old
    expect(s.recent().map((e) => e.time)).toEqual([T0, T0 - HOUR]);
    expect(s.stats().last_24h.total_events).toBe(2);
    s.close();
    db.close();

    c.t = T0 + 23.5 * HOUR;
    db = openStreamDb(path);
    s = new LiquidationStore(db, { now: c.now });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    expect(s.recent().map((e) => e.time)).toEqual([T0]);
    expect(db.prepare("SELECT COUNT(*) AS n FROM liq_event").get()).toEqual({ n: 1 });
  });
});

describe("LiquidationStore reads", () => {
  it("de-duplicates identical events, also after a restart", () => {
    const path = tempPath();
    const c = clock(T0 + MIN);
    const e = liq({ time: T0 + 123 });
    let db = openStreamDb(path);
    let s = new LiquidationStore(db, { now: c.now });
    expect(s.add([e, { ...e }])).toHaveLength(1);
    expect(s.add([e])).toHaveLength(0);
    expect(s.add([{ ...e, size: e.size + 0.1 }])).toHaveLength(1); // differs in size: a distinct event
    s.close();
    db.close();
    db = openStreamDb(path);
    s = new LiquidationStore(db, { now: c.now });
    cleanup.push(
      () => db.close(),
      () => s.close(),
    );
    expect(s.add([e])).toHaveLength(0);
    expect(s.size).toBe(2);
  });

  it("computes 1 h and 24 h stats", () => {
    const c = clock(T0 + 24 * HOUR);
    const now = c.t;
    const { s } = mem(c.now);
    s.add([
      liq({ time: now - 10 * MIN, side: "long", valueUsd: 1000 }),
      liq({ time: now - 20 * MIN, side: "short", valueUsd: 500 }),
      liq({ time: now - HOUR, side: "long", valueUsd: 250 }), // exactly 1 h old: inside
      liq({ time: now - HOUR - 1, side: "short", valueUsd: 100 }),
      liq({ time: now - 23 * HOUR, side: "long", valueUsd: 50 }),
    ]);
    expect(s.stats()).toEqual({
      last_1h: { total_events: 3, long_liquidations: 2, short_liquidations: 1, total_value_usd: 1750 },
      last_24h: { total_events: 5, total_value_usd: 1900 },
      capped: false,
    });
    expect(s.stats(now + 30 * MIN).last_1h.total_events).toBe(2);
  });

  it("lists newest first with a limit and a base or venue-symbol filter", () => {
    const c = clock(T0 + HOUR);
    const { s } = mem(c.now);
    s.add([
      liq({ time: T0 + 1000 }),
      liq({ time: T0 + 2000, base: "ETH", venueSymbol: "ETH-USDT-SWAP", venue: "okx" }),
      liq({ time: T0 + 3000, venue: "bybit" }),
      liq({ time: T0 + 4000, base: "ETH", venueSymbol: "ETH", venue: "hyperliquid" }),
    ]);
    expect(s.recent().map((e) => e.time)).toEqual([T0 + 4000, T0 + 3000, T0 + 2000, T0 + 1000]);
    expect(s.recent({ limit: 2 }).map((e) => e.time)).toEqual([T0 + 4000, T0 + 3000]);
    expect(s.recent({ limit: 0 })).toHaveLength(1);
    for (const f of ["BTC", "BTCUSDT", "btcusdt", "BTC-USDT-SWAP", "BTC/USDC"]) {
      expect(s.recent({ symbol: f }).map((e) => e.venue)).toEqual(["bybit", "binance"]);
    }
    expect(s.recent({ symbol: "ETHUSDT" }).map((e) => e.venue)).toEqual(["hyperliquid", "okx"]);
    expect(s.recent({ symbol: "SOLUSDT" })).toEqual([]);
    expect(s.recent({ symbol: "" })).toHaveLength(4);
  });

  it("normalises filters and formats events for the API", () => {
    expect(["BTC", "btcusdt", "BTC-USDT-SWAP", "ETH-PERP", "ETHUSD", "PEPE/USDC", "USDT", "SOLFDUSD"].map(liquidationFilterBase)).toEqual([
      "BTC",
      "BTC",
      "BTC",
      "ETH",
      "ETH",
      "PEPE",
      "USDT",
      "SOL",
    ]);
    const c = clock(T0 + MIN);
    const { s } = mem(c.now);
    const [rec] = s.add([liq({ time: T0 + 1234, venue: "okx", base: "SOL", venueSymbol: "SOL-USDT-SWAP", side: "short", price: 150, size: 2, valueUsd: 300 })]);
    expect(formatLiquidation(rec!)).toEqual({
      id: `liq_${SEC0 + 1}_1`,
      symbol: "SOLUSDT",
      side: "short",
      size: 2,
      price: 150,
      value_usd: 300,
      timestamp: "2025-01-01T12:00:01.234Z",
      exchange: "OKX",
    });
  });
});

describe("LiquidationStore pages (recent with before)", () => {
  it("continues after the cursor's event, equal times in buffer order, and by time once that event has left", () => {
    const c = clock(T0 + 10_000);
    const { s } = mem(c.now, { maxEvents: 5 });
    // Three events at the same millisecond and two later ones: buffer order is (time, arrival).
    const [a, b, d, e, f] = s.add([liq({ time: T0 }), liq({ time: T0 }), liq({ time: T0 }), liq({ time: T0 + 1 }), liq({ time: T0 + 2 })]);
    expect(s.recent({ limit: 2 }).map((x) => x.id)).toEqual([f!.id, e!.id]);
    expect(s.recent({ limit: 2, before: { id: e!.id, timeMs: e!.time } }).map((x) => x.id)).toEqual([d!.id, b!.id]);
    expect(s.recent({ limit: 5, before: { id: b!.id, timeMs: b!.time } }).map((x) => x.id)).toEqual([a!.id]);
    // The cap evicts the two oldest: a cursor on an evicted event continues with the events strictly older than it.
    s.add([liq({ time: T0 + 3 }), liq({ time: T0 + 4 })]);
    expect(s.recent({ limit: 5, before: { id: b!.id, timeMs: b!.time } })).toEqual([]);
    expect(s.recent({ limit: 5, before: { id: "liq_gone_1", timeMs: T0 + 2 } }).map((x) => x.id)).toEqual([e!.id, d!.id]);
  });
});
