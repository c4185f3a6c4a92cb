import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { manualClock } from "../../src/sim/clock.js";
import type { PerpInstrumentSpec, PerpModel } from "../../src/sim/perp-model.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { tapeFor } from "../../src/sim/tape.js";
import { dydxMarginClass, dydxRouterOver } from "../../src/sim/venues/dydx.js";
import { dydxEventsOf } from "../../src/sim/venues/dydx-rows.js";
import { DYDX_SIM, dydxHeight, dydxLiquidationId } from "../../src/sim/venues/dydx-wire.js";
import { DydxSession } from "../../src/sim/ws/dydx.js";
import type { ConnIO } from "../../src/sim/ws/session.js";
import { DydxTradeBackfill } from "../../src/venues/dydx/backfill.js";
import { DydxPerpClient } from "../../src/venues/dydx/client.js";
import { DydxFeed } from "../../src/venues/dydx/feed.js";
import { parseDydxTrades } from "../../src/venues/dydx/feed-parse.js";
import { waitFor } from "../helpers/ws-server.js";

/*
 * The real dYdX client, backfill and feed against the simulated indexer (`src/sim/venues/dydx.ts`,
 * `src/sim/ws/dydx.ts`) as the simulator mounts them: every client method answers with the model's numbers in coins
 * and hourly fractions, errors are the indexer's, the backfill pages the tape back by block height, and the feed
 * receives the tape's trades and liquidation fills.
 */

/** A fixed "now" that is not aligned to any grid. */
const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
const clock = manualClock(NOW);
let sim: RunningSimulator;
let perp: PerpModel;
let tape: ReturnType<typeof tapeFor>;
let restUrl = "";
let wsUrl = "";
let btcSpec: PerpInstrumentSpec;
const specOf = (base: string): PerpInstrumentSpec => perp.perpOf(DYDX_SIM, base)!;

beforeAll(async () => {
  sim = await startSimulator({ seed: 42, clock, ws: { pushIntervalMs: 20 } });
  perp = sim.perp;
  tape = tapeFor(sim.market);
  restUrl = sim.urls.dydx;
  wsUrl = sim.wsUrls.dydx;
  btcSpec = specOf("BTC");
});
afterAll(() => sim.close());

