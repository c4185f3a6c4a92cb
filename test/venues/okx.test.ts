import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAppError } from "../helpers/errors.js";
import { OkxPerpClient } from "../../src/venues/okx/client.js";
import {
  fromOkxSymbol,
  okxIndexId,
  okxInstFamily,
  parseCandles,
  parseFundingRate,
  parseFundingRateHistory,
  parseIndexTickers,
  parseInstruments,
  parseMarkPrices,
  parseOpenInterest,
  parsePositionTiers,
  parseTopTraderPositionRatio,
  toOkxSymbol,
} from "../../src/venues/okx/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const instruments = () => parseInstruments(fixture("okx/instruments_swap_2022-05-13_trimmed.json"));
const indexOf = (list: PerpInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
const get = (base: string) => instruments().find((i) => i.base === base)!;

describe("okx symbol normalisation", () => {
  it("maps instIds both ways", () => {
    expect(fromOkxSymbol("BTC-USDT-SWAP")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromOkxSymbol("1INCH-USDT-SWAP")).toEqual({ base: "1INCH", multiplier: 1 });
    expect(fromOkxSymbol("BTC-USD-SWAP")).toBeUndefined();
    expect(fromOkxSymbol("BTC-USDT-240329")).toBeUndefined();
    expect(toOkxSymbol("pepe")).toBe("PEPE-USDT-SWAP");
    expect(okxIndexId("BTC-USDT-SWAP")).toBe("BTC-USDT");
    expect(okxInstFamily("BTC-USDT-SWAP")).toBe("BTC-USDT");
    expect(okxInstFamily("1INCH-USDT-SWAP")).toBe("1INCH-USDT");
  });
});

describe("okx parsers on recorded payloads", () => {
  it("keeps live USDT swaps of a real instruments body with contractSize = ctVal × ctMult", () => {
    expect(instruments().map((i) => [i.venueSymbol, i.base, i.contractSize, i.multiplier])).toEqual([
      ["BTC-USDT-SWAP", "BTC", 0.01, 1],
      ["ETH-USDT-SWAP", "ETH", 0.1, 1],
      ["1INCH-USDT-SWAP", "1INCH", 1, 1],
      ["SHIB-USDT-SWAP", "SHIB", 1_000_000, 1],
      ["WNCG-USDT-SWAP", "WNCG", 1, 1],
    ]);
    // current schema (2025): the inverse BTC-USD-SWAP is dropped
    expect(parseInstruments(fixture("okx/instruments_swap_nautilus_2025.json")).map((i) => [i.venueSymbol, i.contractSize])).toEqual([
      ["ETH-USDT-SWAP", 0.1],
      ["BTC-USDT-SWAP", 0.01],
    ]);
    expect(instruments()[0]).not.toHaveProperty("fundingIntervalHours");
  });

  it("parses funding-rate (docs example): interval from nextFundingTime − fundingTime, settles at fundingTime", () => {
    const marks = parseMarkPrices(fixture("okx/mark_price_BTC-USDT-SWAP_2025-04-14.json"));
    const indexes = parseIndexTickers(fixture("okx/index_tickers_BTC-USDT_2025-05-11.json"));
    expect(marks).toEqual(new Map([["BTC-USDT-SWAP", 84660.1]]));
    expect(indexes).toEqual(new Map([["BTC-USDT", 103895]]));
    expect(parseFundingRate(fixture("okx/funding_rate_docs_example.json"), indexOf(instruments()), { marks, indexes })).toEqual([
      {
        venue: "okx",
        base: "BTC",
        venueSymbol: "BTC-USDT-SWAP",
        fundingRate: 0.000079238688534,
        fundingIntervalHours: 8,
        nextFundingTime: 1703088000000,
        markPrice: 84660.1,
        indexPrice: 103895,
        premium: 0.0001233824646391,
        interestRate: null,
        time: 1703070685309,
      },
    ]);
  });

  it("detects 4h and 1h intervals", () => {
    const row = (ft: number, nft: number) => ({
      code: "0",
      msg: "",
      data: [{ instId: "BTC-USDT-SWAP", fundingRate: "0.0001", fundingTime: String(ft), nextFundingTime: String(nft), ts: "1" }],
    });
    const idx = indexOf(instruments());
    expect(parseFundingRate(row(1703088000000, 1703102400000), idx)[0]?.fundingIntervalHours).toBe(4);
    expect(parseFundingRate(row(1703088000000, 1703091600000), idx)[0]?.fundingIntervalHours).toBe(1);
  });

  it("parses a real 2021 funding-rate push (REST envelope; no nextFundingTime or ts) with mark and index pushes", () => {
    const marks = parseMarkPrices(fixture("okx/mark_price_WNCG-USDT-SWAP_2021-12-22_from_ws.json"));
    const indexes = parseIndexTickers(fixture("okx/index_tickers_WNCG-USDT_2021-12-22_from_ws.json"));
    const [s] = parseFundingRate(fixture("okx/funding_rate_WNCG-USDT-SWAP_2021-12-22_from_ws.json"), indexOf(instruments()), { marks, indexes, now: 1640131260000 });
    expect(s).toEqual({
      venue: "okx",
      base: "WNCG",
      venueSymbol: "WNCG-USDT-SWAP",
      fundingRate: 0.00048105,
      fundingIntervalHours: 8,
      nextFundingTime: 1640131200000,
      markPrice: 2.1729,
      indexPrice: 2.1675,
      premium: null,
      interestRate: null,
      time: 1640131260000,
    });
    // the SOS push of the same recording carries no fundingRate: skipped, never invented
    const sos = { code: "0", msg: "", data: [{ fundingTime: "1640851200000", instId: "WNCG-USDT-SWAP", instType: "SWAP", nextFundingRate: "0.0003" }] };
    expect(parseFundingRate(sos, indexOf(instruments()))).toEqual([]);
  });

  it("parses real funding-rate-history preferring realizedRate, newest first", () => {
    expect(parseFundingRateHistory(fixture("okx/funding_rate_history_BTC-USDT-SWAP_2024-01-01.json"), get("BTC"))).toEqual([
      { venue: "okx", base: "BTC", time: 1704067200000, rate: 0.00015, markPrice: null },
      { venue: "okx", base: "BTC", time: 1704038400000, rate: -0.00002, markPrice: null },
    ]);
    const noRealized = { code: "0", msg: "", data: [{ instId: "BTC-USDT-SWAP", fundingRate: "0.0001", realizedRate: "", fundingTime: "5" }] };
    expect(parseFundingRateHistory(noRealized, get("BTC"))[0]?.rate).toBe(0.0001);
  });

  it("parses open interest: oiCcy/oiUsd (docs example), a real push without oiUsd, contracts × ctVal", () => {
    expect(parseOpenInterest(fixture("okx/open_interest_docs_example.json"), get("BTC"))).toEqual({
      venue: "okx",
      base: "BTC",
      oiCoins: 555.55,
      oiUsd: 50000,
      time: 1597026383085,
    });
    const wncg = fixture("okx/open_interest_WNCG-USDT-SWAP_2021-12-22_from_ws.json");
    expect(parseOpenInterest(wncg, get("WNCG"), 2.1729)).toEqual({ venue: "okx", base: "WNCG", oiCoins: 644195, oiUsd: 1399771.3155, time: 1640131258756 });
    expectAppError(() => parseOpenInterest(wncg, get("WNCG")), "UPSTREAM_ERROR");
    const contractsOnly = { code: "0", msg: "", data: [{ instType: "SWAP", instId: "BTC-USDT-SWAP", oi: "5000", oiUsd: "300000", ts: "1" }] };
    expect(parseOpenInterest(contractsOnly, get("BTC"))).toMatchObject({ oiCoins: 50, oiUsd: 300000 });
  });

  it("parses the rubik top-trader position ratio (docs shape; no real body exists)", () => {
    expect(parseTopTraderPositionRatio(fixture("okx/top_trader_position_ratio_docs_shape.json"), get("BTC"), "5m")).toEqual({
      venue: "okx",
      base: "BTC",
      longRatio: 0.484498956158664,
      shortRatio: 0.515501043841336,
      lsRatio: 0.9398602814619824,
      source: "top_traders_positions",
      period: "5m",
      time: 1729323600000,
    });
    expect(parseTopTraderPositionRatio({ code: "0", msg: "", data: [] }, get("BTC"), "5m")).toBeNull();
  });

  it("parses real position-tiers rows (MARGIN body, same row shape): contracts × contractSize × price in USD", () => {
    // BTC-USDT-SWAP: contractSize 0.01; minSz 0 / maxSz 50 at a 100,000 USD price → 0 .. 50,000 USD
    expect(parsePositionTiers(fixture("okx/position_tiers_MARGIN_BTC-USDT_nautilus_2025.json"), get("BTC"), 100_000)).toEqual([
      { venue: "okx", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 50_000, maxLeverage: 10, maintenanceMarginRate: 0.03 },
    ]);
  });

  it("sorts SWAP tiers by tier number, leaves an empty maxSz unbounded and skips other families", () => {
    const row = (tier: string, minSz: string, maxSz: string, mmr: string, maxLever: string, family = "SHIB-USDT") => ({
      baseMaxLoan: "",
      imr: String(1 / Number(maxLever)),
      instFamily: family,
      instId: "",
      maxLever,
      maxSz,
      minSz,
      mmr,
      optMgnFactor: "0",
      quoteMaxLoan: "",
      tier,
      uly: family,
    });
    const raw = {
      code: "0",
      msg: "",
      data: [row("2", "2000", "", "0.015", "20"), row("1", "0", "2000", "0.01", "50"), row("1", "0", "9", "0.5", "2", "ETH-USDT")],
    };
    // SHIB-USDT-SWAP: 1,000,000 coins per contract at 0.00001 USD = 10 USD per contract
    expect(parsePositionTiers(raw, get("SHIB"), 0.00001)).toEqual([
      { venue: "okx", base: "SHIB", minNotionalUsd: 0, maxNotionalUsd: 20_000, maxLeverage: 50, maintenanceMarginRate: 0.01 },
      { venue: "okx", base: "SHIB", minNotionalUsd: 20_000, maxNotionalUsd: null, maxLeverage: 20, maintenanceMarginRate: 0.015 },
    ]);
    expectAppError(() => parsePositionTiers({ code: "51001", msg: "Instrument ID does not exist", data: [] }, get("SHIB"), 1), "NOT_FOUND");
    expectAppError(() => parsePositionTiers({ code: "0", msg: "", data: [{ tier: "1", minSz: "0", maxSz: "5", mmr: "x", maxLever: "5" }] }, get("SHIB"), 1), "UPSTREAM_ERROR");
  });

  it("parses real 1m candles (newest first) oldest first: volCcy coins, volCcyQuote USD", () => {
    expect(parseCandles(fixture("okx/candles_BTC-USDT-SWAP_1m_2025-05-12.json"), get("BTC"))).toEqual([
      { venue: "okx", base: "BTC", openTime: 1747093980000, open: 102806, high: 102820.5, low: 102783.1, close: 102806.1, volumeCoins: 71.6404, volumeUsd: 7364701.57952 },
      { venue: "okx", base: "BTC", openTime: 1747094040000, open: 102806.1, high: 102820.4, low: 102806.1, close: 102820.4, volumeCoins: 10.4037, volumeUsd: 1069603.34883 },
    ]);
    // older 7-column rows: no volCcyQuote → coins × close; without volCcy, contracts × contractSize
    const old = {
      code: "0",
      msg: "",
      data: [
        ["1700000000000", "10", "12", "9", "11", "300", "3"],
        ["1699996400000", "9", "10", "8", "10", "200", ""],
      ],
    };
    expect(parseCandles(old, get("BTC")).map((c) => [c.openTime, c.volumeCoins, c.volumeUsd])).toEqual([
      [1699996400000, 2, 20],
      [1700000000000, 3, 33],
    ]);
    expectAppError(() => parseCandles({ code: "51001", msg: "Instrument ID does not exist", data: [] }, get("BTC")), "NOT_FOUND");
    expectAppError(() => parseCandles({ code: "0", msg: "", data: [["1", "2", "3"]] }, get("BTC")), "UPSTREAM_ERROR");
  });

  it("maps envelope errors: 51001 → NOT_FOUND on an instrument request, others → UPSTREAM_ERROR", () => {
    const missing = { code: "51001", msg: "Instrument ID does not exist", data: [] };
    expectAppError(() => parseFundingRateHistory(missing, get("BTC")), "NOT_FOUND");
    expectAppError(() => parseFundingRate(missing, indexOf(instruments()), { instId: "BTC-USDT-SWAP" }), "NOT_FOUND");
    expectAppError(() => parseInstruments({ code: "50011", msg: "Too Many Requests", data: [] }), "UPSTREAM_ERROR");
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parseInstruments({ code: "0", data: [{ instId: "BTC-USDT-SWAP" }] }), "UPSTREAM_ERROR");
    expectAppError(() => parseFundingRate({ data: [] }, indexOf(instruments())), "UPSTREAM_ERROR");
    expectAppError(() => parseTopTraderPositionRatio({ code: "0", data: [{ ts: "1" }] }, get("BTC"), "5m"), "UPSTREAM_ERROR");
    expectAppError(() => parseOpenInterest({ code: "0", data: [{ instId: "BTC-USDT-SWAP", oiCcy: "abc", ts: "1" }] }, get("BTC")), "UPSTREAM_ERROR");
  });
});

