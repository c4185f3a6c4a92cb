import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BinancePerpClient } from "../../src/venues/binance/client.js";
import {
  fromBinanceSymbol,
  parseExchangeInfo,
  parseFundingInfo,
  parseFundingRateHistory,
  parseKlines,
  parseOpenInterest,
  parsePremiumIndex,
  parseSpotTickerPrice,
  parseTopLongShortPositionRatio,
  splitMultiplier,
  toBinanceSymbol,
} from "../../src/venues/binance/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";
import { expectAppError } from "../helpers/errors.js";

/** An instrument as `parseExchangeInfo` would build it for `symbol` (current listings absent from the 2021 exchangeInfo). */
function inst(symbol: string): PerpInstrument {
  const s = fromBinanceSymbol(symbol)!;
  return { venue: "binance", base: s.base, venueSymbol: symbol, multiplier: s.multiplier, contractSize: 1 };
}
const index = (...symbols: string[]) => new Map(symbols.map((s) => [s, inst(s)]));

describe("binance symbol normalisation", () => {
  it("maps venue symbols to canonical bases and multipliers", () => {
    expect(fromBinanceSymbol("BTCUSDT")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromBinanceSymbol("1000PEPEUSDT")).toEqual({ base: "PEPE", multiplier: 1000 });
    expect(fromBinanceSymbol("1000000MOGUSDT")).toEqual({ base: "MOG", multiplier: 1_000_000 });
    expect(fromBinanceSymbol("1MBABYDOGEUSDT")).toEqual({ base: "BABYDOGE", multiplier: 1_000_000 });
    expect(fromBinanceSymbol("1INCHUSDT")).toEqual({ base: "1INCH", multiplier: 1 });
    expect(fromBinanceSymbol("1000PEPEUSDC")).toBeUndefined();
    expect(fromBinanceSymbol("ETHUSDT_250328")).toBeUndefined();
    expect(splitMultiplier("SHIB1000")).toEqual({ base: "SHIB", multiplier: 1000 });
    expect(splitMultiplier("0G")).toEqual({ base: "0G", multiplier: 1 });
  });

  it("builds venue symbols from canonical bases", () => {
    expect(toBinanceSymbol("BTC")).toBe("BTCUSDT");
    expect(toBinanceSymbol("pepe", 1000)).toBe("1000PEPEUSDT");
    for (const s of ["BTCUSDT", "1000PEPEUSDT", "1000000MOGUSDT", "1INCHUSDT"]) {
      const { base, multiplier } = fromBinanceSymbol(s)!;
      expect(toBinanceSymbol(base, multiplier)).toBe(s);
    }
  });
});

