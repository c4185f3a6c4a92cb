import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock, type ManualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { AsterPerpClient } from "../../src/venues/aster/client.js";
import { AsterFeed } from "../../src/venues/aster/feed.js";
import { AsterTradeBackfill } from "../../src/venues/aster/backfill.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";

/*
 * Aster's real client, feed and backfill against the simulator (`/aster` REST, `/aster-ws` websocket): every client
 * method answers on the venue's wire, the feed receives the tape's trades and liquidations.
 */

const T0 = Date.parse("2026-11-21T12:34:56.789Z");
let clock: ManualClock;
let sim: RunningSimulator;

beforeAll(async () => {
  clock = manualClock(T0);
  sim = await startSimulator({ seed: 42, clock, ws: { pushIntervalMs: 20 } });
});
afterAll(async () => {
  await sim.close();
});

const client = () => new AsterPerpClient(sim.urls.aster, { timeoutMs: 5_000, retries: 0 });

async function waitFor<T>(fn: () => T | undefined | null | false, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("waitFor timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("aster client against the simulator", () => {
  it("lists USDT perpetuals per canonical base, multipliers undone", async () => {
    const c = client();
    const list = await c.instruments();
    expect(list.length).toBeGreaterThan(5);
    expect(list.every((i) => i.venue === "aster" && i.venueSymbol.endsWith("USDT") && i.contractSize === 1)).toBe(true);
    expect(await c.instrument("BTC")).toMatchObject({ venueSymbol: "BTCUSDT", multiplier: 1 });
    for (const i of list.filter((x) => x.multiplier > 1)) expect(i.venueSymbol).toBe(`${i.multiplier}${i.base}USDT`);
  });

  it("answers every method: funding (all and one), predicted, history, open interest, candles; no long/short", async () => {
    const c = client();
    const all = await c.fundingAll();
    expect(all.length).toBe((await c.instruments()).length);
    const btc = await c.funding("BTC");
    expect(btc).toMatchObject({ venue: "aster", base: "BTC", venueSymbol: "BTCUSDT", premium: null, time: clock.now() });
    expect([1, 4, 8]).toContain(btc.fundingIntervalHours);
    expect(Math.abs(btc.fundingRate)).toBeLessThan(0.01);
    expect(btc.nextFundingTime! % (btc.fundingIntervalHours * 3_600_000)).toBe(0);
    expect(all.find((s) => s.base === "BTC")).toEqual(btc);
    expect(await c.predictedFunding("BTC")).toEqual({
      venue: "aster",
      base: "BTC",
      rate: btc.fundingRate,
      nextFundingTime: btc.nextFundingTime,
      fundingIntervalHours: btc.fundingIntervalHours,
    });
    const hist = await c.fundingHistory("BTC", 5);
    expect(hist).toHaveLength(5);
    expect(hist.every((p) => p.venue === "aster" && p.markPrice === null && p.time <= clock.now())).toBe(true);
    expect(hist[0]!.time - hist[1]!.time).toBe(btc.fundingIntervalHours * 3_600_000);
    const oi = await c.openInterest("BTC");
    expect(oi.oiCoins).toBeGreaterThan(0);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(btc.markPrice!, 0);
    const k = await c.hourlyCandles("BTC", 3);
    expect(k).toHaveLength(3);
    expect(k[2]!.openTime).toBe(Math.floor(clock.now() / 3_600_000) * 3_600_000);
    expect(k[1]!.close).toBe(k[2]!.open);
    expect(await c.longShort("BTC")).toBeNull();
    await expect(c.funding("NOPECOIN")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("keeps a multiplier symbol per ONE coin across funding, open interest and candles", async () => {
    const c = client();
    const m = (await c.instruments()).find((i) => i.multiplier > 1);
    if (!m) return; // the model lists none for Aster
    const [f, oi, [k]] = await Promise.all([c.funding(m.base), c.openInterest(m.base), c.hourlyCandles(m.base, 1)]);
    expect(f.markPrice! / k!.close).toBeGreaterThan(0.9);
    expect(f.markPrice! / k!.close).toBeLessThan(1.1);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(f.markPrice!, 10);
  });

  it("answers injected faults with Aster's {code,msg} bodies", async () => {
    sim.faults.inject("aster", { kind: "rate_limit", retryAfterSec: 30 });
    const res = await fetch(`${sim.urls.aster}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ code: -1003, msg: expect.stringContaining("2400") });
    const bad = await fetch(`${sim.urls.aster}/fapi/v1/premiumIndex?symbol=NOPEUSDT`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ code: -1121, msg: "Invalid symbol." });
    expect((await fetch(`${sim.urls.aster}/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=5m`)).status).toBe(404);
  });

  it("backfills the tape's trades from aggTrades", async () => {
    const bf = new AsterTradeBackfill({ baseUrl: sim.urls.aster, instruments: client(), timeoutMs: 5_000, retries: 0 });
    const r = await bf.fetchTrades("BTC", clock.now() - 120_000, clock.now());
    expect(r.complete).toBe(true);
    expect(r.trades.map((t) => t.id)).toEqual(sim.tape.trades("aster", "BTC", clock.now() - 120_000, clock.now()).map((t) => t.id));
  });
});

describe("aster feed against the simulated websocket", () => {
  it("receives the tape's trades (counted once by id) and its liquidations", async () => {
    const feed = new AsterFeed({ baseUrl: sim.wsUrls.aster, instruments: client() });
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    try {
      await feed.subscribe(["BTC"]);
      feed.start();
      await waitFor(() => feed.state().connected);
      const from = clock.now();
      // The next Aster liquidation on the tape (about 0.1/min on the model), then move the clock past it.
      // Scanned an hour at a time: the tape computes every slot it is asked for.
      let next: Liquidation | undefined;
      for (let h = 0; h < 6 && !next; h++) next = sim.tape.liquidations("aster", "*", Math.max(from + 1, from + h * 3_600_000), from + (h + 1) * 3_600_000)[0];
      expect(next).toBeDefined();
      clock.set(Math.max(from + 20_000, next!.time + 1));
      await waitFor(() => liqs.length > 0 && trades.length > 0, 10_000);
      expect(liqs[0]).toMatchObject({ venue: "aster", base: next!.base, side: next!.side, time: next!.time });
      const want = sim.tape.trades("aster", "BTC", from + 1, clock.now() + 1).map((t) => t.id);
      await waitFor(() => trades.length >= want.length, 10_000);
      expect(trades.every((t) => t.venue === "aster" && t.base === "BTC")).toBe(true);
      expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);
      expect(trades.map((t) => t.id)).toEqual(want.slice(-trades.length));
    } finally {
      await feed.stop();
    }
  });
});
