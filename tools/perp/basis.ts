import { z } from "zod";
import { annualizedPct, clean, pct } from "../../src/analytics/funding.js";
import { optionalRead } from "../../src/core/fanout.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { MissingExchanges, perVenue, PerpSymbol, requireListed } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

/**
 * Hours per premium period of the basis annualisation convention: a perpetual's basis is not a term premium (it
 * never converges on a date), so it is annualised once, as the funding-rate equivalent of the premium, whatever
 * the venue's own funding interval: basis per 8 h × 3 × 365 (docs/methods/funding-basis-volatility.md, "Basis
 * annualisation").
 */
export const BASIS_PREMIUM_PERIOD_HOURS = 8;

const VenueBasis = z.object({
  perp_price: z.number().describe("mark price, USD"),
  basis_usd: z.number(),
  basis_pct: z.number().describe("(perp - spot) / spot x 100"),
  basis_annualized_pct: z
    .number()
    .describe("basis_pct x 3 x 365: the premium read as an 8-hour funding rate and annualised, the same convention on every venue (not a term premium)"),
  direction: z.enum(["contango", "backwardation", "flat"]),
  funding_rate: z.number(),
  funding_annualized_pct: z.number(),
});

/** `GET /futures/basis/:symbol`: spot/perp basis per venue and the best carry trade (docs/methods/perpetuals.md). */
export const basis = defineTool({
  name: "basis",
  title: "Spot/perp basis",
  method: "GET",
  path: "/futures/basis/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["futures"],
  summary: "Spot vs perpetual basis on every venue, and the best cash-and-carry trade",
  description:
    "Spot is Binance spot (GET /api/v3/ticker/price); when Binance spot has no market for the symbol, the median venue index price is used and spot_source says so. Perp price is each venue's mark price. direction: contango (perp above spot), backwardation (below), flat (equal). A perpetual's basis never converges on a date, so it is no term premium: basis_annualized_pct reads it as an 8-hour funding rate (basis_pct x 3 x 365) on every venue, whatever the venue's funding interval, so one basis gives one figure; roughly what an 8-hour venue would charge longs per year if the premium persisted, not a yield you can lock in. funding_annualized_pct uses each venue's own interval. best_carry_trade ranks venues by funding income: with positive funding, long spot and short the perp to collect it; when every venue pays negative funding, the reverse (short spot, which needs borrowing).",
  example: { symbol: "ETH" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    spot_price: z.number(),
    spot_source: z.string(),
    exchanges: z.record(z.string(), VenueBasis),
    best_carry_trade: z.object({ exchange: z.string(), annualized_yield_pct: z.number(), strategy: z.string() }).nullable(),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const [spot, venues] = await Promise.all([optionalRead(ctx.venues.spot.spotPrice(symbol)), perVenue(ctx, symbol, (c) => c.funding(symbol))]);
    const { results, answered, missing_exchanges } = venues;
    const priced = answered.filter((v) => results[v]!.markPrice !== null);
    const indexes = priced
      .map((v) => results[v]!.indexPrice)
      .filter((x): x is number => x !== null)
      .sort((a, b) => a - b);
    const spotPrice = spot ?? indexes[Math.floor(indexes.length / 2)];
    const spotSource = spot !== undefined ? "binance_spot" : "median_index_price";
    const exchanges: Record<string, z.infer<typeof VenueBasis>> = {};
    if (spotPrice !== undefined) {
      for (const v of priced) {
        const f = results[v]!;
        const perp = f.markPrice!;
        const basisFraction = (perp - spotPrice) / spotPrice;
        exchanges[v] = {
          perp_price: perp,
          basis_usd: clean(perp - spotPrice),
          basis_pct: pct(basisFraction),
          basis_annualized_pct: annualizedPct(basisFraction, BASIS_PREMIUM_PERIOD_HOURS),
          direction: perp > spotPrice ? "contango" : perp < spotPrice ? "backwardation" : "flat",
          funding_rate: f.fundingRate,
          funding_annualized_pct: annualizedPct(f.fundingRate, f.fundingIntervalHours),
        };
      }
    }
    const ranked = Object.entries(exchanges).sort((a, b) => b[1].funding_annualized_pct - a[1].funding_annualized_pct);
    const top = ranked[0];
    const bottom = ranked[ranked.length - 1];
    let best: { exchange: string; annualized_yield_pct: number; strategy: string } | null = null;
    if (top && top[1].funding_annualized_pct > 0) {
      best = { exchange: top[0], annualized_yield_pct: top[1].funding_annualized_pct, strategy: `long spot, short ${symbol} perpetual on ${top[0]}: collect positive funding` };
    } else if (bottom && bottom[1].funding_annualized_pct < 0) {
      best = {
        exchange: bottom[0],
        annualized_yield_pct: -bottom[1].funding_annualized_pct,
        strategy: `short spot (borrow ${symbol}), long ${symbol} perpetual on ${bottom[0]}: collect negative funding`,
      };
    }
    if (spotPrice === undefined) missing_exchanges.push({ exchange: "spot", reason: "no spot or index price available" });
    return {
      symbol,
      timestamp: isoNow(ctx),
      spot_price: spotPrice ?? 0,
      spot_source: spotSource,
      exchanges,
      best_carry_trade: best,
      coverage: coverage(answered),
      missing_exchanges,
    };
  },
});
