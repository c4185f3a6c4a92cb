/**
 * The liquidation history behind the cascade-risk forecast (src/ingestion/store/liquidation-history.ts): hourly totals
 * per venue and base kept 8 days whatever the 1,000-event ring drops, replicated records counted, a restart keeps
 * them, and the daily estimates scale each venue's total by the time its feed covered.
 */
import { describe, expect, it } from "vitest";
import { openStreamDb, streamDbPath } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import type { Liquidation } from "../../src/ingestion/types.js";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** A whole hour, so blocks and hours line up in the hand computations. */
const T0 = Date.UTC(2025, 0, 10, 12, 0, 0);

let n = 0;
function liq(p: Partial<Liquidation>): Liquidation {
  n++;
  return { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: T0, side: "long", price: 40_000 + n, size: 0.5, valueUsd: 1000, ...p };
}

const cleanup = cleanupAfterEach();

function store(now: () => number, path = ":memory:", maxEvents?: number) {
  const db = openStreamDb(path);
  const s = new LiquidationStore(db, { now, flushMs: 60_000, maxEvents });
  cleanup.push(
    () => db.close(),
    () => s.close(),
  );
  return s;
}

describe("liquidation history", () => {
  it("counts every stored Binance and OKX event, beyond the ring's cap, and keeps the totals across a restart", () => {
    const c = manualClock(T0);
    const path = streamDbPath(tempDir(cleanup, "mg-liqhist-"));
    const s = store(c.now, path, 5);
    c.t = T0 + 12 * MIN;
    // 12 BTC events of $1,000 in the 12:00 hour on Binance; the ring keeps 5. A Bybit event is not kept (per-symbol feed).
    s.add(Array.from({ length: 12 }, (_, i) => liq({ time: T0 + i * MIN })));
    s.add([liq({ venue: "bybit", venueSymbol: "BTCUSDT", time: T0 + 20 * MIN, valueUsd: 5e6 })]);
    expect(s.recent({ limit: 100 })).toHaveLength(5);
    const live = [{ venue: "binance", oiShare: 0.5, connectedSince: T0 }];
    // 12 minutes covered: under a quarter of an hour, no block yet; from 15 minutes, one (30 minutes here).
    expect(s.history.days("btc", live, c.now())).toEqual([]);
    c.t = T0 + 30 * MIN;
    expect(s.history.days("btc", live, c.now())).toEqual([{ end: T0 + HOUR, usd: (12_000 * 24) / 0.5 / 0.5, coverage: 0.5, hours: 0.5 }]);
    c.t += HOUR;
    // 1.5 h covered: $12k × 24 / 1.5 a day on Binance, over its half of the OI.
    expect(s.history.days("BTC", live, c.now())).toEqual([{ end: T0 + 2 * HOUR, usd: (12_000 * 24) / 1.5 / 0.5, coverage: 0.5, hours: 1.5 }]);
    s.close();

    const again = store(c.now, path);
    // Restarted at 13:30: the 12:00 hour is before this process and counts whole (Binance had events in it); the
    // current connection counts from the restart.
    expect(again.history.days("BTC", live, c.now())).toEqual([{ end: T0 + 2 * HOUR, usd: (12_000 * 24) / 0.5, coverage: 0.5, hours: 1 }]);
    c.t += HOUR;
    const [after] = again.history.days("BTC", live, c.now());
    expect(after!.end).toBe(T0 + 3 * HOUR);
    expect(after!.hours).toBeCloseTo(2, 9);
    expect(after!.usd).toBeCloseTo((12_000 * 24) / 2 / 0.5, 6);
  });

  it("before the current connection, an hour counts only when the venue had a liquidation of any symbol in it", () => {
    const c = manualClock(T0 + DAY);
    const s = store(c.now);
    // The day before yesterday's block [T0 + 1 d, T0 + 2 d): BTC at 22:00, ETH only at 23:00 (BTC quiet, the feed up);
    // no event in the block's other hours (the feed down). OKX had BTC at 22:00.
    const h = T0 + DAY + 10 * HOUR;
    c.t = h + 2 * HOUR;
    s.add([liq({ time: h, valueUsd: 6000 }), liq({ base: "ETH", venueSymbol: "ETHUSDT", time: h + HOUR, valueUsd: 1 })]);
    s.add([liq({ venue: "okx", venueSymbol: "BTC-USDT-SWAP", time: h + 10 * MIN, valueUsd: 2000 })]);
    c.t = T0 + 3 * DAY;
    const days = s.history.days(
      "BTC",
      [
        { venue: "binance", oiShare: 0.3, connectedSince: null },
        { venue: "okx", oiShare: 0.2, connectedSince: null },
      ],
      c.now(),
    );
    // Binance: $6k over 2 covered hours → $72k a day; OKX: $2k over 1 hour → $48k a day; over their 50% of the OI.
    expect(days).toHaveLength(1);
    expect(days[0]!.end).toBe(T0 + 2 * DAY);
    expect(days[0]!.usd).toBeCloseTo((72_000 + 48_000) / 0.5, 6);
    expect(days[0]!.coverage).toBeCloseTo(0.5, 12);
    expect(days[0]!.hours).toBe(3);
  });

  it("counts replicated records once, and forgets hours older than 8 days", () => {
    const c = manualClock(T0);
    const s = store(c.now);
    c.t = T0 + 2 * HOUR;
    const rec = { ...liq({ time: T0 + 5 * MIN, valueUsd: 3000 }), id: `liq_${(T0 + 5 * MIN) / 1000}_1` };
    expect(s.applyReplicated([rec, rec])).toBe(1);
    const live = [{ venue: "binance", oiShare: 1, connectedSince: T0 }];
    expect(s.history.days("BTC", live, c.now())[0]!.usd).toBeCloseTo((3000 * 24) / 2, 6);
    c.t += 9 * DAY;
    s.flush();
    expect(s.history.days("BTC", [{ venue: "binance", oiShare: 1, connectedSince: null }], c.now())).toEqual([]);
  });
});
