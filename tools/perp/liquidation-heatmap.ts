import { median } from "simple-statistics";
import { z } from "zod";
import {
  ENTRY_HALF_LIFE_HOURS,
  ENTRY_WINDOW_HOURS,
  LEVERAGE_WEIGHTS,
  liquidationHeatmap,
  mmrByLeverage,
  type Heatmap,
} from "../../src/analytics/liquidation-heatmap.js";
import type { ToolContext } from "../../src/core/context.js";
import type { MissingExchange } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import type { Candle, MarginTier, PerpVenue } from "../../src/venues/perp/types.js";
import { isoNow, sourceLabel, Timestamp } from "../common.js";
import { MissingExchanges, perps, perVenue, PerpSymbol, requireListed } from "./common.js";

/** Venues whose hourly candles give the entry-price distribution, in order of preference (deepest first). */
const CANDLE_VENUES: readonly PerpVenue[] = ["binance", "okx"];
/** Venues publishing maintenance-margin tiers (Binance's brackets need a signed request). */
const TIER_VENUES: readonly PerpVenue[] = ["okx", "bybit", "hyperliquid"];

/** Market state a heatmap is computed from. */
export interface HeatmapMarket {
  symbol: string;
  /** Median mark price across the venues that answered, USD. */
  price: number;
  /** Venues whose mark price was used. */
  priceVenues: PerpVenue[];
  openInterestUsd: number;
  oiByVenue: Partial<Record<PerpVenue, number>>;
  missing: MissingExchange[];
}

/**
 * Median mark price across the perp venues that list `symbol` (each venue's funding/mark endpoint), with
 * the venues used. @throws AppError UNKNOWN_SYMBOL / UPSTREAM_UNAVAILABLE when no venue answered.
 */
export async function medianMarkPrice(ctx: ToolContext, symbol: string): Promise<{ price: number; venues: PerpVenue[] }> {
  const marks = await perVenue(ctx, symbol, async (c) => (await c.funding(symbol)).markPrice);
  const venues = marks.answered.filter((v) => (marks.results[v] ?? 0) > 0);
  if (!venues.length) throw new AppError("UPSTREAM_UNAVAILABLE", `no venue gave a mark price for ${symbol}`, { retryAfterSec: 10, details: marks.missing_exchanges });
  return { price: median(venues.map((v) => marks.results[v]!)), venues };
}

/**
 * Current price ({@link medianMarkPrice}, or OI USD / OI coins when no mark came back) and total open
 * interest across the perp venues (each venue's `openInterest` endpoint).
 * @throws AppError UNKNOWN_SYMBOL / UPSTREAM_UNAVAILABLE when no venue answered open interest.
 */
export async function heatmapMarket(ctx: ToolContext, symbol: string): Promise<HeatmapMarket> {
  const [oi, marks] = await Promise.all([perVenue(ctx, symbol, (c) => c.openInterest(symbol)), medianMarkPrice(ctx, symbol).catch(() => undefined)]);
  const oiByVenue: Partial<Record<PerpVenue, number>> = {};
  for (const v of oi.answered) oiByVenue[v] = oi.results[v]!.oiUsd;
  const coins = oi.answered.reduce((s, v) => s + oi.results[v]!.oiCoins, 0);
  const openInterestUsd = oi.answered.reduce((s, v) => s + oi.results[v]!.oiUsd, 0);
  const price = marks?.price ?? (coins > 0 ? openInterestUsd / coins : NaN);
  return { symbol, price, priceVenues: marks?.venues ?? [], openInterestUsd, oiByVenue, missing: oi.missing_exchanges };
}

/** Tier tables of the venues that publish them; a failing venue is skipped (its name returned). */
async function tierTables(ctx: ToolContext, symbol: string): Promise<{ tables: MarginTier[][]; venues: PerpVenue[] }> {
  const got = await Promise.all(
    TIER_VENUES.map(async (v) => {
      const c = perps(ctx)[v];
      if (!c.marginTiers || !(await c.instrument(symbol).catch(() => undefined))) return undefined;
      return c.marginTiers(symbol).then((t) => ({ v, t })).catch(() => undefined);
    }),
  );
  const ok = got.filter((g): g is { v: PerpVenue; t: MarginTier[] } => g !== undefined && g.t.length > 0);
  return { tables: ok.map((g) => g.t), venues: ok.map((g) => g.v) };
}

