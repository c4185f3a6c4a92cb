import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAppError } from "../helpers/errors.js";
import { BitgetPerpClient } from "../../src/venues/bitget/client.js";
import {
  fromBitgetSymbol,
  parseAccountLongShort,
  parseCandles,
  parseContracts,
  parseFundingHistory,
  parsePositionTiers,
  parseTickerOpenInterest,
  parseTickers,
} from "../../src/venues/bitget/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const btc: PerpInstrument = { venue: "bitget", base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1, fundingIntervalHours: 8 };
const bonk: PerpInstrument = { venue: "bitget", base: "BONK", venueSymbol: "1000BONKUSDT", multiplier: 1000, contractSize: 1, fundingIntervalHours: 4 };
/** The docs' ticker example is a COIN-FUTURES delivery contract: the parser is exercised on its (shared) row shape. */
const ethDelivery: PerpInstrument = { venue: "bitget", base: "ETH", venueSymbol: "ETHUSD_231229", multiplier: 1, contractSize: 1 };
const indexOf = (list: PerpInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));

describe("bitget symbols", () => {
  it("reads the multiplier from the symbol and refuses non-USDT or dated symbols", () => {
    expect(fromBitgetSymbol("BTCUSDT")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromBitgetSymbol("1000BONKUSDT")).toEqual({ base: "BONK", multiplier: 1000 });
    expect(fromBitgetSymbol("BTCUSD")).toBeUndefined();
    expect(fromBitgetSymbol("BTCUSDT_250328")).toBeUndefined();
  });
});

