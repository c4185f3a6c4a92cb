import { describe, expect, it } from "vitest";
import { aggregateCandles, ammQuote, poolFeeBps, priceSpreadPct, weightedAverage } from "../../src/analytics/dex.js";
import { positioningSentiment } from "../../src/analytics/sentiment.js";
import {
  annualizedVolatilityPct,
  betaAndCorrelation,
  dailyVolatility,
  distributionMoments,
  logReturns,
  maxDrawdownPct,
  riskLevel,
  sharpeRatio,
  valueAtRiskPct,
} from "../../src/analytics/volatility.js";

// A known series: closes of 9 hours.
const PRICES = [100, 102, 101, 105, 103, 104, 99, 101, 106];
// Independent re-implementations (plain loops), to check the library-backed functions.
const rets = PRICES.slice(1).map((p, i) => Math.log(p / PRICES[i]!));
const m = rets.reduce((a, b) => a + b, 0) / rets.length;
const sd = Math.sqrt(rets.reduce((a, r) => a + (r - m) ** 2, 0) / (rets.length - 1));

describe("volatility metrics against hand-computed values", () => {
  it("log returns, annualised and daily volatility", () => {
    expect(logReturns(PRICES)).toEqual(rets);
    expect(annualizedVolatilityPct(rets, 8760)).toBeCloseTo(sd * Math.sqrt(8760) * 100, 10);
    expect(dailyVolatility(rets, 24)).toBeCloseTo(sd * Math.sqrt(24), 12);
    expect(annualizedVolatilityPct([0.1], 8760)).toBeNull();
  });

  it("parametric (log-normal) VaR, Sharpe and drawdown", () => {
    expect(valueAtRiskPct(0.02, 0.95)).toBeCloseTo((1 - Math.exp(-0.032897072539)) * 100, 8);
    expect(valueAtRiskPct(0.02, 0.99)).toBeCloseTo((1 - Math.exp(-0.046526957481)) * 100, 8);
    expect(sharpeRatio(rets, 8760)).toBeCloseTo((m / sd) * Math.sqrt(8760), 10);
    // peak 105 -> trough 99
    expect(maxDrawdownPct(PRICES)).toBeCloseTo((6 / 105) * 100, 10);
  });

  it("beta and correlation vs a benchmark", () => {
    const bench = rets.map((r, i) => r * 0.5 + (i % 2 ? 0.001 : -0.001));
    const mb = bench.reduce((a, b) => a + b, 0) / bench.length;
    const cov = rets.reduce((a, r, i) => a + (r - m) * (bench[i]! - mb), 0) / (rets.length - 1);
    const varB = bench.reduce((a, b) => a + (b - mb) ** 2, 0) / (bench.length - 1);
    const { beta, correlation } = betaAndCorrelation(rets, bench);
    expect(beta).toBeCloseTo(cov / varB, 10);
    expect(correlation).toBeCloseTo(cov / (Math.sqrt(varB) * sd), 10);
    expect(betaAndCorrelation(rets, rets)).toEqual({ beta: expect.closeTo(1, 10), correlation: expect.closeTo(1, 10) });
  });

  it("distribution moments (sample skewness and excess kurtosis)", () => {
    const d = distributionMoments(rets)!;
    const n = rets.length;
    const m2 = rets.reduce((a, r) => a + (r - m) ** 2, 0);
    const m3 = rets.reduce((a, r) => a + (r - m) ** 3, 0);
    const m4 = rets.reduce((a, r) => a + (r - m) ** 4, 0);
    const skew = (n * Math.sqrt(n - 1) * m3) / ((n - 2) * m2 ** 1.5);
    const kurt = ((n + 1) * n * (n - 1) * m4) / ((n - 2) * (n - 3) * m2 ** 2) - (3 * (n - 1) ** 2) / ((n - 2) * (n - 3));
    expect(d.mean).toBeCloseTo(m, 12);
    expect(d.std_dev).toBeCloseTo(sd, 12);
    expect(d.skewness).toBeCloseTo(skew, 8);
    expect(d.kurtosis).toBeCloseTo(kurt, 8);
  });

  it("risk levels by daily volatility: < 3 low, 3-8 medium, 8-15 high, > 15 extreme", () => {
    expect([2.9, 3, 7.9, 8, 15, 15.1].map(riskLevel)).toEqual(["low", "medium", "medium", "high", "high", "extreme"]);
  });
});

describe("DEX aggregation math", () => {
  it("volume-weighted price and spread", () => {
    expect(
      weightedAverage([
        { value: 100, weight: 3 },
        { value: 104, weight: 1 },
      ]),
    ).toBe(101);
    expect(
      weightedAverage([
        { value: 100, weight: 0 },
        { value: 104, weight: 0 },
      ]),
    ).toBe(102);
    expect(priceSpreadPct([100, 101, 102])).toBe(2);
  });

  it("aggregates candles by time, weighting by each pool's volume, newest first", () => {
    const a = [
      { time: 2, open: 10, high: 12, low: 9, close: 11, volumeUsd: 300 },
      { time: 1, open: 9, high: 10, low: 8, close: 10, volumeUsd: 100 },
    ];
    const b = [{ time: 2, open: 14, high: 16, low: 13, close: 15, volumeUsd: 100 }];
    const out = aggregateCandles([a, b]);
    expect(out.map((c) => c.time)).toEqual([2, 1]);
    expect(out[0]).toEqual({ time: 2, open: 11, high: 13, low: 10, close: 12, volumeUsd: 400, sourceCount: 2 });
    expect(out[1]).toMatchObject({ close: 10, sourceCount: 1 });
  });

  it("quotes an AMM pool: fee around the price, constant-product depth in the band", () => {
    const q = ammQuote(2000, 30, 1_000_000, 0.02);
    expect(q.bid).toBe(1994);
    expect(q.ask).toBe(2006);
    expect(q.spreadPct).toBeCloseTo((12 / 2000) * 100, 8);
    expect(q.askDepthUsd).toBeCloseTo(500_000 * (Math.sqrt(1.02) - 1), 4);
    expect(q.bidDepthUsd).toBeCloseTo(500_000 * (1 - Math.sqrt(0.98)), 4);
    expect(poolFeeBps("uniswap", 5)).toBe(5);
    expect(poolFeeBps("pancakeswap", null)).toBe(25);
    expect(poolFeeBps("unknowndex", null)).toBe(30);
  });
});

describe("positioning sentiment", () => {
  it("averages the available components and counts observations", () => {
    const s = positioningSentiment({ funding8hPct: [0.06, 0.06], longShortRatios: [2, 2, 2] })!;
    expect(s).toMatchObject({ score: 1, label: "bullish", sources_analyzed: 5 });
    expect(s.confidence).toBeCloseTo(2 / 3, 4);
    expect(positioningSentiment({ funding8hPct: [0.01] })).toMatchObject({ score: 0.5, label: "neutral", sources_analyzed: 1 });
    expect(positioningSentiment({})).toBeNull();
    expect(positioningSentiment({ longShortRatios: [0.5] })!.label).toBe("bearish");
  });
});
