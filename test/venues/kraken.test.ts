import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { KrakenTradeBackfill } from "../../src/venues/kraken/backfill.js";
import { KrakenPerpClient } from "../../src/venues/kraken/client.js";
import { KRAKEN_ENDPOINTS } from "../../src/venues/kraken/endpoints.js";
import { KRAKEN_HEARTBEAT_REQUEST, KrakenFeed } from "../../src/venues/kraken/feed.js";
import { parseKrakenHistory, parseKrakenMessage } from "../../src/venues/kraken/feed-parse.js";
import {
  fromKrakenSymbol,
  KRAKEN,
  krakenError,
  krakenErrorOf,
  nextHour,
  parseCandles,
  parseFundingHistory,
  parseInstruments,
  parseLongShort,
  parseMarginTiers,
  parseOpenInterestHistory,
  parseTicker,
  parseTickerOpenInterest,
  parseTickerPrediction,
  parseTickers,
} from "../../src/venues/kraken/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { expectAppError } from "../helpers/errors.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { collectEvents, jsonReceived, sleep, waitFor, type WsConn, type WsTestServer, wsTestKit } from "../helpers/ws-server.js";
import { type RunningStub, startStub } from "./perp-server.js";

/*
 * Kraken Futures: every parser on the recorded and documented payloads of src/venues/kraken/fixtures (README there),
 * the client against a local stub (paths, parameters, units, error mapping), the websocket parser on recorded frames,
 * the feed's lifecycle on a local ws server, and the history backfill's paging (trades and liquidations).
 */

const HOUR = 3_600_000;
const inst = (venueSymbol: string, base: string): PerpInstrument => ({ venue: KRAKEN, base, venueSymbol, multiplier: 1, contractSize: 1, fundingIntervalHours: 1 });
const BTC = inst("PF_XBTUSD", "BTC");
const ETH = inst("PF_ETHUSD", "ETH");
const PEPE = inst("PF_PEPEUSD", "PEPE");
const bySymbol = new Map([BTC, ETH, PEPE].map((i) => [i.venueSymbol, i]));
const line = (file: string, n: number) => fixtureText(`kraken/${file}`).trim().split("\n")[n - 1]!;
const rows = <T>(file: string, key: string) => (fixture(`kraken/${file}`) as Record<string, T[]>)[key]!;

describe("kraken symbols and budgets", () => {
  it("reads PF_ linear perpetuals only, XBT as BTC", () => {
    expect(fromKrakenSymbol("PF_XBTUSD")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromKrakenSymbol("PF_PEPEUSD")).toEqual({ base: "PEPE", multiplier: 1 });
    expect(fromKrakenSymbol("PF_1000BONKUSD")).toEqual({ base: "BONK", multiplier: 1000 });
    for (const s of ["PI_XBTUSD", "FI_XBTUSD_220930", "FF_XBTUSD_261225", "PF_AAPLxUSD", "in_xbtusd", "pf_xbtusd"]) expect(fromKrakenSymbol(s)).toBeUndefined();
  });

  it("keeps the client and the backfill under Kraken's 500 cost units per 10 s", () => {
    const per10s = (e: { callsPerMin: number; windowSec: number }) => (e.callsPerMin * e.windowSec) / 60;
    expect(per10s(KRAKEN_ENDPOINTS.rest.api) + per10s(KRAKEN_ENDPOINTS.backfill)).toBeLessThanOrEqual(500 / 5);
  });
});

