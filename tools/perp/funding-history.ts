import { z } from "zod";
import { detectIntervalHours, fundingSummary } from "../../src/analytics/funding.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { iso, Exchange, perps, PerpSymbol, requireListed } from "./common.js";

/** `GET /funding-rate/history/:symbol`: settled funding of one perpetual on one venue, with a summary (spec 2.3). */
export const fundingHistory = defineTool({
  name: "funding_history",
  title: "Funding history",
  method: "GET",
  path: "/funding-rate/history/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 300,
  tags: ["funding"],
  summary: "Settled funding rates of one perpetual (newest first) with average, extremes and annualised average",
  description:
    "History from one venue (default binance; choose with exchange). The interval is detected from the settlement times, so annualized_avg is right for 8h, 4h and 1h markets. Venues cap one request: binance 1000, hyperliquid 500, bybit 200, okx 100 points; count says how many came back.",
  example: { symbol: "BTCUSDT", limit: 30 },
  input: z.object({
    symbol: PerpSymbol,
    limit: z.number().int().min(1).max(1000).default(100).describe("points, newest first (default 100, max 1000)"),
    exchange: Exchange.default("binance").describe("venue: binance (default), bybit, okx or hyperliquid"),
  }),
  output: z.object({
    symbol: z.string().describe("quote-suffixed, e.g. BTCUSDT"),
    exchange: z.string(),
    funding_interval_hours: z.number(),
    count: z.number().int(),
    history: z.array(z.object({ funding_time: z.string(), funding_rate: z.number(), mark_price: z.number().nullable() })),
    summary: z.object({ avg_rate: z.number(), max_rate: z.number(), min_rate: z.number(), annualized_avg: z.number().describe("pct") }),
  }),
  precheck: ({ symbol, exchange }, ctx) => requireListed(symbol, ctx, [exchange]),
  async handler({ symbol, limit, exchange }, ctx) {
    const client = perps(ctx)[exchange];
    const points = (await client.fundingHistory(symbol, limit)).slice(0, limit);
    const interval =
      detectIntervalHours(points.map((p) => p.time)) ??
      (await client.funding(symbol).then((f) => f.fundingIntervalHours).catch(() => undefined));
    if (interval === undefined) throw new AppError("UPSTREAM_ERROR", `${exchange} returned too little history to determine the funding interval`);
    return {
      symbol: `${symbol}USDT`,
      exchange,
      funding_interval_hours: interval,
      count: points.length,
      history: points.map((p) => ({ funding_time: iso(p.time)!, funding_rate: p.rate, mark_price: p.markPrice })),
      summary: fundingSummary(
        points.map((p) => p.rate),
        interval,
      ),
    };
  },
});
