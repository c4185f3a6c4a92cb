import { z } from "zod";
import { aggregateCandles } from "../../src/analytics/dex.js";
import { fanOut } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import type { OhlcvTimeframe } from "../../src/venues/dex/types.js";
import { RequireField } from "../common.js";
import { CursorParam, page, PageFields, pager } from "../paging.js";
import { acceptedPools, DexSymbol, MissingSources } from "./common.js";

/** Candle intervals with their GeckoTerminal timeframe and their maximum `limit` (docs/methods/dex.md). */
export const INTERVALS: Record<string, { tf: OhlcvTimeframe; max: number; ms: number }> = {
  "1m": { tf: { timeframe: "minute", aggregate: 1 }, max: 1440, ms: 60_000 },
  "5m": { tf: { timeframe: "minute", aggregate: 5 }, max: 288, ms: 300_000 },
  "15m": { tf: { timeframe: "minute", aggregate: 15 }, max: 96, ms: 900_000 },
  "1h": { tf: { timeframe: "hour", aggregate: 1 }, max: 720, ms: 3_600_000 },
  "4h": { tf: { timeframe: "hour", aggregate: 4 }, max: 180, ms: 14_400_000 },
  "1d": { tf: { timeframe: "day", aggregate: 1 }, max: 365, ms: 86_400_000 },
};

/** Pools aggregated into each candle (the most liquid ones where the token is the base side). */
const TOP_POOLS = 3;
/** GeckoTerminal returns at most 1000 candles per request. */
const MAX_PER_CALL = 1000;

/** Most candles one MCP answer carries (about 170 characters each; docs/mcp.md, "Result sizes"). */
const MCP_MAX_CANDLES = 300;

/** Pages of one series, newest first: the next page ends at the candle before the last one served. */
const historyPager = pager(
  "dex_price_history",
  (input: { symbol: string; interval: string; start?: string | undefined; end?: string | undefined }) => [input.symbol, input.interval, input.start ?? null, input.end ?? null],
  z.strictObject({ end_ms: z.number().int() }),
);

