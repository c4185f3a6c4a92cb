import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { DydxTradeBackfill, DYDX_TRADES_PAGE } from "../../src/venues/dydx/backfill.js";
import { DydxPerpClient, dydxLimitPause } from "../../src/venues/dydx/client.js";
import { DydxFeed } from "../../src/venues/dydx/feed.js";
import { parseDydxMessage, parseDydxTrades } from "../../src/venues/dydx/feed-parse.js";
import {
  baseOfTicker,
  effectiveImf,
  indexerErrorMessage,
  nextHour,
  parseCandles,
  parseFunding,
  parseFundingHistory,
  parseInstruments,
  parseMarginTiers,
  parseOpenInterest,
  parseOpenInterestHistory,
  parseSparklineLast,
  predictedOf,
  tickerOf,
} from "../../src/venues/dydx/parse.js";
import type { PerpInstrument, PerpVenue } from "../../src/venues/perp/types.js";
import { expectAppError } from "../helpers/errors.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { waitFor, wsTestKit } from "../helpers/ws-server.js";
import { startStub, type RunningStub } from "./perp-server.js";

const DYDX = "dydx" as PerpVenue;
const HOUR = 3_600_000;
/** A fixed "now" that is on no hour boundary. */
const NOW = Date.parse("2026-05-30T10:30:00.000Z");
const MARKETS = "dydx/perpetualMarkets_5markets_nautilus_LIVE-trimmed.json";
const btc: PerpInstrument = { venue: DYDX, base: "BTC", venueSymbol: "BTC-USD", multiplier: 1, contractSize: 1, fundingIntervalHours: 1 };
const lines = (path: string): unknown[] =>
  fixtureText(path)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown);
const lookupOf = (...tickers: string[]) => new Map(tickers.map((t): [string, FeedInstrument] => [t, { base: baseOfTicker(t)!, venueSymbol: t, multiplier: 1, contractSize: 1 }]));

describe("dydx tickers", () => {
  it("maps tickers and bases both ways, refusing other shapes", () => {
    expect(baseOfTicker("BTC-USD")).toBe("BTC");
    expect(baseOfTicker("1INCH-USD")).toBe("1INCH");
    expect(baseOfTicker("BTC-USDC")).toBeUndefined();
    expect(tickerOf(" eth ")).toBe("ETH-USD");
    expect(nextHour(NOW)).toBe(NOW + HOUR / 2);
  });
});

