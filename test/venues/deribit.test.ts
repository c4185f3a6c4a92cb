import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeribitPerpClient, settlementCurrencies } from "../../src/venues/deribit/client.js";
import {
  fromDeribitName,
  isInverseName,
  parseBookSummary,
  parseChart,
  parseDeribitError,
  parseFundingHistory,
  parseInstruments,
  parseTicker,
  parseTickerOpenInterest,
} from "../../src/venues/deribit/parse.js";
import { DERIBIT_ENDPOINTS } from "../../src/venues/deribit/endpoints.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { expectAppError } from "../helpers/errors.js";
import { startStub, type RunningStub } from "./perp-server.js";

const btc = { venue: "deribit", base: "BTC", venueSymbol: "BTC-PERPETUAL", multiplier: 1, contractSize: 1 } as PerpInstrument;
const pepe = { venue: "deribit", base: "PEPE", venueSymbol: "1000PEPE_USDC-PERPETUAL", multiplier: 1000, contractSize: 1 } as PerpInstrument;
const HOUR = 3_600_000;

describe("deribit instrument names", () => {
  it("maps inverse, linear and 1000-prefixed perpetuals, and nothing else", () => {
    expect(fromDeribitName("BTC-PERPETUAL")).toEqual({ base: "BTC", multiplier: 1, inverse: true });
    expect(fromDeribitName("SOL_USDC-PERPETUAL")).toEqual({ base: "SOL", multiplier: 1, inverse: false });
    expect(fromDeribitName("1000PEPE_USDC-PERPETUAL")).toEqual({ base: "PEPE", multiplier: 1000, inverse: false });
    expect(fromDeribitName("BTC-27DEC24")).toBeUndefined();
    expect(fromDeribitName("BTC-27DEC24-100000-C")).toBeUndefined();
    expect(fromDeribitName("SOL_USDC-27MAR26")).toBeUndefined();
    expect(isInverseName("ETH-PERPETUAL")).toBe(true);
    expect(isInverseName("ETH_USDC-PERPETUAL")).toBe(false);
  });

  it("states a budget under Deribit's 20 requests/s non-matching credit refill", () => {
    const { callsPerMin, windowSec } = DERIBIT_ENDPOINTS.rest.api;
    expect(callsPerMin + DERIBIT_ENDPOINTS.backfill.callsPerMin).toBeLessThanOrEqual(20 * 60);
    expect((callsPerMin / 60) * windowSec).toBeLessThanOrEqual(100); // the 50,000 / 500 burst
  });
});

