import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AsterPerpClient } from "../../src/venues/aster/client.js";
import { ASTER_ENDPOINTS } from "../../src/venues/aster/endpoints.js";
import { asterPredicted, parseAsterExchangeInfo, parseAsterFundingInfo, parseAsterPremiumIndex } from "../../src/venues/aster/parse.js";
import { parseFundingRateHistory, parseKlines, parseOpenInterest } from "../../src/venues/binance/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { expectAppError } from "../helpers/errors.js";
import { startStub, type RunningStub } from "./perp-server.js";

const BTC: PerpInstrument = { venue: "aster", base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 };
const PEPE: PerpInstrument = { venue: "aster", base: "PEPE", venueSymbol: "1000PEPEUSDT", multiplier: 1000, contractSize: 1 };

describe("aster parsers on recorded payloads", () => {
  it("reads the docs' exchangeInfo as written (DOGEUSDT with baseAsset BLZ) under the aster key", () => {
    expect(parseAsterExchangeInfo(fixture("aster/exchangeInfo_docs_example.json"))).toEqual([
      { venue: "aster", base: "BLZ", venueSymbol: "DOGEUSDT", multiplier: 1, contractSize: 1 },
    ]);
  });

  it("accepts a live exchangeInfo whose symbols ccxt emptied (serverTime a string) as no instruments", () => {
    expect(parseAsterExchangeInfo(fixture("aster/exchangeInfo_no_symbols_2026_ccxt.json"))).toEqual([]);
  });

  it("reads fundingInfo intervals from the live body (nullable caps) and the docs example (a 4 h symbol)", () => {
    expect(parseAsterFundingInfo(fixture("aster/fundingInfo_BTCUSDT_2025-10-15_ccxt.json"))).toEqual(new Map([["BTCUSDT", 8]]));
    expect(parseAsterFundingInfo(fixture("aster/fundingInfo_docs_example.json"))).toEqual(
      new Map([
        ["INJUSDT", 8],
        ["ZORAUSDT", 4],
      ]),
    );
  });

  it("parses the live single-symbol premiumIndex into a funding snapshot, a fraction per 8 h", () => {
    const snaps = parseAsterPremiumIndex(fixture("aster/premiumIndex_BTCUSDT_2025-06-17_ccxt.json"), new Map([["BTCUSDT", BTC]]), new Map());
    expect(snaps).toEqual([
      {
        venue: "aster",
        base: "BTC",
        venueSymbol: "BTCUSDT",
        fundingRate: 0.0001,
        fundingIntervalHours: 8,
        nextFundingTime: 1750176000000,
        markPrice: 106630.71786957,
        indexPrice: 106678.52086957,
        premium: null,
        interestRate: 0.0001,
        time: 1750147224000,
      },
    ]);
    expect(asterPredicted(snaps[0]!)).toEqual({ venue: "aster", base: "BTC", rate: 0.0001, nextFundingTime: 1750176000000, fundingIntervalHours: 8 });
  });

  it("parses the live all-symbols premiumIndex array, takes the interval from fundingInfo and skips unlisted symbols", () => {
    const raw = fixture("aster/premiumIndex_all_2025-06-17_ccxt.json");
    const intervals = new Map([["BTCUSDT", 4]]);
    expect(parseAsterPremiumIndex(raw, new Map([["BTCUSDT", BTC]]), intervals).map((s) => [s.base, s.fundingIntervalHours, s.markPrice])).toEqual([["BTC", 4, 106630.71786957]]);
    expect(parseAsterPremiumIndex(raw, new Map([["1000PEPEUSDT", PEPE]]), intervals)).toEqual([]);
  });

  it("undoes a 1000× multiplier on premiumIndex prices (the live row read as 1000PEPEUSDT)", () => {
    const row = { ...(fixture("aster/premiumIndex_BTCUSDT_2025-06-17_ccxt.json") as object), symbol: "1000PEPEUSDT" };
    const [snap] = parseAsterPremiumIndex(row, new Map([["1000PEPEUSDT", PEPE]]), new Map());
    expect(snap).toMatchObject({ venue: "aster", base: "PEPE", markPrice: 106.63071786957, indexPrice: 106.67852086957 });
  });

  it("has no predicted rate when the venue names no next settlement", () => {
    const row = { ...(fixture("aster/premiumIndex_BTCUSDT_2025-06-17_ccxt.json") as object), nextFundingTime: 0 };
    const [snap] = parseAsterPremiumIndex(row, new Map([["BTCUSDT", BTC]]), new Map());
    expect(snap!.nextFundingTime).toBeNull();
    expect(asterPredicted(snap!)).toBeNull();
  });

  it("parses live fundingRate rows, which carry no markPrice (→ null), where Binance's do", () => {
    expect(parseFundingRateHistory(fixture("aster/fundingRate_BTCUSDT_2025-06-16_ccxt.json"), BTC)).toEqual([
      { venue: "aster", base: "BTC", time: 1750060800000, rate: 0.0001, markPrice: null },
    ]);
  });

  it("parses live klines (5m row; same layout as 1h): prices per coin, volume in coins, quote volume as USD", () => {
    expect(parseKlines(fixture("aster/klines_BTCUSDT_5m_2025-06-13_ccxt.json"), BTC)).toEqual([
      { venue: "aster", base: "BTC", openTime: 1749806400000, open: 104577.2, high: 104625, low: 104563.5, close: 104587.3, volumeCoins: 17.771, volumeUsd: 1858831.3349 },
    ]);
    const [pepe] = parseKlines(fixture("aster/klines_BTCUSDT_5m_2025-06-13_ccxt.json"), PEPE);
    expect(pepe).toMatchObject({ base: "PEPE", open: 104.5772, volumeCoins: 17771 });
  });

  it("converts open interest with Binance's parser (no Aster body exists: Binance's docs example)", () => {
    const oi = parseOpenInterest(fixture("binance/openInterest_docs_example.json"), PEPE, 0.0000183);
    expect(oi).toMatchObject({ venue: "aster", base: "PEPE", oiCoins: 10_659_509, time: 1589437530011 });
    expect(oi.oiUsd).toBeCloseTo(195.0690147, 6);
  });

  it("rejects bodies of another shape with UPSTREAM_ERROR naming aster", () => {
    expectAppError(() => parseAsterExchangeInfo(fixture("aster/error_invalid_symbol_docs_example.json")), "UPSTREAM_ERROR", /^aster \/fapi\/v1\/exchangeInfo/);
    expectAppError(() => parseAsterPremiumIndex({ symbol: "BTCUSDT" }, new Map(), new Map()), "UPSTREAM_ERROR", /^aster \/fapi\/v1\/premiumIndex/);
    expectAppError(() => parseFundingRateHistory(fixture("aster/error_invalid_symbol_docs_example.json"), BTC), "UPSTREAM_ERROR", /^aster /);
  });

  it("states budgets under the published 2,400 weight/min", () => {
    expect(ASTER_ENDPOINTS.rest.fapi.callsPerMin * 4).toBeLessThanOrEqual(2400);
    expect(ASTER_ENDPOINTS.backfill.callsPerMin * 20).toBeLessThanOrEqual(2400 - ASTER_ENDPOINTS.rest.fapi.callsPerMin);
  });
});