describe("binance parsers on recorded payloads", () => {
  it("keeps only trading USDT perpetuals of a real exchangeInfo, undoing 1000SHIB", () => {
    expect(parseExchangeInfo(fixture("binance/exchangeInfo_usdm_2021-07-22_trimmed.json"))).toEqual([
      { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 },
      { venue: "binance", base: "1INCH", venueSymbol: "1INCHUSDT", multiplier: 1, contractSize: 1 },
      { venue: "binance", base: "SHIB", venueSymbol: "1000SHIBUSDT", multiplier: 1000, contractSize: 1 },
    ]);
  });

  it("parses fundingInfo intervals", () => {
    expect(parseFundingInfo(fixture("binance/fundingInfo_docs_shape.json"))).toEqual(new Map([["1000PEPEUSDT", 4]]));
  });

  it("parses a real all-symbols premiumIndex: per-coin prices, intervals, unlisted symbols skipped", () => {
    const intervals = parseFundingInfo(fixture("binance/fundingInfo_docs_shape.json"));
    const snaps = parsePremiumIndex(fixture("binance/premiumIndex_all_2024-11-27_trimmed.json"), index("BTCUSDT", "ETHUSDT", "1000PEPEUSDT", "1000000MOGUSDT"), intervals);
    expect(snaps.map((s) => s.venueSymbol).sort()).toEqual(["1000000MOGUSDT", "1000PEPEUSDT", "BTCUSDT", "ETHUSDT"]);
    const by = new Map(snaps.map((s) => [s.base, s]));
    expect(by.get("BTC")).toEqual({
      venue: "binance",
      base: "BTC",
      venueSymbol: "BTCUSDT",
      fundingRate: 0.00013062,
      fundingIntervalHours: 8,
      nextFundingTime: 1732723200000,
      markPrice: 93951.8,
      indexPrice: 93902.89680851,
      premium: null,
      interestRate: 0.0001,
      time: 1732715655000,
    });
    expect(by.get("PEPE")).toMatchObject({ venueSymbol: "1000PEPEUSDT", fundingRate: 0.0001, fundingIntervalHours: 4, markPrice: 0.0000183524, indexPrice: 0.00001834651 });
    expect(by.get("MOG")).toMatchObject({ markPrice: 0.0000024304, indexPrice: 0.00000242775, fundingRate: 0.00016623 });
  });

  it("parses a single-symbol premiumIndex object", () => {
    const one = {
      symbol: "BTCUSDT",
      markPrice: "11793.63104562",
      indexPrice: "11781.80495970",
      estimatedSettlePrice: "11781.16138815",
      lastFundingRate: "0.00038246",
      interestRate: "0.00010000",
      nextFundingTime: 1597392000000,
      time: 1597370495002,
    };
    expect(parsePremiumIndex(one, index("BTCUSDT"), new Map())[0]).toMatchObject({
      base: "BTC",
      fundingRate: 0.00038246,
      markPrice: 11793.63104562,
      nextFundingTime: 1597392000000,
    });
  });

  it("parses XRPUSDT funding history (real values, derived wire shape) newest first", () => {
    const pts = parseFundingRateHistory(fixture("binance/fundingRate_XRPUSDT_2021-11_DERIVED.json"), inst("XRPUSDT"));
    expect(pts).toHaveLength(91);
    expect(pts[0]).toEqual({ venue: "binance", base: "XRP", time: 1639785600014, rate: 0.0001, markPrice: null });
    expect(pts[90]).toEqual({ venue: "binance", base: "XRP", time: 1637193600017, rate: 0.0001, markPrice: null });
    expect(pts.find((p) => p.time === 1637510400000)?.rate).toBe(0.00019881);
    expect(pts.every((p, i) => i === 0 || pts[i - 1]!.time > p.time)).toBe(true);
  });

  it("handles markPrice as string, empty or absent, per coin", () => {
    const rows = [
      { symbol: "1000PEPEUSDT", fundingRate: "0.00010000", fundingTime: 1, markPrice: "0.01835240" },
      { symbol: "1000PEPEUSDT", fundingRate: "0.00020000", fundingTime: 2, markPrice: "" },
      { symbol: "1000PEPEUSDT", fundingRate: "", fundingTime: 3 },
    ];
    expect(parseFundingRateHistory(rows, inst("1000PEPEUSDT"))).toEqual([
      { venue: "binance", base: "PEPE", time: 2, rate: 0.0002, markPrice: null },
      { venue: "binance", base: "PEPE", time: 1, rate: 0.0001, markPrice: 0.0000183524 },
    ]);
  });

  it("converts open interest to coins and USD (docs example; no real body exists)", () => {
    expect(parseOpenInterest(fixture("binance/openInterest_docs_example.json"), inst("BTCUSDT"), 11793.63104562)).toEqual({
      venue: "binance",
      base: "BTC",
      oiCoins: 10659.509,
      oiUsd: 125714316.273466,
      time: 1589437530011,
    });
    // 1000PEPEUSDT: OI in units of 1000 coins, mark per ONE coin.
    expect(parseOpenInterest({ symbol: "1000PEPEUSDT", openInterest: "2500000", time: 5 }, inst("1000PEPEUSDT"), 0.0000183524)).toMatchObject({
      base: "PEPE",
      oiCoins: 2_500_000_000,
      oiUsd: 45881,
    });
  });

  it("parses the top-trader position ratio with string or number timestamps (docs example)", () => {
    const expected = { venue: "binance", base: "BTC", longRatio: 0.5891, shortRatio: 0.4108, lsRatio: 1.4342, source: "top_traders_positions", period: "5m", time: 1583139600000 };
    expect(parseTopLongShortPositionRatio(fixture("binance/topLongShortPositionRatio_docs_example.json"), inst("BTCUSDT"), "5m")).toEqual(expected);
    const numeric = [{ symbol: "BTCUSDT", longShortRatio: "1.4342", longAccount: "0.5891", shortAccount: "0.4108", timestamp: 1583139600000 }];
    expect(parseTopLongShortPositionRatio(numeric, inst("BTCUSDT"), "5m")).toEqual(expected);
    expect(parseTopLongShortPositionRatio([], inst("BTCUSDT"), "5m")).toBeNull();
  });

  it("parses a real spot ticker/price body", () => {
    expect(parseSpotTickerPrice(fixture("binance/spot_ticker_price_BTCUSDT_2021-10-22.json"))).toBe(60740);
  });

  it("parses Binance's Kline-Candlestick-Data docs example: prices, coin volume, quoteVol as USD", () => {
    const docs = [[1616338800000, "57212.69", "57315.00", "57196.19", "57300.00", "496.263", 1616339099999, "28425514.78940", 7160, "273.108", "15642623.69718", "0"]];
    expect(parseKlines(docs, inst("BTCUSDT"))).toEqual([
      { venue: "binance", base: "BTC", openTime: 1616338800000, open: 57212.69, high: 57315, low: 57196.19, close: 57300, volumeCoins: 496.263, volumeUsd: 28425514.7894 },
    ]);
  });

  it("parses recorded USD-M klines (ccxt, likely testnet) oldest first; 1000PEPE prices ÷ 1000, volume × 1000", () => {
    const rows = fixture("binance/klines_BTCUSDT_1m_2024-04-10_ccxt.json") as unknown[][];
    const btc = parseKlines(rows, inst("BTCUSDT"));
    expect(btc.map((k) => k.openTime)).toEqual([1712738460000, 1712738520000, 1712738580000]);
    expect(btc[1]).toEqual({
      venue: "binance",
      base: "BTC",
      openTime: 1712738520000,
      open: 71471,
      high: 71471,
      low: 70459.4,
      close: 70459.4,
      volumeCoins: 0.12,
      volumeUsd: 8518.176,
    });
    // reversed input comes back oldest first
    expect(parseKlines([...rows].reverse(), inst("BTCUSDT")).map((k) => k.openTime)).toEqual([1712738460000, 1712738520000, 1712738580000]);
    const pepe = parseKlines(
      [[1700000000000, "0.018352", "0.018400", "0.018300", "0.018360", "1200000", 1700003599999, "22022.4", 10, "600000", "11011.2", "0"]],
      inst("1000PEPEUSDT"),
    );
    expect(pepe).toEqual([
      {
        venue: "binance",
        base: "PEPE",
        openTime: 1700000000000,
        open: 0.000018352,
        high: 0.0000184,
        low: 0.0000183,
        close: 0.00001836,
        volumeCoins: 1_200_000_000,
        volumeUsd: 22022.4,
      },
    ]);
    expectAppError(() => parseKlines([[1700000000000, "1", "2"]], inst("BTCUSDT")));
    expectAppError(() => parseKlines({ code: -1121, msg: "Invalid symbol." }, inst("BTCUSDT")));
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parseExchangeInfo({ symbols: "nope" }));
    expectAppError(() => parsePremiumIndex([{ symbol: "BTCUSDT", markPrice: "abc", time: 1 }], index("BTCUSDT"), new Map()));
    expectAppError(() => parseOpenInterest({ openInterest: "1" }, inst("BTCUSDT"), 1));
    expectAppError(() => parseFundingRateHistory({ code: -1121, msg: "Invalid symbol." }, inst("BTCUSDT")));
    expectAppError(() => parseSpotTickerPrice({ symbol: "BTCUSDT", price: "" }));
    expectAppError(() => parseTopLongShortPositionRatio([{ longAccount: "0.5" }], inst("BTCUSDT"), "5m"));
  });
});

