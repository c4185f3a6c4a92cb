import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { STREAM_DB_MIGRATIONS, openStreamDb, streamDbPath, type Database } from "../../src/ingestion/store/db.js";
import { SequenceLedger, VENUE_ID_ORDER, sequenceOf } from "../../src/ingestion/store/trade-ledger.js";
import { openSqlite } from "../../src/lib/sqlite.js";
import type { StreamVenue, Trade } from "../../src/ingestion/types.js";

/*
 * Item 8 of issue 15: every trade counted once, whatever its age, its source or how often it is sent —
 * by the mark and holes of venues with sequence ids (Binance, OKX) and by the ids of each bucket on the
 * others (Bybit UUIDs, Hyperliquid hashes).
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

const cleanup = cleanupAfterEach();

function openAt(path: string, now: () => number): { db: Database; s: CvdStore } {
  const db = openStreamDb(path);
  const s = new CvdStore(db, { now, flushMs: 60_000, purgeEveryMs: 0 });
  cleanup.push(
    () => db.close(),
    () => s.close(),
  );
  return { db, s };
}

/** An id in the venue's own format: sequence numbers where ids are ordered, else a UUID or a 50-bit hash. */
function venueId(venue: StreamVenue, seq: number): string {
  if (venue === "bybit") return randomUUID();
  if (venue === "hyperliquid") return String(Math.floor(Math.random() * 2 ** 50));
  return String(1_000_000 + seq);
}

const tr = (venue: StreamVenue, time: number, id: string, size = 1): Trade => ({ venue, base: "BTC", time, price: 100, size, side: "buy", id });

describe("trade ids per venue", () => {
  it("Binance and OKX ids are sequence numbers; Bybit and Hyperliquid ids are unordered", () => {
    expect(VENUE_ID_ORDER).toEqual({
      binance: "sequence",
      okx: "sequence",
      bybit: "unordered",
      hyperliquid: "unordered",
      deribit: "unordered",
      bitget: "unordered",
      aster: "sequence",
      gate: "sequence",
    });
    expect(sequenceOf("binance", "5933014")).toBe(5933014);
    expect(sequenceOf("okx", "130639474")).toBe(130639474);
    expect(sequenceOf("binance", "0012")).toBeNull(); // not canonical: de-duplicated by id instead
    expect(sequenceOf("binance", "1e3")).toBeNull();
    expect(sequenceOf("okx", "99999999999999999999")).toBeNull();
    // Canonical non-negative safe integers only, as String(Number(id)) === id would say.
    expect(sequenceOf("binance", "0")).toBe(0);
    expect(sequenceOf("binance", "9007199254740991")).toBe(Number.MAX_SAFE_INTEGER);
    for (const id of ["", "00", "-1", "-0", "+1", " 1", "1 ", "1.0", "0x1", "9007199254740992", "9999999999999999", "١٢"]) expect(sequenceOf("binance", id)).toBeNull();
    expect(sequenceOf("hyperliquid", "118906512037719")).toBeNull();
    expect(sequenceOf("bybit", "20f43950-d8dd-5b31-9112-a178eb6023af")).toBeNull();
  });
});

describe("SequenceLedger", () => {
  it("a continuous stream needs no hole; a break leaves one that a backfill fills once and a complete run closes", () => {
    const l = new SequenceLedger();
    const live = (ids: number[]) => ids.map((id, i) => l.admit(id, id, i > 0 || l.live));
    expect(live([10, 11, 12])).toEqual([true, true, true]);
    expect(l.holes).toHaveLength(1); // below the first trade ever: (−∞, 10)
    l.live = true;
    expect(live([13, 15])).toEqual([true, true]);
    expect(live([12, 15])).toEqual([false, false]); // replays
    l.live = false; // reconnect
    expect(l.admit(40, 40, false)).toBe(true);
    expect(l.holes.at(-1)).toMatchObject({ lo: 15, hi: 40 });
    expect(l.admit(20, 20, false)).toBe(true); // backfilled into the hole
    expect(l.admit(20, 20, false)).toBe(false);
    expect(l.admit(14, 14, false)).toBe(false); // streamed before the break
    // A complete run from 15 to 41 covers the hole: it closes.
    for (let id = 15; id <= 41; id++) l.admit(id, id, id > 15);
    expect(l.settleRun(15, 15, 41)).toBe(true);
    expect(l.holes.map((h) => [h.lo, h.hi])).toEqual([[null, 10]]);
    expect(l.admit(30, 30, false)).toBe(false);
    // Round trip through the stored form.
    const back = SequenceLedger.from(JSON.parse(JSON.stringify(l.state())))!;
    expect(back.state()).toEqual(l.state());
    expect(back.live).toBe(false);
    expect(SequenceLedger.from({ mark: -1, holes: [] })).toBeUndefined();
    expect(SequenceLedger.from({ mark: 5, holes: [[9, null, 3, 0, []]] })).toBeUndefined();
  });

  it("loose trades above the mark chain into one hole holding them; runs shrink holes from either side", () => {
    const l = new SequenceLedger();
    l.admit(100, 100, true);
    for (const id of [110, 120, 130]) expect(l.admit(id, id, false)).toBe(true);
    expect(l.holes.map((h) => [h.lo, h.hi, [...h.ids]])).toEqual([[100, 130, [110, 120]]]);
    expect(l.admit(120, 120, false)).toBe(false);
    expect(l.admit(125, 125, false)).toBe(true);
    // A run 95..112 shrinks the hole to (112, 130).
    l.settleRun(95, 95, 112);
    expect(l.holes.map((h) => [h.lo, h.hi, [...h.ids].sort()])).toEqual([[112, 130, [120, 125]]]);
    // A run 118..121 splits it.
    l.settleRun(118, 118, 121);
    expect(l.holes.map((h) => [h.lo, h.hi])).toEqual([
      [112, 118],
      [121, 130],
    ]);
    expect(l.prune(125)).toBe(true); // (112, 118) ended at time 118
    expect(l.holes.map((h) => [h.lo, h.hi])).toEqual([[121, 130]]);
  });
});

