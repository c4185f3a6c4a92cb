import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { manualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { BitgetTradeBackfill } from "../../src/venues/bitget/backfill.js";
import { BitgetPerpClient } from "../../src/venues/bitget/client.js";
import { BitgetFeed } from "../../src/venues/bitget/feed.js";
import type { Trade } from "../../src/ingestion/types.js";

/*
 * The real Bitget client, feed and backfill against the simulator: every client method answers in the venue's
 * units, unknown symbols map to NOT_FOUND, the feed receives the tape's trades over the v2 protocol (string ping,
 * snapshot then updates) and the backfill pages the same tape over REST.
 */

const NOW = Date.parse("2026-11-21T12:34:56.789Z");
let sim: RunningSimulator;
const clock = manualClock(NOW);

beforeAll(async () => {
  sim = await startSimulator({ seed: 42, clock, ws: { pushIntervalMs: 20 } });
});
afterAll(async () => {
  await sim.close();
});

const client = () => new BitgetPerpClient(sim.urls.bitget, { timeoutMs: 5000, retries: 0 });

describe("bitget client against the simulator", () => {
  it("answers every method with per-coin values and the venue's intervals", async () => {
    const c = client();
    const list = await c.instruments();
    expect(list.length).toBeGreaterThan(10);
    expect(list.every((i) => i.venue === "bitget" && i.contractSize === 1 && i.venueSymbol.endsWith("USDT"))).toBe(true);
    expect(list.find((i) => i.base === "BTC")).toMatchObject({ venueSymbol: "BTCUSDT", multiplier: 1, fundingIntervalHours: 8 });
    expect(list.find((i) => i.base === "SEI")?.fundingIntervalHours).toBe(1);

    const all = await c.fundingAll();
    expect(all.length).toBe(list.length);
    const btc = await c.funding("BTC");
    expect(btc).toMatchObject({ venue: "bitget", base: "BTC", fundingIntervalHours: 8, nextFundingTime: null });
    expect(Math.abs(btc.fundingRate)).toBeLessThan(0.01);
    expect(btc.markPrice! / btc.indexPrice!).toBeGreaterThan(0.98);
    expect(btc.markPrice! / btc.indexPrice!).toBeLessThan(1.02);

    const oi = await c.openInterest("BTC");
    expect(oi.oiCoins).toBeGreaterThan(0);
    expect(oi.oiUsd / oi.oiCoins).toBeCloseTo(btc.markPrice!, -2);

    const hist = await c.fundingHistory("BTC", 150);
    expect(hist).toHaveLength(150);
    expect(hist[0]!.time - hist[1]!.time).toBe(8 * 3_600_000);
    expect(hist.every((p, i) => i === 0 || p.time < hist[i - 1]!.time)).toBe(true);
    expect(hist[0]!.time).toBeLessThanOrEqual(NOW);

    const ls = await c.longShort("BTC");
    expect(ls).not.toBeNull();
    expect(ls!.longRatio + ls!.shortRatio).toBeCloseTo(1, 6);
    expect(ls!.source).toBe("top_traders_accounts");

    const tiers = await c.marginTiers("BTC");
    expect(tiers.length).toBeGreaterThan(1);
    expect(tiers[0]!.minNotionalUsd).toBe(0);
    expect(tiers.every((t, i) => i === 0 || t.minNotionalUsd === tiers[i - 1]!.maxNotionalUsd)).toBe(true);
    expect(tiers.every((t) => t.maintenanceMarginRate > 0 && t.maintenanceMarginRate < 1)).toBe(true);

    const candles = await c.hourlyCandles("BTC", 24);
    expect(candles).toHaveLength(24);
    expect(candles[1]!.openTime - candles[0]!.openTime).toBe(3_600_000);
    expect(candles.at(-1)!.openTime).toBe(Math.floor(NOW / 3_600_000) * 3_600_000);
    expect(candles.every((k) => k.low <= k.open && k.open <= k.high && k.volumeUsd >= 0)).toBe(true);
  });

  it("maps an unknown symbol to NOT_FOUND, through the venue's 40034 body too", async () => {
    const c = client();
    await expect(c.funding("NOPECOIN")).rejects.toMatchObject({ code: "NOT_FOUND" });
    const res = await fetch(`${sim.urls.bitget}/api/v2/mix/market/ticker?symbol=NOPEUSDT&productType=USDT-FUTURES`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "40034", data: null });
  });

  it("backfills the tape from fills-history by idLessThan pages", async () => {
    const bf = new BitgetTradeBackfill({ baseUrl: sim.urls.bitget, instruments: client(), timeoutMs: 5000, retries: 0 });
    const r = await bf.fetchTrades("BTC", NOW - 120_000, NOW);
    expect(r.complete).toBe(true);
    expect(r.trades.length).toBeGreaterThan(0);
    expect(r.trades.every((t, i) => t.venue === "bitget" && t.time >= NOW - 120_000 && t.time < NOW && (i === 0 || t.time >= r.trades[i - 1]!.time))).toBe(true);
    expect(new Set(r.trades.map((t) => t.id)).size).toBe(r.trades.length);
  });
});

describe("bitget websocket against the simulator", () => {
  it("answers the string ping, acks subscribes, refuses a liquidation channel", async () => {
    const ws = new WebSocket(`${sim.wsUrls.bitget}/v2/ws/public`);
    const got: string[] = [];
    ws.on("message", (d: WebSocket.RawData) => got.push(d.toString()));
    await new Promise((r) => ws.once("open", r));
    ws.send("ping");
    ws.send(JSON.stringify({ op: "subscribe", args: [{ instType: "USDT-FUTURES", channel: "liquidation", instId: "BTCUSDT" }] }));
    const end = Date.now() + 3000;
    while (got.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    ws.close();
    expect(got).toContain("pong");
    expect(JSON.parse(got.find((g) => g.startsWith("{"))!)).toMatchObject({ event: "error", code: 30001 });
  });

  it("the feed receives the tape's trades (per coin, taker side, each trade once)", async () => {
    const feed = new BitgetFeed({ baseUrl: sim.wsUrls.bitget, instruments: client(), heartbeatMs: 200 });
    const trades: Trade[] = [];
    feed.on("trades", (t) => trades.push(...t));
    try {
      expect((await feed.subscribe(["BTC", "ETH"])).subscribed).toEqual(["BTC", "ETH"]);
      feed.start();
      const end = Date.now() + 5000;
      while (Date.now() < end && new Set(trades.map((t) => t.base)).size < 2) {
        clock.advance(1000);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(new Set(trades.map((t) => t.base))).toEqual(new Set(["BTC", "ETH"]));
      expect(trades.every((t) => t.venue === "bitget" && t.size > 0 && t.price > 0 && (t.side === "buy" || t.side === "sell"))).toBe(true);
      const keys = trades.map((t) => `${t.base}:${t.id}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(feed.state()).toMatchObject({ venue: "bitget", connected: true });
    } finally {
      await feed.stop();
    }
  });
});
