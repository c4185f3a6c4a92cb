import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock, type ManualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { DeribitTradeBackfill } from "../../src/venues/deribit/backfill.js";
import { DeribitPerpClient } from "../../src/venues/deribit/client.js";
import { DeribitFeed } from "../../src/venues/deribit/feed.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";

/*
 * The real Deribit client, feed and backfill against the simulator (src/sim/venues/deribit.ts, src/sim/ws/deribit.ts).
 */

/** Now: the client anchors history and candle windows on this machine's clock, as it does against the live venue. */
const T0 = Date.now();
const HOUR = 3_600_000;
let sim: RunningSimulator;
let clock: ManualClock;
let client: DeribitPerpClient;

beforeAll(async () => {
  clock = manualClock(T0);
  sim = await startSimulator({ seed: 42, clock, ws: { pushIntervalMs: 20, deribitHeartbeatUnitMs: 10 } });
  client = new DeribitPerpClient(sim.urls.deribit, { timeoutMs: 5000, retries: 0 });
});
afterAll(async () => {
  await sim.close();
});

describe("deribit client against the simulator", () => {
  it("lists inverse BTC/ETH first and USDC linear perpetuals, resolving BTC to BTC-PERPETUAL", async () => {
    const list = await client.instruments();
    expect(list.slice(0, 2).map((i) => i.venueSymbol)).toEqual(["BTC-PERPETUAL", "ETH-PERPETUAL"]);
    expect(list.map((i) => i.venueSymbol)).toContain("SOL_USDC-PERPETUAL");
    expect((await client.instrument("btc"))!.venueSymbol).toBe("BTC-PERPETUAL");
    expect(list.every((i) => i.contractSize === 1 && i.multiplier === 1)).toBe(true);
  });

  it("answers funding, funding of every perpetual, open interest, history and candles", async () => {
    const f = await client.funding("BTC");
    expect(f).toMatchObject({ venue: "deribit", base: "BTC", fundingIntervalHours: 8, nextFundingTime: null });
    expect(Math.abs(f.fundingRate)).toBeLessThanOrEqual(0.005);
    const btc = sim.perp.perpOf("deribit", "BTC")!;
    expect(f.markPrice!).toBeCloseTo(sim.perp.markPrice(btc, T0), 2);

    const all = await client.fundingAll();
    // one snapshot per base: BTC and ETH from the inverse perpetuals, not also from BTC_USDC / ETH_USDC
    const bases = [...new Set(sim.perp.instruments("deribit", T0).map((i) => i.base))].sort();
    expect(all.map((s) => s.base).sort()).toEqual(bases);
    expect(all.filter((s) => s.base === "BTC").map((s) => s.venueSymbol)).toEqual(["BTC-PERPETUAL"]);
    expect(all.find((s) => s.venueSymbol === "BTC-PERPETUAL")!.fundingRate).toBe(f.fundingRate);

    const oi = await client.openInterest("BTC");
    expect(oi.oiCoins).toBeCloseTo(sim.perp.openInterestCoins(btc, T0), -1);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(sim.perp.markPrice(btc, T0), 0);
    const sol = await client.openInterest("SOL");
    const solSpec = sim.perp.perpOf("deribit", "SOL")!;
    expect(sol.oiCoins).toBeCloseTo(sim.perp.openInterestCoins(solSpec, T0), 2);

    const hist = await client.fundingHistory("BTC", 800);
    expect(hist).toHaveLength(800);
    expect(hist[0]!.time - hist[1]!.time).toBe(HOUR);
    expect(hist[0]!.rate).toBeCloseTo(sim.perp.settledFundingRate(btc, hist[0]!.time) / 8, 10);

    const candles = await client.hourlyCandles("ETH", 24);
    expect(candles).toHaveLength(24);
    expect(candles[23]!.openTime).toBe(Math.floor(T0 / HOUR) * HOUR);
    expect(candles.every((c) => c.high >= c.low && c.volumeUsd > 0)).toBe(true);

    expect(await client.longShort("BTC")).toBeNull();
    await expect(client.funding("PEPE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("maps an injected rate limit and venue errors like the real venue", async () => {
    const r = await fetch(`${sim.urls.deribit}/public/ticker?instrument_name=NOPE-PERPETUAL`);
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: { code: -32602, data: { reason: "instrument not found" } } });
    const any = await fetch(`${sim.urls.deribit}/public/get_book_summary_by_currency?currency=any&kind=future`);
    expect(any.status).toBe(400);
  });
});

describe("deribit feed and backfill against the simulator", () => {
  it("receives the tape's trades and liquidations, answers heartbeats, and the backfill fills the same window", async () => {
    const feed = new DeribitFeed({ baseUrl: sim.wsUrls.deribit, instruments: client, heartbeatMs: 0 });
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    try {
      expect(await feed.subscribe(["BTC", "SOL", "ETH"])).toMatchObject({ subscribed: ["BTC", "SOL", "ETH"] });
      feed.start();
      for (let i = 0; i < 200 && !feed.state().connected; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 150)); // the subscribe request and its answer
      const start = clock.now();
      // Two simulated hours, pushed in steps; the session's heartbeat (30 s × 10 ms) runs meanwhile.
      for (let i = 0; i < 120; i++) {
        await new Promise((r) => setTimeout(r, 25));
        clock.advance(60_000);
      }
      await new Promise((r) => setTimeout(r, 200));
      const end = clock.now();
      expect(feed.state()).toMatchObject({ connected: true, reconnects: 0 });
      const btcTape = sim.tape.trades("deribit", "BTC", start, end - 60_000);
      expect(btcTape.length).toBeGreaterThan(100);
      const got = new Map(trades.filter((t) => t.base === "BTC").map((t) => [t.id, t]));
      for (const t of btcTape) {
        const mine = got.get(t.id);
        expect(mine, t.id).toBeDefined();
        expect(mine!.size).toBeCloseTo(t.size, 9);
        expect(mine!.price).toBe(t.price);
        expect(mine!.side).toBe(t.side);
      }
      const tapeLiqs = ["BTC", "SOL", "ETH"].flatMap((b) => sim.tape.liquidations("deribit", b, start, end - 60_000));
      expect(tapeLiqs.length).toBeGreaterThan(0);
      for (const l of tapeLiqs) {
        expect(
          liqs.some((m) => m.venueSymbol === l.venueSymbol && m.time === l.time && m.side === l.side),
          `${l.venueSymbol} ${l.time}`,
        ).toBe(true);
      }

      const bf = new DeribitTradeBackfill({ instruments: client, baseUrl: sim.urls.deribit, retries: 0 });
      const from = start + 10 * 60_000;
      const r = await bf.fetchTrades("BTC", from, from + 20 * 60_000);
      expect(r.complete).toBe(true);
      const tapeIds = sim.tape.trades("deribit", "BTC", from, from + 20 * 60_000).map((t) => t.id);
      const backfilled = new Set(r.trades.map((t) => t.id));
      for (const id of tapeIds) expect(backfilled.has(id), id).toBe(true);
    } finally {
      await feed.stop();
    }
  });
});
