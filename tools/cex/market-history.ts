import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { COINGECKO } from "../../src/venues/coingecko/client.js";
import { AssetIdParam, ChartPoint, isoNow, sourceLabel, Timestamp } from "../common.js";

/** Allowed look-back windows in days (`/api/v1/market/:id/history`, docs/endpoints.md). */
export const HISTORY_DAYS = [1, 7, 14, 30, 90, 365] as const;

const Output = z.object({
  success: z.literal(true),
  data: z.object({
    id: z.string(),
    symbol: z.string(),
    days: z.number().int(),
    prices: z.array(ChartPoint).describe("[unix_ms, USD price], oldest first"),
    market_caps: z.array(ChartPoint).describe("[unix_ms, USD market cap]"),
    total_volumes: z.array(ChartPoint).describe("[unix_ms, USD 24h volume]"),
  }),
  meta: z.object({ cached: z.boolean(), timestamp: Timestamp, source: z.string(), granularity: z.string() }),
});

/** CoinGecko's automatic granularity for a `days` window (https://docs.coingecko.com/reference/coins-id-market-chart). */
function granularity(days: number): string {
  if (days <= 1) return "5m";
  if (days <= 90) return "1h";
  return "1d";
}

/** `GET /api/v1/market/:id/history`: price, market-cap and volume series from CoinGecko `/coins/{id}/market_chart`. */
export const cexMarketHistory = defineTool({
  name: "cex_market_history",
  title: "Market history",
  method: "GET",
  path: "/api/v1/market/:id/history",
  priceUsd: "0.01",
  cacheTtlSec: 300,
  tags: ["cex"],
  summary: "Price, market cap and volume series of one asset over 1 to 365 days",
  description: "Time series from CoinGecko: 5-minute points for days=1, hourly up to 90 days, daily beyond. days must be one of 1, 7, 14, 30, 90, 365 (default 7).",
  example: { id: "ethereum", days: 7 },
  input: z.object({
    id: AssetIdParam,
    days: z.literal(HISTORY_DAYS).default(7).describe("look-back window in days: 1, 7, 14, 30, 90 or 365"),
  }),
  output: Output,
  async handler({ id: asset, days }, ctx) {
    const chart = await ctx.venues.coingecko.marketChart(asset.coingeckoId, days);
    return {
      success: true as const,
      data: {
        id: asset.coingeckoId,
        symbol: asset.symbol,
        days,
        prices: chart.prices,
        market_caps: chart.marketCaps,
        total_volumes: chart.totalVolumes,
      },
      meta: { cached: false, timestamp: isoNow(ctx), source: sourceLabel(ctx, COINGECKO), granularity: granularity(days) },
    };
  },
});
