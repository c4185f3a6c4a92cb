/**
 * Taker-flow arithmetic of the CVD store: an empty flow, the sum of two, and one trade counted into a flow.
 */
import type { Trade } from "../types.js";
import type { CvdFlow } from "./cvd-types.js";

/** A flow of zeros. */
export const emptyFlow = (): CvdFlow => ({ buyBase: 0, sellBase: 0, buyUsd: 0, sellUsd: 0, trades: 0 });

/** Adds `f` into `into` (in place). */
export function addFlow(into: CvdFlow, f: CvdFlow): void {
  into.buyBase += f.buyBase;
  into.sellBase += f.sellBase;
  into.buyUsd += f.buyUsd;
  into.sellUsd += f.sellUsd;
  into.trades += f.trades;
}

/** Counts taker trade `t` into `b` (in place): its size in base coins and `size × price` in USD, on its side. */
export function countInto(b: CvdFlow, t: Trade): void {
  const usd = t.size * t.price;
  if (t.side === "buy") {
    b.buyBase += t.size;
    b.buyUsd += usd;
  } else {
    b.sellBase += t.size;
    b.sellUsd += usd;
  }
  b.trades += 1;
}
