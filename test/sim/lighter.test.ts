import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { manualClock, type ManualClock } from "../../src/sim/clock.js";
import { createMarketModel } from "../../src/sim/market.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../../src/sim/perp-model.js";
import { tapeFor, type Tape } from "../../src/sim/tape.js";
import { createLighterRouter, lighterHourlyRate, lighterMarkets } from "../../src/sim/venues/lighter.js";
import { lighterTradeId } from "../../src/sim/venues/lighter-wire.js";
import { LighterSession, lighterRoute } from "../../src/sim/ws/lighter.js";
import type { ConnIO, SessionEnv } from "../../src/sim/ws/session.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { LighterTradeBackfill } from "../../src/venues/lighter/backfill.js";
import { LighterPerpClient } from "../../src/venues/lighter/client.js";
import { LighterFeed } from "../../src/venues/lighter/feed.js";
import { lighterMarketId } from "../../src/venues/lighter/parse.js";
import { LIGHTER } from "../../src/venues/lighter/venue-id.js";
import { startWsServer, waitFor, type WsTestServer } from "../helpers/ws-server.js";

/*
 * The real Lighter client, backfill and feed against the simulated venue (src/sim/venues/lighter.ts,
 * src/sim/ws/lighter.ts), mounted here by hand: the simulator's REST mount and websocket hub list Lighter once the
 * wiring adds it. Until the perp universe lists Lighter too, its markets are Hyperliquid's USDC perps (hourly funding)
 * under Lighter's symbols (`kPEPE` → `1000PEPE`): the wire is Lighter's, the numbers the model's.
 */

const T0 = Date.now();
const HOUR = 3_600_000;
let clock: ManualClock;
let perp: PerpModel;
let tape: Tape;
/** The perp universe lists Lighter itself (the wiring is in): its tape then liquidates too. */
let wired = false;
let rest: { url: string; close: () => Promise<void> };

/** The model's Lighter listing, or (before the wiring) Hyperliquid's perps under Lighter's symbols. */
function lighterModel(real: PerpModel): PerpModel {
  if (real.instruments(LIGHTER, T0).length > 0) return real;
  const asLighter = (i: PerpInstrumentSpec): PerpInstrumentSpec => (i.multiplier > 1 ? { ...i, symbol: `1000${i.base}`, venueBase: `1000${i.base}` } : i);
  // Hyperliquid's list is static: mapped once, so the instruments keep their identity between calls.
  let mapped: readonly PerpInstrumentSpec[] | undefined;
  const instruments: PerpModel["instruments"] = (venue, now) =>
    venue === LIGHTER ? (mapped ??= real.instruments("hyperliquid", now).map(asLighter)) : real.instruments(venue, now);
  return { ...real, instruments };
}

const spec = (base: string): PerpInstrumentSpec => lighterMarkets(perp, clock.now()).find((m) => m.inst.base === base)!.inst;