/** `GET /price/history/:symbol`: OHLCV candles aggregated across the most liquid canonical pools (docs/methods/dex.md). */
export const dexPriceHistory = defineTool({
  name: "dex_price_history",
  title: "DEX price history",
  method: "GET",
  path: "/price/history/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["dex"],
  summary: "OHLCV candles of a token aggregated across its most liquid DEX pools, newest first",
  description: `Candles from GeckoTerminal for up to 3 of the most liquid canonical pools where the token is the base side, aggregated per interval (prices weighted by each pool's volume in the interval; volume summed; source_count = pools that traded). Intervals 1m 5m 15m 1h 4h 1d; limit defaults to 24 and is clamped to the interval's maximum (1m 1440, 5m 288, 15m 96, 1h 720, 4h 180, 1d 365); the answer says when it was clamped. start/end (ISO 8601) bound the window. Intervals with no swaps in any pool are absent. Pages: truncated says older candles exist; send next_cursor as cursor for the next (older) page. Over MCP limit is at most ${MCP_MAX_CANDLES}; a coarser interval covers a longer time in fewer candles.`,
  mcpNote: `At most ${MCP_MAX_CANDLES} candles per call: pick a coarser interval for long spans, or call again with cursor = next_cursor when truncated`,
  mcpMaxima: { limit: MCP_MAX_CANDLES },
  example: { symbol: "ETH", interval: "1h", limit: 24 },
  input: z
    .object({
      symbol: DexSymbol,
      interval: z.enum(["1m", "5m", "15m", "1h", "4h", "1d"]).default("1h"),
      limit: z.number().int().min(1).max(1000).default(24).describe("candles (default 24, at most the interval's maximum)"),
      start: z.iso.datetime({ offset: true }).optional().describe("earliest candle start, ISO 8601"),
      end: z.iso.datetime({ offset: true }).optional().describe("latest candle start, ISO 8601 (default now)"),
      cursor: CursorParam,
      ...RequireField,
    })
    .superRefine(historyPager.refine),
  output: z.object({
    symbol: z.string(),
    interval: z.string(),
    total_candles: z.number().int(),
    limit_requested: z.number().int(),
    limit_applied: z.number().int(),
    limit_clamped: z.boolean().describe("true when limit exceeded the interval's maximum and was reduced to it"),
    candles: z.array(
      z.object({
        timestamp: z.string().describe("candle start"),
        open: z.number(),
        high: z.number(),
        low: z.number(),
        close: z.number(),
        volume_usd: z.number(),
        source_count: z.number().int(),
      }),
    ),
    ...PageFields,
    pools: z.array(z.object({ dex: z.string(), chain: z.string(), pair_address: z.string() })),
    missing_sources: MissingSources,
  }),
  async handler(input, ctx) {
    const { symbol, interval, limit, start, end } = input;
    const spec = INTERVALS[interval]!;
    const applied = Math.min(limit, spec.max, MAX_PER_CALL);
    const after = historyPager.decode(input);
    const endMs = after ? after.end_ms : end ? Date.parse(end) : undefined;
    const startMs = start ? Date.parse(start) : undefined;
    if (startMs !== undefined && endMs !== undefined && startMs > endMs) throw new AppError("BAD_REQUEST", "start must not be after end");
    const { pools, missing_sources } = await acceptedPools(symbol, ctx);
    const top = pools.filter((p) => p.side === "base").slice(0, TOP_POOLS);
    if (top.length === 0) throw new AppError("UPSTREAM_ERROR", `no liquid ${symbol} pool has it as the base token; candles unavailable`);
    const keys = top.map((p) => `${p.pool.chain}:${p.pool.pairAddress}`);
    // `end` is a candle start; GeckoTerminal's before_timestamp is exclusive, so ask just after it.
    const before = endMs === undefined ? undefined : endMs + spec.ms;
    const { results, answered, missing_exchanges } = await fanOut(keys, (k) => {
      const p = top[keys.indexOf(k)]!.pool;
      // One more than the page tells whether older candles exist (within GeckoTerminal's 1000 per request).
      return ctx.venues.geckoterminal.ohlcv(p.chain, p.pairAddress, spec.tf, { limit: Math.min(applied + 1, MAX_PER_CALL), beforeMs: before });
    });
    const inWindow = aggregateCandles(answered.map((k) => results[k]!)).filter((c) => (startMs === undefined || c.time >= startMs) && (endMs === undefined || c.time <= endMs));
    const paged = page(inWindow, applied, (last) => historyPager.encode(input, { end_ms: last.time - spec.ms }));
    // A full page of 1000 (no room for one more) may have older candles: it says so, and the next page tells.
    const full = applied === MAX_PER_CALL && paged.items.length === applied;
    const candles = paged.items;
    const truncated = paged.truncated || full;
    const next_cursor = full ? historyPager.encode(input, { end_ms: candles.at(-1)!.time - spec.ms }) : paged.next_cursor;
    return {
      symbol,
      interval,
      total_candles: candles.length,
      limit_requested: limit,
      limit_applied: applied,
      limit_clamped: applied < limit,
      candles: candles.map((c) => ({
        timestamp: new Date(c.time).toISOString(),
        open: c.open,
        high: c.high,
        low: c.low,
        close: c.close,
        volume_usd: c.volumeUsd,
        source_count: c.sourceCount,
      })),
      truncated,
      next_cursor,
      pools: answered.map((k) => {
        const p = top[keys.indexOf(k)]!.pool;
        return { dex: p.dex, chain: p.chain, pair_address: p.pairAddress };
      }),
      missing_sources: [...missing_sources, ...missing_exchanges.map((m) => ({ source: `geckoterminal:${m.exchange}`, reason: m.reason }))],
    };
  },
});