describe("kraken parsers on recorded and documented payloads", () => {
  it("lists the PF_ perpetuals of the docs' instrument list (not PI_ inverse or dated futures)", () => {
    expect(parseInstruments(fixture("kraken/instruments_docs_example.json"))).toEqual([BTC]);
  });

  it("skips inverse and tokenised-stock rows of nautilus' list", () => {
    expect(parseInstruments(fixture("kraken/instruments_nautilus.json"))).toEqual([ETH, PEPE]);
    expect(parseInstruments({ result: "success", instruments: [{ symbol: "PF_SOLUSD", tradeable: true, tradfi: false, category: "xStocks" }] })).toEqual([]);
    expect(parseInstruments({ result: "success", instruments: [{ symbol: "PF_SOLUSD", tradeable: false }] })).toEqual([]);
  });

  it("reads USD margin levels as tiers: 1 / initial margin leverage, the next level's bound as the cap", () => {
    const tiers = parseMarginTiers(fixture("kraken/instruments_docs_example.json"), BTC);
    expect(tiers).toHaveLength(6);
    expect(tiers[0]).toEqual({ venue: "kraken", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 500_000, maxLeverage: 50, maintenanceMarginRate: 0.01 });
    expect(tiers[5]).toEqual({ venue: "kraken", base: "BTC", minNotionalUsd: 30_000_000, maxNotionalUsd: null, maxLeverage: 2, maintenanceMarginRate: 0.25 });
    expect(parseMarginTiers(fixture("kraken/instruments_nautilus.json"), PEPE).map((t) => t.maxLeverage)).toEqual([50, 25]);
    expectAppError(() => parseMarginTiers(fixture("kraken/instruments_nautilus.json"), BTC), "NOT_FOUND");
  });

  it("turns the tickers' ABSOLUTE hourly rate into a fraction per hour (÷ mark), next funding at the next hour", () => {
    const snaps = parseTickers(fixture("kraken/tickers_nautilus_2025-11-17.json"), bySymbol);
    expect(snaps).toEqual([
      {
        venue: "kraken",
        base: "ETH",
        venueSymbol: "PF_ETHUSD",
        fundingRate: Number((1.5e-5 / 3205.25).toPrecision(15)),
        fundingIntervalHours: 1,
        nextFundingTime: Date.parse("2025-11-17T01:00:00.000Z"),
        markPrice: 3205.25,
        indexPrice: 3202.75,
        premium: null,
        interestRate: null,
        time: Date.parse("2025-11-17T00:34:37.524Z"),
      },
    ]);
    // A recorded PF_ row: -7.56e-7 USD per ENJ contract an hour at a 0.0434 mark is -0.00174 % per hour.
    const enj = inst("PF_ENJUSD", "ENJ");
    const [s] = parseTickers(fixture("kraken/tickers_PF_ENJUSD_row_ccxt_2025-10-22.json"), new Map([[enj.venueSymbol, enj]]));
    expect(s!.fundingRate).toBeCloseTo(-1.7429e-5, 8);
    // The docs' list holds an inverse perpetual, a dated future and two indices: none is read.
    expect(parseTickers(fixture("kraken/tickers_docs_example.json"), bySymbol)).toEqual([]);
  });

  it("reads one ticker's funding, prediction and open interest (coins × mark)", () => {
    const row = rows<Record<string, unknown>>("tickers_PF_ENJUSD_row_ccxt_2025-10-22.json", "tickers")[0]!;
    const enj = inst("PF_ENJUSD", "ENJ");
    const body = { result: "success", ticker: row, serverTime: "2025-10-22T11:02:25.599Z" };
    const now = Date.parse("2025-10-22T11:02:25.599Z");
    expect(parseTicker(body, enj).fundingRate).toBeCloseTo(-7.56414717067e-7 / 0.0434, 15);
    expect(parseTickerPrediction(body, enj)).toEqual({
      venue: "kraken",
      base: "ENJ",
      rate: Number((1.95218676e-7 / 0.0434).toPrecision(15)),
      nextFundingTime: nextHour(now) + HOUR,
      fundingIntervalHours: 1,
    });
    expect(parseTickerOpenInterest(body, enj)).toMatchObject({ oiCoins: 72513, oiUsd: Number((72513 * 0.0434).toPrecision(15)) });

    // The recorded 2026 BTC ticker carries no funding fields: no snapshot, but its open interest (1,950.6 BTC).
    const btc = fixture("kraken/ticker_PF_XBTUSD_ccxt_2026-09-02.json");
    expectAppError(() => parseTicker(btc, BTC), "UPSTREAM_ERROR", /no fundingRate/);
    expect(parseTickerPrediction(btc, BTC)).toBeNull();
    const oi = parseTickerOpenInterest(btc, BTC);
    expect(oi).toMatchObject({ venue: "kraken", base: "BTC", oiCoins: 1950.5966, time: Date.parse("2026-09-02T17:52:21.671Z") });
    expect(oi.oiUsd).toBeCloseTo(1950.5966 * 77343.3815408684, 3);
  });

  it("serves the history's relative rate per hour, timed at the end of its hour, newest first, settled only", () => {
    const docs = fixture("kraken/historicalfundingrates_PI_XBTUSD_docs_example.json");
    const pts = parseFundingHistory(docs, BTC, Date.parse("2022-06-28T12:00:00.000Z"));
    expect(pts.map((p) => [new Date(p.time).toISOString(), p.rate])).toEqual([
      ["2022-06-28T09:00:00.000Z", -0.000008521190625],
      ["2022-06-28T05:00:00.000Z", -5.40935416667e-7],
      ["2022-06-28T01:00:00.000Z", -0.000016898883333333],
    ]);
    // At 08:30 (the body's serverTime) the 08:00 hour is still running: not settled, not served.
    expect(parseFundingHistory({ ...(docs as object), serverTime: "2022-06-28T08:30:00.000Z" }, BTC)).toHaveLength(2);
    const nautilus = parseFundingHistory(fixture("kraken/historicalfundingrates_nautilus.json"), ETH);
    expect(nautilus.map((p) => p.rate)).toEqual([0.0001, -0.00005, 0.00015]);
    expect(nautilus[0]!.markPrice).toBeNull();
  });

  it("reads hourly charts candles: per coin, volume in coins and USD at the bar's mean price", () => {
    const c = parseCandles(fixture("kraken/charts_trade_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json"), BTC);
    expect(c).toHaveLength(2);
    expect(c[0]).toEqual({
      venue: "kraken",
      base: "BTC",
      openTime: 1791489600000,
      open: 81726,
      high: 81849,
      low: 81640,
      close: 81773,
      volumeCoins: 195.9643,
      volumeUsd: Number((195.9643 * ((81726 + 81849 + 81640 + 81773) / 4)).toPrecision(15)),
    });
    expect(parseCandles(fixture("kraken/charts_trade_1h_nautilus_2024-11-16.json"), BTC).map((x) => x.volumeCoins)).toEqual([319499, 2407, 4995]);
    expectAppError(() => parseCandles({ candles: [{ time: 1 }] }, BTC), "UPSTREAM_ERROR", /unexpected shape/);
  });

  it("values the open-interest analytics' bucket closes at the hour's candle close", () => {
    const candles = parseCandles(fixture("kraken/charts_trade_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json"), BTC);
    const pts = parseOpenInterestHistory(
      fixture("kraken/analytics_open-interest_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json"),
      candles,
      BTC,
      HOUR,
      // "Now": an hour after the recording's last bucket (fixture time, not the calendar).
      1791500400000 + HOUR,
    );
    expect(pts).toEqual([
      { venue: "kraken", base: "BTC", time: 1791496800000, oiCoins: 2360.6244, oiUsd: Number((2360.6244 * 81652).toPrecision(15)) },
      { venue: "kraken", base: "BTC", time: 1791500400000, oiCoins: 2370.1928, oiUsd: Number((2370.1928 * 81652).toPrecision(15)) },
    ]);
    // The running bucket ends now at the latest; a bucket older than every candle has no price and is dropped.
    expect(
      parseOpenInterestHistory(fixture("kraken/analytics_open-interest_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json"), candles.slice(1), BTC, HOUR, 1791497000000).map(
        (p) => p.time,
      ),
    ).toEqual([1791496800000, 1791497000000]);
    expect(parseOpenInterestHistory({ result: null, errors: [] }, candles, BTC, HOUR)).toEqual([]);
    expectAppError(
      () => parseOpenInterestHistory(fixture("kraken/analytics_error_invalid_interval_gocryptotrader.json"), candles, BTC, HOUR),
      "UPSTREAM_ERROR",
      /Invalid arguments interval/,
    );
  });

  it("reads the newest long/short bucket from the account counts", () => {
    expect(parseLongShort(fixture("kraken/analytics_long-short-info_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json"), BTC, "1h")).toEqual({
      venue: "kraken",
      base: "BTC",
      longRatio: Number((3672 / 5496).toPrecision(15)),
      shortRatio: Number((1824 / 5496).toPrecision(15)),
      lsRatio: Number((3672 / 1824).toPrecision(15)),
      source: "all_accounts",
      period: "1h",
      time: 1791496800000,
    });
    expect(parseLongShort({ result: { timestamp: [], data: { longCount: [], shortCount: [] } }, errors: [] }, BTC, "5m")).toBeNull();
  });

  it("maps Kraken's error bodies: rate limit, unknown symbol, anything else", () => {
    const limit = krakenErrorOf(fixture("kraken/error_apiLimitExceeded_docs_example.json"))!;
    expect(limit).toEqual({ error: "apiLimitExceeded" });
    expect(krakenError(limit, "x")).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 10 });
    const invalid = fixture("kraken/error_historicalfundingrates_invalid_symbol_docs_example.json");
    expect(krakenErrorOf(invalid)).toEqual({ error: "Argument invalid: symbol", code: 11 });
    expectAppError(() => parseFundingHistory(invalid, BTC), "NOT_FOUND");
    expectAppError(() => parseInstruments(invalid), "UPSTREAM_ERROR", /Argument invalid/);
    expectAppError(() => parseTickers(fixture("kraken/error_apiLimitExceeded_docs_example.json"), bySymbol), "UPSTREAM_UNAVAILABLE");
    expect(krakenErrorOf("not json")).toBeUndefined();
  });
});