/** Hourly candles of the first candle venue that lists the symbol and answers. */
async function entryCandles(ctx: ToolContext, symbol: string): Promise<{ candles: Candle[]; venue?: PerpVenue }> {
  for (const v of CANDLE_VENUES) {
    const c = perps(ctx)[v];
    if (!c.hourlyCandles || !(await c.instrument(symbol).catch(() => undefined))) continue;
    const candles = await c.hourlyCandles(symbol, ENTRY_WINDOW_HOURS).catch(() => []);
    if (candles.length) return { candles, venue: v };
  }
  return { candles: [] };
}

/** A computed heatmap with the market state and the sources it came from. */
export interface HeatmapResult {
  market: HeatmapMarket;
  heatmap: Heatmap;
  tierVenues: PerpVenue[];
  candleVenue?: PerpVenue;
  mmr: Map<number, number>;
}

/**
 * Gathers the market state, tier tables and candles of `symbol` and runs the heatmap model
 * (src/analytics/liquidation-heatmap.ts). Shared by the heatmap tool and the liquidation-alert engine.
 * @throws AppError as {@link heatmapMarket}; UPSTREAM_UNAVAILABLE when no venue gave a price.
 */
export async function computeHeatmap(ctx: ToolContext, symbol: string): Promise<HeatmapResult> {
  const [market, tiers, candles] = await Promise.all([heatmapMarket(ctx, symbol), tierTables(ctx, symbol), entryCandles(ctx, symbol)]);
  if (!(market.price > 0)) {
    throw new AppError("UPSTREAM_UNAVAILABLE", `no venue gave a price for ${symbol}`, { retryAfterSec: 10, details: market.missing });
  }
  const mmr = mmrByLeverage(tiers.tables);
  const heatmap = liquidationHeatmap({ price: market.price, openInterestUsd: market.openInterestUsd, candles: candles.candles, mmrByLeverage: mmr });
  return { market, heatmap, tierVenues: tiers.venues, candleVenue: candles.venue, mmr };
}

const Cluster = z.object({
  leverage: z.string().describe("leverage tier: 5x, 10x, 25x, 50x or 100x"),
  side: z.enum(["long", "short"]).describe("long positions liquidate below the price, shorts above"),
  liquidation_price: z.number().describe("estimated OI-weighted mean liquidation price of the cluster, USD"),
  distance_pct: z.number().describe("(liquidation_price - current_price) / current_price x 100; negative below, positive above"),
  oi_at_risk_usd: z.number().describe("estimated open interest of the cluster, USD"),
  entry_price: z.number().describe("estimated OI-weighted mean entry price of the cluster, USD"),
  maintenance_margin_rate: z.number().describe("maintenance-margin rate used (fraction)"),
});

const AtRisk = z.object({ within_5_pct: z.number(), within_10_pct: z.number() });

