import { describe, expect, it } from "vitest";
import { fixedClock } from "../../src/sim/clock.js";
import { createMarketModel } from "../../src/sim/market.js";
import { createTape } from "../../src/sim/tape.js";

const NOW = Date.UTC(2026, 10, 20, 12);

describe("trade tape: its slot cache is bounded and only saves work (issue 16)", () => {
  it("answers the same for an interval after far more slots than the cache holds were computed", () => {
    const tape = createTape(createMarketModel({ seed: 42, clock: fixedClock(NOW) }));
    const from = NOW - 60_000;
    const trades = tape.trades("bybit", "BTC", from, NOW);
    const liqs = tape.liquidations("bybit", "BTC", NOW - 3_600_000, NOW);
    expect(trades.length).toBeGreaterThan(30);
    // 6000 more slots than the cache's 4096 (trades and liquidations alike), so the intervals above were evicted.
    tape.trades("bybit", "ETH", NOW - 6_000_000, NOW);
    tape.liquidations("bybit", "ETH", NOW - 6_000_000, NOW);
    expect(tape.trades("bybit", "BTC", from, NOW)).toEqual(trades);
    expect(tape.liquidations("bybit", "BTC", NOW - 3_600_000, NOW)).toEqual(liqs);
    // And a fresh tape of the same seed agrees.
    expect(createTape(createMarketModel({ seed: 42, clock: fixedClock(NOW) })).trades("bybit", "BTC", from, NOW)).toEqual(trades);
  });
});
