import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAppError } from "../helpers/errors.js";
import { BybitPerpClient } from "../../src/venues/bybit/client.js";
import {
  fromBybitSymbol,
  parseAccountRatio,
  parseFundingHistory,
  parseInstrumentsInfo,
  parseRiskLimit,
  parseTickerOpenInterest,
  parseTickers,
  toBybitSymbol,
} from "../../src/venues/bybit/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const instruments = () => parseInstrumentsInfo(fixture("bybit/instruments_info_linear_2026-08-09_trimmed.json")).instruments;
const indexOf = (list: PerpInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
const pepe: PerpInstrument = { venue: "bybit", base: "PEPE", venueSymbol: "1000PEPEUSDT", multiplier: 1000, contractSize: 1, fundingIntervalHours: 8 };

describe("bybit symbol normalisation", () => {
  it("maps venue symbols both ways, including 1000PEPE and SHIB1000", () => {
    expect(fromBybitSymbol("BTCUSDT")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromBybitSymbol("1000PEPEUSDT")).toEqual({ base: "PEPE", multiplier: 1000 });
    expect(fromBybitSymbol("SHIB1000USDT")).toEqual({ base: "SHIB", multiplier: 1000 });
    expect(fromBybitSymbol("10000SATSUSDT")).toEqual({ base: "SATS", multiplier: 10000 });
    expect(fromBybitSymbol("BTCPERP")).toBeUndefined();
    expect(toBybitSymbol("PEPE", 1000)).toBe("1000PEPEUSDT");
    expect(toBybitSymbol("btc")).toBe("BTCUSDT");
  });
});

describe("bybit parsers on recorded payloads", () => {
  it("keeps USDT linear perpetuals of a real instruments-info page with their funding interval", () => {
    const r = parseInstrumentsInfo(fixture("bybit/instruments_info_linear_2026-08-09_trimmed.json"));
    expect(r.nextPageCursor).toBe("");
    expect(r.instruments.map((i) => [i.venueSymbol, i.base, i.multiplier, i.fundingIntervalHours])).toEqual([
      ["0GUSDT", "0G", 1, 4],
      ["1000000MOGUSDT", "MOG", 1_000_000, 4],
      ["1000PEPEUSDT", "PEPE", 1000, 8],
      ["1INCHUSDT", "1INCH", 1, 8],
      ["BTCUSDT", "BTC", 1, 8],
      ["ETHUSDT", "ETH", 1, 8],
      ["SHIB1000USDT", "SHIB", 1000, 8],
      ["ACEUSDT", "ACE", 1, 1],
    ]);
    expect(r.instruments.every((i) => i.venue === "bybit" && i.contractSize === 1)).toBe(true);
  });

  it("parses linear tickers (real WS snapshots in the REST envelope) into funding snapshots", () => {
    const snaps = parseTickers(fixture("bybit/tickers_linear_4symbols_2026-08-09_from_ws.json"), indexOf(instruments()));
    // DOGE and SOL are not in the trimmed instrument list: skipped.
    expect(snaps.map((s) => s.venueSymbol)).toEqual(["BTCUSDT", "ETHUSDT"]);
    expect(snaps[0]).toEqual({
      venue: "bybit",
      base: "BTC",
      venueSymbol: "BTCUSDT",
      fundingRate: 0.0001,
      fundingIntervalHours: 8,
      nextFundingTime: 1786320000000,
      markPrice: 65117.44,
      indexPrice: 65137.76,
      premium: null,
      interestRate: null,
      time: 1786310819280,
    });
    expect(snaps[1]).toMatchObject({ base: "ETH", fundingRate: 0.00004617, markPrice: 1922.43, indexPrice: 1923.16 });
  });

  it("takes the interval from the instrument when the ticker has no fundingIntervalHour (2023 payload)", () => {
    const raw = fixture("bybit/tickers_linear_BTCUSDT_2023-04-05_from_tardis_ws.json");
    const btc4h: PerpInstrument = { venue: "bybit", base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1, fundingIntervalHours: 4 };
    expect(parseTickers(raw, indexOf([btc4h]))[0]).toMatchObject({
      fundingIntervalHours: 4,
      fundingRate: 0.0001,
      nextFundingTime: 1680681600000,
      markPrice: 28552.81,
      time: 1680673821770,
    });
    const { fundingIntervalHours: _, ...noInterval } = btc4h;
    expect(parseTickers(raw, indexOf([noInterval]))[0]?.fundingIntervalHours).toBe(8);
  });

  it("reads open interest in coins and USD from tickers", () => {
    const btc = instruments().find((i) => i.base === "BTC")!;
    expect(parseTickerOpenInterest(fixture("bybit/tickers_linear_4symbols_2026-08-09_from_ws.json"), btc)).toEqual({
      venue: "bybit",
      base: "BTC",
      oiCoins: 59891.732,
      oiUsd: 3899996265.01,
      time: 1786310819280,
    });
  });

  it("undoes the 1000 multiplier on prices and open interest", () => {
    const raw = {
      retCode: 0,
      retMsg: "OK",
      result: {
        category: "linear",
        list: [
          {
            symbol: "1000PEPEUSDT",
            markPrice: "0.018352",
            indexPrice: "0.018346",
            fundingRate: "0.0001",
            nextFundingTime: "1786320000000",
            openInterest: "1200000",
            openInterestValue: "22022.4",
          },
        ],
      },
      time: 1786310819280,
    };
    expect(parseTickers(raw, indexOf([pepe]))[0]).toMatchObject({ base: "PEPE", markPrice: 0.000018352, indexPrice: 0.000018346, fundingIntervalHours: 8 });
    expect(parseTickerOpenInterest(raw, pepe)).toMatchObject({ oiCoins: 1_200_000_000, oiUsd: 22022.4 });
  });

  it("parses funding history (docs example; no real body exists) newest first", () => {
    const btc = instruments().find((i) => i.base === "BTC")!;
    expect(parseFundingHistory(fixture("bybit/funding_history_docs_example.json"), btc)).toEqual([
      { venue: "bybit", base: "BTC", time: 1672041600000, rate: 0.0001, markPrice: null },
    ]);
  });

  it("parses the all-accounts ratio (docs example)", () => {
    const btc = instruments().find((i) => i.base === "BTC")!;
    expect(parseAccountRatio(fixture("bybit/account_ratio_docs_example.json"), btc, "5m")).toEqual({
      venue: "bybit",
      base: "BTC",
      longRatio: 0.5777,
      shortRatio: 0.4223,
      lsRatio: 1.36798484489699,
      source: "all_accounts",
      period: "5m",
      time: 1695772800000,
    });
    expect(parseAccountRatio({ retCode: 0, retMsg: "OK", result: { list: [] } }, btc, "5m")).toBeNull();
  });

  it("parses the risk-limit docs example: percent margins to fractions, riskLimitValue as the upper bound", () => {
    // The example of https://bybit-exchange.github.io/docs/v5/market/risk-limit: an inverse BTCUSD row, so the instrument is built for that symbol
    const btcusd: PerpInstrument = { venue: "bybit", base: "BTC", venueSymbol: "BTCUSD", multiplier: 1, contractSize: 1 };
    const docs = {
      retCode: 0,
      retMsg: "OK",
      result: {
        category: "inverse",
        list: [{ id: 1, symbol: "BTCUSD", riskLimitValue: "150", maintenanceMargin: "0.5", initialMargin: "1", isLowestRisk: 1, maxLeverage: "100.00" }],
      },
      retExtInfo: {},
      time: 1672054488010,
    };
    expect(parseRiskLimit(docs, btcusd)).toEqual([{ venue: "bybit", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 150, maxLeverage: 100, maintenanceMarginRate: 0.005 }]);
  });

  it("sorts unsorted risk-limit rows by riskLimitValue; each lower bound is the previous tier's cap", () => {
    const row = (id: number, symbol: string, riskLimitValue: string, maintenanceMargin: string, maxLeverage: string) => ({
      id,
      symbol,
      riskLimitValue,
      maintenanceMargin,
      initialMargin: String(100 / Number(maxLeverage)),
      isLowestRisk: id === 1 ? 1 : 0,
      maxLeverage,
      mmDeduction: id === 1 ? "" : "100",
    });
    const raw = {
      retCode: 0,
      retMsg: "OK",
      result: {
        category: "linear",
        list: [
          row(3, "1000PEPEUSDT", "600000", "2", "25.00"),
          row(1, "1000PEPEUSDT", "200000", "1", "50.00"),
          row(9, "BTCUSDT", "2000000", "0.5", "100.00"),
          row(2, "1000PEPEUSDT", "400000", "1.5", "33.33"),
        ],
        nextPageCursor: "",
      },
      retExtInfo: {},
      time: 1,
    };
    expect(parseRiskLimit(raw, pepe).map((t) => [t.minNotionalUsd, t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual([
      [0, 200_000, 50, 0.01],
      [200_000, 400_000, 33.33, 0.015],
      [400_000, 600_000, 25, 0.02],
    ]);
    expectAppError(() => parseRiskLimit({ retCode: 10001, retMsg: "params error: symbol invalid", result: {}, time: 1 }, pepe), "NOT_FOUND");
    expectAppError(() => parseRiskLimit({ retCode: 0, retMsg: "OK", result: { list: [{ symbol: "1000PEPEUSDT", riskLimitValue: "" }] } }, pepe), "UPSTREAM_ERROR");
  });

  it("maps envelope errors: 10001 on a symbol request → NOT_FOUND, others → UPSTREAM_ERROR", () => {
    const bad = { retCode: 10001, retMsg: "params error: symbol invalid", result: {}, time: 1 };
    expectAppError(() => parseFundingHistory(bad, pepe), "NOT_FOUND");
    expectAppError(() => parseTickers(bad, indexOf([pepe])), "UPSTREAM_ERROR");
    expectAppError(() => parseInstrumentsInfo({ retCode: 10006, retMsg: "Too many visits!", result: {} }), "UPSTREAM_ERROR");
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parseInstrumentsInfo({ result: { list: [] } }), "UPSTREAM_ERROR");
    expectAppError(() => parseTickers({ retCode: 0, retMsg: "OK", result: { list: [{ symbol: "BTCUSDT", fundingRate: "x" }] } }, indexOf([pepe])), "UPSTREAM_ERROR");
    expectAppError(() => parseAccountRatio({ retCode: 0, retMsg: "OK", result: { list: [{ buyRatio: "0.5" }] } }, pepe, "5m"), "UPSTREAM_ERROR");
  });
});

describe("bybit client against a local stub", () => {
  let stub: RunningStub;
  const page1 = {
    retCode: 0,
    retMsg: "OK",
    result: {
      category: "linear",
      list: [{ symbol: "BTCUSDT", contractType: "LinearPerpetual", status: "Trading", baseCoin: "BTC", quoteCoin: "USDT", settleCoin: "USDT", fundingInterval: 480 }],
      nextPageCursor: "page2",
    },
    time: 1,
  };
  const page2 = {
    retCode: 0,
    retMsg: "OK",
    result: {
      category: "linear",
      list: [{ symbol: "1000PEPEUSDT", contractType: "LinearPerpetual", status: "Trading", baseCoin: "1000PEPE", quoteCoin: "USDT", settleCoin: "USDT", fundingInterval: 240 }],
      nextPageCursor: "",
    },
    time: 1,
  };
  const ticker = {
    symbol: "1000PEPEUSDT",
    markPrice: "0.018352",
    indexPrice: "0.018346",
    fundingRate: "-0.0002",
    nextFundingTime: "1786320000000",
    fundingIntervalHour: "4",
    openInterest: "1200000",
    openInterestValue: "22022.4",
  };

  beforeAll(async () => {
    stub = await startStub({
      "GET /v5/market/instruments-info": (req) => ({ body: req.query.cursor === "page2" ? page2 : page1 }),
      "GET /v5/market/tickers": (req) =>
        req.query.symbol === undefined || req.query.symbol === "1000PEPEUSDT"
          ? { body: { retCode: 0, retMsg: "OK", result: { category: "linear", list: [ticker] }, time: 1786310819280 } }
          : { body: { retCode: 10001, retMsg: "Not supported symbols", result: {}, time: 1 } },
      "GET /v5/market/funding/history": () => ({
        body: {
          retCode: 0,
          retMsg: "OK",
          result: {
            category: "linear",
            list: [
              { symbol: "1000PEPEUSDT", fundingRate: "0.0001", fundingRateTimestamp: "1786305600000" },
              { symbol: "1000PEPEUSDT", fundingRate: "0.00005", fundingRateTimestamp: "1786291200000" },
            ],
          },
          time: 1,
        },
      }),
      "GET /v5/market/account-ratio": () => ({
        body: { retCode: 0, retMsg: "OK", result: { list: [{ symbol: "BTCUSDT", buyRatio: "0.6", sellRatio: "0.4", timestamp: "1786310700000" }] }, time: 1 },
      }),
      "GET /v5/market/risk-limit": (req) =>
        req.query.symbol === "1000PEPEUSDT"
          ? {
              body: {
                retCode: 0,
                retMsg: "OK",
                result: {
                  category: "linear",
                  list: [
                    {
                      id: 2,
                      symbol: "1000PEPEUSDT",
                      riskLimitValue: "400000",
                      maintenanceMargin: "1.5",
                      initialMargin: "3",
                      isLowestRisk: 0,
                      maxLeverage: "33.33",
                      mmDeduction: "1000",
                    },
                    { id: 1, symbol: "1000PEPEUSDT", riskLimitValue: "200000", maintenanceMargin: "1", initialMargin: "2", isLowestRisk: 1, maxLeverage: "50.00", mmDeduction: "" },
                  ],
                  nextPageCursor: "",
                },
                retExtInfo: {},
                time: 1,
              },
            }
          : { body: { retCode: 10001, retMsg: "params error: symbol invalid", result: {}, retExtInfo: {}, time: 1 } },
    });
  });
  afterAll(() => stub.close());

  it("follows the instruments cursor, then serves per-coin funding, OI, history and ratio", async () => {
    const c = new BybitPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    expect((await c.instruments()).map((i) => i.venueSymbol)).toEqual(["BTCUSDT", "1000PEPEUSDT"]);
    expect(stub.calls.filter((u) => u.startsWith("GET /v5/market/instruments-info"))).toEqual([
      "GET /v5/market/instruments-info?category=linear&limit=1000",
      "GET /v5/market/instruments-info?category=linear&limit=1000&cursor=page2",
    ]);
    expect(await c.funding("PEPE")).toMatchObject({ base: "PEPE", fundingRate: -0.0002, fundingIntervalHours: 4, markPrice: 0.000018352 });
    expect(await c.openInterest("PEPE")).toMatchObject({ oiCoins: 1_200_000_000, oiUsd: 22022.4 });
    expect((await c.fundingHistory("PEPE", 1)).map((p) => p.time)).toEqual([1786305600000]);
    expect(await c.longShort("BTC")).toMatchObject({ source: "all_accounts", longRatio: 0.6, shortRatio: 0.4, lsRatio: 1.5, period: "5m" });
    expect(stub.calls).toContain("GET /v5/market/account-ratio?category=linear&symbol=BTCUSDT&period=5min&limit=1");
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    // BTCUSDT is listed but the stub refuses it with retCode 10001.
    await expect(c.funding("BTC")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("serves risk-limit tiers sorted, in USDT notional with fractional maintenance rates", async () => {
    const c = new BybitPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    expect(await c.marginTiers("pepe")).toEqual([
      { venue: "bybit", base: "PEPE", minNotionalUsd: 0, maxNotionalUsd: 200_000, maxLeverage: 50, maintenanceMarginRate: 0.01 },
      { venue: "bybit", base: "PEPE", minNotionalUsd: 200_000, maxNotionalUsd: 400_000, maxLeverage: 33.33, maintenanceMarginRate: 0.015 },
    ]);
    expect(stub.calls).toContain("GET /v5/market/risk-limit?category=linear&symbol=1000PEPEUSDT");
    await expect(c.marginTiers("BTC")).rejects.toMatchObject({ code: "NOT_FOUND" }); // listed, refused with 10001
    await expect(c.marginTiers("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" }); // not listed: no request
    expect(stub.calls.filter((u) => u.includes("symbol=DOGEUSDT"))).toEqual([]);
  });

  it("maps a JSON 403 'access too frequent' to UPSTREAM_UNAVAILABLE with a long retry", async () => {
    const banned = await startStub({ "GET /v5/market/instruments-info": () => ({ status: 403, body: { retCode: 10006, retMsg: "access too frequent" } }) });
    try {
      const c = new BybitPerpClient(banned.url, { timeoutMs: 2000, retries: 0 });
      await expect(c.instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 600 });
    } finally {
      await banned.close();
    }
  });
});