/** `GET /liquidation/heatmap/:symbol`: estimated liquidation levels per leverage tier and cascade risk (spec 2.5). */
export const liquidationHeatmapTool = defineTool({
  name: "liquidation_heatmap",
  title: "Liquidation heatmap (estimate)",
  method: "GET",
  path: "/liquidation/heatmap/:symbol",
  priceUsd: "0.05",
  cacheTtlSec: 15,
  tags: ["liquidations"],
  summary: "Estimated liquidation levels for 5x to 100x longs and shorts, OI at risk and cascade risk",
  description:
    "An ESTIMATE from public data (no venue publishes positions' leverage): total open interest from Binance, Bybit, OKX and Hyperliquid; entry prices from the last 72 hourly candles (Binance, else OKX) weighted by USD volume with a 24 h half-life; leverage split 5x 45%, 10x 30%, 25x 15%, 50x 7%, 100x 3%; maintenance-margin rates from OKX position-tiers, Bybit risk-limit and Hyperliquid margin tables (median of the smallest tier allowing each leverage); liquidation price long = entry x (1 - 1/L) / (1 - MMR), short = entry x (1 + 1/L) / (1 + MMR); positions a later candle already liquidated are dropped. cascade_risk: high when more than 10% of OI is at risk within 5% of the price on one side, medium when at least 5% within 10%, else low; oi_at_risk_* report the 10% band of the dominant side.",
  example: { symbol: "BTC" },
  input: z.object({ symbol: PerpSymbol }),
  output: z.object({
    symbol: z.string(),
    current_price: z.number().describe("median mark price across venues, USD"),
    open_interest_usd: z.number().describe("total open interest across venues, USD"),
    cascade_risk: z.enum(["high", "medium", "low"]),
    leverage_clusters: z.array(Cluster).describe("one cluster per side and leverage tier, nearest to the price first"),
    risk_summary: z.object({
      total_oi_at_risk_usd: z.number().describe("OI of the dominant side with liquidation levels within 10% of the price, USD"),
      oi_at_risk_pct: z.number().describe("total_oi_at_risk_usd / open_interest_usd x 100"),
      cascade_risk: z.enum(["high", "medium", "low"]),
      cascade_risk_reason: z.string(),
      dominant_side: z.enum(["long", "short"]),
      long_oi_at_risk_usd: AtRisk,
      short_oi_at_risk_usd: AtRisk,
    }),
    estimated: z.literal(true).describe("every number except current_price and open_interest_usd is a model estimate"),
    method: z.object({
      model: z.string(),
      entry_window_hours: z.number(),
      entry_half_life_hours: z.number(),
      entry_hours_used: z.number().describe("0 means no candles: static tiers at the current price"),
      candles_source: z.string().nullable(),
      leverage_weights: z.record(z.string(), z.number()),
      maintenance_margin_source: z.array(z.string()).describe("venues whose tier tables gave the MMRs; empty: fallback 0.5%"),
      price_sources: z.array(z.string()),
    }),
    exchanges: z.record(z.string(), z.object({ oi_usd: z.number() })),
    missing_exchanges: MissingExchanges,
    timestamp: Timestamp,
  }),
  precheck: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const r = await computeHeatmap(ctx, symbol);
    const { market, heatmap } = r;
    const exchanges: Record<string, { oi_usd: number }> = {};
    for (const [v, usd] of Object.entries(market.oiByVenue)) exchanges[v] = { oi_usd: usd };
    return {
      symbol,
      current_price: market.price,
      open_interest_usd: market.openInterestUsd,
      cascade_risk: heatmap.risk.cascade_risk,
      leverage_clusters: heatmap.clusters.map((c) => ({ ...c, liquidation_price: sig(c.liquidation_price), entry_price: sig(c.entry_price), distance_pct: round2(c.distance_pct), oi_at_risk_usd: Math.round(c.oi_at_risk_usd) })),
      risk_summary: {
        ...heatmap.risk,
        total_oi_at_risk_usd: Math.round(heatmap.risk.total_oi_at_risk_usd),
        oi_at_risk_pct: round2(heatmap.risk.oi_at_risk_pct),
      },
      estimated: true as const,
      method: {
        model: "leverage tiers over a volume-weighted entry distribution (estimate)",
        entry_window_hours: ENTRY_WINDOW_HOURS,
        entry_half_life_hours: ENTRY_HALF_LIFE_HOURS,
        entry_hours_used: heatmap.entryHours,
        candles_source: r.candleVenue ? sourceLabel(ctx, r.candleVenue) : null,
        leverage_weights: Object.fromEntries(Object.entries(LEVERAGE_WEIGHTS).map(([l, w]) => [`${l}x`, w])),
        maintenance_margin_source: r.tierVenues.map((v) => sourceLabel(ctx, v)),
        price_sources: market.priceVenues.map((v) => sourceLabel(ctx, v)),
      },
      exchanges,
      missing_exchanges: market.missing,
      timestamp: isoNow(ctx),
    };
  },
});

/** 8 significant digits (prices of 1e-5 coins keep their precision). */
function sig(x: number): number {
  return Number(x.toPrecision(8));
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