describe("dydx parsers on recorded payloads", () => {
  it("lists the recorded markets but the one in final settlement, in coins with hourly funding", () => {
    const list = parseInstruments(fixture(MARKETS));
    expect(list.map((i) => i.venueSymbol)).toEqual(["AKT-USD", "BONK-USD", "BTC-USD", "ETH-USD"]);
    expect(list[2]).toEqual(btc);
    expect(parseInstruments(fixture("dydx/perpetualMarkets_BTC-USD_v8_nautilus.json"))).toEqual([btc]);
  });

  it("reads funding: the accruing hourly rate, the oracle as index, the last trade as mark, the default rate as interest", () => {
    const last = parseSparklineLast(fixture("dydx/sparklines_ONE_DAY_DERIVED.json"));
    expect([...last]).toEqual([
      ["BTC-USD", 68530],
      ["ETH-USD", 3265.1],
      ["BONK-USD", 0.00002822],
    ]);
    const snaps = parseFunding(fixture(MARKETS), last, NOW);
    expect(snaps.find((s) => s.base === "BTC")).toEqual({
      venue: DYDX,
      base: "BTC",
      venueSymbol: "BTC-USD",
      fundingRate: 0.00003494207317073171,
      fundingIntervalHours: 1,
      nextFundingTime: NOW + HOUR / 2,
      markPrice: 68530,
      indexPrice: 68526.44763,
      premium: null,
      interestRate: null,
      time: NOW,
    });
    // AKT has no candles in the sparklines: no mark price, still a funding rate
    expect(snaps.find((s) => s.base === "AKT")).toMatchObject({ fundingRate: 0, markPrice: null, indexPrice: 3.24 });
    expect(snaps.map((s) => s.base)).not.toContain("AGIX");
    const v8 = parseFunding(fixture("dydx/perpetualMarkets_BTC-USD_v8_nautilus.json"), new Map(), NOW)[0]!;
    expect(v8).toMatchObject({ fundingRate: 0, interestRate: 0, indexPrice: 104952.44975, markPrice: null });
    const ccxt = parseFunding(fixture("dydx/perpetualMarkets_BTC-USD_2025-07-29_ccxt.json"), new Map(), NOW)[0]!;
    expect(ccxt.fundingRate).toBe(0.00016451111111111111);
    expect(predictedOf(ccxt)).toEqual({ venue: DYDX, base: "BTC", rate: 0.00016451111111111111, nextFundingTime: NOW + HOUR / 2, fundingIntervalHours: 1 });
  });

  it("reads open interest in coins, valued at the oracle price", () => {
    expect(parseOpenInterest(fixture(MARKETS), NOW)).toEqual([
      { venue: DYDX, base: "AKT", oiCoins: 4543, oiUsd: 14719.32, time: NOW },
      { venue: DYDX, base: "BONK", oiCoins: 5724800000, oiUsd: 161508.872926016, time: NOW },
      { venue: DYDX, base: "BTC", oiCoins: 717.0347, oiUsd: 49135840.8184428, time: NOW },
      { venue: DYDX, base: "ETH", oiCoins: 17208.407, oiUsd: 56173567.6889718, time: NOW },
    ]);
  });

  it("derives one margin tier per market from the margin fractions, the IMF raised by the open-interest caps", () => {
    const raw = fixture(MARKETS);
    expect(parseMarginTiers(raw, btc)).toEqual([{ venue: DYDX, base: "BTC", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 20, maintenanceMarginRate: 0.03 }]);
    // AKT: 4543 × 3.24 = $14.7k of open notional, under its $5M lower cap → the base 20 %
    const akt = { ...btc, base: "AKT", venueSymbol: "AKT-USD" };
    expect(parseMarginTiers(raw, akt)).toEqual([{ venue: DYDX, base: "AKT", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 5, maintenanceMarginRate: 0.1 }]);
    expect(parseMarginTiers(fixture("dydx/perpetualMarkets_BTC-USD_v8_nautilus.json"), btc)[0]).toMatchObject({ maxLeverage: 50, maintenanceMarginRate: 0.012 });
    // halfway between the caps: 20 % + 0.5 × 80 % = 60 % → 1.67x; beyond the upper cap 100 % → 1x
    const row = { initialMarginFraction: 0.2, openInterest: 2_500_000, oraclePrice: 3, openInterestLowerCap: 5_000_000, openInterestUpperCap: 10_000_000 };
    expect(effectiveImf(row)).toBeCloseTo(0.6, 12);
    expect(effectiveImf({ ...row, openInterest: 4_000_000 })).toBe(1);
    expect(effectiveImf({ ...row, openInterestLowerCap: null })).toBe(0.2);
    const scaled = {
      markets: {
        "AKT-USD": {
          ticker: "AKT-USD",
          status: "ACTIVE",
          oraclePrice: "3",
          openInterest: "2500000",
          initialMarginFraction: "0.2",
          maintenanceMarginFraction: "0.1",
          openInterestLowerCap: "5000000",
          openInterestUpperCap: "10000000",
        },
      },
    };
    expect(parseMarginTiers(scaled, akt)[0]).toMatchObject({ maxLeverage: 1.66666666666667, maintenanceMarginRate: 0.1 });
    expectAppError(() => parseMarginTiers(raw, { ...btc, base: "DOGE", venueSymbol: "DOGE-USD" }), "NOT_FOUND");
    expectAppError(() => parseMarginTiers({ markets: { "BTC-USD": { ticker: "BTC-USD", status: "ACTIVE", initialMarginFraction: "0" } } }, btc), "UPSTREAM_ERROR");
  });

  it("reads settled hourly funding with the oracle price at settlement", () => {
    expect(parseFundingHistory(fixture("dydx/historicalFunding_BTC-USD_2025-07-29_ccxt.json"), btc)).toEqual([
      { venue: DYDX, base: "BTC", time: 1753765201053, rate: 0.000176, markPrice: 118536.67532 },
    ]);
  });

  it("reads candles and the open interest at each candle's start", () => {
    const raw = fixture("dydx/candles_BTC-USD_1MIN_2025-07-29_ccxt.json");
    expect(parseCandles(raw, btc)).toEqual([
      { venue: DYDX, base: "BTC", openTime: 1753767960000, open: 118810, high: 118810, low: 118810, close: 118810, volumeCoins: 0, volumeUsd: 0 },
    ]);
    expect(parseOpenInterestHistory(raw, btc)).toEqual([{ venue: DYDX, base: "BTC", time: 1753767960000, oiCoins: 59.0763, oiUsd: 7018855.203 }]);
  });

  it("reads the indexer's error bodies and refuses unexpected shapes", () => {
    expect(indexerErrorMessage(JSON.stringify(fixture("dydx/error_404_not_found_DERIVED.json")))).toBe("DOGE-USD not found in markets of type PERPETUAL");
    expect(indexerErrorMessage(JSON.stringify(fixture("dydx/error_400_invalid_ticker_DERIVED.json")))).toBe("ticker must be a valid ticker (BTC-USD, etc)");
    expect(indexerErrorMessage("<html>")).toBeUndefined();
    expectAppError(() => parseInstruments({ markets: [] }));
    expectAppError(() => parseFunding({ markets: { "BTC-USD": { ticker: "BTC-USD", status: "ACTIVE", nextFundingRate: "x" } } }));
    expectAppError(() => parseFundingHistory({ historicalFunding: [{ ticker: "BTC-USD", rate: "0.1", effectiveAt: "yesterday" }] }, btc));
    expectAppError(() => parseSparklineLast({ "BTC-USD": "68530" }));
    // an empty oracle price is no price, not a shape error
    expect(parseOpenInterest({ markets: { "NEW-USD": { ticker: "NEW-USD", status: "ACTIVE", oraclePrice: "", openInterest: "0" } } })).toEqual([]);
  });

  it("reads the indexer's rate-limit headers", () => {
    const h = (remaining: string, reset: string) => new Headers({ "RateLimit-Remaining": remaining, "RateLimit-Reset": reset });
    expect(dydxLimitPause(h("0", String(NOW + 4_000)), NOW)).toBe(4_000);
    expect(dydxLimitPause(h("0", String(NOW + 60_000)), NOW)).toBe(10_000);
    expect(dydxLimitPause(h("37", String(NOW + 4_000)), NOW)).toBe(0);
    expect(dydxLimitPause(new Headers(), NOW)).toBe(0);
  });
});

