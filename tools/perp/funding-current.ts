import { z } from "zod";
import { annualizedPct, pct, rate8h } from "../../src/analytics/funding.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { optionalRead } from "../../src/core/fanout.js";
import { iso, MissingExchanges, perVenue, PerpSymbol, requireListed } from "./common.js";
import { coverage, Coverage, listedButUnread, oiSharePct, rememberOi } from "./coverage.js";

const VenueRate = z.object({
  funding_rate: z.number().describe("current rate, fraction per interval"),
  funding_rate_pct: z.number(),
  funding_interval_hours: z.number(),
  funding_rate_8h: z.number().describe("the rate rescaled to 8 hours (fraction), comparable across venues"),
  annualized_pct: z.number(),
  next_funding_time: z.string().nullable(),
  mark_price: z.number().nullable(),
  oi_usd: z.number().nullable().describe("open interest used as this venue's weight; null if unavailable"),
});

/**
 * `GET /funding-rate/:symbol` (docs/methods/perpetuals.md): the current rate on every venue and the
 * open-interest-weighted average (on an 8h basis, then annualised).
 */
export const fundingRate = defineTool({
  name: "funding_rate",
  title: "Current funding rate",
  method: "GET",
  path: "/funding-rate/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["funding"],
  summary: "Current funding of one perpetual on every venue, plus the open-interest-weighted average",
  description:
    "Per venue: current rate per its own interval, 8h-equivalent and annualised, next settlement, mark price and open interest. oi_weighted averages the 8h-equivalent rates weighted by each venue's open interest in USD (venues without open interest are left out of the average).",
  example: { symbol: "ETH" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    exchanges: z.record(z.string(), VenueRate),
    oi_weighted: z
      .object({
        funding_rate_8h: z.number().describe("fraction per 8h"),
        funding_rate_8h_pct: z.number(),
        annualized_pct: z.number(),
        total_oi_usd: z.number(),
        exchanges_used: z.array(z.string()),
      })
      .nullable()
      .describe("null when no venue reported open interest"),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const { results, answered, missing_exchanges } = await perVenue(ctx, symbol, async (c) => {
      const [f, oi] = await Promise.all([c.funding(symbol), optionalRead(c.openInterest(symbol))]);
      return { f, oi };
    });
    const exchanges: Record<string, z.infer<typeof VenueRate>> = {};
    let weighted = 0;
    let total = 0;
    const used: string[] = [];
    for (const v of answered) {
      const { f, oi } = results[v]!;
      const r8 = rate8h(f.fundingRate, f.fundingIntervalHours);
      exchanges[v] = {
        funding_rate: f.fundingRate,
        funding_rate_pct: pct(f.fundingRate),
        funding_interval_hours: f.fundingIntervalHours,
        funding_rate_8h: r8,
        annualized_pct: annualizedPct(f.fundingRate, f.fundingIntervalHours),
        next_funding_time: iso(f.nextFundingTime),
        mark_price: f.markPrice,
        oi_usd: oi?.oiUsd ?? null,
      };
      if (oi) rememberOi(oi);
      if (oi && oi.oiUsd > 0) {
        weighted += r8 * oi.oiUsd;
        total += oi.oiUsd;
        used.push(v);
      }
    }
    const avg8h = total > 0 ? weighted / total : undefined;
    // The average's weight: venues that answered funding but no open interest, and venues that failed, are not in it.
    const unread = [...answered.filter((v) => !used.includes(v)), ...listedButUnread(missing_exchanges)];
    return {
      symbol,
      timestamp: isoNow(ctx),
      exchanges,
      oi_weighted:
        avg8h === undefined
          ? null
          : { funding_rate_8h: avg8h, funding_rate_8h_pct: pct(avg8h), annualized_pct: annualizedPct(avg8h, 8), total_oi_usd: total, exchanges_used: used },
      coverage: coverage(answered, undefined, total > 0 ? oiSharePct(symbol, total, unread, ctx.now()) : null),
      missing_exchanges,
    };
  },
});
