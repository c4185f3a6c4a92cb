import { z } from "zod";
import { annualizedPct, fundingDirection, pct, rate8h } from "../../src/analytics/funding.js";
import { fanOut } from "../../src/core/fanout.js";
import { defineTool } from "../../src/registry/tool.js";
import { VENUES } from "../../src/venues/index.js";
import type { FundingSnapshot, PerpVenue } from "../../src/venues/perp/types.js";
import { isoNow, RequireField } from "../common.js";
import { iso, MissingExchanges, perps, venueList } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

/**
 * Venues scanned for extremes: every USDT-margined perpetual venue (`instruments.margin` of its definition;
 * docs/methods/perpetuals.md). Hyperliquid's (USDC) and Deribit's (USD inverse and USDC) are not scanned.
 */
const SCANNED: readonly PerpVenue[] = VENUES.filter((v) => v.instruments.margin === "USDT").map((v) => v.id);

/**
 * Default `threshold`, pct per 8 h: 0.05, five times the neutral rate (Binance's 0.01% interest component). On the
 * recorded Binance `GET /fapi/v1/premiumIndex` snapshot of 2024-11-27 (346 USDT perpetuals, 4h markets rescaled to
 * 8h) it flags 25 markets (7.2%, about the 95th percentile of |rate|), where the spec's 0.01 flags 342 (98.8%:
 * every market at the neutral rate). docs/methods/perpetuals.md; the test on that payload is test/perp/funding-extreme-default.test.ts.
 */
export const DEFAULT_THRESHOLD_PCT = 0.05;

const Result = z.object({
  symbol: z.string().describe("quote-suffixed perpetual symbol, e.g. BTCUSDT"),
  exchange: z.string(),
  funding_rate: z.number().describe("fraction per this market's interval"),
  funding_rate_pct: z.number(),
  funding_interval_hours: z.number(),
  funding_rate_8h_pct: z.number().describe("the rate rescaled to 8h, in pct: what the threshold is compared with"),
  annualized_pct: z.number(),
  direction: z.enum(["longs_paying", "shorts_paying"]),
  signal: z.enum(["extreme_bullish", "extreme_bearish"]),
  mark_price: z.number().nullable(),
  next_funding_time: z.string().nullable(),
});

/** `GET /funding-rate/extreme`: every USDT perpetual of the scanned venues whose funding is at or beyond the threshold (docs/methods/perpetuals.md). */
export const fundingExtreme = defineTool({
  name: "funding_extreme",
  title: "Extreme funding scan",
  method: "GET",
  path: "/funding-rate/extreme",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["funding"],
  summary: `Perpetuals with extreme funding across ${venueList(SCANNED)}`,
  description: `Scans all USDT perpetuals of ${venueList(SCANNED)} (one request per venue). A market qualifies when the absolute rate, rescaled to 8 hours, is at least \`threshold\` pct (default ${DEFAULT_THRESHOLD_PCT}: five times the neutral 0.01%; on a recorded Binance snapshot it flags the 7% tail, where the spec's 0.01 flags 99% of markets), so 1h and 4h markets compare fairly with 8h ones. Sorted by absolute annualised rate; \`limit\` caps the list (extreme_markets counts all). signal extreme_bullish means longs pay (crowded longs), extreme_bearish means shorts pay.`,
  example: { threshold: 0.05 },
  input: z.object({
    threshold: z
      .number()
      .min(0)
      .max(100)
      .default(DEFAULT_THRESHOLD_PCT)
      .describe(`minimum absolute funding rate, pct per 8h (0.01 = 0.01%, the neutral rate); default ${DEFAULT_THRESHOLD_PCT}`),
    limit: z.number().int().min(1).max(1000).default(100).describe("most results returned (default 100)"),
    ...RequireField,
  }),
  output: z.object({
    scanned_at: z.string(),
    threshold: z.number(),
    total_markets_scanned: z.number().int(),
    extreme_markets: z.number().int(),
    results: z.array(Result),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  async handler({ threshold, limit }, ctx) {
    const { results, answered, missing_exchanges } = await fanOut(SCANNED, (v) => perps(ctx)[v].fundingAll());
    const all: FundingSnapshot[] = answered.flatMap((v) => results[v]!);
    const hits = all
      .filter((f) => f.fundingRate !== 0 && Math.abs(pct(rate8h(f.fundingRate, f.fundingIntervalHours))) >= threshold)
      .map((f) => ({ f, apr: annualizedPct(f.fundingRate, f.fundingIntervalHours) }))
      .sort((a, b) => Math.abs(b.apr) - Math.abs(a.apr));
    return {
      scanned_at: isoNow(ctx),
      threshold,
      total_markets_scanned: all.length,
      extreme_markets: hits.length,
      results: hits.slice(0, limit).map(({ f, apr }) => ({
        symbol: `${f.base}USDT`,
        exchange: f.venue,
        funding_rate: f.fundingRate,
        funding_rate_pct: pct(f.fundingRate),
        funding_interval_hours: f.fundingIntervalHours,
        funding_rate_8h_pct: pct(rate8h(f.fundingRate, f.fundingIntervalHours)),
        annualized_pct: apr,
        direction: fundingDirection(f.fundingRate) as "longs_paying" | "shorts_paying",
        signal: f.fundingRate > 0 ? ("extreme_bullish" as const) : ("extreme_bearish" as const),
        mark_price: f.markPrice,
        next_funding_time: iso(f.nextFundingTime),
      })),
      coverage: coverage(answered, SCANNED),
      missing_exchanges,
    };
  },
});