describe("deribit parsers on recorded payloads", () => {
  it("keeps only the perpetual of a real (testnet) future/option/combo list", () => {
    expect(parseInstruments(fixture("deribit/instruments_future_nautilus_testnet.json"))).toEqual([btc]);
  });

  it("lists linear USDC perpetuals (1000PEPE undone) after the inverse ones, skipping dated futures", () => {
    const linear = parseInstruments(fixture("deribit/DERIVED_instruments_linear.json"));
    expect(linear.map((i) => i.venueSymbol)).toEqual(["SOL_USDC-PERPETUAL", "1000PEPE_USDC-PERPETUAL", "BTC_USDC-PERPETUAL"]);
    expect(linear[1]).toEqual(pepe);
    const both = parseInstruments({
      result: [
        ...(fixture("deribit/DERIVED_instruments_linear.json") as { result: unknown[] }).result,
        ...(fixture("deribit/instruments_future_nautilus_testnet.json") as { result: unknown[] }).result,
      ],
    });
    expect(both[0]!.venueSymbol).toBe("BTC-PERPETUAL");
    expect(settlementCurrencies(both)).toEqual(["BTC", "USDC"]);
  });

  it("reads funding_8h as the rate per 8 h from a real BTC-PERPETUAL ticker", () => {
    expect(parseTicker(fixture("deribit/ticker_BTC-PERPETUAL_2025-12-12_from_ws.json"), btc)).toEqual({
      venue: "deribit",
      base: "BTC",
      venueSymbol: "BTC-PERPETUAL",
      fundingRate: 0.00001742,
      fundingIntervalHours: 8,
      nextFundingTime: null,
      markPrice: 92281.78,
      indexPrice: 92263.55,
      premium: null,
      interestRate: null,
      time: 1765541474086,
    });
  });

  it("turns inverse USD open interest into coins by the mark price", () => {
    const oi = parseTickerOpenInterest(fixture("deribit/ticker_BTC-PERPETUAL_2025-12-12_from_ws.json"), btc);
    expect(oi.oiUsd).toBe(1132329370);
    expect(oi.oiCoins).toBeCloseTo(1132329370 / 92281.78, 6);
    expect(oi.oiCoins).toBeCloseTo(12270.35, 1);
  });

  it("reads linear open interest as coins (× 1000 for 1000PEPE) and prices per coin", () => {
    const raw = { result: { instrument_name: "1000PEPE_USDC-PERPETUAL", timestamp: 1, mark_price: 0.0045, index_price: 0.0045, open_interest: 2000, funding_8h: 0.0001 } };
    expect(parseTickerOpenInterest(raw, pepe)).toMatchObject({ oiCoins: 2_000_000, oiUsd: 9 });
    expect(parseTicker(raw, pepe).markPrice).toBe(0.0000045);
  });

  it("snapshots every perpetual of a book summary, skipping dated futures and options", () => {
    const idx = new Map([[btc.venueSymbol, btc]]);
    const snaps = parseBookSummary(fixture("deribit/DERIVED_book_summary_future.json"), idx);
    expect(snaps).toEqual([parseTicker(fixture("deribit/ticker_BTC-PERPETUAL_2025-12-12_from_ws.json"), btc)]);
    expect(parseBookSummary(fixture("deribit/book_summary_option_nautilus.json"), idx)).toEqual([]);
  });

  it("reads hourly interest_1h history newest first", () => {
    const pts = parseFundingHistory(fixture("deribit/DERIVED_funding_rate_history_BTC-PERPETUAL.json"), btc);
    expect(pts).toEqual([
      { venue: "deribit", base: "BTC", time: 1765540800000, rate: -0.0000004, markPrice: null },
      { venue: "deribit", base: "BTC", time: 1765537200000, rate: 0.0000021, markPrice: null },
    ]);
  });

  it("reads real chart columns by key: volume in coins, cost in USD; no_data is empty", () => {
    const c = parseChart(fixture("deribit/tradingview_chart_BTC-PERPETUAL_1m_2025-12-23.json"), btc);
    expect(c).toHaveLength(5);
    expect(c[0]).toEqual({
      venue: "deribit",
      base: "BTC",
      openTime: 1766483460000,
      open: 87451,
      high: 87456.5,
      low: 87451,
      close: 87456.5,
      volumeCoins: 2.94375216,
      volumeUsd: 257490,
    });
    expect(c[0]!.volumeUsd / c[0]!.volumeCoins).toBeCloseTo(87470, -1);
    expect(parseChart(fixture("deribit/tradingview_chart_no_data_2026-08-04.json"), btc)).toEqual([]);
    const ragged = { result: { status: "ok", ticks: [1, 2], open: [1, 2], high: [1, 2], low: [1, 2], close: [1], volume: [1, 2], cost: [1, 2] } };
    expectAppError(() => parseChart(ragged, btc), "UPSTREAM_ERROR", /different lengths/);
  });

  it("maps the real 'instrument not found' body to NOT_FOUND and other errors to UPSTREAM_ERROR", () => {
    const notFound = fixture("deribit/error_instrument_not_found_2026-08-04.json");
    expect(parseDeribitError(notFound)).toEqual({ code: -32602, message: "Invalid params", reason: "instrument not found" });
    expectAppError(() => parseTicker(notFound, btc), "NOT_FOUND");
    expectAppError(() => parseChart(notFound, btc), "NOT_FOUND");
    expectAppError(() => parseInstruments(notFound), "UPSTREAM_ERROR");
    expectAppError(() => parseTicker(fixture("deribit/error_too_many_requests_nautilus.json"), btc), "UPSTREAM_ERROR", /10028 too_many_requests/);
    expectAppError(() => parseTicker({ result: { instrument_name: "BTC-PERPETUAL" } }, btc), "UPSTREAM_ERROR", /unexpected shape/);
    expectAppError(() => parseFundingHistory({ result: {} }, btc), "UPSTREAM_ERROR");
  });
});

