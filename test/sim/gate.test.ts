import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedClock, manualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { GateTradeBackfill } from "../../src/venues/gate/backfill.js";
import { GatePerpClient } from "../../src/venues/gate/client.js";
import { GateFeed } from "../../src/venues/gate/feed.js";
import { parseGateLiqOrders } from "../../src/venues/gate/feed-parse.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { appError } from "../helpers/errors.js";

/*
 * The real Gate client, backfill and feed against the simulator (`src/sim/venues/gate.ts`, `src/sim/ws/gate.ts`):
 * every client method answers with the model's numbers in the venue's units, errors are Gate-shaped, and the feed
 * receives the tape's trades and liquidations.
 */

/** A fixed "now" that is not aligned to any grid. */
const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
/** A trade with its size to 12 significant digits: the tape's own normalisation (`sim.tape`) multiplies contracts × quanto without removing binary noise (0.0012000000000000001), the adapter does. */
const rounded = (t: Trade) => ({ ...t, size: Number(t.size.toPrecision(12)) });

describe("gate client against the simulator", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
  });
  afterAll(() => sim.close());
  const client = () => new GatePerpClient(sim.urls.gate, { timeoutMs: 5_000, retries: 0 });

  it("mounts at the real base path", () => {
    expect(sim.urls.gate).toMatch(/\/gate\/api\/v4$/);
  });

  it("answers every method with the model's values in coins and per-interval fractions", async () => {
    const c = client();
    const btcSpec = sim.perp.perpOf("gate", "BTC")!;
    const insts = await c.instruments();
    expect(insts.length).toBe(sim.perp.instruments("gate", NOW).filter((i) => i.kind === "perpetual" && !i.inverse).length);
    const btc = insts.find((i) => i.base === "BTC")!;
    expect(btc).toMatchObject({ venueSymbol: "BTC_USDT", contractSize: btcSpec.ctVal, multiplier: 1, fundingIntervalHours: btcSpec.fundingIntervalHours });

    const f = await c.funding("BTC");
    expect(f.fundingRate).toBeCloseTo(sim.perp.currentFundingRate(btcSpec, NOW), 8);
    expect(f.nextFundingTime).toBe(sim.perp.nextFundingTime(btcSpec, NOW));
    expect(f.markPrice).toBeCloseTo(sim.perp.markPrice(btcSpec, NOW), 0);
    expect((await c.fundingAll()).length).toBe(insts.length);
    expect((await c.predictedFunding("BTC"))?.rate).toBe(f.fundingRate);

    const hist = await c.fundingHistory("BTC", 5);
    expect(hist).toHaveLength(5);
    expect(hist[0]!.time).toBe(sim.perp.intervalStart(btcSpec, NOW));
    expect(hist[0]!.rate).toBeCloseTo(sim.perp.settledFundingRate(btcSpec, hist[0]!.time), 8);
    expect(hist[0]!.time - hist[1]!.time).toBe(btcSpec.fundingIntervalHours * HOUR);

    const oi = await c.openInterest("BTC");
    const t5 = Math.floor(NOW / 300_000) * 300_000;
    expect(oi.time).toBe(t5);
    // whole contracts of quanto_multiplier coins
    expect(Math.abs(oi.oiCoins - sim.perp.openInterestCoins(btcSpec, t5))).toBeLessThanOrEqual(btcSpec.ctVal);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(sim.perp.markPrice(btcSpec, t5), -1);
    const oiHist = await c.openInterestHistory("BTC", 24);
    expect(oiHist).toHaveLength(24);
    expect(oiHist[23]!.time - oiHist[22]!.time).toBe(HOUR);

    const ls = await c.longShort("BTC");
    expect(ls?.source).toBe("top_traders_positions");
    expect(ls!.lsRatio).toBeCloseTo(sim.perp.longShortRatio(btcSpec, "top_position", t5), 3);

    const tiers = await c.marginTiers("BTC");
    expect(tiers.map((t) => [t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual(
      sim.perp.marginTiers(btcSpec).map((t) => [t.maxNotionalUsd, t.maxLeverage, t.mmr]),
    );
    expect(tiers[0]!.minNotionalUsd).toBe(0);

    const candles = await c.hourlyCandles("BTC", 3);
    expect(candles).toHaveLength(3);
    expect(candles[2]!.openTime).toBe(Math.floor(NOW / HOUR) * HOUR);
    const k = sim.perp.candle(btcSpec, candles[1]!.openTime, HOUR, NOW);
    expect(candles[1]!.close).toBeCloseTo(k.close, 0);
    expect(candles[1]!.volumeUsd).toBeCloseTo(k.volumeUsd, -1);
  });

  it("backfills the tape's trades in coins with the taker side", async () => {
    const c = client();
    const bf = new GateTradeBackfill({ instruments: c, baseUrl: sim.urls.gate, retries: 0 });
    const from = NOW - 120_000;
    const r = await bf.fetchTrades("BTC", from, NOW);
    expect(r.complete).toBe(true);
    const tape = sim.tape.trades("gate", "BTC", from, NOW);
    expect(r.trades.map(rounded)).toEqual(tape.map(rounded));
  });

  it("serves the tape's liquidations on /liq_orders (last hour, every contract), read by the adapter's parser", async () => {
    const insts = await client().instruments();
    const from = Math.floor(NOW / 1000) - 3600;
    const raw: unknown = await fetch(`${sim.urls.gate}/futures/usdt/liq_orders?from=${from}&to=${Math.floor(NOW / 1000)}&limit=1000`).then((r) => r.json());
    const parsed = parseGateLiqOrders(raw, new Map(insts.map((i) => [i.venueSymbol, i])));
    const tape = sim.tape.liquidations("gate", "*", from * 1000, NOW + 1);
    expect(tape.length).toBeGreaterThan(30); // about 1.8 a minute
    const key = (l: Liquidation) => [Math.floor(l.time / 1000), l.base, l.side, l.price, Number(l.size.toPrecision(12))].join("|");
    expect(parsed.liquidations.map(key).sort()).toEqual(tape.map(key).sort());
  });

  it("backfills a stream gap's liquidations from /liq_orders: hour by hour, whole seconds inside the gap only", async () => {
    const bf = new GateTradeBackfill({ instruments: client(), baseUrl: sim.urls.gate, retries: 0 });
    const from = NOW - 3_900_000 - 1234; // 65 min: two pages (3600 s at most each); mid-second: that second is left to the stream
    const r = await bf.fetchLiquidations(from, NOW);
    expect(r.complete).toBe(true);
    const tape = sim.tape.liquidations("gate", "*", Math.ceil(from / 1000) * 1000, Math.floor(NOW / 1000) * 1000);
    expect(tape.length).toBeGreaterThan(60); // about 1.8 a minute
    const key = (l: Liquidation) => [Math.floor(l.time / 1000), l.base, l.side, l.price, Number(l.size.toPrecision(12))].join("|");
    expect(r.liquidations.map(key).sort()).toEqual(tape.map(key).sort());
    expect(r.liquidations.every((l, i) => i === 0 || l.time >= r.liquidations[i - 1]!.time)).toBe(true);
  });

  it("maps the simulator's Gate-shaped refusals", async () => {
    const c = client();
    expect((await appError(() => c.funding("NOPE"))).code).toBe("NOT_FOUND");
    const res = await fetch(`${sim.urls.gate}/futures/usdt/funding_rate?contract=NOPE_USDT`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ label: "CONTRACT_NOT_FOUND", message: "Contract NOPE_USDT not found" });
    sim.faults.inject("gate", { kind: "rate_limit", retryAfterSec: 1 });
    const limited = await fetch(`${sim.urls.gate}/futures/usdt/contracts`);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ label: "TOO_MANY_REQUESTS" });
  });
});

