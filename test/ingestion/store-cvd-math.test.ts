import { describe, expect, it } from "vitest";
import { CVD_BUCKET_MS, alignBucket, bucketSizeFor, bucketSizeLabel, cvdPressurePct, cvdSignal, isCvdPeriod, periodMs } from "../../src/ingestion/store/cvd-math.js";

describe("cvdSignal thresholds (docs/methods/streams.md)", () => {
  const sig = (pct: number) => cvdSignal(pct, 100, 10);

  it("classifies at and around each boundary", () => {
    expect(sig(100)).toBe("strong_bullish_pressure");
    expect(sig(15.000001)).toBe("strong_bullish_pressure");
    expect(sig(15)).toBe("bullish_pressure"); // "above 15 %" is strong; exactly 15 is the top of 5–15
    expect(sig(14.999999)).toBe("bullish_pressure");
    expect(sig(5)).toBe("bullish_pressure");
    expect(sig(4.999999)).toBe("neutral");
    expect(sig(0)).toBe("neutral");
    expect(sig(-4.999999)).toBe("neutral");
    expect(sig(-5)).toBe("bearish_pressure");
    expect(sig(-15)).toBe("bearish_pressure");
    expect(sig(-15.000001)).toBe("strong_bearish_pressure");
    expect(sig(-100)).toBe("strong_bearish_pressure");
  });

  it("does not let float noise cross a boundary", () => {
    expect(0.1 + 0.05).not.toBe(0.15);
    expect(cvdSignal(0.1 + 0.05, 1, 3)).toBe("bullish_pressure");
    expect(cvdSignal(-(0.1 + 0.05), 1, 3)).toBe("bearish_pressure");
    expect(cvdPressurePct(0.1 + 0.05, 1)).toBe(15);
  });

  it("reports insufficient_data without trades or volume", () => {
    expect(cvdSignal(0, 0, 0)).toBe("insufficient_data");
    expect(cvdSignal(50, 100, 0)).toBe("insufficient_data");
    expect(cvdSignal(0, 0, 5)).toBe("insufficient_data");
    expect(cvdSignal(Number.NaN, 100, 5)).toBe("insufficient_data");
    expect(cvdPressurePct(1, 0)).toBeNull();
  });
});

describe("periods and buckets", () => {
  it("maps periods to windows and bucket sizes", () => {
    expect(bucketSizeFor("1h")).toBe(5 * 60_000);
    expect(bucketSizeFor("4h")).toBe(15 * 60_000);
    expect(bucketSizeFor("24h")).toBe(3_600_000);
    expect(bucketSizeFor("7d")).toBe(3_600_000);
    expect(periodMs("7d")).toBe(7 * 86_400_000);
    expect([bucketSizeLabel(300_000), bucketSizeLabel(900_000), bucketSizeLabel(3_600_000)]).toEqual(["5m", "15m", "1h"]);
    expect(isCvdPeriod("4h")).toBe(true);
    expect(isCvdPeriod("2h")).toBe(false);
  });

  it("aligns to UTC bucket starts, flooring negatives, and refuses bad sizes", () => {
    const t = Date.UTC(2025, 0, 1, 12, 7, 30, 123);
    expect(alignBucket(t, CVD_BUCKET_MS)).toBe(Date.UTC(2025, 0, 1, 12, 5));
    expect(alignBucket(t, 15 * 60_000)).toBe(Date.UTC(2025, 0, 1, 12, 0));
    expect(alignBucket(t, 3_600_000)).toBe(Date.UTC(2025, 0, 1, 12, 0));
    expect(alignBucket(Date.UTC(2025, 0, 1, 12, 5), CVD_BUCKET_MS)).toBe(Date.UTC(2025, 0, 1, 12, 5));
    expect(alignBucket(-1, CVD_BUCKET_MS)).toBe(-CVD_BUCKET_MS);
    expect(() => alignBucket(t, 0)).toThrow(RangeError);
    expect(() => alignBucket(t, 1.5)).toThrow(RangeError);
  });
});