describe("dydx websocket frames", () => {
  it("reads recorded v4_trades frames: taker side, coins, event-hex ids, oldest first", () => {
    const [connected, data, unsubscribed] = lines("dydx/ws_v4_trades_ETH-USD_2024-07-24_nautilus.ndjson");
    const map = lookupOf("ETH-USD");
    expect(parseDydxMessage(connected, map)).toEqual({ trades: [], liquidations: [], skipped: 0 });
    expect(parseDydxMessage(JSON.stringify(data), map)).toEqual({
      trades: [
        { venue: DYDX, base: "ETH", time: 1721848355705, price: 3392.9, size: 0.01, side: "buy", id: "014206cf0000000200000002" },
        { venue: DYDX, base: "ETH", time: 1721848355705, price: 3392.9, size: 1.738, side: "buy", id: "014206cf000000020000000e" },
      ],
      liquidations: [],
      skipped: 0,
    });
    expect(parseDydxMessage(unsubscribed, map).control).toEqual({ type: "ack" });
    // a market the feed does not stream
    expect(parseDydxMessage(data, lookupOf("BTC-USD"))).toMatchObject({ trades: [], skipped: 2 });
  });

  it("turns LIQUIDATED rows into trades and liquidations of the other side (docs example)", () => {
    const out = parseDydxMessage(fixture("dydx/ws_v4_trades_channel_data_LIQUIDATED_docs_example.json"), lookupOf("BTC-USD"));
    expect(out.trades.map((t) => [t.side, t.size])).toEqual([
      ["buy", 0.000000004],
      ["buy", 0.000100431],
      ["sell", 0.000000005],
      ["sell", 0.000118502],
    ]);
    expect(out.liquidations).toEqual([
      { venue: DYDX, base: "BTC", venueSymbol: "BTC-USD", time: 1680568159353, side: "short", price: 27839, size: 0.000000004, valueUsd: 0.000111356 },
      { venue: DYDX, base: "BTC", venueSymbol: "BTC-USD", time: 1680568159353, side: "short", price: 27839, size: 0.000100431, valueUsd: 2.795898609 },
    ]);
    // a liquidated long: the liquidation order sells
    const sell = {
      type: "channel_data",
      channel: "v4_trades",
      id: "BTC-USD",
      contents: { trades: [{ id: "0000000a0000000200000001", side: "SELL", size: "0.5", price: "60000", createdAt: "2026-05-30T10:00:00.000Z", type: "LIQUIDATED" }] },
    };
    expect(parseDydxMessage(sell, lookupOf("BTC-USD")).liquidations[0]).toMatchObject({ side: "long", size: 0.5, valueUsd: 30000 });
  });

  it("drops DELEVERAGED rows, ignores other channels, reads errors, pongs, subscribe answers and batches", () => {
    const [delev, error, markets] = lines("dydx/ws_frames_2024-08-05_nautilus.ndjson");
    const map = lookupOf("ETH-USD");
    const d = parseDydxMessage(delev, map);
    expect(d.trades.map((t) => t.id)).toEqual(["015034b9000000020000000e", "015034b90000000200000011"]);
    expect(d).toMatchObject({ liquidations: [], skipped: 0 });
    expect(d.error).toBeUndefined();
    expect(parseDydxMessage(error, map).control).toEqual({ type: "venue_error", message: "Internal error, could not fetch data for subscription: v4_orderbook." });
    expect(parseDydxMessage(markets, map)).toEqual({ trades: [], liquidations: [], skipped: 0 });
    const [blockSub, block] = lines("dydx/ws_v4_block_height_2024-12-02_nautilus.ndjson");
    expect(parseDydxMessage(blockSub, map)).toEqual({ trades: [], liquidations: [], skipped: 0, control: { type: "ack" } });
    expect(parseDydxMessage(block, map)).toEqual({ trades: [], liquidations: [], skipped: 0 });
    expect(parseDydxMessage('{"type":"pong","connection_id":"c","message_id":3}', map).control).toEqual({ type: "pong" });
    // the subscribe answer carries the REST rows of the latest trades (newest first)
    const rest = (fixture("dydx/trades_BTC-USD_2025-07-29_ccxt.json") as { trades: unknown[] }).trades;
    const sub = parseDydxMessage({ type: "subscribed", connection_id: "c", message_id: 1, channel: "v4_trades", id: "BTC-USD", contents: { trades: rest } }, lookupOf("BTC-USD"));
    expect(sub).toMatchObject({ control: { type: "ack" }, trades: [{ id: "02b03aba000000020000000e", time: 1753766209920, price: 118810, size: 0.0001, side: "buy" }] });
    // a liquidation fill in the subscribe answer is history: a trade, not a liquidation
    const liqRow = { ...(rest[0] as object), id: "02b03aba000000020000000f", type: "LIQUIDATED", side: "SELL" };
    const subLiq = parseDydxMessage({ type: "subscribed", channel: "v4_trades", id: "BTC-USD", contents: { trades: [liqRow] } }, lookupOf("BTC-USD"));
    expect(subLiq).toMatchObject({ trades: [{ side: "sell" }], liquidations: [] });
    const batch = parseDydxMessage({ type: "channel_batch_data", channel: "v4_trades", id: "ETH-USD", contents: [(delev as { contents: unknown }).contents, { trades: [] }] }, map);
    expect(batch.trades).toHaveLength(2);
    expect(parseDydxMessage("{not json", map).error).toMatch(/not JSON/);
    expect(parseDydxMessage({ channel: "v4_trades" }, map).error).toMatch(/type/);
    expect(parseDydxMessage({ type: "channel_data", channel: "v4_trades", id: "ETH-USD", contents: {} }, map).error).toMatch(/trades/);
    expect(
      parseDydxMessage(
        {
          type: "channel_data",
          channel: "v4_trades",
          id: "ETH-USD",
          contents: { trades: [{ id: "x", side: "UP", size: "1", price: "1", createdAt: new Date(1753766209920).toISOString() }] },
        },
        map,
      ).error,
    ).toMatch(/side/);
  });

  it("reads a REST trades page like the websocket rows", () => {
    const page = parseDydxTrades(fixture("dydx/trades_BTC-USD_2025-07-29_ccxt.json"), { base: "BTC", venueSymbol: "BTC-USD", multiplier: 1, contractSize: 1 });
    expect(page.trades).toEqual([{ venue: DYDX, base: "BTC", time: 1753766209920, price: 118810, size: 0.0001, side: "buy", id: "02b03aba000000020000000e" }]);
    expect(parseDydxTrades({ data: [] }, { base: "BTC", venueSymbol: "BTC-USD", multiplier: 1, contractSize: 1 }).error).toMatch(/trades/);
  });
});