describe("dydx client against the simulated indexer", () => {
  const client = () => new DydxPerpClient(restUrl, { timeoutMs: 5_000, retries: 0 });

  it("answers every method with the model's values: coins, hourly funding, one margin tier", async () => {
    clock.set(NOW);
    const c = client();
    expect(restUrl).toMatch(/\/dydx\/v4$/);
    const insts = await c.instruments();
    expect(insts.map((i) => i.venueSymbol)).toEqual(perp.instruments(DYDX_SIM, NOW).map((m) => m.symbol));
    expect(insts.find((i) => i.base === "BTC")).toMatchObject({ venueSymbol: "BTC-USD", multiplier: 1, contractSize: 1, fundingIntervalHours: 1 });

    const f = await c.funding("BTC");
    expect(f.fundingRate).toBeCloseTo(perp.currentFundingRate(btcSpec, NOW), 12);
    // the indexer sends no settlement time: the client's next full hour (of its own clock)
    expect(f.nextFundingTime! % HOUR).toBe(0);
    expect(f.nextFundingTime! - Date.now()).toBeLessThanOrEqual(HOUR);
    expect(f.indexPrice).toBeCloseTo(perp.indexPrice(btcSpec, NOW), 0);
    // the mark price is the current 1-hour candle's close (the last trade)
    expect(f.markPrice).toBeCloseTo(perp.candle(btcSpec, Math.floor(NOW / HOUR) * HOUR, HOUR, NOW).close, 0);
    expect((await c.predictedFunding("BTC"))?.rate).toBe(f.fundingRate);

    const hist = await c.fundingHistory("BTC", 5);
    expect(hist).toHaveLength(5);
    const lastHour = Math.floor(NOW / HOUR) * HOUR;
    expect(hist[0]!.time - lastHour).toBeGreaterThanOrEqual(1000);
    expect(hist[0]!.time - lastHour).toBeLessThan(1100);
    expect(hist[0]!.rate).toBeCloseTo(perp.settledFundingRate(btcSpec, lastHour), 12);
    expect(hist.map((p) => Math.floor(p.time / HOUR) * HOUR)).toEqual([0, 1, 2, 3, 4].map((k) => lastHour - k * HOUR));

    const oi = await c.openInterest("BTC");
    expect(oi.oiCoins).toBeCloseTo(perp.openInterestCoins(btcSpec, NOW), btcSpec.qtyDecimals - 1);
    const m = dydxMarginClass("BTC");
    expect(await c.marginTiers("BTC")).toEqual([{ venue: DYDX_SIM, base: "BTC", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 1 / m.imf, maintenanceMarginRate: m.mmf }]);

    const candles = await c.hourlyCandles("BTC", 3);
    expect(candles.map((k) => k.openTime)).toEqual([lastHour - 2 * HOUR, lastHour - HOUR, lastHour]);
    const hist3 = await c.openInterestHistory("BTC", 3);
    expect(hist3.map((p) => p.time)).toEqual([lastHour - 2 * HOUR, lastHour - HOUR, lastHour]);
    expect(hist3[2]!.oiCoins).toBeCloseTo(perp.openInterestCoins(btcSpec, lastHour), btcSpec.qtyDecimals - 1);
    await expect(c.funding("NOPE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("answers with the indexer's errors", async () => {
    const get = async (path: string) => {
      const r = await fetch(`${restUrl}${path}`);
      return { status: r.status, body: (await r.json()) as unknown };
    };
    expect(await get("/historicalFunding/NOPE-USD")).toEqual({ status: 404, body: { errors: [{ msg: "NOPE-USD not found in markets of type PERPETUAL" }] } });
    expect(await get("/trades/perpetualMarket/NOPE-USD")).toMatchObject({
      status: 400,
      body: { errors: [{ msg: "ticker must be a valid ticker (BTC-USD, etc)", path: "ticker", location: "params" }] },
    });
    expect((await get("/candles/perpetualMarkets/BTC-USD")).status).toBe(400);
    expect((await get("/sparklines?timePeriod=ONE_WEEK")).status).toBe(400);
    expect((await get("/perpetualMarkets?ticker=BTC-USD&market=BTC-USD")).status).toBe(400);
    expect((await get("/trades/perpetualMarket/BTC-USD?limit=1001")).status).toBe(400);
    expect(await get("/height")).toEqual({ status: 200, body: { height: String(dydxHeight(clock.now())), time: new Date(Math.floor(clock.now() / 1000) * 1000).toISOString() } });
  });
});

describe("dydx backfill against the simulated indexer", () => {
  it("pages the tape back by block height: every trade and liquidation fill of the interval, once", async () => {
    clock.set(NOW);
    const client = new DydxPerpClient(restUrl, { timeoutMs: 5_000, retries: 0 });
    const bf = new DydxTradeBackfill({ instruments: client, baseUrl: restUrl, retries: 0 });
    const from = NOW - 90 * 60_000;
    const [res, liq] = await Promise.all([bf.fetchTrades("BTC", from, NOW), bf.fetchLiquidations(from, NOW)]);
    const inst = { base: "BTC", venueSymbol: "BTC-USD", multiplier: 1, contractSize: 1 };
    const expected = parseDydxTrades({ trades: dydxEventsOf(tape, btcSpec, from, NOW).map((e) => e.row) }, inst);
    expect(res.complete).toBe(true);
    expect(res.trades).toEqual(expected.trades);
    expect(res.trades.length).toBeGreaterThan(1000);
    expect(liq.complete).toBe(true);
    expect(liq.liquidations).toEqual(expected.liquidations);
  });
});

describe("dydx feed against the simulated websocket", () => {
  it("receives the tape's trades (and its rare liquidation fills) block by block", async () => {
    clock.set(NOW);
    const client = new DydxPerpClient(restUrl, { timeoutMs: 5_000, retries: 0 });
    const feed = new DydxFeed({ baseUrl: wsUrl, instruments: client, staleMs: 5_000 });
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    try {
      expect((await feed.subscribe(["BTC", "ETH"])).subscribed).toEqual(["BTC", "ETH"]);
      feed.start();
      await waitFor(() => feed.state().connected);
      // the subscribe answers (latest 100 rows of each market) arrive before the clock moves
      await waitFor(() => new Set(trades.map((t) => t.base)).size === 2);
      const snapshot = trades.length;
      for (let s = 0; s < 5; s++) {
        clock.advance(60_000);
        await new Promise((r) => setTimeout(r, 60));
      }
      const end = NOW + 5 * 60_000 + 1;
      const inst = (base: string) => ({ base, venueSymbol: `${base}-USD`, multiplier: 1, contractSize: 1 });
      const want = ["BTC", "ETH"].map((b) => parseDydxTrades({ trades: dydxEventsOf(tape, specOf(b), NOW + 1, end).map((e) => e.row) }, inst(b)));
      const wantTrades = want.flatMap((w) => w.trades);
      await waitFor(() => trades.length - snapshot >= wantTrades.length, 5_000);
      const live = trades.slice(snapshot);
      const byKey = (t: Trade) => `${t.base}|${t.id}`;
      expect(live.map(byKey).sort()).toEqual(wantTrades.map(byKey).sort());
      // dYdX's calibrated liquidations are rare (0.02 a minute over all markets): usually none here; the busy tape below
      expect(liqs.filter((l) => l.time > NOW)).toEqual(want.flatMap((w) => w.liquidations));
      expect(feed.state()).toMatchObject({ connected: true, reconnects: 0 });
    } finally {
      await feed.stop();
    }
  });

  it("refuses unknown markets and duplicates with the indexer's messages, sends a frame per block, ignores JSON pings", () => {
    clock.set(NOW);
    const sent: string[] = [];
    const io: ConnIO = { connId: "c1", sendData: (t) => sent.push(t), sendReply: (t) => sent.push(t), sendPong: (t) => sent.push(t), elapsed: () => 0, close: () => {} };
    const s = new DydxSession(io, { perp, tape, clock });
    const msg = (i: number) => JSON.parse(sent[i]!) as Record<string, unknown>;
    expect(msg(0)).toEqual({ type: "connected", connection_id: "c1", message_id: 0 });
    s.onMessage('{"type":"subscribe","channel":"v4_trades","id":"NOPE-USD"}');
    expect(msg(1)).toMatchObject({ type: "error", message: "Invalid subscription id for channel: (v4_trades-NOPE-USD)", message_id: 1 });
    s.onMessage('{"type":"subscribe","channel":"v4_block_height"}');
    expect(msg(2)).toMatchObject({ type: "subscribed", channel: "v4_block_height", contents: { height: String(dydxHeight(NOW)) } });
    s.onMessage('{"type":"ping"}');
    expect(sent).toHaveLength(3);
    clock.advance(2_000);
    s.tick(clock.now());
    expect(sent.slice(3).map((t) => (JSON.parse(t) as { contents: { blockHeight: string } }).contents.blockHeight)).toEqual([
      String(dydxHeight(NOW) + 1),
      String(dydxHeight(NOW) + 2),
    ]);
    s.onMessage("{oops");
    expect(JSON.parse(sent.at(-1)!)).toMatchObject({ type: "error", message: "Invalid message: could not parse" });
    s.onMessage(JSON.stringify({ type: "subscribe", channel: "v4_trades", id: "BTC-USD" }));
    expect(JSON.parse(sent.at(-1)!)).toMatchObject({ type: "subscribed", channel: "v4_trades", id: "BTC-USD" });
    s.onMessage(JSON.stringify({ type: "subscribe", channel: "v4_trades", id: "BTC-USD" }));
    expect(JSON.parse(sent.at(-1)!)).toMatchObject({ type: "error", message: "Invalid subscribe message: already subscribed (v4_trades-BTC-USD)" });
    s.onMessage(JSON.stringify({ type: "unsubscribe", channel: "v4_trades", id: "BTC-USD" }));
    expect(JSON.parse(sent.at(-1)!)).toMatchObject({ type: "unsubscribed", channel: "v4_trades", id: "BTC-USD" });
  });

  it("refuses a 33rd v4_trades market on one connection", () => {
    const clones = Array.from({ length: 40 }, (_, i): PerpInstrumentSpec => ({ ...btcSpec, symbol: `C${i}-USD` }));
    const many = new Proxy(perp, {
      get: (target, key, receiver) => (key === "instrument" ? (_v: string, sym: string) => clones.find((c) => c.symbol === sym) : (Reflect.get(target, key, receiver) as unknown)),
    });
    const sent: string[] = [];
    const io: ConnIO = { connId: "c2", sendData: (t) => sent.push(t), sendReply: (t) => sent.push(t), sendPong: (t) => sent.push(t), elapsed: () => 0, close: () => {} };
    const s = new DydxSession(io, { perp: many, tape, clock });
    for (const c of clones.slice(0, 33)) s.onMessage(JSON.stringify({ type: "subscribe", channel: "v4_trades", id: c.symbol }));
    const replies = sent.map((t) => JSON.parse(t) as { type: string; message?: string });
    expect(replies.filter((r) => r.type === "subscribed")).toHaveLength(32);
    expect(replies.at(-1)).toEqual(expect.objectContaining({ type: "error", message: "Per-connection subscription limit reached for v4_trades (limit=32)." }));
  });
});

/*
 * Liquidation fills on a busy tape: dYdX's own calibration liquidates too rarely to see in a test, so its router and
 * session run here over the model with Binance's BTC perp (a liquidation-heavy tape) listed as `BTC-USD`.
 */
describe("dydx liquidation fills on a busy tape", () => {
  let url = "";
  let close: () => Promise<void> = async () => {};
  let busy: PerpInstrumentSpec;
  let stand: PerpModel;

  beforeAll(async () => {
    busy = { ...perp.perpOf("binance", "BTC")!, symbol: "BTC-USD", venueBase: "BTC", quote: "USD", fundingIntervalHours: 1 };
    stand = new Proxy(perp, {
      get(target, key, receiver) {
        if (key === "instruments") return (v: string, now: number) => (v === DYDX_SIM ? [busy] : target.instruments(v as never, now));
        if (key === "instrument")
          return (v: string, sym: string, now: number) => (v === DYDX_SIM ? (sym === busy.symbol ? busy : undefined) : target.instrument(v as never, sym, now));
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const app = express();
    app.use("/dydx/v4", dydxRouterOver(stand, tape, clock));
    const http = app.listen(0, "127.0.0.1");
    await new Promise<void>((r) => http.once("listening", () => r()));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/dydx/v4`;
    close = async () => {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    };
  });
  afterAll(() => close());

  it("serves liquidations as LIQUIDATED rows of the liquidation order's side, which the backfill reads back", async () => {
    clock.set(NOW);
    const client = new DydxPerpClient(url, { timeoutMs: 5_000, retries: 0 });
    const bf = new DydxTradeBackfill({ instruments: client, baseUrl: url, retries: 0 });
    const from = NOW - 15 * 60_000;
    const [res, liq] = await Promise.all([bf.fetchTrades("BTC", from, NOW), bf.fetchLiquidations(from, NOW)]);
    const want = tape.liquidationsOf(busy, from, NOW);
    expect(want.length).toBeGreaterThan(10);
    expect(liq.complete).toBe(true);
    // a liquidated long is a LIQUIDATED SELL on the wire, and back
    expect(liq.liquidations.map((l) => [l.time, l.side, l.price, l.size])).toEqual(want.map((l) => [l.time, l.side, Number(l.px), Number(l.sz)]));
    // each fill is also a trade, at the liquidation order's side
    const ids = new Set(res.trades.map((t) => t.id));
    expect(want.every((l) => ids.has(dydxLiquidationId(l)))).toBe(true);
    expect(res.trades.find((t) => t.id === dydxLiquidationId(want[0]!))?.side).toBe(want[0]!.side === "long" ? "sell" : "buy");
  });

  it("pushes the block's liquidation fills on v4_trades with its trades", () => {
    clock.set(NOW);
    const sent: string[] = [];
    const io: ConnIO = { connId: "c3", sendData: (t) => sent.push(t), sendReply: (t) => sent.push(t), sendPong: (t) => sent.push(t), elapsed: () => 0, close: () => {} };
    const s = new DydxSession(io, { perp: stand, tape, clock });
    s.onMessage('{"type":"subscribe","channel":"v4_trades","id":"BTC-USD"}');
    clock.advance(5 * 60_000);
    s.tick(clock.now());
    const frames = sent.slice(2).map((t) => JSON.parse(t) as { type: string; id: string; contents: { trades: Array<{ type: string; createdAtHeight: string }> } });
    expect(frames.every((f) => f.type === "channel_data" && f.id === "BTC-USD")).toBe(true);
    // one frame per block
    for (const f of frames) expect(new Set(f.contents.trades.map((r) => r.createdAtHeight)).size).toBe(1);
    const rows = frames.flatMap((f) => f.contents.trades);
    expect(rows.filter((r) => r.type === "LIQUIDATED")).toHaveLength(tape.liquidationsOf(busy, NOW + 1, clock.now() + 1).length);
    expect(rows.filter((r) => r.type === "LIMIT")).toHaveLength(tape.tradesOf(busy, NOW + 1, clock.now() + 1).length);
  });
});
