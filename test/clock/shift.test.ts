import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createMarketModel } from "../../src/sim/market.js";
import { fixedClock } from "../../src/sim/clock.js";
import { dexModelFor } from "../../src/sim/dex-model.js";
import { SIM_DEX_POOLS, YOUNG_POOL_AGE_MS } from "../../src/sim/dex-tokens.js";

const DAY_MS = 86_400_000;
const shiftDays = Number(process.env.MARKETGATE_TEST_CLOCK_SHIFT_DAYS ?? "0");
/** The wall clock, which the shift does not move: the process's start on the real clock plus the time since. */
const wallNow = () => performance.timeOrigin + performance.now();

describe("the calendar of the simulator and of the date-shifted runs", () => {
  it("keeps the young look-alike pool days old whatever the date (it was pinned to 2026-11-20)", () => {
    const young = SIM_DEX_POOLS.find((p) => p.base.key.startsWith("fake-cbBTC-"))!;
    // Simulators started today and 60, 400 and 1,800 days from now: the pool is as young at each start.
    for (const days of [0, 60, 400, 1800]) {
      const start = Date.now() + days * DAY_MS;
      const dex = dexModelFor(createMarketModel({ seed: 42, clock: fixedClock(start) }));
      const ageMs = start - dex.createdAt(young);
      expect(ageMs).toBeGreaterThan(YOUNG_POOL_AGE_MS - 1000);
      expect(ageMs).toBeLessThan(7 * DAY_MS);
      // It has traded since it was created, and not before.
      const hours = dex.candles(young, { timeframe: "hour", aggregate: 1, limit: 1000, includeEmpty: false, side: "base", currency: "usd" }, start);
      expect(hours.length).toBeGreaterThan(0);
      expect(Math.min(...hours.map((r) => r[0] * 1000))).toBeGreaterThanOrEqual(dex.createdAt(young) - 3_600_000);
    }
  });

  it.runIf(shiftDays > 0)("moves Date in the test worker and in a child process by the configured days", () => {
    expect((Date.now() - wallNow()) / DAY_MS).toBeCloseTo(shiftDays, 2);
    expect((new Date().getTime() - wallNow()) / DAY_MS).toBeCloseTo(shiftDays, 2);
    const child = Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(Date.now() - (performance.timeOrigin + performance.now())))"]).toString());
    expect(child / DAY_MS).toBeCloseTo(shiftDays, 2);
  });
});