/** Hourly funding rows for the stub, newest first, ending at the last full hour. */
function fundingRows(limit: number): unknown[] {
  const last = Math.floor(Date.now() / HOUR) * HOUR;
  return Array.from({ length: limit }, (_, i) => ({
    ticker: "BTC-USD",
    rate: `0.0000${i + 1}`,
    price: "68000",
    effectiveAtHeight: String(9_000_000 - i * 3600),
    effectiveAt: new Date(last - i * HOUR + 53).toISOString(),
  }));
}

/** Hourly candles for the stub, newest first, the current hour included. */
function candleRows(limit: number): unknown[] {
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  return Array.from({ length: limit }, (_, i) => ({
    startedAt: new Date(hour - i * HOUR).toISOString(),
    ticker: "BTC-USD",
    resolution: "1HOUR",
    low: "67900",
    high: "68100",
    open: "68000",
    close: "68050",
    baseTokenVolume: "12.5",
    usdVolume: "850000",
    trades: 400,
    startingOpenInterest: String(700 + i),
  }));
}

describe("dydx client against a local stub", () => {
  let stub: RunningStub;

  beforeAll(async () => {
    stub = await startStub({
      "GET /perpetualMarkets": () => ({ body: fixture(MARKETS), headers: { "RateLimit-Remaining": "99", "RateLimit-Reset": String(Date.now() + 10_000) } }),
      "GET /sparklines": (req) => (req.query.timePeriod === "ONE_DAY" ? { body: fixture("dydx/sparklines_ONE_DAY_DERIVED.json") } : { status: 400, body: {} }),
      "GET /historicalFunding/BTC-USD": (req) => ({ body: { historicalFunding: fundingRows(Number(req.query.limit)) } }),
      "GET /historicalFunding/ETH-USD": () => ({ status: 404, body: fixture("dydx/error_404_not_found_DERIVED.json") }),
      "GET /historicalFunding/BONK-USD": () => ({ status: 403, text: "Forbidden" }),
      "GET /candles/perpetualMarkets/BTC-USD": (req) => (req.query.resolution === "1HOUR" ? { body: { candles: candleRows(Number(req.query.limit)) } } : { status: 400, body: {} }),
    });
  });
  afterAll(() => stub.close());

  const client = () => new DydxPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });

  it("serves instruments, funding with a mark price, predicted funding, open interest, one tier and no long/short ratio", async () => {
    const c = client();
    expect((await c.instruments()).map((i) => i.base)).toEqual(["AKT", "BONK", "BTC", "ETH"]);
    expect(await c.funding("btc")).toMatchObject({ base: "BTC", fundingRate: 0.00003494207317073171, fundingIntervalHours: 1, markPrice: 68530, indexPrice: 68526.44763 });
    expect((await c.fundingAll()).map((s) => s.base)).toEqual(["AKT", "BONK", "BTC", "ETH"]);
    expect(await c.predictedFunding("ETH")).toMatchObject({ venue: DYDX, base: "ETH", rate: 0.00001147560975609756, fundingIntervalHours: 1 });
    expect(await c.openInterest("ETH")).toMatchObject({ oiCoins: 17208.407, oiUsd: 56173567.6889718 });
    expect(await c.marginTiers("BTC")).toEqual([{ venue: DYDX, base: "BTC", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 20, maintenanceMarginRate: 0.03 }]);
    expect(await c.longShort("BTC")).toBeNull();
    // one snapshot of every market serves them all
    expect(stub.calls.filter((u) => u.startsWith("GET /perpetualMarkets"))).toHaveLength(1);
    expect(stub.calls).toContain("GET /sparklines?timePeriod=ONE_DAY");
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.funding("AGIX")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("reads funding history newest first in one call, capped at 1000, and maps indexer refusals", async () => {
    const c = client();
    const hist = await c.fundingHistory("BTC", 5);
    expect(stub.calls).toContain("GET /historicalFunding/BTC-USD?limit=5");
    expect(hist.map((p) => p.rate)).toEqual([0.00001, 0.00002, 0.00003, 0.00004, 0.00005]);
    expect(hist[0]!.time - hist[4]!.time).toBe(4 * HOUR);
    expect(hist[0]).toMatchObject({ markPrice: 68000 });
    expect(await c.fundingHistory("BTC", 5000)).toHaveLength(1000);
    expect(stub.calls).toContain("GET /historicalFunding/BTC-USD?limit=1000");
    expect(await c.fundingHistory("BTC", 0)).toEqual([]);
    await expect(c.fundingHistory("ETH", 3)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.fundingHistory("BONK", 3)).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  });

  it("reads hourly candles and the open-interest history from the 1HOUR candles, oldest first", async () => {
    const c = client();
    const candles = await c.hourlyCandles("BTC", 3);
    expect(stub.calls).toContain("GET /candles/perpetualMarkets/BTC-USD?resolution=1HOUR&limit=3");
    expect(candles.map((k) => k.openTime)).toEqual([...candles.map((k) => k.openTime)].sort((a, b) => a - b));
    expect(candles[2]).toMatchObject({ openTime: Math.floor(Date.now() / HOUR) * HOUR, close: 68050, volumeCoins: 12.5, volumeUsd: 850000 });
    const oi = await c.openInterestHistory("BTC", 4);
    expect(oi.map((p) => p.oiCoins)).toEqual([703, 702, 701, 700]);
    expect(oi[3]).toMatchObject({ oiUsd: 700 * 68000 });
  });

  it("answers funding without a mark price when /sparklines fails", async () => {
    const broken = await startStub({ "GET /perpetualMarkets": () => ({ body: fixture(MARKETS) }), "GET /sparklines": () => ({ status: 500, body: {} }) });
    try {
      const c = new DydxPerpClient(broken.url, { timeoutMs: 2000, retries: 0 });
      expect(await c.funding("BTC")).toMatchObject({ fundingRate: 0.00003494207317073171, markPrice: null, indexPrice: 68526.44763 });
    } finally {
      await broken.close();
    }
  });
});

