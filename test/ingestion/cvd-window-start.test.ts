/**
 * `/cvd` window_start never precedes the first data (issue 25): tracking that began before the first recorded trade
 * does not stretch the stated window back to it. Recorded Binance aggTrade frames of 2021-04-05 18:36:37..18:38:36
 * UTC (src/venues/binance/fixtures, the same excerpt as test/analytics/methods-real-data.test.ts).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import type { CallerInfo } from "../../src/registry/tool.js";
import { parseBinanceMessage } from "../../src/venues/binance/feed-parse.js";
import { cvd } from "../../tools/streams/cvd.js";
import { fixtureText } from "../helpers/fixtures.js";

const cleanup: Array<() => void> = [];
afterAll(() => cleanup.forEach((f) => f()));

/** A CVD store whose clock is `clock.now`; SAND is tracked from `trackAt`, the recorded trades added at 18:39. */
function store(trackAt: number | null, clock: { now: number }): CvdStore {
  const db = openStreamDb(":memory:");
  const s = new CvdStore(db, { now: () => clock.now, flushMs: 60_000, purgeEveryMs: 0 });
  cleanup.push(() => {
    s.close();
    db.close();
  });
  if (trackAt !== null) {
    clock.now = trackAt;
    s.track("SAND");
  }
  clock.now = Date.parse("2021-04-05T18:39:00Z");
  const map = new Map([["SANDUSDT", { venueSymbol: "SANDUSDT", base: "SAND", multiplier: 1, contractSize: 1 }]]);
  const trades = fixtureText("binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson")
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => parseBinanceMessage(JSON.parse(l), map).trades);
  s.add(trades);
  return s;
}

const ask = async (s: CvdStore, now: number, symbol = "SAND") => {
  const ctx = { now: () => now, ingestion: { cvd: s, activeConnections: () => 1 } } as unknown as ToolContext;
  return (await cvd.handler({ symbol, period: "4h" }, ctx, {} as CallerInfo)) as {
    window_start: string;
    window_end: string;
    tracking_since: string | null;
    buy_volume: number;
    sell_volume: number;
  };
};

describe("/cvd window_start", () => {
  it("tracking from 17:00 but the first trade at 18:36: the 4h window at 19:00 starts at 18:35, not 17:00", async () => {
    const clock = { now: 0 };
    const s = store(Date.parse("2021-04-05T17:00:00Z"), clock);
    const a = await ask(s, Date.parse("2021-04-05T19:00:00Z"));
    expect(a.tracking_since).toBe("2021-04-05T17:00:00.000Z");
    expect(a.window_start).toBe("2021-04-05T18:35:00.000Z");
    expect(a.buy_volume + a.sell_volume).toBeGreaterThan(0);
  });

  it("a window that starts after the first data keeps the period's start", async () => {
    const clock = { now: 0 };
    const s = store(Date.parse("2021-04-05T17:00:00Z"), clock);
    const b = await ask(s, Date.parse("2021-04-05T22:50:00Z"));
    expect(b.window_start).toBe("2021-04-05T18:50:00.000Z");
  });

  it("a tracked symbol without any trade yet: the window starts at the current 5-minute boundary", async () => {
    const clock = { now: 0 };
    const s = store(null, clock);
    clock.now = Date.parse("2021-04-05T18:40:00Z");
    s.track("ETH");
    clock.now = Date.parse("2021-04-05T19:02:00Z");
    const c = await ask(s, clock.now, "ETH");
    expect(c.window_start).toBe("2021-04-05T19:00:00.000Z");
  });
});