describe("CvdStore counts a trade once, whatever its age", () => {
  for (const venue of ["binance", "okx", "bybit", "hyperliquid"] as const) {
    it(`${venue}: a trade re-sent after 30 minutes and after 60,000 other trades, and again after a restart, is not counted twice`, () => {
      const dir = tempDir(cleanup, "mg-ledger-");
      const c = manualClock(T0);
      const { db, s } = openAt(streamDbPath(dir), c.now);
      const first = tr(venue, T0, venueId(venue, 0), 7);
      expect(s.add([first])).toBe(1);
      const others: Trade[] = [];
      for (let i = 1; i <= 60_000; i++) others.push(tr(venue, T0 + Math.floor((i * 31 * MIN) / 60_000), venueId(venue, i)));
      for (let i = 0; i < others.length; i += 500) {
        c.t = others[i]!.time;
        expect(s.add(others.slice(i, i + 500))).toBe(Math.min(500, others.length - i));
      }
      c.t = T0 + 31 * MIN;
      s.flush();
      // Memory holds no 60,000 ids: sequence venues keep a mark, the others the ids of the buckets that
      // ended less than 15 minutes ago (here 16 of the 31 minutes).
      expect(s.stats().idsInMemory).toBeLessThan(VENUE_ID_ORDER[venue] === "sequence" ? 1 : 60_000 * (17 / 31));
      expect(c.t - first.time).toBeGreaterThan(30 * MIN);
      const total = (st = s) => st.cvd("BTC", -Infinity, Infinity).total;
      expect(total()).toMatchObject({ trades: 60_001, buyBase: 60_007 });
      expect(s.add([first])).toBe(0);
      expect(s.add([first], "loose")).toBe(0); // as a backfill too
      expect(s.add(others.slice(100, 200), "run")).toBe(0);
      expect(total()).toMatchObject({ trades: 60_001, buyBase: 60_007 });

      s.close();
      db.close();
      const reopened = openAt(streamDbPath(dir), c.now).s;
      expect(reopened.add([first, ...others.slice(0, 1000)])).toBe(0);
      expect(reopened.add([first], "loose")).toBe(0);
      expect(total(reopened)).toMatchObject({ trades: 60_001, buyBase: 60_007 });
    });
  }

  it("a backfill overlapping live ingestion around a reconnect counts each trade once (sequence ids)", () => {
    const c = manualClock(T0 + HOUR);
    const { s } = openAt(":memory:", c.now);
    const t = (id: number) => tr("binance", T0 + id * 1000, String(id));
    const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => t(a + i));
    s.add(range(1, 100).slice(0, 50));
    s.add(range(51, 100));
    // Disconnected while 101..150 traded; the stream resumes at 151 (and replays a few it had sent).
    s.streamBreak("binance", { venue: "binance", from: T0 + 100_000, to: T0 + 151_000 });
    expect(s.add([...range(96, 100), ...range(151, 170)])).toBe(20);
    // The gap backfill overlaps both ends; a second, partial one overlaps the first.
    expect(s.add(range(90, 160), "run")).toBe(50);
    expect(s.stats().holes).toBe(1); // only (−∞, 1): the hole of the gap closed
    expect(s.add(range(95, 155), "loose")).toBe(0);
    expect(s.add(range(160, 180))).toBe(10);
    expect(s.cvd("BTC", -Infinity, Infinity).total.trades).toBe(180);
  });

  it("a backfill ahead of the live stream, and a partial backfill, count each trade once (sequence ids)", () => {
    const c = manualClock(T0 + HOUR);
    const { s } = openAt(":memory:", c.now);
    const t = (id: number) => tr("okx", T0 + id * 1000, String(id * 3)); // ids with holes, as OKX aggregates fills
    const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => t(a + i));
    s.add(range(1, 10));
    // A takeover backfill reaches past the live stream, which lags behind it.
    expect(s.add(range(8, 30), "run")).toBe(20);
    expect(s.add(range(11, 35))).toBe(5);
    // A partial (loose) backfill after a reconnect: only what the stream missed counts.
    s.streamBreak("okx");
    expect(s.add(range(50, 55))).toBe(6);
    expect(s.add([t(40), t(44), t(36), t(52)], "loose")).toBe(3);
    expect(s.add(range(36, 49), "loose")).toBe(11);
    expect(s.add(range(30, 56), "run")).toBe(1);
    expect(s.cvd("BTC", -Infinity, Infinity).total.trades).toBe(56);
  });

  it("a backfill overlapping live ingestion counts each trade once (unordered ids), also after the buckets closed", () => {
    const c = manualClock(T0 + 2 * HOUR);
    const { s } = openAt(":memory:", c.now);
    const trades = Array.from({ length: 300 }, (_, i) => tr("hyperliquid", T0 + i * 10_000, `${(i * 7919) % 1000}-${i}`));
    expect(s.add(trades.slice(0, 200))).toBe(200);
    s.flush(); // buckets long closed: their ids leave memory
    expect(s.add(trades.slice(150, 300), "loose")).toBe(100);
    expect(s.add(trades, "run")).toBe(0);
    expect(s.cvd("BTC", -Infinity, Infinity).total.trades).toBe(300);
  });

  it("restart keeps the marks and holes: a partly backfilled hole counts the rest once", () => {
    const dir = tempDir(cleanup, "mg-ledger-");
    const c = manualClock(T0 + HOUR);
    const { db, s } = openAt(streamDbPath(dir), c.now);
    const t = (id: number) => tr("binance", T0 + id * 1000, String(id));
    const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => t(a + i));
    s.add(range(1, 10));
    s.streamBreak("binance");
    s.add(range(21, 30));
    expect(s.add(range(11, 14), "loose")).toBe(4);
    s.close();
    db.close();
    const reopened = openAt(streamDbPath(dir), c.now).s;
    expect(reopened.lastTradeTime("binance", "BTC")).toBe(T0 + 30_000);
    expect(reopened.add(range(1, 30))).toBe(6); // 15..20 only; the stream restarts after a restart: no trade is taken to follow
    expect(reopened.add(range(1, 35))).toBe(5);
    expect(reopened.cvd("BTC", -Infinity, Infinity).total.trades).toBe(35);
  });

  it("a database from before the ledger: history without ids accepts no older trade, newer ones count", () => {
    const dir = tempDir(cleanup, "mg-ledger-");
    const path = streamDbPath(dir);
    const v1 = openSqlite(path, STREAM_DB_MIGRATIONS.slice(0, 1), "stream");
    v1.prepare(`INSERT INTO cvd_symbol VALUES ('BTC', ?)`).run(T0);
    const ins = v1.prepare(`INSERT INTO cvd_bucket VALUES ('BTC', ?, ?, 1, 0, 100, 0, 1, ?)`);
    ins.run("binance", T0, "none");
    ins.run("bybit", T0, "unfilled");
    v1.prepare(`INSERT INTO cvd_seen VALUES ('binance', 'BTC', '500', ?)`).run(T0 + 1000);
    v1.close();
    const c = manualClock(T0 + 10 * MIN);
    const { s } = openAt(path, c.now);
    expect(s.history("BTC", T0, T0 + 5 * MIN, 5 * MIN)[0]!.missing).toBe(true); // the old 'unfilled' mark: the whole bucket
    expect(s.add([tr("binance", T0 + 1000, "400"), tr("binance", T0 + 2000, "499"), tr("bybit", T0 + 2000, "x")])).toBe(0);
    expect(s.add([tr("binance", T0 + 6 * MIN, "700"), tr("bybit", T0 + 6 * MIN, "y")])).toBe(2);
    expect(s.cvd("BTC", -Infinity, Infinity).total.trades).toBe(4);
  });
});
