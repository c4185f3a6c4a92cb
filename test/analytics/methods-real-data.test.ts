/**
 * Issue 15, "Methods to fix" 2-7, checked on recorded venue data (docs/methods/funding-basis-volatility.md):
 * Bybit risk-limit margin units, log-normal VaR, time-windowed volatility with coverage, funding annualised row by
 * row and time-weighted, one basis annualisation for every venue, and the CVD window stated in the answer.
 */
import { afterAll, describe, expect, it } from "vitest";
import { annualizedPct, clean, fundingSummary, settlementIntervals, timeWeightedFundingSummary } from "../../src/analytics/funding.js";
import { annualizedVolatilityPct, dailyVolatility, logReturns, valueAtRiskPct, windowReturns, type TimedClose } from "../../src/analytics/volatility.js";
import type { ToolContext } from "../../src/core/context.js";
import type { CallerInfo } from "../../src/registry/tool.js";
import { fixedClock } from "../../src/sim/clock.js";
import { startSimulator } from "../../src/sim/server.js";
import { parseBinanceMessage } from "../../src/venues/binance/feed-parse.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { parseFundingRateHistory } from "../../src/venues/binance/parse.js";
import { parseRiskLimit, riskLimitMarginUnit } from "../../src/venues/bybit/parse.js";
import { parseOhlcv } from "../../src/venues/geckoterminal/parse.js";
import { parseFundingHistory } from "../../src/venues/hyperliquid/parse.js";
import { PERP_VENUES, type FundingPoint, type FundingSnapshot, type PerpInstrument, type PerpVenue } from "../../src/venues/perp/types.js";
import { volatilityMetrics } from "../../tools/dex/volatility.js";
import { basis } from "../../tools/perp/basis.js";
import { fundingHistory } from "../../tools/perp/funding-history.js";
import { cvd } from "../../tools/streams/cvd.js";
import { expectAppError } from "../helpers/errors.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";

const HOUR = 3_600_000;
const caller = {} as CallerInfo;
/** A tool context with only what the handler under test reads. */
const fakeCtx = (parts: Record<string, unknown>) => ({ now: () => Date.now(), ...parts }) as unknown as ToolContext;

