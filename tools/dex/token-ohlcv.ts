import { z } from "zod";
import { describeToken } from "../../src/analytics/dex-token.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import type { OhlcvTimeframe, PoolCandle } from "../../src/venues/dex/types.js";
import { isoNow, sourceLabel, Timestamp } from "../common.js";
import { AddressParam, canonicalAddress, NetworkParam, networkFields, refineAddress, requireKnownToken } from "./token-common.js";

/** Intervals, their GeckoTerminal timeframe and their length. */
const INTERVALS = {
  "1m": { tf: { timeframe: "minute", aggregate: 1 }, ms: 60_000 },
  "5m": { tf: { timeframe: "minute", aggregate: 5 }, ms: 300_000 },
  "15m": { tf: { timeframe: "minute", aggregate: 15 }, ms: 900_000 },
  "1h": { tf: { timeframe: "hour", aggregate: 1 }, ms: 3_600_000 },
  "4h": { tf: { timeframe: "hour", aggregate: 4 }, ms: 14_400_000 },
  "1d": { tf: { timeframe: "day", aggregate: 1 }, ms: 86_400_000 },
} as const satisfies Record<string, { tf: OhlcvTimeframe; ms: number }>;

/** Most intervals per answer: 200 rows keep an MCP result near 6k tokens. */
export const TOKEN_OHLCV_MAX_LIMIT = 200;

const Candle = z.object({
  timestamp: z.string().describe("interval start, ISO 8601"),
  open: z.number().nullable(),
  high: z.number().nullable(),
  low: z.number().nullable(),
  close: z.number().nullable(),
  volume_usd: z.number(),
  empty: z.boolean().describe("true: no swap in this interval (prices null, volume 0); stated, never dropped"),
});

/**
 * The last `limit` intervals ending with the current one, newest first, from the pool's candles (by interval
 * start): an interval without a candle is an empty row. Intervals before the pool existed are left out.
 */
export function fillIntervals(candles: readonly PoolCandle[], spanMs: number, limit: number, nowMs: number, createdAt: number | null): Array<z.infer<typeof Candle>> {
  const by = new Map(candles.map((c) => [Math.floor(c.time / spanMs) * spanMs, c]));
  const newest = Math.floor(nowMs / spanMs) * spanMs;
  const first = createdAt === null ? -Infinity : Math.floor(createdAt / spanMs) * spanMs;
  const rows: Array<z.infer<typeof Candle>> = [];
  for (let t = newest, n = 0; n < limit && t >= first; t -= spanMs, n++) {
    const c = by.get(t);
    const timestamp = new Date(t).toISOString();
    rows.push(
      c
        ? { timestamp, open: c.open, high: c.high, low: c.low, close: c.close, volume_usd: c.volumeUsd, empty: false }
        : { timestamp, open: null, high: null, low: null, close: null, volume_usd: 0, empty: true },
    );
  }
  return rows;
}

/** `GET /dex/tokens/:network/:address/ohlcv`: candles of a token's most liquid pool (GeckoTerminal pool OHLCV). */
export const dexTokenOhlcv = defineTool({
  name: "dex_token_ohlcv",
  title: "DEX token candles by address",
  method: "GET",
  path: "/dex/tokens/:network/:address/ohlcv",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["tokens", "dex"],
  summary: "USD candles of any token by network and address, from its most liquid pool, with empty intervals stated",
  mcpNote: `limit ≤ ${TOKEN_OHLCV_MAX_LIMIT} intervals; rows with empty=true had no swap. Check low_liquidity/unverified.`,
  description:
    "OHLCV in USD of the token (charted as itself even when it is the quote side) in its most liquid pool that GeckoTerminal indexes, named in `pool` (pool list and guard flags as of the token's last load, at most 10 minutes old). The answer covers the last `limit` intervals up to now; an interval without a swap is a row with empty=true and null prices (never silently dropped), and empty_intervals counts them. Intervals before the pool was created are left out. Guard flags as in dex_token.",
  example: { network: "base", address: "0x4200000000000000000000000000000000000006", interval: "1h", limit: 24 },
  input: z
    .object({
      network: NetworkParam,
      address: AddressParam,
      interval: z.enum(["1m", "5m", "15m", "1h", "4h", "1d"]).default("1h").describe("candle interval"),
      limit: z.number().int().min(1).max(TOKEN_OHLCV_MAX_LIMIT).default(100).describe(`intervals, newest first (max ${TOKEN_OHLCV_MAX_LIMIT})`),
    })
    .superRefine(refineAddress),
  output: z.object({
    network: z.string(),
    caip2: z.string(),
    address: z.string(),
    symbol: z.string(),
    interval: z.string(),
    pool: z.object({
      dex: z.string(),
      pool_address: z.string(),
      quote_symbol: z.string(),
      side: z.enum(["base", "quote"]),
      liquidity_usd: z.number().nullable(),
      reason: z.string().describe("why this pool was charted"),
    }),
    candles: z.array(Candle),
    candle_count: z.number().int().describe("rows with swaps"),
    empty_intervals: z.number().int().describe("rows without swaps"),
    low_liquidity: z.boolean(),
    unverified: z.boolean(),
    flags: z.array(z.string()),
    source: z.string(),
    timestamp: Timestamp,
  }),
  checkBeforePayment: ({ network, address }, ctx, caller) => requireKnownToken(network, address, ctx, caller),
  async handler({ network, address, interval, limit }, ctx) {
    const addr = canonicalAddress(network, address);
    // The pool list and the guard flags from the metadata cache (10 min): candles are the only call a repeat costs.
    const meta = await ctx.venues.dexTokens.meta(network, addr, "paid");
    if (!meta.known) throw new AppError("NOT_FOUND", `neither GeckoTerminal nor DexScreener knows a pool of ${addr} on ${network}`);
    const view = describeToken(meta.snapshot, ctx.now());
    // GeckoTerminal charts the pools it indexes; prefer those, then any pool by liquidity.
    const pool = view.pools.find((p) => p.sources.includes("geckoterminal") && p.liquidityUsd !== null) ?? view.pools[0];
    if (!pool) throw new AppError("NOT_FOUND", `no pool of ${addr} to chart`);
    const spec = INTERVALS[interval];
    const candles = await ctx.venues.dexTokens.ohlcv(network, pool.poolAddress, addr, spec.tf, limit, "paid");
    const rows = fillIntervals(candles, spec.ms, limit, ctx.now(), pool.createdAt);
    const empty = rows.filter((r) => r.empty).length;
    return {
      ...networkFields(network),
      address: addr,
      symbol: view.symbol,
      interval,
      pool: {
        dex: pool.dex,
        pool_address: pool.poolAddress,
        quote_symbol: pool.quote.symbol,
        side: pool.side,
        liquidity_usd: pool.liquidityUsd,
        reason: pool === view.pools[0] ? "most liquid pool" : "most liquid pool GeckoTerminal indexes",
      },
      candles: rows,
      candle_count: rows.length - empty,
      empty_intervals: empty,
      low_liquidity: view.lowLiquidity,
      unverified: view.unverified,
      flags: view.flags,
      source: sourceLabel(ctx, "geckoterminal"),
      timestamp: isoNow(ctx),
    };
  },
});