/**
 * A chain for the trades stub: block `h` at `T0 + (h − H0) s` holds `perBlock(h)` taker fills of BTC-USD (every 7th a
 * LIQUIDATED sell), served newest first like the indexer (by height; `createdBeforeOrAt` and `createdBeforeOrAtHeight`
 * inclusive; `limit` rows).
 */
function chain(perBlock: (h: number) => number, H0: number, T0: number, blocks: number) {
  const hex = (n: number) => n.toString(16).padStart(8, "0");
  const rows: Array<{ id: string; side: string; size: string; price: string; type: string; createdAt: string; createdAtHeight: string; t: number; h: number }> = [];
  for (let h = H0 + blocks - 1; h >= H0; h--) {
    const t = T0 + (h - H0) * 1000;
    for (let i = perBlock(h) - 1; i >= 0; i--) {
      const liq = (h + i) % 7 === 0;
      rows.push({
        id: `${hex(h)}${hex(2)}${hex(i * 3 + 2)}`,
        side: liq || i % 2 ? "SELL" : "BUY",
        size: "0.01",
        price: String(60000 + i),
        type: liq ? "LIQUIDATED" : "LIMIT",
        createdAt: new Date(t + i).toISOString(),
        createdAtHeight: String(h),
        t: t + i,
        h,
      });
    }
  }
  return {
    rows,
    route: (q: Record<string, unknown>) => {
      const limit = Number(q.limit ?? 1000);
      const beforeT = typeof q.createdBeforeOrAt === "string" ? Date.parse(q.createdBeforeOrAt) : Infinity;
      const beforeH = q.createdBeforeOrAtHeight !== undefined ? Number(q.createdBeforeOrAtHeight) : Infinity;
      const page = rows.filter((r) => r.t <= beforeT && r.h <= beforeH).slice(0, limit);
      return { body: { trades: page.map(({ t: _t, h: _h, ...r }) => r) } };
    },
  };
}