describe("bitget parsers on recorded payloads", () => {
  it("keeps the perpetual of the contracts docs example with its fundInterval (sizeMultiplier is a size step, not a contract size)", () => {
    expect(parseContracts(fixture("bitget/contracts_USDT-FUTURES_BTCUSDT_docs_example.json"))).toEqual([btc]);
  });

  it("drops delivery, non-USDT and non-normal contracts", () => {
    const row = (over: Record<string, string>) => ({
      symbol: "ETHUSDT",
      baseCoin: "ETH",
      quoteCoin: "USDT",
      symbolType: "perpetual",
      symbolStatus: "normal",
      fundInterval: "4",
      ...over,
    });
    const raw = {
      code: "00000",
      msg: "success",
      requestTime: 1,
      data: [
        row({}),
        row({ symbol: "ETHUSDT_250328", symbolType: "delivery" }),
        row({ symbol: "ETHUSDC", quoteCoin: "USDC" }),
        row({ symbol: "XUSDT", symbolStatus: "off" }),
        row({ symbol: "1000BONKUSDT", baseCoin: "BONK" }),
      ],
    };
    expect(parseContracts(raw).map((i) => [i.venueSymbol, i.base, i.multiplier, i.fundingIntervalHours])).toEqual([
      ["ETHUSDT", "ETH", 1, 4],
      ["1000BONKUSDT", "BONK", 1000, 4],
    ]);
  });

  it("parses the ticker docs example into a funding snapshot (rate per interval, mark/index, ts)", () => {
    const snaps = parseTickers(fixture("bitget/ticker_COIN-FUTURES_ETHUSD_231229_docs_example.json"), indexOf([ethDelivery]));
    expect(snaps).toEqual([
      {
        venue: "bitget",
        base: "ETH",
        venueSymbol: "ETHUSD_231229",
        fundingRate: 0,
        fundingIntervalHours: 8, // the instrument states none: Bitget's standard 8 h
        nextFundingTime: null,
        markPrice: 1829,
        indexPrice: 1822.15,
        premium: null,
        interestRate: null,
        time: 1695794098184,
      },
    ]);
    // Rows of unlisted symbols are skipped.
    expect(parseTickers(fixture("bitget/ticker_COIN-FUTURES_ETHUSD_231229_docs_example.json"), indexOf([btc]))).toEqual([]);
  });

  it("reads open interest in coins (holdingAmount) and USD (× markPrice) from the ticker", () => {
    expect(parseTickerOpenInterest(fixture("bitget/ticker_COIN-FUTURES_ETHUSD_231229_docs_example.json"), ethDelivery)).toEqual({
      venue: "bitget",
      base: "ETH",
      oiCoins: 9488.49,
      oiUsd: 17354448.21, // 9488.49 × 1829
      time: 1695794098184,
    });
  });

  it("undoes the 1000 multiplier on prices and open interest", () => {
    const raw = {
      code: "00000",
      msg: "success",
      requestTime: 5,
      data: [{ symbol: "1000BONKUSDT", fundingRate: "0.0001", markPrice: "0.02", indexPrice: "0.0199", holdingAmount: "5000", ts: "7" }],
    };
    expect(parseTickers(raw, indexOf([bonk]), { symbol: "1000BONKUSDT" })[0]).toMatchObject({ base: "BONK", fundingIntervalHours: 4, markPrice: 0.00002, indexPrice: 0.0000199 });
    expect(parseTickerOpenInterest(raw, bonk)).toMatchObject({ oiCoins: 5_000_000, oiUsd: 100 });
  });

  it("parses settled funding history (ccxt's live recording and the docs example) newest first", () => {
    expect(parseFundingHistory(fixture("bitget/history_fund_rate_BTCUSDT_ccxt_2025-06-20.json"), btc)).toEqual({
      points: [{ venue: "bitget", base: "BTC", time: 1750435200000, rate: -0.000013, markPrice: null }],
      rows: 1,
    });
    const docs = parseFundingHistory(fixture("bitget/history_fund_rate_BTCUSDT_docs_example.json"), btc);
    expect(docs.points.map((p) => [p.time, p.rate])).toEqual([
      [1695776400000, 0.0005],
      [1695715200000, 0.000013],
    ]);
  });

  it("normalises the account long/short shares of the docs example (its own ratio field is inconsistent)", () => {
    expect(parseAccountLongShort(fixture("bitget/account_long_short_BTCUSDT_docs_example.json"), btc, "5m")).toEqual({
      venue: "bitget",
      base: "BTC",
      longRatio: Number((0.01 / 0.13).toPrecision(15)),
      shortRatio: Number((0.12 / 0.13).toPrecision(15)),
      lsRatio: Number((0.01 / 0.12).toPrecision(15)),
      source: "top_traders_accounts",
      period: "5m",
      time: 1714020600000,
    });
    expect(parseAccountLongShort({ code: "00000", msg: "success", requestTime: 1, data: [] }, btc, "5m")).toBeNull();
  });

  it("parses position tiers: USDT value bounds, leverage and the maintenance rate as a fraction", () => {
    expect(parsePositionTiers(fixture("bitget/query_position_lever_BTCUSDT_docs_example.json"), btc)).toEqual([
      { venue: "bitget", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 50000, maxLeverage: 125, maintenanceMarginRate: 0.004 },
      { venue: "bitget", base: "BTC", minNotionalUsd: 50000, maxNotionalUsd: 200000, maxLeverage: 100, maintenanceMarginRate: 0.005 },
    ]);
  });

  it("parses ccxt's live linear candle: per-coin prices, base volume in coins, quote volume in USD", () => {
    expect(parseCandles(fixture("bitget/candles_BTCUSDT_1m_ccxt_2023-12-28.json"), btc)).toEqual([
      { venue: "bitget", base: "BTC", openTime: 1703762100000, open: 43094.7, high: 43095.8, low: 43080.4, close: 43084.2, volumeCoins: 90.097, volumeUsd: 3882338.2038 },
    ]);
    const raw = {
      code: "00000",
      msg: "success",
      requestTime: "1",
      data: [
        ["2000", "0.02", "0.03", "0.01", "0.025", "10", "0.25"],
        ["1000", "0.02", "0.02", "0.02", "0.02", "1", "0.02"],
      ],
    };
    expect(parseCandles(raw, bonk).map((c) => [c.openTime, c.open, c.volumeCoins, c.volumeUsd])).toEqual([
      [1000, 0.00002, 1000, 0.02],
      [2000, 0.00002, 10000, 0.25],
    ]);
  });

  it("maps the recorded error body: 40034 on a symbol request → NOT_FOUND, otherwise UPSTREAM_ERROR", () => {
    const err = fixture("bitget/error_40034_parameter_does_not_exist_ccxt_issue_21163.json");
    expectAppError(() => parseFundingHistory(err, btc), "NOT_FOUND", /does not exist/);
    expectAppError(() => parseContracts(err), "UPSTREAM_ERROR", /40034/);
    expectAppError(() => parseTickers({ code: "00000", msg: "success", requestTime: 1, data: { symbol: "BTCUSDT" } }, indexOf([btc])), "UPSTREAM_ERROR");
    expectAppError(() => parseTickers({ retCode: 0 }, indexOf([btc])), "UPSTREAM_ERROR");
    expectAppError(() => parseTickerOpenInterest({ code: "00000", msg: "success", requestTime: 1, data: [] }, btc), "NOT_FOUND");
  });
});

