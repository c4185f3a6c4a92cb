import type { PoolCandle } from "../venues/dex/types.js";
import { clean } from "./funding.js";

/*
 * DEX aggregation math: volume-weighted prices, price dispersion, candle aggregation across pools, and
 * AMM quotes (bid/ask/depth) for pools that have no order book.
 */

/** Volume-weighted average of prices; falls back to equal weights when every weight is 0. Null when empty. */
export function weightedAverage(points: ReadonlyArray<{ value: number; weight: number }>): number | null {
  if (points.length === 0) return null;
  const total = points.reduce((s, p) => s + Math.max(0, p.weight), 0);
  if (total <= 0) return clean(points.reduce((s, p) => s + p.value, 0) / points.length);
  return clean(points.reduce((s, p) => s + p.value * Math.max(0, p.weight), 0) / total);
}

/** Spread between the highest and lowest price, pct of the lowest (0 for fewer than two prices). */
export function priceSpreadPct(prices: readonly number[]): number {
  if (prices.length < 2) return 0;
  const lo = Math.min(...prices);
  const hi = Math.max(...prices);
  return lo > 0 ? clean(((hi - lo) / lo) * 100) : 0;
}

/** A candle of one pool (USD prices, start time in ms). */
export type CandleIn = PoolCandle;

/** An aggregated candle: OHLC weighted by each pool's volume in that interval; volume summed. */
export interface CandleOut extends CandleIn {
  sourceCount: number;
}

/**
 * Aggregates candles of several pools by start time. Each price field is the volume-weighted average
 * of the pools that traded in that interval (equal weights when none reports volume), so one thin pool
 * cannot drag the aggregate; `sourceCount` says how many pools contributed. Output is newest first.
 */
export function aggregateCandles(series: ReadonlyArray<readonly CandleIn[]>): CandleOut[] {
  const byTime = new Map<number, CandleIn[]>();
  for (const s of series) for (const c of s) byTime.set(c.time, [...(byTime.get(c.time) ?? []), c]);
  const out: CandleOut[] = [];
  for (const [time, cs] of byTime) {
    const w = (pick: (c: CandleIn) => number) => weightedAverage(cs.map((c) => ({ value: pick(c), weight: c.volumeUsd })))!;
    out.push({
      time,
      open: w((c) => c.open),
      high: w((c) => c.high),
      low: w((c) => c.low),
      close: w((c) => c.close),
      volumeUsd: clean(cs.reduce((s, c) => s + c.volumeUsd, 0)),
      sourceCount: cs.length,
    });
  }
  return out.sort((a, b) => b.time - a.time);
}

/** Default swap fee (bps) by DEX when the source does not state it; 30 bps otherwise. */
const DEFAULT_FEE_BPS: Record<string, number> = { uniswap: 30, sushiswap: 30, pancakeswap: 25, raydium: 25, orca: 30, aerodrome: 30, camelot: 30, quickswap: 30, traderjoe: 30 };

/** The swap fee of a pool in bps: stated by the source, else the DEX's usual fee, else 30. */
export function poolFeeBps(dex: string, statedBps: number | null): number {
  if (statedBps !== null) return statedBps;
  const key = Object.keys(DEFAULT_FEE_BPS).find((k) => dex.toLowerCase().startsWith(k));
  return key ? DEFAULT_FEE_BPS[key]! : 30;
}

/** Bid/ask and depth of an AMM pool inside a price-impact band. */
export interface AmmQuote {
  bid: number;
  ask: number;
  spreadPct: number;
  /** USD of the quote asset a seller of the base receives before the price falls by `band`. */
  bidDepthUsd: number;
  /** USD a buyer of the base spends before the price rises by `band`. */
  askDepthUsd: number;
}

/**
 * Quotes an AMM pool as if it had an order book (docs/methods/dex.md, "AMM spread method"):
 * bid = price × (1 − fee), ask = price × (1 + fee); depth from a constant-product (x·y = k) pool holding
 * half its liquidity on each side: with quote reserve Q = liquidity / 2, moving the price up by b takes
 * Q(√(1+b) − 1) of quote, and moving it down by b releases Q(1 − √(1−b)). Concentrated-liquidity pools are
 * deeper near the price than this full-range model, so depths are lower bounds.
 */
export function ammQuote(price: number, feeBps: number, liquidityUsd: number, bandFraction: number): AmmQuote {
  const fee = feeBps / 10_000;
  const q = liquidityUsd / 2;
  const bid = clean(price * (1 - fee));
  const ask = clean(price * (1 + fee));
  return {
    bid,
    ask,
    spreadPct: clean(((ask - bid) / ((ask + bid) / 2)) * 100),
    bidDepthUsd: clean(q * (1 - Math.sqrt(1 - bandFraction))),
    askDepthUsd: clean(q * (Math.sqrt(1 + bandFraction) - 1)),
  };
}
