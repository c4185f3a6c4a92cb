import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { COINGECKO } from "../../src/venues/coingecko/client.js";
import { AssetIdParam, ChartPoint, isoNow, sourceLabel, Timestamp } from "../common.js";
import { CursorParam, page, PageFields, pager } from "../paging.js";

/** Allowed look-back windows in days (`/api/v1/market/:id/history`, docs/endpoints.md). */
export const HISTORY_DAYS = [1, 7, 14, 30, 90, 365] as const;

/** Spacing a caller may ask for, ms; coarser than the window's own granularity thins the series. */
const SPACING_MS = { "5m": 300_000, "1h": 3_600_000, "4h": 14_400_000, "1d": 86_400_000 } as const;
type Spacing = keyof typeof SPACING_MS;
/** Most points per series HTTP serves in one answer (90 days of hourly points are about 2,160). */
const MAX_POINTS = 5000;
/** Most points per series one MCP answer carries (about 100 characters for the three series; docs/mcp.md, "Result sizes"). */
const MCP_MAX_POINTS = 500;

/** Pages of one window, oldest first: the next page starts after the last point served. */
const historyPager = pager(
  "cex_market_history",
  (input: { id: { coingeckoId: string }; days: number; interval: string }) => [input.id.coingeckoId, input.days, input.interval],
  z.strictObject({ after_ms: z.number().int() }),
);

type Point = [number, number];

/** `points` thinned to the last point of each UTC interval of `ms` (oldest first, as CoinGecko sends them). */
function thin(points: readonly Point[], ms: number): Point[] {
  const out: Point[] = [];
  for (const p of points) {
    if (out.length && Math.floor(out.at(-1)![0] / ms) === Math.floor(p[0] / ms)) out[out.length - 1] = p;
    else out.push(p);
  }
  return out;
}

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
  ...PageFields,
  meta: z.object({ cached: z.boolean(), timestamp: Timestamp, source: z.string(), granularity: z.string().describe("spacing of the points served: 5m, 1h, 4h or 1d") }),
});

/** CoinGecko's automatic granularity for a `days` window (https://docs.coingecko.com/reference/coins-id-market-chart). */
function granularity(days: number): Spacing {
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
  description: `Time series from CoinGecko: 5-minute points for days=1, hourly up to 90 days, daily beyond. days must be one of 1, 7, 14, 30, 90, 365 (default 7). interval 1h, 4h or 1d thins a finer series to the last point of each UTC interval (meta.granularity says the spacing served). limit caps the points per series (HTTP default: all; over MCP at most ${MCP_MAX_POINTS}); truncated says more points follow, and next_cursor (sent back as cursor) reads the next, newer page.`,
  mcpNote: `At most ${MCP_MAX_POINTS} points per series per call: use interval 4h or 1d for long windows, or call again with cursor = next_cursor when truncated`,
  mcpMaxima: { limit: MCP_MAX_POINTS },
  example: { id: "ethereum", days: 7 },
  input: z
    .object({
      id: AssetIdParam,
      days: z.literal(HISTORY_DAYS).default(7).describe("look-back window in days: 1, 7, 14, 30, 90 or 365"),
      interval: z
        .enum(["auto", "1h", "4h", "1d"])
        .default("auto")
        .describe("spacing: auto (CoinGecko's: 5m for days=1, 1h up to 90, 1d beyond) or a coarser 1h, 4h, 1d (last point of each UTC interval)"),
      limit: z.number().int().min(1).max(MAX_POINTS).optional().describe("points per series, oldest first (default: all over HTTP)"),
      cursor: CursorParam,
    })
    .superRefine(historyPager.refine),
  output: Output,
  async handler(input, ctx) {
    const { id: asset, days, interval } = input;
    const chart = await ctx.venues.coingecko.marketChart(asset.coingeckoId, days);
    const native = granularity(days);
    const spacing = interval !== "auto" && SPACING_MS[interval] > SPACING_MS[native] ? interval : native;
    const series = (points: readonly Point[]) => (spacing === native ? [...points] : thin(points, SPACING_MS[spacing]));
    const after = historyPager.decode(input)?.after_ms ?? -Infinity;
    // The page is cut on the price series; the other two keep the same time span.
    const prices = series(chart.prices).filter(([t]) => t > after);
    const paged = page(prices, input.limit ?? prices.length, (last) => historyPager.encode(input, { after_ms: last[0] }));
    const until = paged.truncated ? paged.items.at(-1)![0] : Infinity;
    const span = (points: readonly Point[]) => series(points).filter(([t]) => t > after && t <= until);
    return {
      success: true as const,
      data: {
        id: asset.coingeckoId,
        symbol: asset.symbol,
        days,
        prices: paged.items,
        market_caps: span(chart.marketCaps),
        total_volumes: span(chart.totalVolumes),
      },
      truncated: paged.truncated,
      next_cursor: paged.next_cursor,
      meta: { cached: false, timestamp: isoNow(ctx), source: sourceLabel(ctx, COINGECKO), granularity: spacing },
    };
  },
});