describe("binance client against a local stub", () => {
  let fapi: RunningStub;
  let spot: RunningStub;
  const exchangeInfo = {
    symbols: [
      { symbol: "BTCUSDT", contractType: "PERPETUAL", status: "TRADING", baseAsset: "BTC", quoteAsset: "USDT" },
      { symbol: "1000PEPEUSDT", contractType: "PERPETUAL", status: "TRADING", baseAsset: "1000PEPE", quoteAsset: "USDT" },
      { symbol: "ETHUSDT", contractType: "PERPETUAL", status: "SETTLING", baseAsset: "ETH", quoteAsset: "USDT" },
    ],
  };
  const premium = fixture("binance/premiumIndex_all_2024-11-27_trimmed.json") as Array<{ symbol: string }>;

  beforeAll(async () => {
    fapi = await startStub({
      "GET /fapi/v1/exchangeInfo": () => ({ body: exchangeInfo }),
      "GET /fapi/v1/fundingInfo": () => ({ body: [{ symbol: "1000PEPEUSDT", adjustedFundingRateCap: "0.025", adjustedFundingRateFloor: "-0.025", fundingIntervalHours: 4 }] }),
      "GET /fapi/v1/premiumIndex": (req) => {
        const s = req.query.symbol;
        if (s === undefined) return { body: premium };
        const row = premium.find((p) => p.symbol === s);
        return row ? { body: row } : { status: 400, body: { code: -1121, msg: "Invalid symbol." } };
      },
      "GET /fapi/v1/openInterest": (req) => ({ body: { symbol: req.query.symbol, openInterest: "2500000", time: 1732715655001 } }),
      "GET /fapi/v1/fundingRate": () => ({
        body: [
          { symbol: "1000PEPEUSDT", fundingRate: "0.0001", fundingTime: 1, markPrice: "0.018" },
          { symbol: "1000PEPEUSDT", fundingRate: "0.0002", fundingTime: 2, markPrice: "" },
        ],
      }),
      "GET /futures/data/topLongShortPositionRatio": () => ({
        body: [{ symbol: "BTCUSDT", longShortRatio: "1.5", longAccount: "0.6", shortAccount: "0.4", timestamp: 1732715400000 }],
      }),
      "GET /fapi/v1/klines": (req) =>
        req.query.symbol === "1000PEPEUSDT"
          ? {
              body: [
                [1732708800000, "0.018300", "0.018400", "0.018200", "0.018352", "1000000", 1732712399999, "18300", 50, "500000", "9150", "0"],
                [1732712400000, "0.018352", "0.018360", "0.018340", "0.018350", "200000", 1732715999999, "3670", 10, "100000", "1835", "0"],
              ],
            }
          : { status: 400, body: { code: -1121, msg: "Invalid symbol." } },
    });
    spot = await startStub({
      "GET /api/v3/ticker/price": (req) =>
        req.query.symbol === "PEPEUSDT" ? { body: { symbol: "PEPEUSDT", price: "0.00001836" } } : { status: 400, body: { code: -1121, msg: "Invalid symbol." } },
    });
  });
  afterAll(async () => {
    await fapi.close();
    await spot.close();
  });

  const client = () => new BinancePerpClient(fapi.url, { timeoutMs: 2000, spotBaseUrl: spot.url, retries: 0 });

  it("loads instruments once for concurrent callers and resolves 1000PEPE by canonical base", async () => {
    const c = client();
    const before = fapi.calls.length;
    const [list, pepe, eth] = await Promise.all([c.instruments(), c.instrument("pepe"), c.instrument("ETH")]);
    expect(list.map((i) => i.venueSymbol)).toEqual(["BTCUSDT", "1000PEPEUSDT"]);
    expect(pepe).toMatchObject({ venueSymbol: "1000PEPEUSDT", multiplier: 1000 });
    expect(eth).toBeUndefined();
    expect(fapi.calls.slice(before).filter((c) => c.startsWith("GET /fapi/v1/exchangeInfo"))).toHaveLength(1);
  });

  it("serves funding, open interest, history, ratio and spot price per ONE coin", async () => {
    const c = client();
    expect(await c.funding("PEPE")).toMatchObject({ base: "PEPE", fundingIntervalHours: 4, markPrice: 0.0000183524 });
    expect((await c.fundingAll()).map((s) => s.venueSymbol).sort()).toEqual(["1000PEPEUSDT", "BTCUSDT"]);
    expect(await c.openInterest("PEPE")).toEqual({ venue: "binance", base: "PEPE", oiCoins: 2_500_000_000, oiUsd: 45881, time: 1732715655001 });
    expect(await c.fundingHistory("PEPE", 1)).toEqual([{ venue: "binance", base: "PEPE", time: 2, rate: 0.0002, markPrice: null }]);
    expect(fapi.calls.some((u) => u === "GET /fapi/v1/fundingRate?symbol=1000PEPEUSDT&limit=1")).toBe(true);
    expect(await c.longShort("BTC")).toMatchObject({ longRatio: 0.6, shortRatio: 0.4, lsRatio: 1.5, source: "top_traders_positions", time: 1732715400000 });
    expect(await c.spotPrice("PEPE")).toBe(0.00001836);
  });

  it("serves hourly klines per ONE coin, oldest first, limit capped at 1500; -1121 → NOT_FOUND", async () => {
    const c = client();
    const k = await c.hourlyCandles("PEPE", 5000);
    expect(fapi.calls).toContain("GET /fapi/v1/klines?symbol=1000PEPEUSDT&interval=1h&limit=1500");
    expect(k.map((x) => [x.openTime, x.open, x.close, x.volumeCoins, x.volumeUsd])).toEqual([
      [1732708800000, 0.0000183, 0.000018352, 1_000_000_000, 18300],
      [1732712400000, 0.000018352, 0.00001835, 200_000_000, 3670],
    ]);
    expect(await c.hourlyCandles("PEPE", 0.5)).toEqual([]);
    await expect(c.hourlyCandles("BTC", 2)).rejects.toMatchObject({ code: "NOT_FOUND" }); // listed; the stub answers -1121
    await expect(c.hourlyCandles("DOGE", 2)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("answers NOT_FOUND for unlisted bases and invalid spot symbols", async () => {
    const c = client();
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.spotPrice("NOPE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("maps HTTP 451 (restricted location) to UPSTREAM_UNAVAILABLE", async () => {
    const blocked = await startStub({ "GET /fapi/v1/exchangeInfo": () => ({ status: 451, body: { code: 0, msg: "Service unavailable from a restricted location" } }) });
    try {
      const c = new BinancePerpClient(blocked.url, { timeoutMs: 2000, retries: 0 });
      await expect(c.instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    } finally {
      await blocked.close();
    }
  });
});