describe("kraken websocket frames", () => {
  it("parses recorded trades, skips other products and feeds, reads control frames", () => {
    expect(parseKrakenMessage(line("ws_frames.ndjson", 1), bySymbol).control).toEqual({ type: "ack", message: "info" });
    expect(parseKrakenMessage(line("ws_frames.ndjson", 2), bySymbol).control).toEqual({ type: "ack", message: "subscribed trade" });
    expect(parseKrakenMessage(line("ws_frames.ndjson", 3), bySymbol)).toEqual({ trades: [], liquidations: [], skipped: 2 }); // PI_ inverse: not read
    expect(parseKrakenMessage(line("ws_frames.ndjson", 4), bySymbol).skipped).toBe(1);
    expect(parseKrakenMessage(line("ws_frames.ndjson", 5), bySymbol)).toEqual({
      trades: [{ venue: "kraken", base: "BTC", time: 1770920339688, price: 65368, size: 0.0003, side: "sell", id: "16dc1852-127b-40c9-acbb-5916ce98ee04" }],
      liquidations: [],
      skipped: 0,
    });
    expect(parseKrakenMessage(line("ws_frames.ndjson", 6), bySymbol)).toEqual({ trades: [], liquidations: [], skipped: 0 }); // ticker
    expect(parseKrakenMessage(line("ws_frames.ndjson", 7), bySymbol).control).toEqual({ type: "venue_error", message: "alert: Bad request" });
  });

  it("turns liquidation fills into the liquidated side (taker sells: a long) and leaves terminations out", () => {
    expect(parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 1), bySymbol).control).toEqual({ type: "ack", message: "heartbeat" });
    expect(parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 2), bySymbol).control).toEqual({ type: "pong" });
    expect(parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 3), bySymbol).control).toEqual({ type: "venue_error", message: "error: Invalid product id" });
    const long = parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 4), bySymbol);
    expect(long.trades).toHaveLength(1);
    expect(long.liquidations).toEqual([{ venue: "kraken", base: "BTC", venueSymbol: "PF_XBTUSD", time: 1770920341002, side: "long", price: 65310, size: 0.25, valueUsd: 16327.5 }]);
    expect(parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 5), bySymbol).liquidations).toMatchObject([{ base: "ETH", side: "short", size: 1.5 }]);
    expect(parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 6), bySymbol)).toEqual({ trades: [], liquidations: [], skipped: 0 });
    const snap = parseKrakenMessage(line("DERIVED_ws_frames.ndjson", 7), bySymbol);
    expect(snap.trades.map((t) => [t.base, t.size, t.side])).toEqual([
      ["PEPE", 1500000, "buy"],
      ["PEPE", 2000000, "sell"],
    ]);
    expect(parseKrakenMessage("not json", bySymbol).error).toMatch(/not JSON/);
    expect(parseKrakenMessage('{"feed":"trade","product_id":"PF_XBTUSD","uid":"u"}', bySymbol).error).toMatch(/malformed/);
  });

  it("parses REST history rows like the feed: uid ids, liquidations, terminations left out", () => {
    const docs = parseKrakenHistory(fixture("kraken/history_ccxt_docs_2022-03-18.json"), ETH);
    expect(docs.trades).toEqual([
      { venue: "kraken", base: "ETH", time: Date.parse("2022-03-18T04:55:37.692Z"), price: 0.7921, size: 1068, side: "sell", id: "6c5da0b0-f1a8-483f-921f-466eb0388265" },
    ]);
    const h = parseKrakenHistory(fixture("kraken/DERIVED_history_PF_XBTUSD.json"), BTC);
    expect(h.trades.map((t) => t.id)).toEqual(["2d7b8a10-5c3e-4f6a-9b1d-0e2f4a6c8d01", "16dc1852-127b-40c9-acbb-5916ce98ee04"]);
    expect(h.liquidations).toMatchObject([{ side: "long", size: 0.25, price: 65310 }]);
    expect(parseKrakenHistory(fixture("kraken/error_apiLimitExceeded_docs_example.json"), BTC).error).toMatch(/apiLimitExceeded/);
  });
});