describe("deribit client against a local stub", () => {
  let stub: RunningStub;
  const instruments = {
    result: [
      ...(fixture("deribit/instruments_future_nautilus_testnet.json") as { result: unknown[] }).result,
      ...(fixture("deribit/DERIVED_instruments_linear.json") as { result: unknown[] }).result,
    ],
  };
  const notFound = () => ({ status: 400, body: fixture("deribit/error_instrument_not_found_2026-08-04.json") });

  beforeAll(async () => {
    stub = await startStub({
      "GET /api/v2/public/get_instruments": () => ({ body: instruments }),
      "GET /api/v2/public/ticker": (req) =>
        req.query.instrument_name === "BTC-PERPETUAL" ? { body: fixture("deribit/ticker_BTC-PERPETUAL_2025-12-12_from_ws.json") } : notFound(),
      "GET /api/v2/public/get_book_summary_by_currency": (req) =>
        req.query.currency === "BTC" ? { body: fixture("deribit/DERIVED_book_summary_future.json") } : { body: { jsonrpc: "2.0", result: [] } },
      "GET /api/v2/public/get_funding_rate_history": (req) => {
        const start = Number(req.query.start_timestamp);
        const end = Number(req.query.end_timestamp);
        const result = [];
        for (let t = Math.ceil(start / HOUR) * HOUR; t <= end; t += HOUR)
          result.push({ timestamp: t, index_price: 1, prev_index_price: 1, interest_1h: 0.000001, interest_8h: 0.000008 });
        return { body: { jsonrpc: "2.0", result } };
      },
      "GET /api/v2/public/get_tradingview_chart_data": () => ({ body: fixture("deribit/tradingview_chart_BTC-PERPETUAL_1m_2025-12-23.json") }),
    });
  });
  afterAll(() => stub.close());

  const client = () => new DeribitPerpClient(`${stub.url}/api/v2`, { timeoutMs: 2000, retries: 0 });

  it("serves funding, open interest, all-perpetual funding, candles and a null long/short ratio", async () => {
    const c = client();
    const f = await c.funding("btc");
    expect(f).toMatchObject({ venueSymbol: "BTC-PERPETUAL", fundingRate: 0.00001742, fundingIntervalHours: 8 });
    expect(await c.openInterest("BTC")).toMatchObject({ oiUsd: 1132329370 });
    expect(stub.calls.filter((u) => u.startsWith("GET /api/v2/public/ticker"))).toHaveLength(1); // one ticker serves both
    expect(stub.calls).toContain("GET /api/v2/public/get_instruments?currency=any&kind=future");

    const all = await c.fundingAll();
    expect(all.map((s) => s.venueSymbol)).toEqual(["BTC-PERPETUAL"]);
    const summaries = stub.calls.filter((u) => u.startsWith("GET /api/v2/public/get_book_summary_by_currency")).sort();
    expect(summaries).toEqual([
      "GET /api/v2/public/get_book_summary_by_currency?currency=BTC&kind=future",
      "GET /api/v2/public/get_book_summary_by_currency?currency=USDC&kind=future",
    ]);

    const candles = await c.hourlyCandles("BTC", 3);
    expect(candles).toHaveLength(3);
    const chart = stub.calls.find((u) => u.includes("get_tradingview_chart_data"))!;
    expect(chart).toMatch(/instrument_name=BTC-PERPETUAL&start_timestamp=\d+&end_timestamp=\d+&resolution=60/);
    expect(await c.longShort("BTC")).toBeNull();
    expect("marginTiers" in c).toBe(false);
    expect("predictedFunding" in c).toBe(false);
    expect("openInterestHistory" in c).toBe(false);
  });

  it("pages hourly history back 30 days per request, newest first", async () => {
    const c = client();
    const before = stub.calls.length;
    const hist = await c.fundingHistory("BTC", 1000);
    const calls = stub.calls.slice(before).filter((u) => u.includes("get_funding_rate_history"));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(/instrument_name=BTC-PERPETUAL&start_timestamp=\d+&end_timestamp=\d+/);
    expect(hist).toHaveLength(1000);
    expect(hist[0]!.time - hist[999]!.time).toBe(999 * HOUR);
    expect(new Set(hist.map((p) => p.time)).size).toBe(1000);
  });

  it("maps unknown bases and 'instrument not found' to NOT_FOUND, 451 to UPSTREAM_UNAVAILABLE", async () => {
    const c = client();
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(c.funding("SOL")).rejects.toMatchObject({ code: "NOT_FOUND", message: "deribit does not list SOL_USDC-PERPETUAL" });
    const blocked = await startStub({ "GET /api/v2/public/get_instruments": () => ({ status: 451, text: "unavailable" }) });
    try {
      const b = new DeribitPerpClient(`${blocked.url}/api/v2`, { timeoutMs: 2000, retries: 0 });
      await expect(b.instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    } finally {
      await blocked.close();
    }
    const limited = await startStub({ "GET /api/v2/public/get_instruments": () => ({ status: 400, body: fixture("deribit/error_too_many_requests_nautilus.json") }) });
    try {
      const l = new DeribitPerpClient(`${limited.url}/api/v2`, { timeoutMs: 2000, retries: 0 });
      await expect(l.instruments()).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    } finally {
      await limited.close();
    }
  });
});
