import { describe, expect, it } from "vitest";
import { annualizedPct, bestFundingArb, detectIntervalHours, fundingDirection, fundingSignal, fundingSummary, rate8h } from "../../src/analytics/funding.js";
import { longShortSentiment, openInterestInterpretation, usd } from "../../src/analytics/positioning.js";
import { AppError } from "../../src/errors.js";
import { fanOut, NOT_LISTED } from "../../src/core/fanout.js";

describe("funding annualisation per interval", () => {
  it("uses each symbol's own interval: 8h x1095, 4h x2190, 1h x8760", () => {
    expect(annualizedPct(0.0001, 8)).toBeCloseTo(10.95, 10);
    expect(annualizedPct(0.0001, 4)).toBeCloseTo(21.9, 10);
    expect(annualizedPct(0.0001, 1)).toBeCloseTo(87.6, 10);
    expect(rate8h(0.0000125, 1)).toBeCloseTo(0.0001, 12);
  });

  it("says who pays and classifies predicted rates on their 8h equivalent", () => {
    expect(fundingDirection(0.0002)).toBe("longs_paying");
    expect(fundingDirection(-0.0002)).toBe("shorts_paying");
    expect(fundingSignal(0.01)).toBe("slightly_bullish");
    expect(fundingSignal(0.05)).toBe("strongly_bullish");
    expect(fundingSignal(0)).toBe("neutral");
    expect(fundingSignal(-0.03)).toBe("bearish");
    expect(fundingSignal(-0.05)).toBe("strongly_bearish");
  });

  it("summarises a history with the annualised average", () => {
    const s = fundingSummary([0.0001, 0.0003, -0.0001], 8);
    expect(s.avg_rate).toBeCloseTo(0.0001, 12);
    expect([s.max_rate, s.min_rate]).toEqual([0.0003, -0.0001]);
    expect(s.annualized_avg).toBeCloseTo(10.95, 8);
  });

  it("detects the interval from settlement times", () => {
    const h = 3_600_000;
    expect(detectIntervalHours([0, 8 * h, 16 * h, 24 * h])).toBe(8);
    expect(detectIntervalHours([24 * h, 20 * h, 16 * h, 12 * h, 4 * h])).toBe(4);
    expect(detectIntervalHours([0])).toBeUndefined();
  });
});

describe("funding arbitrage direction", () => {
  it("goes long where the annualised rate is lowest and short where it is highest", () => {
    const arb = bestFundingArb([
      { exchange: "binance", rate: 0.0001, intervalHours: 8 },
      { exchange: "bybit", rate: -0.0002, intervalHours: 8 },
      { exchange: "okx", rate: 0.0003, intervalHours: 8 },
    ])!;
    expect(arb).toMatchObject({ long_exchange: "bybit", short_exchange: "okx", direction: "long_bybit_short_okx" });
    expect(arb.rate_spread).toBeCloseTo(0.0005, 12);
    expect(arb.annualized_spread_pct).toBeCloseTo(0.0005 * 1095 * 100, 8);
  });

  it("compares legs per their own interval: 0.005%/h beats 0.03%/8h", () => {
    const arb = bestFundingArb([
      { exchange: "binance", rate: 0.0003, intervalHours: 8 }, // 32.85% APR
      { exchange: "hyperliquid", rate: 0.00005, intervalHours: 1 }, // 43.8% APR
    ])!;
    expect(arb.short_exchange).toBe("hyperliquid");
    expect(arb.long_exchange).toBe("binance");
    expect(arb.annualized_spread_pct).toBeCloseTo(43.8 - 32.85, 8);
    expect(arb.rate_spread_8h).toBeCloseTo(0.0004 - 0.0003, 12);
    expect(bestFundingArb([{ exchange: "okx", rate: 0.0001, intervalHours: 8 }])).toBeUndefined();
    // 0.01%/8h and 0.00125%/1h are the same APR: no edge, no arbitrage.
    expect(
      bestFundingArb([
        { exchange: "okx", rate: 0.0001, intervalHours: 8 },
        { exchange: "hyperliquid", rate: 0.0000125, intervalHours: 1 },
      ]),
    ).toBeUndefined();
  });
});

describe("positioning strings", () => {
  it("maps every long/short band to its sentiment", () => {
    expect([2.5, 2.0, 1.5, 1.2, 1.05, 1.0, 0.95, 0.8, 0.67, 0.6, 0.5, 0.4].map(longShortSentiment)).toEqual([
      "extremely_bullish",
      "bullish",
      "bullish",
      "slightly_bullish",
      "neutral",
      "neutral",
      "neutral",
      "slightly_bearish",
      "slightly_bearish",
      "bearish",
      "bearish",
      "extremely_bearish",
    ]);
  });

  it("describes open interest concentration", () => {
    expect(usd(12_345_678_901)).toBe("$12.3B");
    expect(
      openInterestInterpretation(
        [
          { exchange: "binance", share_pct: 80 },
          { exchange: "okx", share_pct: 20 },
        ],
        1e9,
      ),
    ).toContain("binance leads with 80.0%, highly concentrated");
  });
});

describe("partial failure fan-out", () => {
  it("answers with the venues that answered and names the missing ones", async () => {
    const r = await fanOut(["a", "b", "c"] as const, async (v) => {
      if (v === "b") throw new AppError("UPSTREAM_TIMEOUT", "b did not answer");
      if (v === "c") return NOT_LISTED;
      return 1;
    });
    expect(r.answered).toEqual(["a"]);
    expect(r.missing_exchanges).toEqual([
      { exchange: "b", reason: "UPSTREAM_TIMEOUT: b did not answer" },
      { exchange: "c", reason: "not_listed" },
    ]);
  });

  it("is a 503 when no venue answered and a 404 when no venue lists the symbol", async () => {
    await expect(fanOut(["a", "b"], async () => Promise.reject(new Error("down")))).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", status: 503 });
    await expect(fanOut(["a", "b"], async () => NOT_LISTED)).rejects.toMatchObject({ code: "UNKNOWN_SYMBOL", status: 404 });
  });
});
