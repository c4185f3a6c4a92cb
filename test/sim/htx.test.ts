import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedClock, manualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { HTX_SIM } from "../../src/sim/venues/htx.js";
import { FeedMetrics } from "../../src/ingestion/feeds/metrics.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { HtxTradeBackfill } from "../../src/venues/htx/backfill.js";
import { HtxPerpClient } from "../../src/venues/htx/client.js";
import { HtxFeed } from "../../src/venues/htx/feed.js";
import { appError } from "../helpers/errors.js";

/*
 * The real HTX client, backfills and feed against the simulator (`src/sim/venues/htx.ts`, `src/sim/ws/htx.ts`): every
 * client method answers with the model's numbers in coins, refusals are HTX-shaped, and the feed receives the tape's
 * trades and liquidations through HTX's two sockets (gzip frames on the market one).
 */

const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
const urls = (sim: RunningSimulator) => ({ rest: sim.urls.htx, ws: sim.wsUrls.htx });
/** Sizes to 12 significant digits: the tape's normalisation multiplies contracts × contract_size without removing binary noise, the adapter does. */
const rounded = <T extends { size: number }>(t: T) => ({ ...t, size: Number(t.size.toPrecision(12)) });

describe("htx client against the simulator", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
  });
  afterAll(() => sim.close());
  const client = () => new HtxPerpClient(urls(sim).rest, { timeoutMs: 5_000, retries: 0 });

  it("answers every method with the model's values in coins and per-interval fractions", async () => {
    const c = client();
    const spec = sim.perp.perpOf(HTX_SIM, "BTC")!;
    const insts = await c.instruments();
    expect(insts.length).toBe(sim.perp.instruments(HTX_SIM, NOW).filter((i) => i.kind === "perpetual" && !i.inverse).length);
    expect(insts.find((i) => i.base === "BTC")).toMatchObject({ venueSymbol: "BTC-USDT", contractSize: spec.ctVal, fundingIntervalHours: spec.fundingIntervalHours });
    const f = await c.funding("BTC");
    expect(f.fundingRate).toBeCloseTo(sim.perp.currentFundingRate(spec, NOW), 12);
    expect(f.nextFundingTime).toBe(sim.perp.nextFundingTime(spec, NOW));
    expect(f.markPrice).toBeCloseTo(sim.perp.markPrice(spec, NOW), 0);
    expect(f.indexPrice).toBeCloseTo(sim.perp.indexPrice(spec, NOW), 0);
    expect((await c.fundingAll()).length).toBe(insts.length);
    const hist = await c.fundingHistory("BTC", 60);
    expect(hist).toHaveLength(60);
    expect(hist[0]!.time).toBe(sim.perp.intervalStart(spec, NOW));
    expect(hist[0]!.time - hist[59]!.time).toBe(59 * spec.fundingIntervalHours * HOUR);
    expect(hist[0]!.rate).toBeCloseTo(sim.perp.settledFundingRate(spec, hist[0]!.time), 12);
    const oi = await c.openInterest("BTC");
    expect(Math.abs(oi.oiCoins - sim.perp.openInterestCoins(spec, NOW))).toBeLessThanOrEqual(spec.ctVal);
    const oiHist = await c.openInterestHistory!("BTC", 24);
    expect(oiHist).toHaveLength(24);
    expect(oiHist[23]!.time).toBe(Math.floor(NOW / HOUR) * HOUR);
    const ls = await c.longShort("BTC");
    expect(ls!.lsRatio).toBeCloseTo(sim.perp.longShortRatio(spec, "top_position", Math.floor(NOW / 300_000) * 300_000), 2);
    const tiers = await c.marginTiers!("BTC");
    const model = sim.perp.marginTiers(spec);
    expect(tiers.map((t) => t.maintenanceMarginRate)).toEqual(model.map((t) => t.mmr));
    expect(tiers[0]!.maxNotionalUsd! / model[0]!.maxNotionalUsd).toBeCloseTo(1, 2);
    const candles = await c.hourlyCandles!("BTC", 3);
    expect(candles.map((k) => k.openTime)).toEqual([2, 1, 0].map((k) => Math.floor(NOW / HOUR) * HOUR - k * HOUR));
  });

  it("backfills the tape's trades and a gap's liquidations in coins", async () => {
    const c = client();
    // a budget far above HTX's, so that reading every contract takes no wall time (window splits: test/venues/htx.test.ts)
    const bf = new HtxTradeBackfill({ baseUrl: urls(sim).rest, instruments: c, timeoutMs: 5_000, retries: 0, callsPerMin: 1_000_000 });
    const r = await bf.fetchTrades("BTC", NOW - 60_000, NOW);
    expect(r.complete).toBe(true);
    expect(r.trades.map(rounded)).toEqual(sim.tape.trades(HTX_SIM, "BTC", NOW - 60_000, NOW).map(rounded));
    const liq = await bf.fetchLiquidations(NOW - HOUR, NOW);
    expect(liq.complete).toBe(true);
    const key = (l: Liquidation) => `${l.venueSymbol}|${l.time}|${l.side}`;
    expect(liq.liquidations.map(key).sort()).toEqual(
      sim.tape
        .liquidations(HTX_SIM, "*", NOW - HOUR, NOW)
        .map(key)
        .sort(),
    );
  });

  it("maps the simulator's HTX-shaped refusals", async () => {
    const res = await fetch(`${urls(sim).rest}/linear-swap-api/v1/swap_funding_rate?contract_code=NOPE-USDT`);
    expect(await res.json()).toMatchObject({ status: "error", err_code: 1014 });
    expect((await appError(() => client().funding("NOPE"))).code).toBe("NOT_FOUND");
  });
});