describe("okx client against a local stub", () => {
  let stub: RunningStub;
  const ok = (data: unknown) => ({ body: { code: "0", msg: "", data } });

  beforeAll(async () => {
    stub = await startStub({
      "GET /api/v5/public/instruments": () => ({ body: fixture("okx/instruments_swap_2022-05-13_trimmed.json") }),
      "GET /api/v5/public/funding-rate": (req) =>
        req.query.instId === "ANY" || req.query.instId === "BTC-USDT-SWAP"
          ? ok([
              { instId: "BTC-USDT-SWAP", fundingRate: "0.0001", fundingTime: "1703088000000", nextFundingTime: "1703102400000", premium: "0.0002", ts: "1703070685309" },
              ...(req.query.instId === "ANY"
                ? [{ instId: "ETH-USDT-SWAP", fundingRate: "-0.0001", fundingTime: "1703088000000", nextFundingTime: "1703116800000", premium: "", ts: "1703070685309" }]
                : []),
            ])
          : { status: 400, body: { code: "51001", msg: "Instrument ID does not exist", data: [] } },
      "GET /api/v5/public/mark-price": (req) =>
        req.query.instId === "SHIB-USDT-SWAP"
          ? ok([{ instType: "SWAP", instId: "SHIB-USDT-SWAP", markPx: "0.0000105", ts: "1" }])
          : ok([
              { instType: "SWAP", instId: "BTC-USDT-SWAP", markPx: "42000.5", ts: "1" },
              ...(req.query.instId ? [] : [{ instType: "SWAP", instId: "ETH-USDT-SWAP", markPx: "2200", ts: "1" }]),
            ]),
      "GET /api/v5/market/index-tickers": (req) =>
        req.query.quoteCcy === "USDT" ? { status: 400, body: { code: "50014", msg: "unsupported" } } : ok([{ instId: "BTC-USDT", idxPx: "42010", ts: "1" }]),
      "GET /api/v5/public/open-interest": () => ok([{ instType: "SWAP", instId: "SHIB-USDT-SWAP", oi: "12", oiCcy: "12000000", ts: "7" }]),
      "GET /api/v5/public/funding-rate-history": () => ok([{ instId: "BTC-USDT-SWAP", fundingRate: "0.0001", realizedRate: "0.00009", fundingTime: "1703059200000" }]),
      "GET /api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader": () => ok([["1729323600000", "1.5"]]),
      "GET /api/v5/public/position-tiers": (req) =>
        req.query.instFamily === "BTC-USDT"
          ? ok([
              { tier: "2", minSz: "2000", maxSz: "4000", mmr: "0.005", imr: "0.0133", maxLever: "75", instFamily: "BTC-USDT", uly: "BTC-USDT", instId: "" },
              { tier: "1", minSz: "0", maxSz: "2000", mmr: "0.004", imr: "0.01", maxLever: "100", instFamily: "BTC-USDT", uly: "BTC-USDT", instId: "" },
            ])
          : { body: { code: "51001", msg: "Instrument ID does not exist", data: [] } },
      "GET /api/v5/market/candles": () =>
        ok([
          ["1703073600000", "42010", "42100", "41990", "42050", "120", "1.2", "50460", "0"],
          ["1703070000000", "42000", "42020", "41900", "42010", "300", "3", "126000", "1"],
        ]),
    });
  });
  afterAll(() => stub.close());

  it("serves funding with mark/index, degrades when the all-index call fails, derives OI USD from the mark", async () => {
    const c = new OkxPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    // funding(base) reads the all-swaps snapshot, here with the all-index call failing (index degrades to null)
    expect(await c.funding("BTC")).toMatchObject({ fundingIntervalHours: 4, nextFundingTime: 1703088000000, markPrice: 42000.5, indexPrice: null });
    const all = await c.fundingAll();
    expect(stub.calls.filter((x) => x.startsWith("GET /api/v5/public/funding-rate?"))).toEqual(["GET /api/v5/public/funding-rate?instId=ANY"]);
    expect(all.map((s) => [s.base, s.fundingIntervalHours, s.markPrice, s.indexPrice])).toEqual([
      ["BTC", 4, 42000.5, null],
      ["ETH", 8, 2200, null],
    ]);
    expect(stub.calls).toContain("GET /api/v5/public/funding-rate?instId=ANY");
    // SHIB-USDT-SWAP: no oiUsd in the answer → oiCcy coins × mark price
    expect(await c.openInterest("SHIB")).toEqual({ venue: "okx", base: "SHIB", oiCoins: 12_000_000, oiUsd: 126, time: 7 });
    expect(stub.calls).toContain("GET /api/v5/public/mark-price?instType=SWAP&instId=SHIB-USDT-SWAP");
    expect(await c.fundingHistory("BTC", 500)).toEqual([{ venue: "okx", base: "BTC", time: 1703059200000, rate: 0.00009, markPrice: null }]);
    expect(stub.calls).toContain("GET /api/v5/public/funding-rate-history?instId=BTC-USDT-SWAP&limit=100");
    expect(await c.longShort("BTC")).toMatchObject({ longRatio: 0.6, shortRatio: 0.4, lsRatio: 1.5, source: "top_traders_positions" });
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("serves position tiers in USD at the snapshot's mark price and hourly candles oldest first, limit capped at 300", async () => {
    const c = new OkxPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    // BTC-USDT-SWAP: 0.01 BTC per contract, mark 42000.5 → 420.005 USD per contract
    expect(await c.marginTiers("btc")).toEqual([
      { venue: "okx", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 840_010, maxLeverage: 100, maintenanceMarginRate: 0.004 },
      { venue: "okx", base: "BTC", minNotionalUsd: 840_010, maxNotionalUsd: 1_680_020, maxLeverage: 75, maintenanceMarginRate: 0.005 },
    ]);
    expect(stub.calls).toContain("GET /api/v5/public/position-tiers?instType=SWAP&tdMode=cross&instFamily=BTC-USDT");
    await expect(c.marginTiers("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });

    const candles = await c.hourlyCandles("BTC", 1000);
    expect(stub.calls).toContain("GET /api/v5/market/candles?instId=BTC-USDT-SWAP&bar=1H&limit=300");
    expect(candles.map((k) => [k.openTime, k.open, k.close, k.volumeCoins, k.volumeUsd])).toEqual([
      [1703070000000, 42000, 42010, 3, 126000],
      [1703073600000, 42010, 42050, 1.2, 50460],
    ]);
    expect((await c.hourlyCandles("BTC", 1)).map((k) => k.openTime)).toEqual([1703073600000]);
    const before = stub.calls.length;
    expect(await c.hourlyCandles("BTC", 0)).toEqual([]);
    expect(stub.calls.length).toBe(before);
  });
});
