import { z } from "zod";
import { clean } from "../../src/analytics/funding.js";
import { fanOut, optionalRead } from "../../src/core/fanout.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { acceptedPools, DexSymbol, MissingSources } from "./common.js";

/** Pools whose hourly candles measure the day-over-day change (the largest by 24h volume). */
const CHANGE_POOLS = 3;

/** `GET /volume/:symbol`: 24h DEX volume, its change against the previous 24h, and the split by DEX (docs/methods/dex.md). */
export const dexVolume = defineTool({
  name: "dex_volume",
  title: "DEX volume",
  method: "GET",
  path: "/volume/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["dex"],
  summary: "24h DEX volume of a token, change vs the previous 24h, and volume, swaps and average trade size per DEX",
  description:
    "volume_24h_usd sums DexScreener's 24h volume over the canonical pools (liquidity >= $50k, known quote). volume_change_24h compares the last 24 hourly candles with the 24 before them, summed over the 3 pools with the most 24h volume (GeckoTerminal), and says so in volume_change_basis; null when those candles are unavailable. by_dex groups by DEX and chain: tx_count is 24h swaps, avg_trade_size = volume / swaps (USD).",
  example: { symbol: "ETH" },
  input: z.object({ symbol: DexSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    volume_24h_usd: z.number(),
    volume_change_24h: z.number().nullable().describe("pct vs the previous 24h"),
    volume_change_basis: z.string(),
    by_dex: z.array(z.object({ dex: z.string(), chain: z.string(), volume_usd: z.number(), tx_count: z.number().int(), avg_trade_size: z.number().nullable().describe("USD") })),
    timestamp: Timestamp,
    missing_sources: MissingSources,
  }),
  async handler({ symbol }, ctx) {
    const { pools, missing_sources } = await acceptedPools(symbol, ctx);
    const groups = new Map<string, { dex: string; chain: string; volume_usd: number; tx_count: number }>();
    for (const { pool } of pools) {
      const key = `${pool.dex}:${pool.chain}`;
      const g = groups.get(key) ?? { dex: pool.dex, chain: pool.chain, volume_usd: 0, tx_count: 0 };
      g.volume_usd += pool.volume24hUsd ?? 0;
      g.tx_count += (pool.txns24h?.buys ?? 0) + (pool.txns24h?.sells ?? 0);
      groups.set(key, g);
    }
    const byVolume = [...pools].sort((a, b) => (b.pool.volume24hUsd ?? 0) - (a.pool.volume24hUsd ?? 0)).slice(0, CHANGE_POOLS);
    const keys = byVolume.map((p) => `${p.pool.chain}:${p.pool.pairAddress}`);
    const candles = await optionalRead(
      fanOut(keys, (k) => {
        const p = byVolume[keys.indexOf(k)]!.pool;
        return ctx.venues.geckoterminal.ohlcv(p.chain, p.pairAddress, { timeframe: "hour", aggregate: 1 }, { limit: 48 });
      }),
    );
    let change: number | null = null;
    if (candles && candles.answered.length) {
      const now = ctx.now();
      let last = 0;
      let prev = 0;
      for (const k of candles.answered) {
        for (const c of candles.results[k]!) {
          const age = now - c.time;
          if (age < 24 * 3_600_000) last += c.volumeUsd;
          else if (age < 48 * 3_600_000) prev += c.volumeUsd;
        }
      }
      change = prev > 0 ? clean(((last - prev) / prev) * 100) : null;
    }
    return {
      symbol,
      volume_24h_usd: clean(pools.reduce((s, p) => s + (p.pool.volume24hUsd ?? 0), 0)),
      volume_change_24h: change,
      volume_change_basis: `hourly candles of the ${candles?.answered.length ?? 0} pool(s) with the most 24h volume (GeckoTerminal)`,
      by_dex: [...groups.values()]
        .sort((a, b) => b.volume_usd - a.volume_usd)
        .map((g) => ({ ...g, volume_usd: clean(g.volume_usd), avg_trade_size: g.tx_count > 0 ? clean(g.volume_usd / g.tx_count) : null })),
      timestamp: isoNow(ctx),
      missing_sources,
    };
  },
});
