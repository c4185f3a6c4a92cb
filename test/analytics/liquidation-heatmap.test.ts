import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CASCADE_MODEL, cascadeForecast } from "../../src/analytics/cascade-risk.js";
import { replay, score, type Recording } from "../../src/analytics/heatmap-backtest.js";
import {
  crowding,
  dailyVolatility,
  FALLBACK_MMR,
  HIGH_NEAR_SHARE,
  HOLDING_HALF_LIFE_HOURS,
  LEVERAGE_TIERS,
  liquidationHeatmap,
  liquidationPrice,
  MEDIUM_WIDE_SHARE,
  mmrByLeverage,
  OI_LEVERAGE_MIX,
  OPEN_LEVERAGE_MIX,
  rescaleLeverage,
  structuralRisk,
  type EntryCandle,
  type Heatmap,
  type RiskSummary,
} from "../../src/analytics/liquidation-heatmap.js";

const MMR = 0.005;
const H = 3_600_000;
const allTiers = new Map(LEVERAGE_TIERS.map((l) => [l, MMR]));
const candle = (openTime: number, high: number, low: number, close: number, volumeUsd: number): EntryCandle => ({ openTime, high, low, close, volumeUsd });
/** `n` hourly candles oscillating ±`range` around `price` (a symmetric market: no side is favoured). */
const flat = (n: number, price = 100, range = 0.004, volumeUsd = 1e6): EntryCandle[] =>
  Array.from({ length: n }, (_, i) => candle(i * H, price * (1 + range), price * (1 - range), price * (1 + (i % 2 ? range : -range) / 2), volumeUsd));
const cluster = (h: Heatmap, side: "long" | "short", lev: number) => h.clusters.find((c) => c.side === side && c.leverage === `${lev}x`);

/** freqtrade rows of the real XRPUSDT recordings (test/analytics/fixtures/README.md) as candles. */
function fixture(file: string): number[][] {
  return JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8")) as number[][];
}
const toCandles = (rows: number[][]): EntryCandle[] => rows.map(([t, , h, l, c, v]) => candle(t!, h!, l!, c!, (v! * (h! + l! + c!)) / 3));
const XRP_1H = toCandles(fixture("freqtrade_usdm_XRPUSDT_ohlcv_1h_2021-11-17.freqtrade_rows.json"));
const XRP_8H = toCandles(fixture("freqtrade_usdm_XRPUSDT_mark_8h_2021-11-18_to_2021-12-18.freqtrade_rows.json"));
const XRP_FUNDING = fixture("freqtrade_usdm_XRPUSDT_funding_8h_2021-11-18_to_2021-12-18.freqtrade_rows.json");
/** Binance XRPUSDT in 2021: first bracket 0.5%, 75x at most (no 100x tier). */
const XRP_MMR = mmrByLeverage([[{ maxLeverage: 75, maintenanceMarginRate: 0.005 }]]);
const at = (cs: readonly EntryCandle[], iso: string) => cs.findIndex((c) => c.openTime === Date.parse(iso));
/** The estimate at the close of candle `k`, from the candles up to it. */
const xrpAt = (cs: readonly EntryCandle[], k: number, fundingRate8h: number | null = null) =>
  liquidationHeatmap({ price: cs[k]!.close, openInterestUsd: 1e9, candles: cs.slice(0, k + 1), mmrByLeverage: XRP_MMR, fundingRate8h });

describe("liquidation price (isolated, linear, fees ignored)", () => {
  it("matches the hand-computed exact forms", () => {
    // long = entry (1 - 1/L) / (1 - MMR); short = entry (1 + 1/L) / (1 + MMR)
    expect(liquidationPrice(100, 10, MMR, "long")).toBeCloseTo(90 / 0.995, 10); // 90.4523
    expect(liquidationPrice(100, 10, MMR, "short")).toBeCloseTo(110 / 1.005, 10); // 109.4527
    expect(liquidationPrice(50_000, 100, 0.004, "long")).toBeCloseTo((50_000 * 0.99) / 0.996, 6);
    expect(liquidationPrice(50_000, 5, 0.004, "short")).toBeCloseTo((50_000 * 1.2) / 1.004, 6);
  });
});