describe("dydx trade and liquidation backfill", () => {
  const H0 = 40_000_000;
  const T0 = Date.parse("2026-05-30T08:00:00.000Z");
  const source = { instrument: async (b: string) => (b === "BTC" ? btc : undefined), instruments: async () => [btc] };

  it("pages back by block height to the start of the gap, sharing the pages with the liquidation backfill", async () => {
    const c = chain((h) => 3 + (h % 5), H0, T0, 1200);
    const stub = await startStub({ "GET /trades/perpetualMarket/BTC-USD": (req) => c.route(req.query) });
    try {
      const bf = new DydxTradeBackfill({ instruments: source, baseUrl: stub.url, retries: 0 });
      const from = T0 + 100_000;
      const to = T0 + 1_000_000;
      const [res, liq] = await Promise.all([bf.fetchTrades("btc", from, to), bf.fetchLiquidations(from, to)]);
      const expected = c.rows.filter((r) => r.t >= from && r.t < to);
      expect(res.complete).toBe(true);
      expect(res.trades).toHaveLength(expected.length);
      expect(new Set(res.trades.map((t) => t.id)).size).toBe(expected.length);
      expect(res.trades.map((t) => t.time)).toEqual([...expected.map((r) => r.t)].sort((a, b) => a - b));
      // first page by time, then by the oldest height of each page (read again, duplicates dropped)
      expect(stub.calls[0]).toBe(`GET /trades/perpetualMarket/BTC-USD?limit=${DYDX_TRADES_PAGE}&createdBeforeOrAt=${encodeURIComponent(new Date(to).toISOString())}`);
      expect(stub.calls.length).toBeGreaterThan(3);
      for (const u of stub.calls.slice(1)) expect(u).toMatch(/createdBeforeOrAtHeight=\d+$/);
      const liqRows = expected.filter((r) => r.type === "LIQUIDATED");
      expect(liq.complete).toBe(true);
      expect(liq.liquidations).toHaveLength(liqRows.length);
      expect(liq.liquidations.every((l: Liquidation) => l.side === "long" && l.venueSymbol === "BTC-USD" && l.time >= from && l.time < to)).toBe(true);
      // the liquidation backfill read the trade backfill's pages: no request of its own
      const calls = stub.calls.length;
      expect((await bf.fetchLiquidations(from, to)).liquidations).toHaveLength(liqRows.length);
      expect(stub.calls.length).toBe(calls);
    } finally {
      await stub.close();
    }
  });

  it("is incomplete past maxPages, when a full page lies inside one block, and without a known market", async () => {
    const c = chain(() => 4, H0, T0, 2000);
    const stub = await startStub({ "GET /trades/perpetualMarket/BTC-USD": (req) => c.route(req.query) });
    try {
      const bf = new DydxTradeBackfill({ instruments: source, baseUrl: stub.url, retries: 0, maxPages: 2 });
      expect((await bf.fetchLiquidations(T0, T0 + 1000)).complete).toBe(false);
      const res = await bf.fetchTrades("BTC", T0, T0 + 2_000_000);
      expect(res.complete).toBe(false);
      expect(stub.calls).toHaveLength(2);
      await expect(bf.fetchTrades("DOGE", T0, T0 + 1000)).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await stub.close();
    }
    const crowded = chain(() => 1500, H0, T0, 3);
    const stub2 = await startStub({ "GET /trades/perpetualMarket/BTC-USD": (req) => crowded.route(req.query) });
    try {
      const bf = new DydxTradeBackfill({ instruments: source, baseUrl: stub2.url, retries: 0 });
      const res = await bf.fetchTrades("BTC", T0, T0 + 3_000);
      expect(res.complete).toBe(false);
      // the full page of block H0+2 steps below it
      expect(stub2.calls[1]).toMatch(new RegExp(`createdBeforeOrAtHeight=${H0 + 1}$`));
    } finally {
      await stub2.close();
    }
  });

  it("drops a market the venue does not list from the liquidation backfill without calling it incomplete", async () => {
    const c = chain(() => 2, H0, T0, 100);
    const stub = await startStub({ "GET /trades/perpetualMarket/BTC-USD": (req) => c.route(req.query) });
    try {
      const bf = new DydxTradeBackfill({ instruments: source, baseUrl: stub.url, retries: 0 });
      await expect(bf.fetchTrades("DOGE", T0, T0 + 50_000)).rejects.toMatchObject({ code: "NOT_FOUND" });
      await bf.fetchTrades("BTC", T0, T0 + 50_000);
      const liq = await bf.fetchLiquidations(T0, T0 + 50_000);
      expect(liq.complete).toBe(true);
      expect(liq.liquidations.length).toBe(c.rows.filter((r) => r.type === "LIQUIDATED" && r.t < T0 + 50_000).length);
    } finally {
      await stub.close();
    }
  });

  it("throws when the first page fails, and a failed market leaves the liquidation backfill incomplete", async () => {
    const stub = await startStub({ "GET /trades/perpetualMarket/BTC-USD": () => ({ status: 400, body: fixture("dydx/error_400_invalid_ticker_DERIVED.json") }) });
    try {
      const bf = new DydxTradeBackfill({ instruments: source, baseUrl: stub.url, retries: 0 });
      await expect(bf.fetchTrades("BTC", T0, T0 + 1000)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
      expect(await bf.fetchLiquidations(T0, T0 + 1000)).toEqual({ liquidations: [], complete: false });
    } finally {
      await stub.close();
    }
  });
});

describe("dydx feed (local ws server)", () => {
  const { cleanup, server } = wsTestKit();

  const insts = [btc, { ...btc, base: "ETH", venueSymbol: "ETH-USD" }];
  const source = { instrument: async (b: string) => insts.find((i) => i.base === b), instruments: async () => insts };
  const blocks = lines("dydx/ws_v4_block_height_2024-12-02_nautilus.ndjson");

  /** A venue stub: `connected`, a `subscribed` answer per subscribe, and (when `everyMs`) a block-height frame that often. */
  const indexer = (everyMs?: number) =>
    server((conn) => {
      conn.ws.send(JSON.stringify(lines("dydx/ws_v4_trades_ETH-USD_2024-07-24_nautilus.ndjson")[0]));
      if (everyMs) {
        const t = setInterval(() => conn.ws.readyState === conn.ws.OPEN && conn.ws.send(JSON.stringify(blocks[1])), everyMs);
        conn.ws.on("close", () => clearInterval(t));
      }
      conn.ws.on("message", (d: WebSocket.RawData) => {
        const m = JSON.parse(d.toString()) as { type: string; channel?: string; id?: string };
        if (m.type === "subscribe" && m.channel === "v4_block_height") conn.ws.send(JSON.stringify(blocks[0]));
        else if (m.type === "subscribe")
          conn.ws.send(JSON.stringify({ type: "subscribed", connection_id: "c", message_id: 1, channel: m.channel, id: m.id, contents: { trades: [] } }));
      });
    });

  it("subscribes the block height and v4_trades per market, emits trades and liquidations", async () => {
    const srv = await indexer();
    const feed = new DydxFeed({ baseUrl: srv.url, instruments: source });
    cleanup(() => feed.stop());
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    expect(await feed.subscribe(["BTC", "eth", "NOPE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    expect(c.url).toBe("/v4/ws");
    await waitFor(() => c.received.length >= 3);
    expect(c.received.slice(0, 3).map((r) => JSON.parse(r) as object)).toEqual([
      { type: "subscribe", channel: "v4_block_height" },
      { type: "subscribe", channel: "v4_trades", id: "BTC-USD", batched: false },
      { type: "subscribe", channel: "v4_trades", id: "ETH-USD", batched: false },
    ]);
    c.ws.send(JSON.stringify(fixture("dydx/ws_v4_trades_channel_data_LIQUIDATED_docs_example.json")));
    c.ws.send(JSON.stringify(lines("dydx/ws_v4_trades_ETH-USD_2024-07-24_nautilus.ndjson")[1]));
    await waitFor(() => trades.length === 6);
    expect(trades.map((t) => t.base)).toEqual(["BTC", "BTC", "BTC", "BTC", "ETH", "ETH"]);
    expect(liqs.map((l) => [l.base, l.side])).toEqual([
      ["BTC", "short"],
      ["BTC", "short"],
    ]);
    expect(feed.state()).toMatchObject({ venue: DYDX, connected: true, subscribedSymbols: 2 });
    feed.unsubscribe(["ETH"]);
    await waitFor(() => c.received.some((r) => r.includes('"unsubscribe"')));
    expect(JSON.parse(c.received.find((r) => r.includes('"unsubscribe"'))!)).toEqual({ type: "unsubscribe", channel: "v4_trades", id: "ETH-USD" });
    expect(c.received.filter((r) => r.includes("ping"))).toEqual([]);
  });

  it("stays connected through quiet markets on block-height frames, and reconnects when blocks stop", async () => {
    const live = await indexer(40);
    const feed = new DydxFeed({ baseUrl: live.url, instruments: source, staleMs: 250 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    await waitFor(() => live.conns[0]);
    await new Promise((r) => setTimeout(r, 800));
    expect(feed.state()).toMatchObject({ connected: true, reconnects: 0 });
    const stuck = await indexer();
    const quiet = new DydxFeed({ baseUrl: stuck.url, instruments: source, staleMs: 250, backoffMinMs: 20, backoffMaxMs: 40 });
    cleanup(() => quiet.stop());
    await quiet.subscribe(["BTC"]);
    quiet.start();
    await waitFor(() => stuck.conns.length >= 2, 3000);
    expect(quiet.state().reconnects).toBeGreaterThanOrEqual(1);
  });

  it("takes at most 32 markets per connection (the indexer's v4_trades limit)", async () => {
    const many = Array.from({ length: 40 }, (_, i): PerpInstrument => ({ ...btc, base: `C${i}`, venueSymbol: `C${i}-USD` }));
    const feed = new DydxFeed({ baseUrl: "ws://127.0.0.1:9", instruments: { instrument: async (b) => many.find((i) => i.base === b) } });
    cleanup(() => feed.stop());
    const r = await feed.subscribe(many.map((i) => i.base));
    expect(r.subscribed).toHaveLength(32);
    expect(r.rejected).toHaveLength(8);
  });
});