describe("kraken client against a local stub", () => {
  let stub: RunningStub;
  const instruments = {
    result: "success",
    instruments: [...rows<unknown>("instruments_docs_example.json", "instruments"), ...rows<unknown>("instruments_nautilus.json", "instruments")],
  };
  const ethRow = rows<Record<string, unknown>>("tickers_nautilus_2025-11-17.json", "tickers")[1]!;

  beforeAll(async () => {
    stub = await startStub({
      "GET /derivatives/api/v3/instruments": () => ({ body: instruments }),
      "GET /derivatives/api/v3/tickers": () => ({ body: fixture("kraken/tickers_nautilus_2025-11-17.json") }),
      "GET /derivatives/api/v3/tickers/PF_ETHUSD": () => ({ body: { result: "success", ticker: ethRow, serverTime: new Date().toISOString() } }),
      "GET /derivatives/api/v3/tickers/PF_PEPEUSD": () => ({ status: 404, body: { result: "error", serverTime: new Date().toISOString(), error: "notFound" } }),
      "GET /derivatives/api/v3/tickers/PF_XBTUSD": () => ({ body: fixture("kraken/error_apiLimitExceeded_docs_example.json") }),
      "GET /derivatives/api/v4/historicalfundingrates": () => {
        const last = Math.floor(Date.now() / HOUR) * HOUR;
        const rates = [];
        for (let t = last - 2000 * HOUR; t <= last; t += HOUR)
          rates.push({ timestamp: new Date(t).toISOString(), fundingRate: 0.5, relativeFundingRate: (t / HOUR) % 7 === 0 ? 1e-5 : -2e-6 });
        return { body: { result: "success", rates, serverTime: new Date().toISOString() } };
      },
      "GET /api/charts/v1/trade/PF_XBTUSD/1h": (req) => {
        const candles = [];
        for (let t = Number(req.query.from) * 1000; t <= Number(req.query.to) * 1000; t += HOUR)
          candles.push({ time: t, open: "100", high: "110", low: "90", close: "105", volume: 2 });
        return { body: { candles, more_candles: false } };
      },
      "GET /api/charts/v1/analytics/PF_XBTUSD/open-interest": (req) => {
        const since = Number(req.query.since);
        const timestamp = [];
        for (let t = since; t * 1000 <= Date.now(); t += 3600) timestamp.push(t);
        // Two buckets per answer: the client follows `more`.
        const page = timestamp.slice(0, 2);
        return { body: { result: { timestamp: page, data: page.map((t) => [1, 2, 0.5, t % 100]), more: timestamp.length > 2 }, errors: [] } };
      },
      "GET /api/charts/v1/analytics/PF_XBTUSD/long-short-info": () => ({ body: fixture("kraken/analytics_long-short-info_PF_XBTUSD_1h_gocryptotrader_2026-10-08.json") }),
    });
  });
  afterAll(() => stub.close());

  const client = () => new KrakenPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
  const calls = (path: string) => stub.calls.filter((u) => u.startsWith(`GET ${path}`));

  it("serves funding, the prediction and open interest from one ticker, and every perpetual's funding from /tickers", async () => {
    const c = client();
    expect((await c.instruments()).map((i) => i.venueSymbol)).toEqual(["PF_XBTUSD", "PF_ETHUSD", "PF_PEPEUSD"]);
    const f = await c.funding("eth");
    expect(f).toMatchObject({ venueSymbol: "PF_ETHUSD", fundingRate: Number((1.5e-5 / 3205.25).toPrecision(15)), fundingIntervalHours: 1 });
    expect(f.nextFundingTime! - f.time).toBeLessThanOrEqual(HOUR);
    expect(await c.predictedFunding("ETH")).toMatchObject({ rate: Number((1.2e-5 / 3205.25).toPrecision(15)), nextFundingTime: f.nextFundingTime! + HOUR });
    expect(await c.openInterest("ETH")).toMatchObject({ oiCoins: 1_000_000, oiUsd: 3_205_250_000 });
    expect(calls("/derivatives/api/v3/tickers/PF_ETHUSD")).toHaveLength(1);
    expect((await c.fundingAll()).map((s) => s.venueSymbol)).toEqual(["PF_ETHUSD"]);
  });

  it("serves hourly history, tiers, candles, open-interest history and the long/short ratio", async () => {
    const c = client();
    const hist = await c.fundingHistory("BTC", 5);
    expect(hist).toHaveLength(5);
    expect(hist[0]!.time).toBe(Math.floor(Date.now() / HOUR) * HOUR); // the last settled hour
    expect(hist[0]!.time - hist[4]!.time).toBe(4 * HOUR);
    expect(calls("/derivatives/api/v4/historicalfundingrates?symbol=PF_XBTUSD")).toHaveLength(1);
    expect(await c.fundingHistory("BTC", 5000)).toHaveLength(1000);

    expect((await c.marginTiers("BTC")).map((t) => t.maxLeverage)).toEqual([50, 25, 10, 5, 3.33333333333333, 2]);
    const candles = await c.hourlyCandles("BTC", 3);
    expect(candles).toHaveLength(3);
    expect(candles[2]!.openTime).toBe(Math.floor(Date.now() / HOUR) * HOUR);
    expect(calls("/api/charts/v1/trade/PF_XBTUSD/1h")[0]).toMatch(/\?from=\d+&to=\d+$/);

    const oi = await c.openInterestHistory("BTC", 3);
    expect(oi).toHaveLength(3);
    expect(oi.map((p) => p.oiUsd)).toEqual(oi.map((p) => p.oiCoins * 105));
    expect(calls("/api/charts/v1/analytics/PF_XBTUSD/open-interest")).toHaveLength(2); // one page of two, then the rest
    expect(calls("/api/charts/v1/analytics/PF_XBTUSD/open-interest")[0]).toMatch(/since=\d+&interval=3600/);

    expect(await c.longShort("BTC")).toMatchObject({ source: "all_accounts", period: "5m", longRatio: Number((3672 / 5496).toPrecision(15)) });
    expect(calls("/api/charts/v1/analytics/PF_XBTUSD/long-short-info")[0]).toMatch(/since=\d+&interval=300/);
  });

  it("maps unknown bases and 404s to NOT_FOUND, apiLimitExceeded and 451 to UPSTREAM_UNAVAILABLE", async () => {
    const c = client();
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND", message: "kraken lists no USD perpetual for DOGE" });
    await expect(c.funding("PEPE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.funding("BTC")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    const blocked = await startStub({ "GET /derivatives/api/v3/instruments": () => ({ status: 451, text: "unavailable" }) });
    try {
      await expect(new KrakenPerpClient(blocked.url, { timeoutMs: 2000, retries: 0 }).instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    } finally {
      await blocked.close();
    }
  });
});

// ---- the feed against a local ws server ----

type Sent = { event: string; feed: string; product_ids?: string[] };
const { cleanup, server } = wsTestKit();
const sent = (c: WsConn) => jsonReceived<Sent>(c);
const fi = (venueSymbol: string, base: string): FeedInstrument => ({ venueSymbol, base, multiplier: 1, contractSize: 1 });
const source = (list: FeedInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b), instruments: async () => list });

/** A Kraken-like server: `info` on connecting, `subscribed` for every subscription. */
function krakenServer(): Promise<WsTestServer> {
  return server((c) => {
    c.ws.send(line("ws_frames.ndjson", 1));
    c.ws.on("message", (d: WebSocket.RawData) => {
      const m = JSON.parse(d.toString()) as Sent;
      c.ws.send(JSON.stringify({ ...m, event: `${m.event}d` }));
    });
  });
}

describe("kraken feed lifecycle (local ws server)", () => {
  it("subscribes the heartbeat and trade feeds, emits trades and liquidations, resubscribes after a drop", async () => {
    const srv = await krakenServer();
    const feed = new KrakenFeed({ baseUrl: srv.url, instruments: source([fi("PF_XBTUSD", "BTC"), fi("PF_ETHUSD", "ETH")]), heartbeatMs: 0, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const { trades, liqs, gaps } = collectEvents(feed);
    expect(await feed.subscribe(["btc", "ETH", "DOGE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["DOGE"], rejected: [] });
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    expect(c.url).toBe("/ws/v1");
    await waitFor(() => sent(c).length >= 2);
    expect(c.received[0]).toBe(KRAKEN_HEARTBEAT_REQUEST);
    expect(sent(c)[1]).toEqual({ event: "subscribe", feed: "trade", product_ids: ["PF_XBTUSD", "PF_ETHUSD"] });

    c.ws.send(line("ws_frames.ndjson", 5)); // a recorded PF_XBTUSD fill
    c.ws.send(line("DERIVED_ws_frames.ndjson", 4)); // a liquidation fill, 1.3 s later
    c.ws.send(line("DERIVED_ws_frames.ndjson", 4)); // repeated: counted once
    await waitFor(() => trades.length >= 2 && liqs.length >= 1);
    await sleep(30);
    expect(trades.map((t) => t.id)).toEqual(["16dc1852-127b-40c9-acbb-5916ce98ee04", "2d7b8a10-5c3e-4f6a-9b1d-0e2f4a6c8d01"]);
    expect(liqs).toMatchObject([{ base: "BTC", side: "long", valueUsd: 16327.5 }]);

    c.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => sent(c2).length >= 2);
    expect(sent(c2).map((m) => m.feed)).toEqual(["heartbeat", "trade"]);
    await waitFor(() => gaps.length === 1);
    expect(feed.state()).toMatchObject({ venue: "kraken", connected: true, reconnects: 1, subscribedSymbols: 2 });

    feed.unsubscribe(["ETH"]);
    await waitFor(() => sent(c2).some((m) => m.event === "unsubscribe"));
    expect(sent(c2).find((m) => m.event === "unsubscribe")).toEqual({ event: "unsubscribe", feed: "trade", product_ids: ["PF_ETHUSD"] });
  });

  it("sends the heartbeat subscription as its keepalive every heartbeatMs", async () => {
    const srv = await krakenServer();
    const feed = new KrakenFeed({ baseUrl: srv.url, instruments: source([fi("PF_XBTUSD", "BTC")]), heartbeatMs: 40 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    await waitFor(() => c.received.filter((r) => r === KRAKEN_HEARTBEAT_REQUEST).length >= 3);
  });
});

// ---- the history backfill ----

describe("kraken history backfill", () => {
  let stub: RunningStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  const T0 = 1_770_920_000_000;
  /** 250 rows 10 ms apart (every 20th a liquidation, every 25th a termination), served as Kraken does: 100 before `lastTime`, newest first. */
  function historyStub(all = Array.from({ length: 250 }, (_, i) => ({ i, t: T0 + i * 10 }))) {
    const row = ({ i, t }: { i: number; t: number }) => ({
      time: new Date(t).toISOString(),
      trade_id: i + 1,
      price: 65000 + i,
      size: "0.01",
      side: i % 2 ? "buy" : "sell",
      type: i % 25 === 0 ? "termination" : i % 20 === 0 ? "liquidation" : "fill",
      uid: `uid-${i}`,
    });
    return startStub({
      "GET /derivatives/api/v3/history": (req) => {
        expect(req.query.symbol).toBe("PF_XBTUSD");
        const last = Date.parse(String(req.query.lastTime));
        const history = all
          .filter((r) => r.t < last)
          .reverse()
          .slice(0, 100)
          .map(row);
        return { body: { result: "success", history, serverTime: new Date().toISOString() } };
      },
    });
  }
  const backfill = (url: string, maxPages?: number) => new KrakenTradeBackfill({ instruments: source([fi("PF_XBTUSD", "BTC")]), baseUrl: url, retries: 0, maxPages });

  it("pages back by lastTime, drops repeats and non-book trades, and shares the walk with the liquidation backfill", async () => {
    stub = await historyStub();
    const bf = backfill(stub.url);
    const from = T0 + 55;
    const to = T0 + 2_205;
    const [r, l] = await Promise.all([bf.fetchTrades("BTC", from, to), bf.fetchLiquidations(from, to)]);
    expect(r.complete).toBe(true);
    const want = Array.from({ length: 250 }, (_, i) => i).filter((i) => T0 + i * 10 >= from && T0 + i * 10 < to && i % 25 !== 0);
    expect(r.trades.map((t) => t.id)).toEqual(want.map((i) => `uid-${i}`));
    expect(l).toEqual({ complete: true, liquidations: expect.any(Array) });
    expect(l.liquidations.map((x) => [x.time, x.side])).toEqual(want.filter((i) => i % 20 === 0).map((i) => [T0 + i * 10, i % 2 ? "short" : "long"]));
    const pages = stub.calls.length;
    expect(pages).toBe(3); // 215 rows at most before `to`: the shared walk read each page once
    expect(stub.calls[0]).toBe(`GET /derivatives/api/v3/history?symbol=PF_XBTUSD&lastTime=${encodeURIComponent(new Date(to).toISOString())}`);
    await expect(bf.fetchTrades("DOGE", from, to)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await bf.fetchLiquidations(to, to)).toEqual({ liquidations: [], complete: true });
  });

  it("is incomplete when pages run out or a page is full inside one millisecond; throws on a failing first page", async () => {
    stub = await historyStub();
    expect(await backfill(stub.url, 1).fetchTrades("BTC", T0, T0 + 2_500)).toMatchObject({ complete: false });
    await stub.close();
    stub = await historyStub(Array.from({ length: 150 }, (_, i) => ({ i, t: T0 + 1000 })));
    const same = await backfill(stub.url).fetchTrades("BTC", T0, T0 + 2000);
    expect(same.complete).toBe(false);
    expect(same.trades.length).toBeGreaterThanOrEqual(90);
    await stub.close();
    stub = await startStub({ "GET /derivatives/api/v3/history": () => ({ status: 400, body: fixture("kraken/error_historicalfundingrates_invalid_symbol_docs_example.json") }) });
    await expect(backfill(stub.url).fetchTrades("BTC", T0, T0 + 1)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    const liq = await backfill(stub.url).fetchLiquidations(T0, T0 + 1);
    expect(liq).toEqual({ liquidations: [], complete: true }); // no base streamed yet: nothing to read
  });
});