describe("cascade risk levels (relative to volatility)", () => {
  it("high above 3.5% within one day's 1σ move, medium from 5% within 2σ, else low", () => {
    expect(HIGH_NEAR_SHARE).toBe(0.035);
    expect(MEDIUM_WIDE_SHARE).toBe(0.05);
    expect(structuralRisk(0.0351, 0.0351)).toBe("high");
    expect(structuralRisk(0.035, 0.5)).toBe("medium"); // exactly 3.5% is not "more than 3.5%"
    expect(structuralRisk(0, 0.05)).toBe("medium");
    expect(structuralRisk(0.03, 0.0499)).toBe("low");
  });
});

describe("leverage assumptions", () => {
  it("open interest: 36% at 3x or less, 49% at 3-7x, 15% above 7x; opened notional = OI share / holding half-life", () => {
    const sum = (m: Record<number, number>) => Object.values(m).reduce((s, x) => s + x, 0);
    expect(sum(OI_LEVERAGE_MIX)).toBeCloseTo(1, 12);
    expect(sum(OPEN_LEVERAGE_MIX)).toBeCloseTo(1, 12);
    expect(OI_LEVERAGE_MIX[2]).toBe(0.36);
    expect(OI_LEVERAGE_MIX[10] + OI_LEVERAGE_MIX[25] + OI_LEVERAGE_MIX[50] + OI_LEVERAGE_MIX[100]).toBeCloseTo(0.15, 12);
    // Short-lived high leverage is a larger share of what opens than of what is open.
    const ratio = (l: (typeof LEVERAGE_TIERS)[number]) => OPEN_LEVERAGE_MIX[l] / (OI_LEVERAGE_MIX[l] / HOLDING_HALF_LIFE_HOURS[l]);
    for (const l of LEVERAGE_TIERS) expect(ratio(l)).toBeCloseTo(ratio(2), 10);
    expect(OPEN_LEVERAGE_MIX[100] / OI_LEVERAGE_MIX[100]).toBeGreaterThan(OPEN_LEVERAGE_MIX[2] / OI_LEVERAGE_MIX[2]);
  });

  it("volatility scaling moves shares along the log-leverage grid and keeps the total", () => {
    expect(rescaleLeverage(OI_LEVERAGE_MIX, 1)).toEqual(OI_LEVERAGE_MIX);
    const half = rescaleLeverage(OI_LEVERAGE_MIX, 0.5);
    expect(Object.values(half).reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    // 10x → 5x exactly; 100x → 50x; 2x stays at the bottom of the grid; 25x → 12.5x, between 10x and 25x.
    const a = Math.log(12.5 / 10) / Math.log(25 / 10);
    expect(half[100]).toBeCloseTo(0, 12);
    expect(half[50]).toBeCloseTo(OI_LEVERAGE_MIX[100], 12);
    expect(half[25]).toBeCloseTo(OI_LEVERAGE_MIX[50] + OI_LEVERAGE_MIX[25] * a, 12);
    expect(half[10]).toBeCloseTo(OI_LEVERAGE_MIX[25] * (1 - a), 12);
    expect(half[2]).toBeGreaterThan(OI_LEVERAGE_MIX[2]);
  });
});

describe("heatmap model", () => {
  it("static estimate (no candles): the open-interest mix at the price, 3% daily volatility, low", () => {
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 1_000_000, candles: [], mmrByLeverage: allTiers });
    expect(h.entryHours).toBe(0);
    expect(h.inputs.entriesFrom).toBe("static");
    expect(h.clusters).toHaveLength(12);
    expect(cluster(h, "long", 2)!.oi_at_risk_usd).toBeCloseTo(360_000, 4);
    expect(cluster(h, "short", 10)!.oi_at_risk_usd).toBeCloseTo(110_000, 4);
    const long10 = cluster(h, "long", 10)!;
    expect(long10.liquidation_price).toBeCloseTo(90 / 0.995, 8);
    expect(long10.distance_pct).toBeCloseTo(90 / 0.995 - 100, 8); // -9.548%
    expect(Math.abs(h.clusters[0]!.distance_pct)).toBeLessThan(Math.abs(h.clusters[11]!.distance_pct)); // nearest first
    const r = h.risk;
    expect(r.daily_volatility_pct).toBeCloseTo(3, 12);
    expect(r.near_band_pct).toBeCloseTo(3, 12);
    expect(r.wide_band_pct).toBeCloseTo(6, 12);
    // Within 3%: 50x (1.5%) and 100x (0.5%) = 1%; within 6% adds 25x (3.5%) = 4%.
    expect(r.long_oi_at_risk_usd.within_1_sigma).toBeCloseTo(10_000, 4);
    expect(r.long_oi_at_risk_usd.within_2_sigma).toBeCloseTo(40_000, 4);
    expect(r.long_oi_at_risk_usd.within_10_pct).toBeCloseTo(150_000, 4);
    expect(r.near_band_oi_pct).toBeCloseTo(1, 8);
    expect(r.structural_risk).toBe("low");
    // No input of the forecast is known: every one takes the fitting period's median, without the liquidation history.
    const none = { liquidations: null, liquidations7d: null, volatility: null, turnover: null, turnover7d: null, funding: null, longShort: null };
    expect(h.inputs.cascadeFeatures).toEqual(none);
    const f = cascadeForecast(none);
    expect(r.forecast_coefficients).toBe("without_liquidations");
    expect(r.oi_at_risk_pct).toBeCloseTo(f.share * 100, 12);
    expect(r.total_oi_at_risk_usd).toBeCloseTo(f.share * 1_000_000, 6);
    expect(r.cascade_risk).toBe(f.level);
    expect(r.cascade_risk_reason).toMatch(/^Estimate: \d+\.\d% of open interest forecast to be liquidated over the next 24 h \((high|medium|low): /);
    expect(r.cascade_risk_reason).toMatch(
      /Structure: 1\.0% of open interest sits in (long|short) liquidation levels within 3\.0% (below|above) the price \(one day's 1σ move\) and 4\.0% within 2σ/,
    );
    expect(r.cascade_risk_reason).toContain("assumed 3.0%");
  });

  it("gives the share of a tier the venues do not allow to the highest allowed tier below it", () => {
    const upTo25 = new Map([2, 5, 10, 25].map((l) => [l, MMR]));
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 1000, candles: [], mmrByLeverage: upTo25 });
    expect(h.clusters.map((c) => c.leverage).sort()).toEqual(["10x", "10x", "25x", "25x", "2x", "2x", "5x", "5x"]);
    // 25x now also holds what would have opened at 50x and 100x (and lives like 25x).
    expect(cluster(h, "long", 25)!.oi_at_risk_usd).toBeGreaterThan(1000 * (OI_LEVERAGE_MIX[25] + OI_LEVERAGE_MIX[50] + OI_LEVERAGE_MIX[100]));
    expect(h.clusters.filter((c) => c.side === "long").reduce((s, c) => s + c.oi_at_risk_usd, 0)).toBeCloseTo(1000, 8);
  });

  it("drops positions a later candle liquidated, and what a crash liquidated no longer counts", () => {
    // A day of quiet hours at 100, then an hour ranging 94..106 and back to 100: 25x-100x of the quiet hours are gone.
    const quiet = flat(24, 100, 0.002);
    const wild = [...quiet, candle(24 * H, 106, 94, 100, 1e6), candle(25 * H, 100.2, 99.8, 100, 1e6)];
    const before = liquidationHeatmap({ price: 100, openInterestUsd: 1e6, candles: quiet, mmrByLeverage: allTiers });
    const after = liquidationHeatmap({ price: 100, openInterestUsd: 1e6, candles: wild, mmrByLeverage: allTiers });
    expect(after.entryHours).toBe(26);
    for (const lev of [25, 50, 100]) {
      // Only the cohorts opened after the wild hour (and the wild hour itself) keep such leverage.
      expect(cluster(after, "long", lev)!.oi_at_risk_usd).toBeLessThan(cluster(before, "long", lev)!.oi_at_risk_usd);
    }
    // A 40% crash: every long above 2x opened before it is liquidated; of the crash hour's own longs
    // (entry 73.3), 5x (liquidation 58.9) survives at 60, 10x (66.3) does not.
    const crash = [...quiet, candle(24 * H, 100, 60, 60, 1e6)];
    const c = liquidationHeatmap({ price: 60, openInterestUsd: 1e6, candles: crash, mmrByLeverage: allTiers });
    const longs = c.clusters.filter((x) => x.side === "long");
    expect(longs.map((x) => x.leverage).sort()).toEqual(["2x", "5x"]);
    expect(cluster(c, "long", 5)!.entry_price).toBeCloseTo(220 / 3, 8);
    // The shorts opened at 100 are far in profit: nothing of them is near.
    expect(c.risk.short_oi_at_risk_usd.within_2_sigma).toBe(0);
  });

  it("weights entries by open-interest build-up when an open-interest history is given", () => {
    // 48 h at 100, then 12 h at 110 during which open interest rises by half.
    const candles = [...flat(48, 100), ...flat(12, 110).map((c, i) => ({ ...c, openTime: (48 + i) * H }))];
    const oi = candles.map((c, i) => ({ time: c.openTime + H, oi: i < 48 ? 1000 : 1000 + ((i - 47) * 500) / 12 }));
    const base = { price: 110, openInterestUsd: 1e6, candles, mmrByLeverage: allTiers };
    const byVolume = liquidationHeatmap(base);
    const byOi = liquidationHeatmap({ ...base, openInterestHistory: oi });
    expect(byVolume.inputs.entriesFrom).toBe("volume");
    expect(byOi.inputs.entriesFrom).toBe("open_interest_changes");
    expect(cluster(byOi, "short", 5)!.entry_price).toBeGreaterThan(cluster(byVolume, "short", 5)!.entry_price);
  });

  it("crowded-long funding moves the risk to the long side; crowded shorts to the short side", () => {
    expect(crowding(0.0001, 1)).toBe(0);
    expect(crowding(null, null)).toBe(0);
    expect(crowding(0.0009, null)).toBeGreaterThan(0.9);
    expect(crowding(-0.0003, 0.5)).toBeLessThan(-0.7);
    const base = { price: 100, openInterestUsd: 1e6, candles: flat(72), mmrByLeverage: allTiers };
    const neutral = liquidationHeatmap(base).risk;
    const longs = liquidationHeatmap({ ...base, fundingRate8h: 0.0008, longShortRatio: 1.8 });
    const shorts = liquidationHeatmap({ ...base, fundingRate8h: -0.0006 });
    expect(Math.abs(neutral.long_oi_at_risk_usd.within_2_sigma - neutral.short_oi_at_risk_usd.within_2_sigma)).toBeLessThan(0.05 * neutral.long_oi_at_risk_usd.within_2_sigma);
    expect(longs.inputs.crowding).toBeGreaterThan(0.5);
    expect(longs.risk.dominant_side).toBe("long");
    expect(longs.risk.long_oi_at_risk_usd.within_2_sigma).toBeGreaterThan(1.4 * longs.risk.short_oi_at_risk_usd.within_2_sigma);
    expect(longs.risk.long_oi_at_risk_usd.within_2_sigma).toBeGreaterThan(neutral.long_oi_at_risk_usd.within_2_sigma);
    expect(shorts.risk.dominant_side).toBe("short");
    expect(shorts.risk.short_oi_at_risk_usd.within_2_sigma).toBeGreaterThan(shorts.risk.long_oi_at_risk_usd.within_2_sigma);
  });

  it("scales the high-leverage share by realised against modelled liquidations, within [0.5, 2]", () => {
    // A wick through the 25x-100x levels of earlier hours within the feedback window: the model liquidated some.
    const candles = [...flat(48, 100), candle(48 * H, 104, 96, 100, 1e6), ...flat(4, 100).map((c, i) => ({ ...c, openTime: (49 + i) * H }))];
    const base = { price: 100, openInterestUsd: 1e8, candles, mmrByLeverage: allTiers };
    const none = liquidationHeatmap({ ...base, recentLiquidations: { longUsd: 0, shortUsd: 0, hours: 6, coverage: 0.75 } });
    const lots = liquidationHeatmap({ ...base, recentLiquidations: { longUsd: 5e7, shortUsd: 0, hours: 6, coverage: 0.75 } });
    expect(liquidationHeatmap(base).inputs.liquidationFeedback).toBeNull();
    expect(none.inputs.liquidationFeedback!.long).toBeLessThan(1);
    expect(none.inputs.liquidationFeedback!.long).toBeGreaterThanOrEqual(0.5);
    expect(lots.inputs.liquidationFeedback!.long).toBe(2);
    expect(lots.inputs.liquidationFeedback!.short).toBeLessThan(1);
    expect(lots.risk.long_oi_at_risk_usd.within_2_sigma).toBeGreaterThan(none.risk.long_oi_at_risk_usd.within_2_sigma);
  });

  it("measures daily volatility from the candles and widens the bands with it", () => {
    expect(dailyVolatility(flat(3))).toBeUndefined();
    const calm = flat(48, 100, 0.002);
    const wild = flat(48, 100, 0.02);
    expect(dailyVolatility(wild)! / dailyVolatility(calm)!).toBeGreaterThan(5);
    const c = liquidationHeatmap({ price: 100, openInterestUsd: 1, candles: calm, mmrByLeverage: allTiers }).risk;
    const w = liquidationHeatmap({ price: 100, openInterestUsd: 1, candles: wild, mmrByLeverage: allTiers }).risk;
    expect(w.near_band_pct).toBeGreaterThan(c.near_band_pct);
    expect(c.near_band_pct).toBeGreaterThanOrEqual(0.5);
    expect(w.wide_band_pct).toBeLessThanOrEqual(15);
  });

  it("cascade-risk inputs: liquidations per 24 h and per day over 7 days ÷ OI, turnover and its 7-day mean on the candles' venue OI, close-to-close volatility", () => {
    // Seven daily closes without an intraday range, as the daily backtest passes them.
    const closes = [100, 104, 99, 101, 97, 103, 100];
    const oiCoins = closes.map((_, i) => (i === 6 ? 20_000 : 25_000));
    const daily = closes.map((c, i) => candle(i * 24 * H, c, c, c, 3e6));
    const liqUsd = [1e5, 0, 2e5, 5e4, 4e4, 3e5, 1e5];
    const input = {
      price: 100,
      openInterestUsd: 4e6,
      candles: daily,
      candleHours: 24,
      mmrByLeverage: allTiers,
      openInterestHistory: closes.map((_, i) => ({ time: (i + 1) * 24 * H, oi: oiCoins[i]! })),
      fundingRate8h: -0.0003,
      longShortRatio: 2.5,
      recentLiquidations: { longUsd: 30_000, shortUsd: 10_000, hours: 6, coverage: 0.5 },
    };
    const h = liquidationHeatmap({ ...input, liquidationDays: liqUsd.map((usd, i) => ({ end: (i + 1) * 24 * H, usd })) });
    const f = h.inputs.cascadeFeatures;
    // (30k + 10k) / 0.5 × 24 / 6 = 320k per 24 h, over 4M of OI.
    expect(f.liquidations).toBeCloseTo(0.08, 12);
    // Each day's liquidations over that day's total OI: today's 4M × (the venue's OI coins × close) ÷ (20k × 100).
    const totalOi = (i: number) => (4e6 * oiCoins[i]! * closes[i]!) / (20_000 * 100);
    expect(f.liquidations7d).toBeCloseTo(liqUsd.reduce((s, usd, i) => s + usd / totalOi(i), 0) / 7, 12);
    // The last day's volume (3M) over the OI history's last point (20k coins × 100); each day's over that day's.
    expect(f.turnover).toBeCloseTo(1.5, 12);
    expect(f.turnover7d).toBeCloseTo(closes.reduce((s, c, i) => s + 3e6 / (oiCoins[i]! * c), 0) / 7, 12);
    expect(f.funding).toBeCloseTo(0.0003, 12);
    expect(f.longShort).toBeCloseTo(1.5, 12);
    // No candle has a range: close-to-close alone, weighted with the 168 h half-life.
    let cc = 0;
    let w = 0;
    for (let i = 1; i < closes.length; i++) {
      const wi = 2 ** (-(6 - i) / 7);
      cc += wi * Math.log(closes[i]! / closes[i - 1]!) ** 2;
      w += wi;
    }
    expect(f.volatility).toBeCloseTo(Math.sqrt(cc / w), 12);
    expect(h.risk.forecast_coefficients).toBe("with_liquidations");
    expect(h.risk.oi_at_risk_pct).toBeCloseTo(cascadeForecast(f).share * 100, 12);
    // The shipped form: a scale × the 7-day mean × turnover.
    expect(h.risk.oi_at_risk_pct / 100).toBeCloseTo(Math.exp(CASCADE_MODEL.withLiquidations.intercept) * f.liquidations7d! * f.turnover!, 12);
    expect(h.risk.cascade_risk_reason).toContain("the last 7 days' liquidations");
    // The live feed's last hours alone are no liquidation history: the coefficients without it.
    const noHistory = liquidationHeatmap(input);
    expect(noHistory.inputs.cascadeFeatures.liquidations7d).toBeNull();
    expect(noHistory.risk.forecast_coefficients).toBe("without_liquidations");
    expect(noHistory.risk.cascade_risk_reason).toContain("no liquidation history");
  });

  it("rejects a non-positive price", () => {
    expect(() => liquidationHeatmap({ price: 0, openInterestUsd: 1, candles: [], mmrByLeverage: allTiers })).toThrow(RangeError);
  });
});

