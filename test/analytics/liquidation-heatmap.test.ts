import { describe, expect, it } from "vitest";
import { cascadeRisk, FALLBACK_MMR, liquidationHeatmap, liquidationPrice, mmrByLeverage, type EntryCandle } from "../../src/analytics/liquidation-heatmap.js";

const MMR = 0.005;
const allTiers = new Map([5, 10, 25, 50, 100].map((l) => [l, MMR]));
const candle = (openTime: number, high: number, low: number, close: number, volumeUsd: number): EntryCandle => ({ openTime, high, low, close, volumeUsd });

describe("liquidation price (isolated, linear, fees ignored)", () => {
  it("matches the hand-computed exact forms", () => {
    // long = entry (1 - 1/L) / (1 - MMR); short = entry (1 + 1/L) / (1 + MMR)
    expect(liquidationPrice(100, 10, MMR, "long")).toBeCloseTo(90 / 0.995, 10); // 90.4523
    expect(liquidationPrice(100, 10, MMR, "short")).toBeCloseTo(110 / 1.005, 10); // 109.4527
    expect(liquidationPrice(50_000, 100, 0.004, "long")).toBeCloseTo((50_000 * 0.99) / 0.996, 6);
    expect(liquidationPrice(50_000, 5, 0.004, "short")).toBeCloseTo((50_000 * 1.2) / 1.004, 6);
  });
});

describe("cascade risk table (spec 2.5)", () => {
  it("high above 10% within 5%, medium from 5% within 10%, else low", () => {
    expect(cascadeRisk(0.1001, 0.2)).toBe("high");
    expect(cascadeRisk(0.1, 0.5)).toBe("medium"); // exactly 10% is not "more than 10%"
    expect(cascadeRisk(0, 0.05)).toBe("medium");
    expect(cascadeRisk(0, 0.0499)).toBe("low");
  });
});

describe("heatmap model", () => {
  it("static tiers (no candles): every entry at the price; clusters, bands and risk by hand", () => {
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 1_000_000, candles: [], mmrByLeverage: allTiers });
    expect(h.entryHours).toBe(0);
    expect(h.clusters).toHaveLength(10);
    const long10 = h.clusters.find((c) => c.side === "long" && c.leverage === "10x")!;
    expect(long10.liquidation_price).toBeCloseTo(90 / 0.995, 8);
    expect(long10.distance_pct).toBeCloseTo((90 / 0.995 - 100), 8); // -9.548%
    expect(long10.oi_at_risk_usd).toBeCloseTo(300_000, 6); // 30% weight of the whole OI
    const short100 = h.clusters.find((c) => c.side === "short" && c.leverage === "100x")!;
    expect(short100.distance_pct).toBeCloseTo((101 / 1.005 - 100), 8); // +0.498%
    // Nearest first.
    expect(Math.abs(h.clusters[0]!.distance_pct)).toBeLessThan(Math.abs(h.clusters[9]!.distance_pct));
    // Within 5%: 25x (3.5%), 50x (1.5%), 100x (0.5%) = 15% + 7% + 3%; within 10% adds 10x (9.5%): 55%.
    expect(h.risk.long_oi_at_risk_usd.within_5_pct).toBeCloseTo(250_000, 6);
    expect(h.risk.long_oi_at_risk_usd.within_10_pct).toBeCloseTo(550_000, 6);
    expect(h.risk.short_oi_at_risk_usd.within_10_pct).toBeCloseTo(550_000, 6);
    expect(h.risk.total_oi_at_risk_usd).toBeCloseTo(550_000, 6);
    expect(h.risk.oi_at_risk_pct).toBeCloseTo(55, 8);
    expect(h.risk.cascade_risk).toBe("high");
    expect(h.risk.cascade_risk_reason).toMatch(/^Estimate: 25\.0% of open interest sits in long liquidation levels within 5% below the price/);
  });

  it("renormalises the leverage split over the tiers the venues allow", () => {
    const upTo25 = new Map([5, 10, 25].map((l) => [l, MMR]));
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 900, candles: [], mmrByLeverage: upTo25 });
    expect(h.clusters.map((c) => c.leverage).sort()).toEqual(["10x", "10x", "25x", "25x", "5x", "5x"]);
    // 25x: 0.15 / 0.9 of OI within 5%; 10x + 25x: 0.45 / 0.9 within 10%.
    expect(h.risk.long_oi_at_risk_usd.within_5_pct).toBeCloseTo(150, 8);
    expect(h.risk.long_oi_at_risk_usd.within_10_pct).toBeCloseTo(450, 8);
  });

  it("drops positions a later candle already liquidated: a volatile hour leaves medium risk", () => {
    // Entries at 100 (volume), then an hour ranging 94..106 with no volume: 25x/50x/100x on both sides are gone.
    const candles = [candle(0, 100, 100, 100, 1_000), candle(3_600_000, 106, 94, 100, 0)];
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 1_000_000, candles, mmrByLeverage: allTiers });
    expect(h.entryHours).toBe(2);
    const leverages = new Set(h.clusters.filter((c) => c.oi_at_risk_usd > 0).map((c) => c.leverage));
    expect([...leverages].sort()).toEqual(["10x", "5x"]);
    // Survivors renormalised: 5x 0.45/0.75 = 60%, 10x 40%; the 10x levels sit 9.5% away.
    expect(h.risk.long_oi_at_risk_usd.within_5_pct).toBe(0);
    expect(h.risk.long_oi_at_risk_usd.within_10_pct).toBeCloseTo(400_000, 4);
    expect(h.risk.cascade_risk).toBe("medium");
    expect(h.risk.oi_at_risk_pct).toBeCloseTo(40, 6);
  });

  it("a crash wipes the longs and leaves the shorts far away: low risk", () => {
    const candles = [candle(0, 100, 100, 100, 1_000), candle(3_600_000, 100, 60, 60, 0)];
    const h = liquidationHeatmap({ price: 60, openInterestUsd: 1_000_000, candles, mmrByLeverage: allTiers });
    expect(h.clusters.filter((c) => c.side === "long" && c.oi_at_risk_usd > 0)).toEqual([]);
    expect(h.risk.total_oi_at_risk_usd).toBe(0);
    expect(h.risk.cascade_risk).toBe("low");
    expect(h.risk.cascade_risk_reason).toContain("low: less than 5%");
  });

  it("weights entries by USD volume with a 24 h half-life", () => {
    // Two entry hours, 24 h apart in age, equal volume: the older weighs half as much.
    const candles = [candle(0, 200, 200, 200, 1_000), ...Array.from({ length: 23 }, (_, i) => candle((i + 1) * 3_600_000, 200, 100, 100, 0)), candle(24 * 3_600_000, 100, 100, 100, 1_000)];
    const h = liquidationHeatmap({ price: 100, openInterestUsd: 3, candles, mmrByLeverage: new Map([[5, MMR]]) });
    const short5 = h.clusters.find((c) => c.side === "short")!;
    // entry mean = (200 * 0.5 + 100 * 1) / 1.5 = 133.33 (the 200 short entries survive: 5x liq 238.8 > 200)
    expect(short5.entry_price).toBeCloseTo(400 / 3, 6);
  });

  it("rejects a non-positive price", () => {
    expect(() => liquidationHeatmap({ price: 0, openInterestUsd: 1, candles: [], mmrByLeverage: allTiers })).toThrow(RangeError);
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
    expect(mmrByLeverage([[{ maxLeverage: 20, maintenanceMarginRate: 0.02 }]]).has(25)).toBe(false);
    expect(mmrByLeverage([]).get(100)).toBe(FALLBACK_MMR);
  });
});