describe("bitget client against a local stub", () => {
  let stub: RunningStub;
  const ok = (data: unknown) => ({ body: { code: "00000", msg: "success", requestTime: 1786310819280, data } });
  const notFound = { status: 400, body: fixture("bitget/error_40034_parameter_does_not_exist_ccxt_issue_21163.json") };
  const contract = (symbol: string, fundInterval: string) => ({
    symbol,
    baseCoin: symbol.replace(/USDT$/, ""),
    quoteCoin: "USDT",
    symbolType: "perpetual",
    symbolStatus: "normal",
    fundInterval,
  });
  const tickerRow = { symbol: "1000BONKUSDT", fundingRate: "-0.0002", markPrice: "0.018352", indexPrice: "0.018346", holdingAmount: "1200000", ts: "1786310819000" };
  const history = (pageNo: number) =>
    Array.from({ length: pageNo === 1 ? 100 : 30 }, (_, i) => ({
      symbol: "BTCUSDT",
      fundingRate: "0.0001",
      fundingTime: String(1_786_300_000_000 - ((pageNo - 1) * 100 + i) * 28_800_000),
    }));

  beforeAll(async () => {
    stub = await startStub({
      "GET /api/v2/mix/market/contracts": () => ok([contract("BTCUSDT", "8"), contract("1000BONKUSDT", "4")]),
      "GET /api/v2/mix/market/tickers": () => ok([tickerRow, { ...tickerRow, symbol: "UNLISTEDUSDT" }]),
      "GET /api/v2/mix/market/ticker": (req) => (req.query.symbol === "1000BONKUSDT" ? ok([tickerRow]) : notFound),
      "GET /api/v2/mix/market/history-fund-rate": (req) => ok(history(Number(req.query.pageNo))),
      "GET /api/v2/mix/market/account-long-short": () => ok([{ longAccountRatio: "0.6", shortAccountRatio: "0.4", longShortAccountRatio: "1.5", ts: "1786310700000" }]),
      "GET /api/v2/mix/market/query-position-lever": (req) =>
        req.query.symbol === "1000BONKUSDT"
          ? ok([
              { symbol: "1000BONKUSDT", level: "2", startUnit: "200000", endUnit: "400000", leverage: "25", keepMarginRate: "0.015" },
              { symbol: "1000BONKUSDT", level: "1", startUnit: "0", endUnit: "200000", leverage: "50", keepMarginRate: "0.01" },
            ])
          : notFound,
      "GET /api/v2/mix/market/candles": () => ok([["1786306800000", "0.02", "0.021", "0.019", "0.0205", "100", "2.05"]]),
    });
  });
  afterAll(() => stub.close());

  it("loads the contract list, then serves per-coin funding, OI, paged history, ratio and candles", async () => {
    const c = new BitgetPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    expect((await c.instruments()).map((i) => [i.venueSymbol, i.fundingIntervalHours])).toEqual([
      ["BTCUSDT", 8],
      ["1000BONKUSDT", 4],
    ]);
    expect(stub.calls).toContain("GET /api/v2/mix/market/contracts?productType=USDT-FUTURES");
    expect((await c.fundingAll()).map((s) => s.venueSymbol)).toEqual(["1000BONKUSDT"]);
    expect(stub.calls).toContain("GET /api/v2/mix/market/tickers?productType=USDT-FUTURES");
    expect(await c.funding("bonk")).toMatchObject({ base: "BONK", fundingRate: -0.0002, fundingIntervalHours: 4, markPrice: 0.000018352, nextFundingTime: null });
    expect(stub.calls).toContain("GET /api/v2/mix/market/ticker?symbol=1000BONKUSDT&productType=USDT-FUTURES");
    expect(await c.openInterest("BONK")).toMatchObject({ oiCoins: 1_200_000_000, oiUsd: 22022.4 });
    const hist = await c.fundingHistory("BTC", 120);
    expect(hist).toHaveLength(120);
    expect(hist[0]!.time).toBe(1_786_300_000_000);
    expect(stub.calls.filter((u) => u.startsWith("GET /api/v2/mix/market/history-fund-rate"))).toEqual([
      "GET /api/v2/mix/market/history-fund-rate?symbol=BTCUSDT&productType=USDT-FUTURES&pageSize=100&pageNo=1",
      "GET /api/v2/mix/market/history-fund-rate?symbol=BTCUSDT&productType=USDT-FUTURES&pageSize=100&pageNo=2",
    ]);
    expect(await c.longShort("BTC")).toMatchObject({ source: "top_traders_accounts", longRatio: 0.6, shortRatio: 0.4, lsRatio: 1.5, period: "5m" });
    expect(stub.calls).toContain("GET /api/v2/mix/market/account-long-short?symbol=BTCUSDT&period=5m");
    expect(await c.hourlyCandles("BONK", 24)).toEqual([
      { venue: "bitget", base: "BONK", openTime: 1786306800000, open: 0.00002, high: 0.000021, low: 0.000019, close: 0.0000205, volumeCoins: 100000, volumeUsd: 2.05 },
    ]);
    expect(stub.calls).toContain("GET /api/v2/mix/market/candles?symbol=1000BONKUSDT&productType=USDT-FUTURES&granularity=1H&limit=24");
    expect("predictedFunding" in c).toBe(false);
    expect("openInterestHistory" in c).toBe(false);
  });

  it("serves tiers sorted by value; maps 40034 (HTTP 400) to NOT_FOUND and an unlisted base without a request", async () => {
    const c = new BitgetPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    expect(await c.marginTiers("BONK")).toEqual([
      { venue: "bitget", base: "BONK", minNotionalUsd: 0, maxNotionalUsd: 200_000, maxLeverage: 50, maintenanceMarginRate: 0.01 },
      { venue: "bitget", base: "BONK", minNotionalUsd: 200_000, maxNotionalUsd: 400_000, maxLeverage: 25, maintenanceMarginRate: 0.015 },
    ]);
    expect(stub.calls).toContain("GET /api/v2/mix/market/query-position-lever?symbol=1000BONKUSDT&productType=USDT-FUTURES");
    await expect(c.marginTiers("BTC")).rejects.toMatchObject({ code: "NOT_FOUND" }); // listed, refused with 40034
    await expect(c.funding("BTC")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" }); // not listed: no request
    expect(stub.calls.filter((u) => u.includes("symbol=DOGEUSDT"))).toEqual([]);
  });

  it("maps HTTP 403 to UPSTREAM_UNAVAILABLE and another refusal to UPSTREAM_ERROR", async () => {
    const refusing = await startStub({
      "GET /api/v2/mix/market/contracts": (req) => (req.query.productType === "USDT-FUTURES" ? { status: 403, text: "<html>blocked</html>" } : { status: 400, body: {} }),
    });
    try {
      await expect(new BitgetPerpClient(refusing.url, { timeoutMs: 2000, retries: 0 }).instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      // The recorded 40034 body on a request naming no symbol (the contract list) is not a missing symbol: UPSTREAM_ERROR.
      const other = await startStub({
        "GET /api/v2/mix/market/contracts": () => ({ status: 400, body: fixture("bitget/error_40034_parameter_does_not_exist_ccxt_issue_21163.json") }),
      });
      try {
        await expect(new BitgetPerpClient(other.url, { timeoutMs: 2000, retries: 0 }).instruments()).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
      } finally {
        await other.close();
      }
    } finally {
      await refusing.close();
    }
  });
});
