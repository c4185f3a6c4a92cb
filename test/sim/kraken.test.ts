import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedClock, systemClock } from "../../src/sim/clock.js";
import { createMarketModel } from "../../src/sim/market.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../../src/sim/perp-model.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { tapeFor } from "../../src/sim/tape.js";
import { createKrakenRouterWith, KRAKEN_SIM, krakenEvents } from "../../src/sim/venues/kraken.js";
import { KrakenSession } from "../../src/sim/ws/kraken.js";
import type { ConnIO, SessionEnv } from "../../src/sim/ws/session.js";
import { KrakenTradeBackfill } from "../../src/venues/kraken/backfill.js";
import { KrakenPerpClient } from "../../src/venues/kraken/client.js";
import { KrakenFeed } from "../../src/venues/kraken/feed.js";
import { parseKrakenMessage } from "../../src/venues/kraken/feed-parse.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { waitFor } from "../helpers/ws-server.js";

/*
 * The real Kraken client, backfill and websocket parser against the simulated venue (`src/sim/venues/kraken.ts`,
 * `src/sim/ws/kraken.ts`). Until the wiring lists "kraken" (PERP_VENUES, the simulator's universe, tape, venue list
 * and websocket hub; docs/adding-a-venue.md) the simulator has no Kraken instruments, so the first part serves the
 * model's Bitget perpetuals under Kraken symbols (`PF_XBTUSD`, hourly funding) through the Kraken router and session;
 * the second part runs against the running simulator once wired.
 */

const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
const wired = (PERP_VENUES as readonly string[]).includes("kraken");

/** The model's Bitget perpetuals relabelled as Kraken's (`PF_<COIN>USD`, XBT for BTC, funding every hour). */
function krakenView(perp: PerpModel): PerpModel {
  const list: PerpInstrumentSpec[] = perp
    .instruments("bitget", NOW)
    .filter((i) => i.kind === "perpetual")
    .map((i) => ({ ...i, symbol: `PF_${i.base === "BTC" ? "XBT" : i.base}USD`, quote: "USD", fundingIntervalHours: 1 }));
  const bySymbol = new Map(list.map((i) => [i.symbol, i]));
  const byBase = new Map(list.map((i) => [i.base, i]));
  return {
    ...perp,
    instruments: (v, t) => (v === KRAKEN_SIM ? list : perp.instruments(v, t)),
    instrument: (v, s, t) => (v === KRAKEN_SIM ? bySymbol.get(s) : perp.instrument(v, s, t)),
    perpOf: (v, b) => (v === KRAKEN_SIM ? byBase.get(b) : perp.perpOf(v, b)),
  };
}

