import { z } from "zod";
import { annualizedPct, bestFundingArb } from "../../src/analytics/funding.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { iso, MissingExchanges, perVenue, PerpSymbol, requireListed, venueList } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

const VenueFunding = z.object({
  funding_rate: z.number().describe("current rate, fraction per funding interval"),
  funding_interval_hours: z.number().describe("this venue's settlement interval for the symbol"),
  annualized_pct: z.number().describe("rate × (8760 / interval) × 100"),
  next_funding_time: z.string().nullable(),
  mark_price: z.number().nullable(),
});

/** `GET /futures/funding-compare/:symbol`: current funding on every venue and the best funding arbitrage (docs/methods/perpetuals.md). */
export const fundingCompare = defineTool({
  name: "funding_compare",
  title: "Funding comparison",
  method: "GET",
  path: "/futures/funding-compare/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 30,
  tags: ["funding"],
  summary: `Funding of one perpetual on ${venueList()}, with the best arbitrage legs`,
  description:
    "Current funding per venue, each annualised with its own interval (8h x1095, 4h x2190, 1h x8760). best_arb goes long where the annualised rate is lowest and short where it is highest; rate_spread is in per-interval fractions, annualized_spread_pct compares the legs per their own intervals.",
  example: { symbol: "BTC" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    exchanges: z.record(z.string(), VenueFunding),
    best_arb: z
      .object({
        long_exchange: z.string(),
        short_exchange: z.string(),
        rate_spread: z.number(),
        rate_spread_8h: z.number(),
        annualized_spread_pct: z.number(),
        direction: z.string(),
      })
      .nullable()
      .describe("null when fewer than two venues answered or every venue pays the same annualised rate"),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const { results, answered, missing_exchanges } = await perVenue(ctx, symbol, (c) => c.funding(symbol));
    const exchanges: Record<string, z.infer<typeof VenueFunding>> = {};
    for (const v of answered) {
      const f = results[v]!;
      exchanges[v] = {
        funding_rate: f.fundingRate,
        funding_interval_hours: f.fundingIntervalHours,
        annualized_pct: annualizedPct(f.fundingRate, f.fundingIntervalHours),
        next_funding_time: iso(f.nextFundingTime),
        mark_price: f.markPrice,
      };
    }
    const arb = bestFundingArb(answered.map((v) => ({ exchange: v, rate: results[v]!.fundingRate, intervalHours: results[v]!.fundingIntervalHours })));
    return { symbol, timestamp: isoNow(ctx), exchanges, best_arb: arb ?? null, coverage: coverage(answered), missing_exchanges };
  },
});