describe("aster client against a local stub", () => {
  let fapi: RunningStub;
  // Stub listing (wiring only): two trading perpetuals and one that is not trading.
  const exchangeInfo = {
    symbols: [
      { symbol: "BTCUSDT", contractType: "PERPETUAL", status: "TRADING", baseAsset: "BTC", quoteAsset: "USDT" },
      { symbol: "1000PEPEUSDT", contractType: "PERPETUAL", status: "TRADING", baseAsset: "1000PEPE", quoteAsset: "USDT" },
      { symbol: "ETHUSDT", contractType: "PERPETUAL", status: "SETTLING", baseAsset: "ETH", quoteAsset: "USDT" },
    ],
  };
  const premium = fixture("aster/premiumIndex_BTCUSDT_2025-06-17_ccxt.json") as { symbol: string };
  const invalid = { status: 400, body: fixture("aster/error_invalid_symbol_docs_example.json") };

  beforeAll(async () => {
    fapi = await startStub({
      "GET /fapi/v1/exchangeInfo": () => ({ body: exchangeInfo }),
      "GET /fapi/v1/fundingInfo": () => ({ body: fixture("aster/fundingInfo_BTCUSDT_2025-10-15_ccxt.json") }),
      "GET /fapi/v1/premiumIndex": (req) => (req.query.symbol === undefined ? { body: [premium] } : req.query.symbol === "BTCUSDT" ? { body: premium } : invalid),
      "GET /fapi/v1/openInterest": (req) => (req.query.symbol === "BTCUSDT" ? { body: fixture("binance/openInterest_docs_example.json") } : invalid),
      "GET /fapi/v1/fundingRate": () => ({ body: fixture("aster/fundingRate_BTCUSDT_2025-06-16_ccxt.json") }),
      "GET /fapi/v1/klines": (req) => (req.query.symbol === "BTCUSDT" ? { body: fixture("aster/klines_BTCUSDT_5m_2025-06-13_ccxt.json") } : invalid),
    });
  });
  afterAll(async () => {
    await fapi.close();
  });

  const client = () => new AsterPerpClient(fapi.url, { timeoutMs: 2000, retries: 0 });

  it("loads exchangeInfo and fundingInfo once for concurrent callers; resolves PEPE to 1000PEPEUSDT", async () => {
    const c = client();
    const before = fapi.calls.length;
    const [list, pepe, eth] = await Promise.all([c.instruments(), c.instrument("pepe"), c.instrument("ETH")]);
    expect(list.map((i) => [i.venue, i.venueSymbol])).toEqual([
      ["aster", "BTCUSDT"],
      ["aster", "1000PEPEUSDT"],
    ]);
    expect(pepe).toMatchObject({ venueSymbol: "1000PEPEUSDT", multiplier: 1000 });
    expect(eth).toBeUndefined();
    const calls = fapi.calls.slice(before);
    expect(calls.filter((u) => u === "GET /fapi/v1/exchangeInfo")).toHaveLength(1);
    expect(calls.filter((u) => u === "GET /fapi/v1/fundingInfo")).toHaveLength(1);
  });

  it("serves funding, the predicted rate, history, open interest and candles with the venue's paths and parameters", async () => {
    const c = client();
    expect(await c.funding("BTC")).toMatchObject({ venue: "aster", fundingRate: 0.0001, fundingIntervalHours: 8, markPrice: 106630.71786957 });
    expect(fapi.calls).toContain("GET /fapi/v1/premiumIndex?symbol=BTCUSDT");
    expect(await c.predictedFunding("BTC")).toEqual({ venue: "aster", base: "BTC", rate: 0.0001, nextFundingTime: 1750176000000, fundingIntervalHours: 8 });
    expect((await c.fundingAll()).map((s) => s.venueSymbol)).toEqual(["BTCUSDT"]);
    expect(fapi.calls).toContain("GET /fapi/v1/premiumIndex");
    expect(await c.fundingHistory("BTC", 5000)).toEqual([{ venue: "aster", base: "BTC", time: 1750060800000, rate: 0.0001, markPrice: null }]);
    expect(fapi.calls).toContain("GET /fapi/v1/fundingRate?symbol=BTCUSDT&limit=1000");
    expect(await c.fundingHistory("BTC", 0)).toEqual([]);
    const oi = await c.openInterest("BTC");
    expect(oi).toMatchObject({ venue: "aster", base: "BTC", oiCoins: 10659.509 });
    expect(oi.oiUsd).toBeCloseTo(10659.509 * 106630.71786957, 2);
    expect(fapi.calls).toContain("GET /fapi/v1/openInterest?symbol=BTCUSDT");
    expect((await c.hourlyCandles("BTC", 2)).map((k) => k.close)).toEqual([104587.3]);
    expect(fapi.calls).toContain("GET /fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=2");
  });

  it("publishes no long/short ratio, open-interest history or margin tiers", async () => {
    const c = client();
    expect(await c.longShort("BTC")).toBeNull();
    expect("openInterestHistory" in c).toBe(false);
    expect("marginTiers" in c).toBe(false);
    await expect(c.longShort("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("maps -1121 and unlisted bases to NOT_FOUND", async () => {
    const c = client();
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.funding("PEPE")).rejects.toMatchObject({ code: "NOT_FOUND", message: "aster does not list PEPE" }); // listed; the stub answers -1121
    await expect(c.hourlyCandles("PEPE", 2)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it.each([
    [451, "UPSTREAM_UNAVAILABLE"],
    [418, "UPSTREAM_UNAVAILABLE"],
    [403, "UPSTREAM_UNAVAILABLE"],
    [400, "UPSTREAM_ERROR"],
  ])("maps HTTP %i to %s", async (status, code) => {
    const stub = await startStub({ "GET /fapi/v1/exchangeInfo": () => ({ status, body: { code: -1000, msg: "refused" } }), "GET /fapi/v1/fundingInfo": () => ({ body: [] }) });
    try {
      await expect(new AsterPerpClient(stub.url, { timeoutMs: 2000, retries: 0 }).instruments()).rejects.toMatchObject({ code });
    } finally {
      await stub.close();
    }
  });
});
