import { z } from "zod";
import { annualizedPct, settlementIntervals, timeWeightedFundingSummary } from "../../src/analytics/funding.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { CursorParam, page, PageFields, pager } from "../paging.js";
import { iso, Exchange, perps, PerpSymbol, requireListed } from "./common.js";

/** Most settlements read for one query, pages included (the deepest history a venue serves here). */
const MAX_ROWS = 1000;
/** Most rows one MCP answer carries (about 140 characters each; docs/mcp.md, "Result sizes"). */
const MCP_MAX_ROWS = 400;

/** Pages of one venue's history, newest first: the next page holds the settlements before the last one served. */
const fundingPager = pager(
  "funding_history",
  (input: { symbol: string; exchange: string }) => [input.symbol, input.exchange],
  z.strictObject({ before_ms: z.number().int(), served: z.number().int().min(1).max(MAX_ROWS) }),
);

/** `GET /funding-rate/history/:symbol`: settled funding of one perpetual on one venue, with a summary (docs/methods/perpetuals.md). */
export const fundingHistory = defineTool({
  name: "funding_history",
  title: "Funding history",
  method: "GET",
  path: "/funding-rate/history/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 300,
  tags: ["funding"],
  summary: "Settled funding rates of one perpetual (newest first) with time-weighted average, extremes and annualised average",
  description: `History from one venue (default binance; choose with exchange). Each row's interval is the time since the previous settlement (the oldest row takes the next row's), so a history spanning a change of interval (Hyperliquid 8h to 1h in June 2023, Binance symbols moved to 4h) is annualised row by row; summary averages are time-weighted: annualized_avg = sum of rates / hours covered x 8760 x 100, avg_rate the same per funding_interval_hours (the newest row's interval). max_rate and min_rate are as settled, each per its own interval. Most points served: binance 1000 (one request), hyperliquid 1000 (pages of at most 500 rows, the venue's cap per request), bybit 200, okx 100, gate 100, bitget 500 (pages of 100), deribit 1000 (hourly interest_1h points, pages of 30 days: funding accrues continuously), aster 1000; count says how many came back. Pages: limit rows per call (at most ${MCP_MAX_ROWS} over MCP); truncated says more settlements are served, next_cursor (sent back as cursor) reads the next, older page; summary covers the page. Method: docs/methods/funding-basis-volatility.md.`,
  mcpNote: `At most ${MCP_MAX_ROWS} rows per call; when truncated, call again with cursor = next_cursor for older settlements`,
  mcpMaxima: { limit: MCP_MAX_ROWS },
  example: { symbol: "BTCUSDT", limit: 30 },
  input: z
    .object({
      symbol: PerpSymbol,
      limit: z.number().int().min(1).max(MAX_ROWS).default(100).describe("points, newest first (default 100)"),
      exchange: Exchange.default("binance").describe(`venue: ${PERP_VENUES.join(", ")} (default binance)`),
      cursor: CursorParam,
    })
    .superRefine(fundingPager.refine),
  output: z.object({
    symbol: z.string().describe("quote-suffixed, e.g. BTCUSDT"),
    exchange: z.string(),
    funding_interval_hours: z.number().nullable().describe("interval of the newest settlement, hours (no settlement: the venue's current interval, null when unknown)"),
    count: z.number().int(),
    history: z.array(
      z.object({
        funding_time: z.string(),
        funding_rate: z.number().describe("fraction per interval_hours"),
        interval_hours: z.number().describe("hours since the previous settlement (the oldest row: the next row's)"),
        annualized_pct: z.number().describe("funding_rate x 8760 / interval_hours x 100"),
        mark_price: z.number().nullable(),
      }),
    ),
    ...PageFields,
    summary: z
      .object({
        avg_rate: z.number().describe("time-weighted average rate per funding_interval_hours (sum of rates / hours covered x funding_interval_hours)"),
        max_rate: z.number().describe("as settled, per its own interval"),
        min_rate: z.number().describe("as settled, per its own interval"),
        annualized_avg: z.number().describe("time-weighted, pct: sum of rates / hours covered x 8760 x 100"),
      })
      .nullable()
      .describe("null when the venue returned no settlement (an empty history has no average or extremes)"),
  }),
  checkBeforePayment: ({ symbol, exchange }, ctx) => requireListed(symbol, ctx, [exchange]),
  async handler(input, ctx) {
    const { symbol, limit, exchange } = input;
    const client = perps(ctx)[exchange];
    const after = fundingPager.decode(input);
    const served = after?.served ?? 0;
    // The rows served before this page and one more than it (to tell whether more exist), within what is served at all.
    const fetched = await client.fundingHistory(symbol, Math.min(MAX_ROWS, served + limit + 1));
    const older = after ? fetched.filter((p) => p.time < after.before_ms) : fetched;
    const paged = page(older, limit, (last) => fundingPager.encode(input, { before_ms: last.time, served: Math.min(MAX_ROWS, served + limit) }));
    const points = paged.items;
    const more = { truncated: paged.truncated, next_cursor: paged.next_cursor };
    // Fewer than two settlements show no interval: the venue's current one stands in.
    const current =
      points.length < 2
        ? await client
            .funding(symbol)
            .then((f) => f.fundingIntervalHours)
            .catch(() => undefined)
        : undefined;
    // No settlement (a symbol listed since the last one, or none in the venue's window): an empty answer, not zeros.
    if (points.length === 0) return { symbol: `${symbol}USDT`, exchange, funding_interval_hours: current ?? null, count: 0, history: [], ...more, summary: null };
    // Intervals over the page and the settlement before it, so that the page's oldest row has its own.
    const times = older.slice(0, points.length + 1).map((p) => p.time);
    const intervals =
      (times.length > points.length ? settlementIntervals(times)?.slice(0, points.length) : settlementIntervals(times)) ??
      (current === undefined ? undefined : points.map(() => current));
    const interval = intervals?.[0] ?? current;
    if (intervals === undefined || interval === undefined) throw new AppError("UPSTREAM_ERROR", `${exchange} returned too little history to determine the funding interval`);
    const rows = points.map((p, i) => ({ rate: p.rate, intervalHours: intervals[i]! }));
    return {
      symbol: `${symbol}USDT`,
      exchange,
      funding_interval_hours: interval,
      count: points.length,
      history: points.map((p, i) => ({
        funding_time: iso(p.time)!,
        funding_rate: p.rate,
        interval_hours: intervals[i]!,
        annualized_pct: annualizedPct(p.rate, intervals[i]!),
        mark_price: p.markPrice,
      })),
      ...more,
      summary: timeWeightedFundingSummary(rows, interval),
    };
  },
});