describe("on real recordings (Binance XRPUSDT, 2021-11/12)", () => {
  it("structure: a calm day reads low every hour, a volatile one medium or high", () => {
    const calm: RiskSummary[] = [];
    for (let k = at(XRP_1H, "2021-11-20T02:00:00Z"); k <= at(XRP_1H, "2021-11-21T04:00:00Z"); k++) calm.push(xrpAt(XRP_1H, k).risk);
    expect(calm.length).toBe(27);
    for (const r of calm) {
      expect(r.structural_risk).toBe("low");
      expect(r.near_band_oi_pct).toBeLessThan(2);
    }
    const volatile: RiskSummary[] = [];
    for (let k = at(XRP_1H, "2021-11-18T00:00:00Z"); k <= at(XRP_1H, "2021-11-18T16:00:00Z"); k++) volatile.push(xrpAt(XRP_1H, k).risk);
    expect(volatile.filter((r) => r.structural_risk !== "low").length).toBeGreaterThanOrEqual(0.7 * volatile.length);
    expect(volatile.some((r) => r.structural_risk === "high")).toBe(true);
    // The volatile day's bands are wider and its estimate holds more open interest near the price.
    const mean = (rs: RiskSummary[], f: (r: RiskSummary) => number) => rs.reduce((s, r) => s + f(r), 0) / rs.length;
    expect(mean(volatile, (r) => r.daily_volatility_pct)).toBeGreaterThan(mean(calm, (r) => r.daily_volatility_pct));
    expect(mean(volatile, (r) => r.near_band_oi_pct)).toBeGreaterThan(1.3 * mean(calm, (r) => r.near_band_oi_pct));
    // The forecast (no OI history or liquidation feed here) is higher on the volatile day too.
    expect(mean(volatile, (r) => r.oi_at_risk_pct)).toBeGreaterThan(mean(calm, (r) => r.oi_at_risk_pct));
  });

  it("structure: around the 2021-11-26 and 12-04 drops the 8-hour series turns from low to high", () => {
    const quiet: string[] = [];
    for (let k = at(XRP_8H, "2021-11-20T00:00:00Z"); k <= at(XRP_8H, "2021-11-24T16:00:00Z"); k++) quiet.push(xrpAt(XRP_8H, k).risk.structural_risk);
    expect(new Set(quiet)).toEqual(new Set(["low"]));
    expect(xrpAt(XRP_8H, at(XRP_8H, "2021-11-26T16:00:00Z")).risk.structural_risk).toBe("high");
    // The evening before the 2021-12-04 crash (a 4% fall left the week's longs near their levels).
    expect(xrpAt(XRP_8H, at(XRP_8H, "2021-12-03T16:00:00Z")).risk.structural_risk).toBe("high");
    expect(xrpAt(XRP_8H, at(XRP_8H, "2021-12-02T08:00:00Z")).risk.structural_risk).toBe("low");
  });

  it("the recorded crowded-long funding (0.058% per 8 h on 2021-11-26) moves risk to the long side", () => {
    // The instant 2021-11-26 00:00 is the close of the 11-25 16:00 candle.
    const k = at(XRP_8H, "2021-11-25T16:00:00Z");
    const settled = XRP_FUNDING.filter(([t]) => t! <= XRP_8H[k]!.openTime + 8 * H).at(-1)![1]!;
    expect(settled).toBeCloseTo(0.00058316, 8);
    const without = xrpAt(XRP_8H, k).risk;
    const withFunding = xrpAt(XRP_8H, k, settled);
    expect(withFunding.inputs.crowding).toBeGreaterThan(0.5);
    expect(withFunding.risk.long_oi_at_risk_usd.within_2_sigma).toBeGreaterThan(without.long_oi_at_risk_usd.within_2_sigma);
    expect(withFunding.risk.short_oi_at_risk_usd.within_2_sigma).toBeLessThan(without.short_oi_at_risk_usd.within_2_sigma);
    expect(withFunding.risk.dominant_side).toBe("long");
  });

  it("backtest (structure): levels are spread, a 5% near-band alert stays quiet, and higher levels precede more crossed open interest", () => {
    const rec: Recording = { name: "XRPUSDT 1h", candles: XRP_1H, candleHours: 1, mmrByLeverage: XRP_MMR };
    const s = score(rec.name, replay(rec, { warmupHours: 24 }), 5);
    expect(s.instants).toBe(53);
    expect(s.levels.low.count).toBeGreaterThan(0);
    expect(s.levels.medium.count).toBeGreaterThan(0);
    expect(s.levels.high.count).toBeGreaterThan(0);
    expect(s.levels.high.pct).toBeLessThan(20);
    expect(s.alert.firePct).toBeLessThan(10);
    const day = s.horizons.find((h) => h.hours === 24)!;
    expect(day.perLevel.medium.crossedPct).toBeGreaterThan(day.perLevel.low.crossedPct);
    expect(day.spearman.crossedPct).toBeGreaterThan(0.2);
  });
});

describe("maintenance-margin rates from venue tier tables", () => {
  it("takes, per leverage, the median over venues of the smallest tier allowing it; absent when none allows it", () => {
    const okx = [
      { maxLeverage: 125, maintenanceMarginRate: 0.004 },
      { maxLeverage: 50, maintenanceMarginRate: 0.01 },
    ];
    const bybit = [{ maxLeverage: 100, maintenanceMarginRate: 0.005 }];
    const hl = [{ maxLeverage: 50, maintenanceMarginRate: 0.01 }];
    const m = mmrByLeverage([okx, bybit, hl]);
    expect(m.get(100)).toBeCloseTo(0.0045, 12); // okx 0.004, bybit 0.005 (HL stops at 50x)
    expect(m.get(50)).toBe(0.005); // 0.004, 0.005, 0.01
    expect(m.get(2)).toBe(0.005);
    expect(mmrByLeverage([[{ maxLeverage: 20, maintenanceMarginRate: 0.02 }]]).has(25)).toBe(false);
    expect(mmrByLeverage([]).get(100)).toBe(FALLBACK_MMR);
  });
});