beforeAll(async () => {
  clock = manualClock(T0);
  const market = createMarketModel({ seed: 42, clock });
  wired = perpModelFor(market).instruments(LIGHTER, T0).length > 0;
  perp = lighterModel(perpModelFor(market));
  tape = tapeFor(market);
  const app = express();
  app.use("/lighter/api/v1", createLighterRouter({ market, clock }, perp, tape));
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((r) => server.once("listening", () => r()));
  rest = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/lighter/api/v1`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
});
afterAll(() => rest.close());

describe("lighter client against the simulated REST API", () => {
  const client = () => new LighterPerpClient(rest.url, { timeoutMs: 5_000, retries: 0 });

  it("lists the markets with Lighter's ids and answers funding, open interest and tiers with the model's values", async () => {
    const c = client();
    const insts = await c.instruments();
    expect(insts.length).toBe(lighterMarkets(perp, T0).length);
    expect(insts.filter((i) => ["ETH", "BTC", "SOL", "PEPE"].includes(i.base)).map((i) => [i.venueSymbol, lighterMarketId(i)])).toEqual([
      ["BTC", 1],
      ["ETH", 0],
      ["SOL", 2],
      ["1000PEPE", 4],
    ]);
    const btc = spec("BTC");
    const f = await c.funding("BTC");
    expect(f.fundingRate).toBeCloseTo(lighterHourlyRate(perp.currentFundingRate(btc, T0)), 15);
    expect(f).toMatchObject({ fundingIntervalHours: 1, nextFundingTime: Math.floor(T0 / HOUR) * HOUR + HOUR });
    expect(f.markPrice!).toBeCloseTo(perp.markPrice(btc, T0), 0);
    expect(f.indexPrice!).toBeCloseTo(perp.indexPrice(btc, T0), 0);
    expect((await c.fundingAll()).length).toBe(insts.length);
    const oi = await c.openInterest("BTC");
    expect(oi.oiCoins).toBeCloseTo(perp.openInterestCoins(btc, T0), 1);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(perp.markPrice(btc, T0), 0);
    const pepe = await c.openInterest("PEPE");
    expect(pepe.oiCoins / perp.openInterestCoins(spec("PEPE"), T0)).toBeCloseTo(1, 3);
    const [tier] = await c.marginTiers("BTC");
    expect(tier!.maxLeverage).toBeCloseTo(btc.maxLeverage, 1);
    expect(tier!.maintenanceMarginRate).toBeCloseTo(0.6 / btc.maxLeverage, 3);
  });

  it("pages the hourly settlements: signed, newest first, equal to the model's rounded rates", async () => {
    const hist = await client().fundingHistory("ETH", 600);
    const eth = spec("ETH");
    expect(hist).toHaveLength(600);
    expect(hist[0]!.time).toBe(Math.floor(T0 / HOUR) * HOUR);
    expect(hist[0]!.time - hist[599]!.time).toBe(599 * HOUR);
    for (const p of [hist[0]!, hist[300]!, hist[599]!]) expect(p.rate).toBeCloseTo(lighterHourlyRate(perp.settledFundingRate(eth, p.time)), 12);
  });

  it("refuses bad parameters with Lighter's 20001 envelope", async () => {
    const res = await fetch(`${rest.url}/fundings?market_id=1&resolution=1d&start_timestamp=0&end_timestamp=1&count_back=1`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 20001, message: "invalid param " });
    expect(await (await fetch(`${rest.url}/orderBookDetails?market_id=999999`)).json()).toEqual({ code: 200, order_book_details: [], spot_order_book_details: [] });
  });

  it("backfills the tape's latest prints with their time-ordered ids", async () => {
    const b = new LighterTradeBackfill({ baseUrl: rest.url, instruments: client(), timeoutMs: 5_000, retries: 0 });
    const r = await b.fetchTrades("BTC", T0 - 20_000, T0 + 1);
    const want = tape.tradesOf(spec("BTC"), T0 - 20_000, T0 + 1);
    const got = new Map(r.trades.map((t) => [t.id, t]));
    for (const t of want) expect(got.get(String(lighterTradeId(t))), String(t.seq)).toMatchObject({ side: t.side, time: t.time });
  });
});

describe("lighter feed against the simulated websocket", () => {
  let srv: WsTestServer;
  const timers = new Set<NodeJS.Timeout>();
  beforeAll(async () => {
    srv = await startWsServer((c) => {
      const path = new URL(c.url, "http://x").pathname;
      if (!lighterRoute(path)) return void c.ws.close(1008, "no such path");
      const opened = performance.now();
      const io: ConnIO = {
        connId: "test",
        sendData: (t) => c.ws.send(t),
        sendReply: (t) => c.ws.send(t),
        sendPong: (t) => c.ws.send(t),
        elapsed: () => performance.now() - opened,
        close: (code, reason) => c.ws.close(code, reason),
      };
      const env: SessionEnv = { perp, tape, clock };
      const session = new LighterSession(io, env, c.url.includes("idle") ? 100 : undefined);
      c.ws.on("message", (d: WebSocket.RawData) => session.onMessage(d.toString()));
      const t = setInterval(() => session.tick(clock.now(), io.elapsed()), 20);
      timers.add(t);
      c.ws.on("close", () => clearInterval(t));
    });
  });
  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    await srv.close();
  });

  it("streams the tape's trades and liquidations of the subscribed markets, with the tape's ids", async () => {
    const client = new LighterPerpClient(rest.url, { timeoutMs: 5_000, retries: 0 });
    const feed = new LighterFeed({ baseUrl: srv.url, instruments: client });
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    expect(await feed.subscribe(["BTC", "ETH", "PEPE"])).toMatchObject({ subscribed: ["BTC", "ETH", "PEPE"] });
    feed.start();
    try {
      await waitFor(() => feed.state().connected);
      await waitFor(() => srv.conns[0]!.received.filter((m) => m.includes('"subscribe"')).length === 3, 5_000);
      const start = clock.now() + 1;
      for (let i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, 25));
        clock.advance(60_000);
      }
      await new Promise((r) => setTimeout(r, 200));
      const end = clock.now() - 60_000;
      // ids are unique per market (time-ordered), so trades are found by base and id
      const got = new Map(trades.map((t) => [`${t.base}:${t.id}`, t]));
      for (const base of ["BTC", "ETH", "PEPE"]) {
        const want = tape.tradesOf(spec(base), start, end);
        expect(want.length, base).toBeGreaterThan(10);
        for (const t of want) {
          const mine = got.get(`${base}:${lighterTradeId(t)}`);
          expect(mine, `${base} ${t.seq}`).toBeDefined();
          expect(mine).toMatchObject({ base, side: t.side, time: t.time });
        }
        const wantLiqs = tape.liquidationsOf(spec(base), start, end);
        for (const l of wantLiqs) expect(liqs.some((m) => m.base === base && m.time === l.time && m.side === l.side)).toBe(true);
      }
      if (wired) expect(liqs.length).toBeGreaterThan(0);
      const pepe = trades.find((t) => t.base === "PEPE")!;
      expect(pepe.price).toBeLessThan(0.001);
    } finally {
      await feed.stop();
    }
  });

  it("answers pings, refuses unknown and repeated channels without closing, and closes an idle connection", async () => {
    const ws = new WebSocket(`${srv.url}/stream?idle`);
    const msgs: string[] = [];
    ws.on("message", (d: WebSocket.RawData) => msgs.push(d.toString()));
    const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
    await new Promise((r) => ws.once("open", r));
    ws.send('{"type":"ping"}');
    ws.send('{"type":"subscribe","channel":"trade/999999"}');
    ws.send('{"type":"subscribe","channel":"market_stats/all"}');
    ws.send('{"type":"subscribe","channel":"market_stats/all"}');
    await waitFor(() => msgs.length >= 4);
    expect(JSON.parse(msgs[0]!)).toMatchObject({ type: "connected" });
    expect(msgs.slice(1)).toEqual([
      '{"type":"pong"}',
      '{"error":{"code":30005,"message":"Invalid Channel:  (marketId)"}}',
      '{"error":{"code":30003,"message":"Already Subscribed to : market_stats:all"}}',
    ]);
    expect(await closed).toBe(1000);
  });
});