describe("2. Bybit risk-limit margins: the unit is decided per row", () => {
  const btcusdt: PerpInstrument = { venue: "bybit", base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 };
  const recorded = () => fixture("bybit/risk_limit_linear_BTCUSDT_testnet_hirokisan_golden_DERIVED_envelope.json") as { result: { list: Array<Record<string, unknown>> } };

  it("reads the recorded linear rows as fractions (0.005 at 100x, 0.6 at 1x), not percents", () => {
    const tiers = parseRiskLimit(recorded(), btcusdt);
    expect(tiers).toHaveLength(34);
    expect(tiers[0]).toEqual({ venue: "bybit", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 2_000_000, maxLeverage: 100, maintenanceMarginRate: 0.005 });
    expect(tiers[1]).toMatchObject({ minNotionalUsd: 2_000_000, maxLeverage: 57.14, maintenanceMarginRate: 0.01 });
    // the last tier: initialMargin "1" is 100% at 1x, which magnitude alone would have read as 1%
    expect(tiers.at(-1)).toMatchObject({ maxLeverage: 1, maintenanceMarginRate: 0.6 });
    for (const t of tiers) expect(t.maintenanceMarginRate).toBeLessThan(1 / t.maxLeverage);
  });

  it("still reads the docs' inverse percent row (0.5 / 1 at 100x) as 0.005", () => {
    const btcusd: PerpInstrument = { ...btcusdt, venueSymbol: "BTCUSD" };
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

  it("decides the unit from initialMargin x maxLeverage (about 1 or about 100), else refuses", () => {
    expect([riskLimitMarginUnit(0.01, 100), riskLimitMarginUnit(0.0175, 57.14), riskLimitMarginUnit(0.7, 1.43), riskLimitMarginUnit(1, 1)]).toEqual([1, 1, 1, 1]);
    expect([riskLimitMarginUnit(1, 100), riskLimitMarginUnit(3, 33.33)]).toEqual([100, 100]);
    expect([riskLimitMarginUnit(0.5, 100), riskLimitMarginUnit(null, 100), riskLimitMarginUnit(0, 100), riskLimitMarginUnit(0.01, 0)]).toEqual([null, null, null, null]);
  });

  it("skips a row whose unit cannot be decided (bounds of the others unchanged); no decidable row: tiers unavailable", () => {
    const raw = recorded();
    raw.result.list[1] = { ...raw.result.list[1], initialMargin: "0.5" }; // 0.5 x 57.14 = 28.6: neither unit
    const tiers = parseRiskLimit(raw, btcusdt);
    expect(tiers).toHaveLength(33);
    expect(tiers[1]).toMatchObject({ minNotionalUsd: 4_000_000, maxNotionalUsd: 6_000_000, maintenanceMarginRate: 0.015 });
    const none = { retCode: 0, retMsg: "OK", result: { list: [{ symbol: "BTCUSDT", riskLimitValue: "2000000", maintenanceMargin: "0.005", maxLeverage: "100.00" }] } };
    expectAppError(() => parseRiskLimit(none, btcusdt), "UPSTREAM_ERROR");
    expect(parseRiskLimit({ retCode: 0, retMsg: "OK", result: { list: [] } }, btcusdt)).toEqual([]);
  });

  it("the simulator sends fractions for linear contracts, as the venue does", async () => {
    const sim = await startSimulator({ seed: 42, clock: fixedClock(Date.parse("2026-11-21T12:00:00Z")) });
    try {
      const res = await fetch(`${sim.urls.bybit}/v5/market/risk-limit?category=linear&symbol=BTCUSDT`);
      const body = (await res.json()) as { result: { list: Array<{ maintenanceMargin: string; initialMargin: string; maxLeverage: string }> } };
      expect(body.result.list[0]).toMatchObject({ maintenanceMargin: "0.005", initialMargin: "0.01", maxLeverage: "100.00" });
      for (const r of body.result.list) expect(riskLimitMarginUnit(Number(r.initialMargin), Number(r.maxLeverage))).toBe(1);
      expect(parseRiskLimit(body, btcusdt)[0]?.maintenanceMarginRate).toBe(0.005);
    } finally {
      await sim.close();
    }
  });
});

/** The recorded CBRL/SOL 1h pool (GeckoTerminal omits hours without swaps), oldest first. */
const cbrl = (): TimedClose[] =>
  parseOhlcv(fixture("geckoterminal/ohlcv_1h_solana_CBRL_SOL_pool_2025-08-20_to_2025-08-30.json"))
    .reverse()
    .map((c) => ({ time: c.time, close: c.close }));

describe("3. VaR of a long position stays below 100% (log-normal) on the volatile CBRL pool", () => {
  it("gives 85.6% / 93.6% where the normal form gave 193.9% / 274.2% (30d, daily sigma 118%)", () => {
    const series = cbrl();
    const m = volatilityMetrics(series, series, "30d", series.at(-1)!.time);
    const sigma = m.daily_volatility_pct! / 100;
    expect(sigma).toBeCloseTo(1.1785, 3);
    // the old parametric normal VaR, z x sigma, on the same sigma: more than the whole position
    expect(1.6448536269514722 * sigma * 100).toBeGreaterThan(190);
    expect(2.3263478740408408 * sigma * 100).toBeGreaterThan(270);
    expect(m.risk_metrics.var_95_1d).toBeCloseTo((1 - Math.exp(-1.6448536269514722 * sigma)) * 100, 6);
    expect(m.risk_metrics.var_99_1d).toBeCloseTo((1 - Math.exp(-2.3263478740408408 * sigma)) * 100, 6);
    expect(m.risk_metrics.var_95_1d).toBeCloseTo(85.61, 2);
    expect(m.risk_metrics.var_99_1d).toBeCloseTo(93.55, 2);
    expect(m.risk_level).toBe("extreme");
  });

  it("agrees with the normal form for small sigma and never reaches 100%", () => {
    expect(valueAtRiskPct(0.02, 0.95)).toBeCloseTo(3.2362, 4); // normal: 3.2897
    expect(valueAtRiskPct(0.001, 0.99)).toBeCloseTo(0.23236, 5); // normal: 0.23263
    expect(valueAtRiskPct(10, 0.99)).toBeLessThanOrEqual(100);
    expect(valueAtRiskPct(0, 0.95)).toBe(0);
  });
});

describe("4. volatility windows are by time, returns scaled by sqrt(elapsed hours), coverage reported", () => {
  it("windows by timestamp and times each return by the hours it spans", () => {
    const t0 = Date.UTC(2025, 0, 1);
    // hours 0..6; hours 2 and 3 had no trade: close at hour 4 follows hour 1 (3 hours)
    const series = [0, 1, 4, 5, 6].map((h, i) => ({ time: t0 + h * HOUR, close: [100, 101, 104, 103, 105][i]! }));
    const w = windowReturns(series, t0 + 6 * HOUR, 5);
    // window = hours 2..6 (5 hours), anchor = hour 1 (price at the window's start)
    expect(w.closes.map((c) => (c.time - t0) / HOUR)).toEqual([1, 4, 5, 6]);
    expect(w.elapsed).toEqual([3, 1, 1]);
    expect(w.raw).toEqual([Math.log(104 / 101), Math.log(103 / 104), Math.log(105 / 103)]);
    expect(w.scaled[0]).toBeCloseTo(Math.log(104 / 101) / Math.sqrt(3), 15);
    expect([w.intervalsWithTrades, w.intervalsInWindow]).toEqual([3, 5]);
    // an anchor far before the window: its return is timed from the window's start (the price did not move before)
    const late = windowReturns(series, t0 + 6 * HOUR, 3);
    expect(late.closes.map((c) => (c.time - t0) / HOUR)).toEqual([1, 4, 5, 6]);
    expect(late.elapsed).toEqual([1, 1, 1]);
    // candles after the end are not used
    expect(windowReturns(series, t0 + 4 * HOUR, 3).closes.map((c) => (c.time - t0) / HOUR)).toEqual([1, 4]);
  });

  it("reports coverage on the recorded pool (one hour without swaps in the last 24)", () => {
    const series = cbrl();
    const m = volatilityMetrics(series, series, "7d", series.at(-1)!.time);
    expect(m.coverage["24h"]).toEqual({ hours_with_trades: 23, hours_in_window: 24, coverage_pct: clean((23 / 24) * 100) });
    expect(m.coverage["7d"]).toEqual({ hours_with_trades: 167, hours_in_window: 168, coverage_pct: clean((167 / 168) * 100) });
    // the recording spans 236 hours: the 30-day window is a third covered
    expect(m.coverage["30d"]).toMatchObject({ hours_with_trades: 235, hours_in_window: 720 });
  });

  it("does not inflate when half the hours are missing (the old candle-count windows read 1.86x and spanned 234 h for '7d')", () => {
    const full = cbrl();
    const end = full.at(-1)!.time;
    const thinned = full.filter((c) => Math.round(c.time / HOUR) % 2 === 0); // every other hour dropped, the newest kept
    const a = volatilityMetrics(full, full, "7d", end);
    const b = volatilityMetrics(thinned, thinned, "7d", end);
    expect(b.coverage["7d"].coverage_pct).toBe(50);
    expect(b.volatility_7d! / a.volatility_7d!).toBeGreaterThan(0.8);
    expect(b.volatility_7d! / a.volatility_7d!).toBeLessThan(1.2);
    expect(b.volatility_24h! / a.volatility_24h!).toBeGreaterThan(0.8);
    expect(b.volatility_24h! / a.volatility_24h!).toBeLessThan(1.2);
    // the previous method: the last 169 candles, each return read as one hour
    const old = (s: readonly TimedClose[]) => annualizedVolatilityPct(logReturns(s.slice(-169).map((c) => c.close)), 8760)!;
    expect(old(thinned) / old(full)).toBeGreaterThan(1.5);
    expect((end - thinned.slice(-169)[0]!.time) / HOUR).toBe(234);
    // volatility and the daily sigma come from the same per-hour deviation
    expect(a.volatility_7d).toBeCloseTo(a.daily_volatility_pct! * Math.sqrt(365), 6);
    expect(dailyVolatility(windowReturns(full, end, 168).scaled, 24)! * 100).toBeCloseTo(a.daily_volatility_pct!, 8);
  });
});

/** A perp client serving recorded funding history (newest first) to the funding-history tool. */
function historyCtx(venue: PerpVenue, points: FundingPoint[], currentIntervalHours = 8): ToolContext {
  const client = { fundingHistory: async (_b: string, limit: number) => points.slice(0, limit), funding: async () => ({ fundingIntervalHours: currentIntervalHours }) };
  return fakeCtx({ venues: { perps: { [venue]: client } } });
}
type HistoryBody = {
  funding_interval_hours: number;
  count: number;
  history: Array<{ funding_time: string; funding_rate: number; interval_hours: number; annualized_pct: number }>;
  summary: { avg_rate: number; max_rate: number; min_rate: number; annualized_avg: number };
};

describe("5. funding history: each row annualised with its own interval, averages time-weighted", () => {
  const hlBtc: PerpInstrument = { venue: "hyperliquid", base: "BTC", venueSymbol: "BTC", multiplier: 1, contractSize: 1 };
  const hlPoints = () => parseFundingHistory(fixture("hyperliquid/sdk_cassette_fundingHistory_BTC_2023-05-12_to_2023-07-17.json"), hlBtc);

  it("reads the recorded Hyperliquid 8h -> 1h switch row by row: 19.03% time-weighted, not 24.91% at one interval", async () => {
    const points = hlPoints();
    expect(points).toHaveLength(1038);
    const body = (await fundingHistory.handler({ symbol: "BTC", limit: 1000, exchange: "hyperliquid" }, historyCtx("hyperliquid", points, 1), caller)) as HistoryBody;
    expect(body.count).toBe(1000);
    expect(body.funding_interval_hours).toBe(1);
    const switchAt = Date.parse("2023-06-08T00:30:00Z");
    for (const r of body.history) expect(r.interval_hours, r.funding_time).toBe(Date.parse(r.funding_time) < switchAt ? 8 : r.funding_time.startsWith("2023-07-02T21") ? 2 : 1);
    expect(body.history.filter((r) => r.interval_hours === 8)).toHaveLength(44);
    for (const r of body.history) expect(r.annualized_pct).toBe(annualizedPct(r.funding_rate, r.interval_hours));
    // independent: funding accrued over the hours covered, per year
    const rows = points.slice(0, 1000);
    const hours = rows.reduce((s, p) => s + (p.time < switchAt ? 8 : 1), 0) + 1; // + the hour of the one missing settlement (2023-07-02 20:00)
    const expected = (rows.reduce((s, p) => s + p.rate, 0) / hours) * 8760 * 100;
    expect(body.summary.annualized_avg).toBeCloseTo(expected, 9);
    expect(body.summary.annualized_avg).toBeCloseTo(19.03, 2);
    expect(body.summary.avg_rate).toBeCloseTo(expected / 876_000, 12);
    // what one interval for the whole history gave
    expect(
      fundingSummary(
        rows.map((p) => p.rate),
        1,
      ).annualized_avg,
    ).toBeCloseTo(24.91, 2);
    expect(body.summary.max_rate).toBe(Math.max(...rows.map((p) => p.rate)));
  });

  it("infers intervals from settlement gaps on the whole recording (82 at 8h, oldest from its successor)", () => {
    const points = hlPoints();
    const iv = settlementIntervals(points.map((p) => p.time))!;
    expect(iv.at(-1)).toBe(8); // the oldest row: no predecessor, the next row's interval
    expect(iv.filter((h) => h === 8)).toHaveLength(82);
    expect(iv.filter((h) => h === 1)).toHaveLength(955);
    expect(settlementIntervals([5])).toBeUndefined();
  });

  it("time-weights a constructed mixed-interval series: the same hourly rate reads the same", () => {
    const t0 = Date.UTC(2023, 5, 7);
    // 0.01%/h throughout: three 8-hourly settlements of 0.08%, then eight hourly ones of 0.01%
    const times = [...[0, 8, 16].map((h) => t0 + h * HOUR), ...[17, 18, 19, 20, 21, 22, 23, 24].map((h) => t0 + h * HOUR)];
    const rates = [0.0008, 0.0008, 0.0008, ...Array(8).fill(0.0001)];
    const iv = settlementIntervals(times)!;
    expect(iv).toEqual([8, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1]);
    const s = timeWeightedFundingSummary(
      rates.map((rate, i) => ({ rate, intervalHours: iv[i]! })),
      1,
    );
    expect(s.annualized_avg).toBe(87.6);
    expect(s.avg_rate).toBe(0.0001);
    for (const [i, r] of rates.entries()) expect(annualizedPct(r, iv[i]!)).toBe(87.6);
    // one interval for all (the most common gap, 1h) would read 0.08% settlements as hourly
    expect(fundingSummary(rates, 1).annualized_avg).toBeCloseTo(254.836363636, 6);
  });

  it("annualises and averages the recorded Binance XRPUSDT history exactly (one 8h interval)", async () => {
    const xrp: PerpInstrument = { venue: "binance", base: "XRP", venueSymbol: "XRPUSDT", multiplier: 1, contractSize: 1 };
    const points = parseFundingRateHistory(fixture("binance/fundingRate_XRPUSDT_2021-11_DERIVED.json"), xrp);
    expect(points).toHaveLength(91);
    const body = (await fundingHistory.handler({ symbol: "XRP", limit: 1000, exchange: "binance" }, historyCtx("binance", points), caller)) as HistoryBody;
    expect(body.funding_interval_hours).toBe(8);
    expect(body.history.every((r) => r.interval_hours === 8)).toBe(true);
    const sum = points.reduce((s, p) => s + p.rate, 0);
    expect(body.summary.avg_rate).toBe(clean(sum / 91));
    expect(body.summary.annualized_avg).toBe(clean((sum / 91) * 1095 * 100));
    expect(body.summary).toEqual({ avg_rate: 0.0000875178021978, max_rate: 0.00058316, min_rate: -0.00219334, annualized_avg: 9.58319934066 });
  });
});

describe("6. basis: one premium, one annualised figure on every venue", () => {
  it("annualises the recorded BTCUSDT premium (mark 93951.8 vs index 93902.897) x 3 x 365 whatever the funding interval", async () => {
    const row = (fixture("binance/premiumIndex_all_2024-11-27_trimmed.json") as Array<{ symbol: string; markPrice: string; indexPrice: string; lastFundingRate: string }>).find(
      (r) => r.symbol === "BTCUSDT",
    )!;
    const intervals: Partial<Record<PerpVenue, number>> = { bybit: 4, hyperliquid: 1 }; // the others 8
    const interval = (v: PerpVenue): number => intervals[v] ?? 8;
    const snap = (v: PerpVenue): FundingSnapshot => ({
      venue: v,
      base: "BTC",
      venueSymbol: "BTCUSDT",
      fundingRate: Number(row.lastFundingRate) * (interval(v) / 8),
      fundingIntervalHours: interval(v),
      nextFundingTime: null,
      markPrice: Number(row.markPrice),
      indexPrice: Number(row.indexPrice),
      premium: null,
      interestRate: null,
      time: 1732715655000,
    });
    const perps = Object.fromEntries(PERP_VENUES.map((v) => [v, { instrument: async () => ({ venue: v }), funding: async () => snap(v) }]));
    const ctx = fakeCtx({ venues: { perps, spot: { spotPrice: async () => Number(row.indexPrice) } } });
    const body = (await basis.handler({ symbol: "BTC", require: "any" }, ctx, caller)) as {
      exchanges: Record<string, { basis_pct: number; basis_annualized_pct: number; funding_annualized_pct: number }>;
    };
    const figures = Object.values(body.exchanges);
    expect(figures).toHaveLength(PERP_VENUES.length);
    const basisFraction = (93951.8 - 93902.89680851) / 93902.89680851;
    for (const e of figures) {
      expect(e.basis_pct).toBe(clean(basisFraction * 100));
      expect(e.basis_annualized_pct).toBe(annualizedPct(basisFraction, 8));
      // the same funding per 8 h annualises alike too, each with its own interval
      expect(e.funding_annualized_pct).toBeCloseTo(annualizedPct(0.00013062, 8), 9);
    }
    expect(figures[0]!.basis_annualized_pct).toBeCloseTo(57.0, 1);
  });
});

describe("7. CVD states the exact bucket-aligned window it summed", () => {
  const cleanup: Array<() => void> = [];
  afterAll(() => cleanup.forEach((f) => f()));

  /** The recorded Binance aggTrade frames (2021-04-05 18:36:37 to 18:38:36 UTC) in a CVD store read at `now`. */
  function storeAt(now: number): CvdStore {
    const db = openStreamDb(":memory:");
    const store = new CvdStore(db, { now: () => now, flushMs: 60_000, purgeEveryMs: 0 });
    cleanup.push(() => {
      store.close();
      db.close();
    });
    const map = new Map([["SANDUSDT", { venueSymbol: "SANDUSDT", base: "SAND", multiplier: 1, contractSize: 1 }]]);
    const text = fixtureText("binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson");
    const trades = text
      .split("\n")
      .filter((l) => l.trim())
      .flatMap((l) => parseBinanceMessage(JSON.parse(l), map).trades);
    expect(trades.length).toBeGreaterThan(0);
    store.add(trades);
    return store;
  }
  const ask = async (now: number, period: "1h" | "4h") => {
    const ctx = { now: () => now, ingestion: { cvd: storeAt(now), activeConnections: () => 1 } } as unknown as ToolContext;
    return (await cvd.handler({ symbol: "SAND", period }, ctx, caller)) as { window_start: string; window_end: string; buy_volume: number; sell_volume: number };
  };

  it("1h at 19:38:50 sums from 18:35:00 (63 min 50 s): trades of 18:36-18:38 count and the window says so", async () => {
    const now = Date.parse("2021-04-05T19:38:50Z");
    const a = await ask(now, "1h");
    expect(a.window_start).toBe("2021-04-05T18:35:00.000Z");
    expect(a.window_end).toBe("2021-04-05T19:38:50.000Z");
    expect(a.buy_volume + a.sell_volume).toBeGreaterThan(0);
    const span = Date.parse(a.window_end) - Date.parse(a.window_start);
    expect(span).toBeGreaterThanOrEqual(HOUR);
    expect(span).toBeLessThan(HOUR + 5 * 60_000);
  });

  it("five minutes later the 18:35 bucket has left the window: nothing summed, window from 18:40", async () => {
    const b = await ask(Date.parse("2021-04-05T19:40:00Z"), "1h");
    expect(b.window_start).toBe("2021-04-05T18:40:00.000Z");
    expect(b.buy_volume + b.sell_volume).toBe(0);
  });

  it("starts at tracking start when tracking began within the period", async () => {
    const c = await ask(Date.parse("2021-04-05T19:00:00Z"), "4h");
    expect(c.window_start).toBe("2021-04-05T18:35:00.000Z");
  });
});