describe("kraken client against the simulated venue (the model's perpetuals under Kraken symbols)", () => {
  // The client asks for candle and open-interest windows by the wall clock: the simulator runs on it too, and the
  // expectations are read at the times the answers carry.
  const clock = systemClock;
  const market = createMarketModel({ seed: 42, clock });
  const perp = krakenView(perpModelFor(market));
  const tape = tapeFor(market);
  const spec = perp.perpOf(KRAKEN_SIM, "BTC")!;
  let url = "";
  let close = () => Promise.resolve();

  beforeAll(async () => {
    const app = express();
    app.use("/kraken", createKrakenRouterWith({ market, clock }, perp, tape));
    const server = app.listen(0, "127.0.0.1");
    await new Promise<void>((r) => server.once("listening", () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/kraken`;
    close = () => new Promise<void>((r) => server.close(() => r()));
  });
  afterAll(() => close());

  it("answers every client method with the model's values: hourly fractions, coins, USD tiers", async () => {
    const c = new KrakenPerpClient(url, { timeoutMs: 5_000, retries: 0 });
    const insts = await c.instruments();
    expect(insts.length).toBe(perp.instruments(KRAKEN_SIM, NOW).length);
    expect(insts.find((i) => i.base === "BTC")).toMatchObject({ venueSymbol: "PF_XBTUSD", contractSize: 1, fundingIntervalHours: 1 });
    const f = await c.funding("BTC");
    expect(f.fundingRate).toBeCloseTo(perp.currentFundingRate(spec, f.time), 9);
    expect(f).toMatchObject({ fundingIntervalHours: 1, nextFundingTime: (Math.floor(f.time / HOUR) + 1) * HOUR });
    expect(f.markPrice).toBeCloseTo(perp.markPrice(spec, f.time), 0);
    expect((await c.predictedFunding("BTC"))!.rate).toBeCloseTo(perp.currentFundingRate(spec, f.time + HOUR), 9);
    expect((await c.fundingAll()).length).toBe(insts.length);

    const hist = await c.fundingHistory("BTC", 48);
    expect(hist).toHaveLength(48);
    expect(Math.floor(Date.now() / HOUR) * HOUR - hist[0]!.time).toBeLessThanOrEqual(HOUR); // the last settled hour
    expect(hist[0]!.time - hist[47]!.time).toBe(47 * HOUR);
    expect(hist[5]!.rate).toBeCloseTo(perp.settledFundingRate(spec, hist[5]!.time), 12);

    const oi = await c.openInterest("BTC");
    expect(oi.oiCoins).toBeCloseTo(perp.openInterestCoins(spec, oi.time), 2);
    const tiers = await c.marginTiers("BTC");
    expect(tiers.map((t) => Math.round(t.maxLeverage))).toEqual(perp.marginTiers(spec).map((t) => t.maxLeverage));
    expect(tiers.at(-1)!.maxNotionalUsd).toBeNull();

    const candles = await c.hourlyCandles("BTC", 5);
    expect(candles).toHaveLength(5);
    expect(candles[4]!.openTime - candles[0]!.openTime).toBe(4 * HOUR);
    expect(candles[3]!.close).toBeCloseTo(perp.candle(spec, candles[3]!.openTime, HOUR, Date.now()).close, 0);
    const oiHist = await c.openInterestHistory("BTC", 6);
    expect(oiHist).toHaveLength(6);
    expect(oiHist[4]!.oiCoins).toBeCloseTo(perp.openInterestCoins(spec, oiHist[4]!.time), 2);

    const ls = (await c.longShort("BTC"))!;
    const r = perp.longShortRatio(spec, "account", ls.time);
    expect(ls.longRatio).toBeCloseTo(r / (1 + r), 3);
    await expect(c.funding("NOPE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("backfills the tape's trades and liquidation fills by uid", async () => {
    const bf = new KrakenTradeBackfill({ instruments: new KrakenPerpClient(url, { timeoutMs: 5_000 }), baseUrl: url, retries: 0 });
    const to = Date.now() - 1_000;
    const from = to - 10 * 60_000;
    const [trades, liqs] = await Promise.all([bf.fetchTrades("BTC", from, to), bf.fetchLiquidations(from, to)]);
    const events = krakenEvents(tape, spec, from, to);
    expect(trades.complete).toBe(true);
    expect(new Set(trades.trades.map((t) => t.id))).toEqual(new Set(events.map((e) => e.uid)));
    expect(liqs.liquidations.map((l) => l.time)).toEqual(events.filter((e) => e.type === "liquidation").map((e) => e.time));
  });

  it("speaks the websocket protocol: info, acks, a snapshot, fills and heartbeats; alerts; closes an idle connection", () => {
    const out: string[] = [];
    let closed = "";
    let elapsed = 0;
    const io: ConnIO = {
      connId: "c1",
      sendData: (t) => out.push(t),
      sendReply: (t) => out.push(t),
      sendPong: (t) => out.push(t),
      elapsed: () => elapsed,
      close: (_c, r) => (closed = r),
    };
    const env: SessionEnv = { perp, tape, clock: fixedClock(NOW) };
    const s = new KrakenSession(io, env, { heartbeatMs: 1_000, idleMs: 5_000 });
    expect(JSON.parse(out[0]!)).toEqual({ event: "info", version: 1 });
    s.onMessage(JSON.stringify({ event: "subscribe", feed: "heartbeat" }));
    s.onMessage(JSON.stringify({ event: "subscribe", feed: "trade", product_ids: ["PF_XBTUSD"] }));
    expect(JSON.parse(out[1]!)).toEqual({ event: "subscribed", feed: "heartbeat" });
    expect(JSON.parse(out[2]!)).toEqual({ event: "subscribed", feed: "trade", product_ids: ["PF_XBTUSD"] });
    const lookup = new Map([["PF_XBTUSD", { venueSymbol: "PF_XBTUSD", base: "BTC", multiplier: 1, contractSize: 1 }]]);
    expect(parseKrakenMessage(out[3]!, lookup).trades).toHaveLength(100);

    out.length = 0;
    elapsed = 1_000;
    s.tick(NOW + 60_000, elapsed);
    const frames = out.map((t) => parseKrakenMessage(t, lookup));
    expect(frames[0]!.control).toEqual({ type: "ack", message: "heartbeat" });
    const events = krakenEvents(tape, spec, NOW + 1, NOW + 60_001);
    expect(frames.flatMap((f) => f.trades.map((t) => t.id))).toEqual(events.map((e) => e.uid));
    expect(frames.flatMap((f) => f.liquidations)).toHaveLength(events.filter((e) => e.type === "liquidation").length);

    out.length = 0;
    s.onMessage(JSON.stringify({ event: "subscribe", feed: "trade", product_ids: ["PF_NOPEUSD"] }));
    s.onMessage("{");
    s.onMessage(JSON.stringify({ event: "ping" }));
    expect(out.map((t) => JSON.parse(t))).toEqual([
      { event: "alert", message: "Bad request" },
      { event: "alert", message: "Json Parse Error" },
      { event: "alert", message: "Event(s) not found" },
    ]);
    s.tick(NOW + 60_000, 5_999);
    expect(closed).toBe("");
    s.tick(NOW + 60_000, 6_000); // 5 s after the last request
    expect(closed).toMatch(/no request/);
  });
});

describe.runIf(wired)("kraken on the running simulator", () => {
  let sim: RunningSimulator;
  const urls = () => ({
    rest: (sim.urls as unknown as Readonly<Record<string, string>>)[KRAKEN_SIM]!,
    ws: (sim.wsUrls as unknown as Readonly<Record<string, string>>)[KRAKEN_SIM]!,
  });
  beforeAll(async () => {
    sim = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
  });
  afterAll(() => sim.close());

  it("serves BTC funding per hour and streams the tape's trades to the feed", async () => {
    const client = new KrakenPerpClient(urls().rest, { timeoutMs: 5_000, retries: 0 });
    const spec = sim.perp.perpOf(KRAKEN_SIM, "BTC")!;
    expect((await client.funding("BTC")).fundingRate).toBeCloseTo(sim.perp.currentFundingRate(spec, NOW), 9);
    const feed = new KrakenFeed({ baseUrl: urls().ws, instruments: client });
    const trades: string[] = [];
    feed.on("trades", (t) => trades.push(...t.map((x) => x.id)));
    await feed.subscribe(["BTC"]);
    feed.start();
    try {
      await waitFor(() => trades.length > 0, 5_000);
    } finally {
      feed.stop();
    }
  });
});
