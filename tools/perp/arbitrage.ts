import { z } from "zod";
import { annualizedPct, bestFundingArb, pct } from "../../src/analytics/funding.js";
import { listAssets } from "../../src/assets/catalogue.js";
import { fanOut } from "../../src/core/fanout.js";
import { defineTool } from "../../src/registry/tool.js";
import { PERP_VENUES, type FundingSnapshot } from "../../src/venues/perp/types.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { iso, MissingExchanges, perpBase, perps, venueList } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

const Leg = z.object({
  side: z.enum(["long", "short"]),
  instrument: z.enum(["perp", "spot"]),
  exchange: z.string(),
  funding_rate: z.number().nullable().describe("fraction per interval (perp legs)"),
  funding_interval_hours: z.number().nullable(),
  funding_annualized_pct: z.number().nullable(),
  price: z.number().nullable().describe("mark price for perp legs, index price as the spot reference for spot legs"),
  next_funding_time: z.string().nullable(),
});

const Opportunity = z.object({
  type: z.enum(["funding_spread", "spot_perp_carry"]),
  symbol: z.string(),
  annualized_yield_pct: z.number().describe("expected gross yield if current funding persists; before fees, slippage and borrow"),
  legs: z.array(Leg),
  price_gap_pct: z.number().nullable().describe("funding_spread: mark-price gap between the legs; carry: perp premium over index"),
  description: z.string(),
});

const MAX_SYMBOLS = 50;

/**
 * `GET /arbitrage-opportunity` (docs/methods/perpetuals.md): cross-venue funding spreads and spot/perp carry over
 * the liquid universe, ranked by expected annualised yield, with the legs and the data behind each.
 */
export const arbitrageOpportunity = defineTool({
  name: "arbitrage_opportunity",
  title: "Funding arbitrage opportunities",
  method: "GET",
  path: "/arbitrage-opportunity",
  priceUsd: "0.05",
  cacheTtlSec: 30,
  tags: ["funding"],
  summary: "Ranked cross-venue funding spreads and spot/perp carry trades over the liquid universe",
  description: `Reads current funding of every perpetual on ${venueList()} (one request per venue). Universe: the 23 supported large caps, or \`symbols\`. funding_spread: long the perpetual where the annualised rate is lowest, short where it is highest, each leg annualised with its own interval. spot_perp_carry: long spot, short the perpetual paying the highest positive funding. Yields are gross, assume current funding persists, and ignore fees, slippage and borrow.`,
  example: { min_annualized_pct: 1, limit: 10 },
  input: z.object({
    type: z.enum(["all", "funding_spread", "spot_perp_carry"]).default("all"),
    min_annualized_pct: z.number().min(0).default(5).describe("smallest yield listed, pct per year"),
    limit: z.number().int().min(1).max(100).default(20),
    symbols: z.string().max(600).optional().describe(`comma-separated bases to scan instead of the default universe (max ${MAX_SYMBOLS})`),
    ...RequireField,
  }),
  output: z.object({
    timestamp: Timestamp,
    universe: z.array(z.string()),
    opportunities: z.array(Opportunity),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  async handler({ type, min_annualized_pct, limit, symbols }, ctx) {
    const universe = symbols ? [...new Set(symbols.split(",").map(perpBase).filter(Boolean))].slice(0, MAX_SYMBOLS) : listAssets().map((a) => a.symbol);
    const wanted = new Set(universe);
    const { results, answered, missing_exchanges } = await fanOut(PERP_VENUES, (v) => perps(ctx)[v].fundingAll());
    const byBase = new Map<string, FundingSnapshot[]>();
    for (const v of answered) for (const f of results[v]!) if (wanted.has(f.base)) byBase.set(f.base, [...(byBase.get(f.base) ?? []), f]);

    const perpLeg = (side: "long" | "short", f: FundingSnapshot) => ({
      side,
      instrument: "perp" as const,
      exchange: f.venue,
      funding_rate: f.fundingRate,
      funding_interval_hours: f.fundingIntervalHours,
      funding_annualized_pct: annualizedPct(f.fundingRate, f.fundingIntervalHours),
      price: f.markPrice,
      next_funding_time: iso(f.nextFundingTime),
    });
    const out: Array<z.infer<typeof Opportunity>> = [];
    for (const [base, snaps] of byBase) {
      if (type !== "spot_perp_carry") {
        const arb = bestFundingArb(snaps.map((f) => ({ exchange: f.venue, rate: f.fundingRate, intervalHours: f.fundingIntervalHours })));
        if (arb && arb.annualized_spread_pct >= min_annualized_pct) {
          const long = snaps.find((f) => f.venue === arb.long_exchange)!;
          const short = snaps.find((f) => f.venue === arb.short_exchange)!;
          const gap = long.markPrice && short.markPrice ? pct((short.markPrice - long.markPrice) / long.markPrice) : null;
          out.push({
            type: "funding_spread",
            symbol: base,
            annualized_yield_pct: arb.annualized_spread_pct,
            legs: [perpLeg("long", long), perpLeg("short", short)],
            price_gap_pct: gap,
            description: `Long ${base} perpetual on ${long.venue}, short on ${short.venue}: delta-neutral, earns the funding difference.`,
          });
        }
      }
      if (type !== "funding_spread") {
        const best = [...snaps].sort((a, b) => annualizedPct(b.fundingRate, b.fundingIntervalHours) - annualizedPct(a.fundingRate, a.fundingIntervalHours))[0];
        const apr = best ? annualizedPct(best.fundingRate, best.fundingIntervalHours) : 0;
        if (best && apr >= min_annualized_pct) {
          out.push({
            type: "spot_perp_carry",
            symbol: base,
            annualized_yield_pct: apr,
            legs: [
              {
                side: "long",
                instrument: "spot",
                exchange: "spot",
                funding_rate: null,
                funding_interval_hours: null,
                funding_annualized_pct: null,
                price: best.indexPrice,
                next_funding_time: null,
              },
              perpLeg("short", best),
            ],
            price_gap_pct: best.markPrice && best.indexPrice ? pct((best.markPrice - best.indexPrice) / best.indexPrice) : null,
            description: `Long ${base} spot, short the perpetual on ${best.venue}: delta-neutral, collects positive funding.`,
          });
        }
      }
    }
    out.sort((a, b) => b.annualized_yield_pct - a.annualized_yield_pct);
    return { timestamp: isoNow(ctx), universe, opportunities: out.slice(0, limit), coverage: coverage(answered), missing_exchanges };
  },
});
