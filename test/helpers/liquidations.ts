import type { Liquidation } from "../../src/ingestion/types.js";

/** The n-th of a series of distinct, valid liquidations of `base` on Bybit, stamped within the last second. */
export function testLiquidation(n: number, base = "BTC"): Liquidation {
  return {
    venue: "bybit",
    base,
    venueSymbol: `${base}USDT`,
    time: Date.now() - 1000 + (n % 1000),
    side: n % 2 ? "long" : "short",
    price: 60_000 + n,
    size: 0.01 + n / 1e6,
    valueUsd: (60_000 + n) * (0.01 + n / 1e6),
  };
}