describe("gate feed against the simulator's websocket", () => {
  let sim: RunningSimulator;
  const clock = manualClock(NOW);
  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, clock, ws: { pushIntervalMs: 20 } });
  });
  afterAll(() => sim.close());

  it("receives exactly the tape's trades and the !all liquidations, and answers futures.ping", async () => {
    const perps = new GatePerpClient(sim.urls.gate, { timeoutMs: 5_000, retries: 0 });
    const feed = new GateFeed({ baseUrl: sim.wsUrls.gate, instruments: perps, heartbeatMs: 100 });
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      expect((await feed.subscribe(["BTC", "ETH"])).subscribed).toEqual(["BTC", "ETH"]);
      feed.start();
      for (let i = 0; i < 100 && !feed.state().connected; i++) await wait(20);
      await wait(200); // the subscriptions are in before the clock moves
      for (let m = 0; m < 5; m++) {
        clock.advance(60_000);
        await wait(150);
      }
      const end = NOW + 5 * 60_000 + 1;
      // the hub pushes on its own timer: wait (bounded) until everything the tape scheduled has arrived
      const wantTrades = sim.tape.trades("gate", "BTC", NOW, end).length + sim.tape.trades("gate", "ETH", NOW, end).length;
      const wantLiqs = sim.tape.liquidations("gate", "*", NOW, end).length;
      for (let i = 0; i < 200 && (trades.length < wantTrades || liqs.length < wantLiqs); i++) await wait(50);
      const byTime = <T extends { time: number; base: string }>(a: T, b: T) => a.time - b.time || a.base.localeCompare(b.base);
      expect(trades.filter((t) => t.base === "BTC").map(rounded)).toEqual(sim.tape.trades("gate", "BTC", NOW, end).map(rounded));
      expect(trades.filter((t) => t.base === "ETH").map(rounded)).toEqual(sim.tape.trades("gate", "ETH", NOW, end).map(rounded));
      // liquidations of every listed contract arrive through the single !all subscription (about 1.8 a minute)
      expect(liqs.length).toBeGreaterThan(0);
      const liqRounded = (l: Liquidation) => ({ ...l, size: Number(l.size.toPrecision(12)), valueUsd: Number(l.valueUsd.toPrecision(12)) });
      expect([...liqs].sort(byTime).map(liqRounded)).toEqual([...sim.tape.liquidations("gate", "*", NOW, end)].sort(byTime).map(liqRounded));
      expect(feed.state()).toMatchObject({ venue: "gate", connected: true, reconnects: 0 });
      expect(feed.probe()).toBe(true);
    } finally {
      await feed.stop();
    }
  }, 30_000);
});