describe("htx feed against the simulator's websockets", () => {
  let sim: RunningSimulator;
  const clock = manualClock(NOW);
  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, clock, ws: { pushIntervalMs: 20 } });
  });
  afterAll(() => sim.close());

  it("receives exactly the tape's trades (gzip frames) and every swap's liquidations on the notification socket", async () => {
    const perps = new HtxPerpClient(urls(sim).rest, { timeoutMs: 5_000, retries: 0 });
    const metrics = new FeedMetrics(new Registry());
    const feed = new HtxFeed({ baseUrl: urls(sim).ws, instruments: perps, metrics });
    const messages = async () => (await metrics.messages.get()).values.reduce((n, v) => n + v.value, 0);
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      expect((await feed.subscribe(["BTC", "ETH"])).subscribed).toEqual(["BTC", "ETH"]);
      feed.start();
      // the clock moves only once both trade subscriptions and the liquidation one are acknowledged (three messages)
      for (let i = 0; i < 250 && (await messages()) < 3; i++) await wait(20);
      expect(await messages()).toBeGreaterThanOrEqual(3);
      for (let m = 0; m < 5; m++) {
        clock.advance(60_000);
        await wait(150);
      }
      const end = NOW + 5 * 60_000 + 1;
      const want = (base: string) => sim.tape.trades(HTX_SIM, base, NOW, end);
      const wantLiqs = sim.tape.liquidations(HTX_SIM, "*", NOW, end);
      for (let i = 0; i < 200 && (trades.length < want("BTC").length + want("ETH").length || liqs.length < wantLiqs.length); i++) await wait(50);
      expect(trades.filter((t) => t.base === "BTC").map(rounded)).toEqual(want("BTC").map(rounded));
      expect(trades.filter((t) => t.base === "ETH").map(rounded)).toEqual(want("ETH").map(rounded));
      const byTime = (a: Liquidation, b: Liquidation) => a.time - b.time || a.base.localeCompare(b.base);
      expect(
        [...liqs]
          .sort(byTime)
          .map(rounded)
          .map((l) => ({ ...l, valueUsd: Number(l.valueUsd.toPrecision(12)) })),
      ).toEqual(
        [...wantLiqs]
          .sort(byTime)
          .map(rounded)
          .map((l) => ({ ...l, valueUsd: Number(l.valueUsd.toPrecision(12)) })),
      );
      expect(feed.state()).toMatchObject({ connected: true, reconnects: 0 });
    } finally {
      await feed.stop();
    }
  }, 30_000);
});
