import { median } from "simple-statistics";
import { z } from "zod";
import { rate8h } from "../../src/analytics/funding.js";
import { CASCADE_MODEL, type CascadeFeatures } from "../../src/analytics/cascade-risk.js";
import {
  ENTRY_WINDOW_HOURS,
  HIGH_NEAR_SHARE,
  HOLDING_HALF_LIFE_HOURS,
  MEDIUM_WIDE_SHARE,
  OI_LEVERAGE_MIX,
  liquidationHeatmap,
  mmrByLeverage,
  type Heatmap,
  type RecentLiquidations,
} from "../../src/analytics/liquidation-heatmap.js";
import type { LiquidationDay } from "../../src/analytics/cascade-features.js";
import type { ToolContext } from "../../src/core/context.js";
import { optionalRead, type MissingExchange } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { HOUR_MS } from "../../src/lib/time.js";
import { defineTool } from "../../src/registry/tool.js";
import { VENUES, venuesWith } from "../../src/venues/index.js";
import { type Candle, type MarginTier, type OpenInterestPoint, type PerpVenue } from "../../src/venues/perp/types.js";
import { isoNow, RequireField, sourceLabel, Timestamp } from "../common.js";
import { MissingExchanges, perps, perVenue, PerpSymbol, requireListed, venueList } from "./common.js";
import { coverage, Coverage, listedButUnread, oiSharePct, rememberOi } from "./coverage.js";

/** Venues whose hourly candles give the entry cohorts, in order of preference (deepest first). */
const CANDLE_VENUES: readonly PerpVenue[] = ["binance", "okx"];
/** Venues whose long/short ratio is read (OKX's rubik endpoint allows 5 requests per 2 s: left out). */
const RATIO_VENUES: readonly PerpVenue[] = ["binance", "bybit"];
/** Venues with an open-interest history (Binance `openInterestHist`, hourly, 30 days). */
const OI_HISTORY_VENUES: readonly PerpVenue[] = ["binance"];
/**
 * Liquidation feeds that carry only the symbols the service subscribed to (`per_symbol` in the venue's definition: Bybit
 * `allLiquidation.<symbol>`, Deribit trades flagged as liquidations); the others carry every symbol.
 */
const PER_SYMBOL_LIQUIDATION_FEEDS: ReadonlySet<string> = new Set(VENUES.filter((v) => v.liquidationFeed.kind === "per_symbol").map((v) => v.id));
/** Venues whose liquidation feeds the stream store records (a feed in their definition). */
const LIQUIDATION_VENUES: readonly PerpVenue[] = venuesWith("liquidations");
/** Venues whose feeds are the liquidation history of the cascade-risk forecast (`liquidationFeed.history`: Binance, OKX). */
const LIQUIDATION_HISTORY_VENUES: readonly PerpVenue[] = VENUES.filter((v) => v.liquidationFeed.history).map((v) => v.id);
/** Look-back of the realised-liquidation feedback, hours (shorter when the feeds have been up less long, none under 1 h). */
const FEEDBACK_HOURS = 6;

/** Market state a heatmap is computed from. */
export interface HeatmapMarket {
  symbol: string;
  /** Median mark price across the venues that answered, USD. */
  price: number;
  /** Venues whose mark price was used. */
  priceVenues: PerpVenue[];
  openInterestUsd: number;
  oiByVenue: Partial<Record<PerpVenue, number>>;
  /** Median current funding rate per 8 h across the venues that answered, or null. */
  fundingRate8h: number | null;
  missing: MissingExchange[];
}

/** Median mark price and median 8h-equivalent funding across the perp venues listing `symbol` (one funding call each). */
async function markAndFunding(ctx: ToolContext, symbol: string): Promise<{ price: number; venues: PerpVenue[]; fundingRate8h: number | null }> {
  const snaps = await perVenue(ctx, symbol, (c) => c.funding(symbol));
  const venues = snaps.answered.filter((v) => (snaps.results[v]?.markPrice ?? 0) > 0);
  if (!venues.length) throw new AppError("UPSTREAM_UNAVAILABLE", `no venue gave a mark price for ${symbol}`, { retryAfterSec: 10, details: snaps.missing_exchanges });
  const rates = snaps.answered
    .map((v) => snaps.results[v]!)
    .filter((f) => Number.isFinite(f.fundingRate) && f.fundingIntervalHours > 0)
    .map((f) => rate8h(f.fundingRate, f.fundingIntervalHours));
  return { price: median(venues.map((v) => snaps.results[v]!.markPrice!)), venues, fundingRate8h: rates.length ? median(rates) : null };
}

/**
 * Median mark price across the perp venues that list `symbol` (each venue's funding/mark endpoint), with
 * the venues used. @throws AppError UNKNOWN_SYMBOL / UPSTREAM_UNAVAILABLE when no venue answered.
 */
export async function medianMarkPrice(ctx: ToolContext, symbol: string): Promise<{ price: number; venues: PerpVenue[] }> {
  const { price, venues } = await markAndFunding(ctx, symbol);
  return { price, venues };
}

/**
 * Current price ({@link medianMarkPrice}, or OI USD / OI coins when no mark came back), median funding per
 * 8 h and total open interest across the perp venues (each venue's `openInterest` endpoint).
 * @throws AppError UNKNOWN_SYMBOL / UPSTREAM_UNAVAILABLE when no venue answered open interest.
 */
export async function heatmapMarket(ctx: ToolContext, symbol: string): Promise<HeatmapMarket> {
  const [oi, marks] = await Promise.all([perVenue(ctx, symbol, (c) => c.openInterest(symbol)), optionalRead(markAndFunding(ctx, symbol))]);
  const oiByVenue: Partial<Record<PerpVenue, number>> = {};
  for (const v of oi.answered) {
    oiByVenue[v] = oi.results[v]!.oiUsd;
    rememberOi(oi.results[v]!);
  }
  const coins = oi.answered.reduce((s, v) => s + oi.results[v]!.oiCoins, 0);
  const openInterestUsd = oi.answered.reduce((s, v) => s + oi.results[v]!.oiUsd, 0);
  const price = marks?.price ?? (coins > 0 ? openInterestUsd / coins : NaN);
  return { symbol, price, priceVenues: marks?.venues ?? [], openInterestUsd, oiByVenue, fundingRate8h: marks?.fundingRate8h ?? null, missing: oi.missing_exchanges };
}

/**
 * Tier tables of the venues that publish them (every client with `marginTiers`; Binance's brackets need a signed
 * request); a failing venue is skipped (see {@link optionalRead}).
 */
async function tierTables(ctx: ToolContext, symbol: string): Promise<{ tables: MarginTier[][]; venues: PerpVenue[] }> {
  const got = await Promise.all(
    venuesWith("marginTiers").map(async (v) => {
      const c = perps(ctx)[v];
      if (!c.marginTiers || !(await optionalRead(c.instrument(symbol)))) return undefined;
      const t = await optionalRead(c.marginTiers(symbol));
      return t && { v, t };
    }),
  );
  const ok = got.filter((g): g is { v: PerpVenue; t: MarginTier[] } => g !== undefined && g.t.length > 0);
  return { tables: ok.map((g) => g.t), venues: ok.map((g) => g.v) };
}

/** Hourly candles of the first candle venue that lists the symbol and answers. */
async function entryCandles(ctx: ToolContext, symbol: string): Promise<{ candles: Candle[]; venue?: PerpVenue }> {
  for (const v of CANDLE_VENUES) {
    const c = perps(ctx)[v];
    if (!c.hourlyCandles || !(await optionalRead(c.instrument(symbol)))) continue;
    const candles = (await optionalRead(c.hourlyCandles(symbol, ENTRY_WINDOW_HOURS))) ?? [];
    if (candles.length) return { candles, venue: v };
  }
  return { candles: [] };
}

/** Hourly open-interest history of the first venue that has one for the symbol (its profile stands for the total). */
async function oiHistory(ctx: ToolContext, symbol: string): Promise<{ points: OpenInterestPoint[]; venue?: PerpVenue }> {
  for (const v of OI_HISTORY_VENUES) {
    const c = perps(ctx)[v];
    if (!c.openInterestHistory || !(await optionalRead(c.instrument(symbol)))) continue;
    const points = (await optionalRead(c.openInterestHistory(symbol, ENTRY_WINDOW_HOURS + 1))) ?? [];
    if (points.length >= 2) return { points, venue: v };
  }
  return { points: [] };
}

/** Mean long/short ratio of the {@link RATIO_VENUES} that answer (Binance top traders' positions, Bybit all accounts). */
async function longShortRatio(ctx: ToolContext, symbol: string): Promise<{ ratio: number | null; venues: PerpVenue[] }> {
  const got = await Promise.all(
    RATIO_VENUES.map(async (v) => {
      const c = perps(ctx)[v];
      if (!(await optionalRead(c.instrument(symbol)))) return undefined;
      const r = await optionalRead(c.longShort(symbol));
      return r && r.lsRatio > 0 && Number.isFinite(r.lsRatio) ? { v, ratio: r.lsRatio } : undefined;
    }),
  );
  const ok = got.filter((g): g is { v: PerpVenue; ratio: number } => g !== undefined);
  return { ratio: ok.length ? ok.reduce((s, g) => s + g.ratio, 0) / ok.length : null, venues: ok.map((g) => g.v) };
}

/**
 * Realised liquidations of `symbol` from the live feeds (`/liquidation/recent`'s store) over the last
 * {@link FEEDBACK_HOURS} (less when the feeds have been connected for less; none under an hour), from the venues
 * whose feed covers the symbol and was connected all along. Null without ingestion, when the store's 1,000-event
 * cap dropped events of the day, or without such a venue. `coverage` is those venues' share of open interest.
 */
function recentLiquidations(ctx: ToolContext, symbol: string, market: HeatmapMarket): { recent: RecentLiquidations; venues: PerpVenue[] } | null {
  const ingestion = ctx.ingestion;
  if (!ingestion || !(market.openInterestUsd > 0)) return null;
  const now = ctx.now();
  if (ingestion.liquidations.stats(now).capped) return null;
  const subscribed = ingestion
    .subscribedBases()
    .map((b) => b.toUpperCase())
    .includes(symbol.toUpperCase());
  const states = new Map(ingestion.states().map((s) => [s.venue as string, s]));
  const venues = LIQUIDATION_VENUES.filter((v) => {
    const st = states.get(v);
    // Per-symbol feeds cover subscribed symbols only; the others cover every symbol.
    return (
      st?.connected && st.connectedSince !== null && now - st.connectedSince >= HOUR_MS && (!PER_SYMBOL_LIQUIDATION_FEEDS.has(v) || subscribed) && (market.oiByVenue[v] ?? 0) > 0
    );
  });
  if (!venues.length) return null;
  const since = Math.min(...venues.map((v) => states.get(v)!.connectedSince!));
  const hours = Math.min(FEEDBACK_HOURS, Math.floor((now - Math.max(since, now - FEEDBACK_HOURS * HOUR_MS)) / HOUR_MS));
  if (hours < 1) return null;
  const from = now - hours * HOUR_MS;
  let longUsd = 0;
  let shortUsd = 0;
  for (const e of ingestion.liquidations.recent({ symbol, limit: 1000 })) {
    if (e.time < from || !venues.includes(e.venue as PerpVenue)) continue;
    if (e.side === "long") longUsd += e.valueUsd;
    else shortUsd += e.valueUsd;
  }
  const coverage = venues.reduce((s, v) => s + (market.oiByVenue[v] ?? 0), 0) / market.openInterestUsd;
  return { recent: { longUsd, shortUsd, hours, coverage }, venues };
}

/**
 * The last 7 days' liquidations of `symbol` per 24 h block, from the service's liquidation history (hourly totals of
 * the Binance and OKX all-symbol feeds, src/ingestion/store/liquidation-history.ts): each venue's total over the time
 * its feed covered, scaled to 24 h, divided by the counted venues' share of open interest. Null without ingestion or
 * without a block with 15 minutes of covered time.
 */
function liquidationHistory(ctx: ToolContext, symbol: string, market: HeatmapMarket): { days: LiquidationDay[]; venues: PerpVenue[] } | null {
  const ingestion = ctx.ingestion;
  if (!ingestion || !(market.openInterestUsd > 0)) return null;
  const states = new Map(ingestion.states().map((s) => [s.venue as string, s]));
  const venues = LIQUIDATION_HISTORY_VENUES.filter((v) => (market.oiByVenue[v] ?? 0) > 0).map((v) => {
    const st = states.get(v);
    return { venue: v, oiShare: market.oiByVenue[v]! / market.openInterestUsd, connectedSince: st?.connected ? st.connectedSince : null };
  });
  const days = ingestion.liquidations.history.days(symbol, venues, ctx.now());
  if (!days.length) return null;
  return { days: days.map((d) => ({ end: d.end, usd: d.usd })), venues: venues.map((v) => v.venue as PerpVenue) };
}

/** A computed heatmap with the market state and the sources it came from. */
export interface HeatmapResult {
  market: HeatmapMarket;
  heatmap: Heatmap;
  tierVenues: PerpVenue[];
  candleVenue?: PerpVenue;
  oiHistoryVenue?: PerpVenue;
  ratioVenues: PerpVenue[];
  liquidationVenues: PerpVenue[];
  /** Days of liquidation history the forecast read and the venues they came from (empty: none). */
  history: { days: number; venues: PerpVenue[] };
  mmr: Map<number, number>;
}

/**
 * Gathers the market state, tier tables, candles, open-interest history, long/short ratios and realised
 * liquidations of `symbol` and runs the heatmap model (src/analytics/liquidation-heatmap.ts). Only the price and
 * open interest are required; every other input is optional and degrades the estimate as
 * docs/methods/liquidation-heatmap.md describes. Shared by the heatmap tool and the liquidation-alert engine.
 * @throws AppError as {@link heatmapMarket}; UPSTREAM_UNAVAILABLE when no venue gave a price.
 */
export async function computeHeatmap(ctx: ToolContext, symbol: string): Promise<HeatmapResult> {
  const [market, tiers, candles, history, ratio] = await Promise.all([
    heatmapMarket(ctx, symbol),
    tierTables(ctx, symbol),
    entryCandles(ctx, symbol),
    oiHistory(ctx, symbol),
    longShortRatio(ctx, symbol),
  ]);
  if (!(market.price > 0)) {
    throw new AppError("UPSTREAM_UNAVAILABLE", `no venue gave a price for ${symbol}`, { retryAfterSec: 10, details: market.missing });
  }
  const mmr = mmrByLeverage(tiers.tables);
  const liq = recentLiquidations(ctx, symbol, market);
  const liqHistory = liquidationHistory(ctx, symbol, market);
  const heatmap = liquidationHeatmap({
    price: market.price,
    openInterestUsd: market.openInterestUsd,
    candles: candles.candles,
    candleHours: 1,
    mmrByLeverage: mmr,
    openInterestHistory: history.points.map((p) => ({ time: p.time, oi: p.oiCoins })),
    fundingRate8h: market.fundingRate8h,
    longShortRatio: ratio.ratio,
    recentLiquidations: liq?.recent ?? null,
    liquidationDays: liqHistory?.days ?? null,
  });
  return {
    market,
    heatmap,
    tierVenues: tiers.venues,
    candleVenue: candles.venue,
    oiHistoryVenue: history.venue,
    ratioVenues: ratio.venues,
    liquidationVenues: liq?.venues ?? [],
    history: { days: liqHistory?.days.length ?? 0, venues: liqHistory?.venues ?? [] },
    mmr,
  };
}

const Cluster = z.object({
  leverage: z.string().describe("leverage tier: 5x, 10x, 25x, 50x or 100x, or 2x for the open interest at 3x or less (docs/methods/liquidation-heatmap.md)"),
  side: z.enum(["long", "short"]).describe("long positions liquidate below the price, shorts above"),
  liquidation_price: z.number().describe("estimated OI-weighted mean liquidation price of the cluster, USD"),
  distance_pct: z.number().describe("(liquidation_price - current_price) / current_price x 100; negative below, positive above"),
  oi_at_risk_usd: z.number().describe("estimated open interest of the cluster, USD"),
  entry_price: z.number().describe("estimated OI-weighted mean entry price of the cluster, USD"),
  maintenance_margin_rate: z.number().describe("maintenance-margin rate used (fraction)"),
});

const AtRisk = z.object({
  within_1_sigma: z.number().describe("estimated OI with liquidation levels within one day's 1-sigma move (near_band_pct), USD"),
  within_2_sigma: z.number().describe("estimated OI within one day's 2-sigma move (wide_band_pct), USD"),
  within_5_pct: z.number().describe("estimated OI within 5% of the price, USD"),
  within_10_pct: z.number().describe("estimated OI within 10% of the price, USD"),
});

/** `GET /liquidation/heatmap/:symbol`: estimated liquidation levels per leverage tier and cascade risk (docs/methods/liquidation-heatmap.md). */
export const liquidationHeatmapTool = defineTool({
  name: "liquidation_heatmap",
  title: "Liquidation heatmap (estimate)",
  method: "GET",
  path: "/liquidation/heatmap/:symbol",
  priceUsd: "0.05",
  cacheTtlSec: 15,
  tags: ["liquidations"],
  summary: "Estimated liquidation levels for 2x to 100x longs and shorts, OI at risk and cascade risk, relative to volatility",
  description:
    "An ESTIMATE from public data (no venue publishes positions' leverage); method, calibration and limits in docs/methods/liquidation-heatmap.md. " +
    `Open interest: ${venueList()}. Entry cohorts: the last 168 hourly candles (Binance, else OKX) at the typical price, sized by Binance's hourly open-interest changes plus the steady replacement of closed positions (else by USD volume). ` +
    "Leverage (assumed): 36% of open interest at 3x or less (the 2x cluster), 49% at 3-7x (5x), 11% at 10x, 3% at 25x, 0.8% at 50x, 0.2% at 100x for a symbol with 3% daily volatility; shifted to lower leverage for more volatile symbols; the 25x-100x share up to doubled on the crowded side (median funding above 0.01% per 8h, Binance/Bybit long/short ratio above 1) and halved on the other; scaled by realised liquidations from the live feeds when available. " +
    "Positions a later candle liquidated are removed; survivors decay with a holding half-life of 96 h (2x) down to 3 h (100x). Maintenance margin: the published tier tables of every venue that has one (Binance's are signed). " +
    "Bands are relative to the symbol's daily volatility sigma (hourly candles, 12 h half-life): near_band_oi_pct = share of OI with liquidation levels within one day's 1-sigma move, on the riskier side. " +
    `cascade_risk and oi_at_risk_pct come from a forecast of the share of OI liquidated over the next 24 h: a fitted scale x the mean daily liquidations / OI of the last 7 days (the service's own history of the Binance and OKX liquidation feeds) x 24 h volume / OI; without a liquidation history, a fit on turnover, its 7-day mean and volatility. High from ${pct(CASCADE_MODEL.highFrom)}%, medium from ${pct(CASCADE_MODEL.mediumFrom)}%, else low. ` +
    "Walk-forward on real Binance liquidations (2023-01..06, daily) it ranks next-day liquidations with Spearman 0.48, the same as the 7-day mean x turnover baseline it is (no fitted model beat that baseline out of sample); see docs/methods/cascade-risk.md.",
  example: { symbol: "BTC" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    current_price: z.number().describe("median mark price across venues, USD"),
    open_interest_usd: z.number().describe("total open interest across venues, USD"),
    cascade_risk: z.enum(["high", "medium", "low"]).describe("estimate: high, medium or low (see risk_summary.cascade_risk_reason)"),
    leverage_clusters: z.array(Cluster).describe("estimated: one cluster per side and leverage tier, nearest to the price first"),
    risk_summary: z.object({
      total_oi_at_risk_usd: z.number().describe("forecast liquidations over the next 24 h, USD (oi_at_risk_pct x open_interest_usd / 100)"),
      oi_at_risk_pct: z.number().describe("forecast share of open interest liquidated over the next 24 h, percent (liquidation alerts compare it with threshold_pct)"),
      cascade_risk: z.enum(["high", "medium", "low"]).describe("level of oi_at_risk_pct: high from thresholds.high_from_pct, medium from thresholds.medium_from_pct"),
      cascade_risk_reason: z.string().describe("starts with 'Estimate:'"),
      forecast_coefficients: z
        .enum(["with_liquidations", "without_liquidations"])
        .describe("with_liquidations when a live liquidation feed gave the realised liquidations; without_liquidations otherwise (weaker, docs/methods/liquidation-heatmap.md)"),
      near_band_oi_pct: z.number().describe("estimated share of OI of the dominant side with liquidation levels within one day's 1-sigma move, percent (structural)"),
      structural_risk: z
        .enum(["high", "medium", "low"])
        .describe("level of the bands alone: high above 3.5% within 1 sigma, medium from 5% within 2 sigma (not validated; cascade_risk is)"),
      dominant_side: z.enum(["long", "short"]).describe("side with the most OI within one day's 1-sigma move"),
      daily_volatility_pct: z.number().describe("one day's 1-sigma move the bands use, percent (from the hourly candles; 3% when there are too few)"),
      near_band_pct: z.number().describe("1-sigma band, percent of the price (0.5 to 7.5)"),
      wide_band_pct: z.number().describe("2-sigma band, percent of the price (1 to 15)"),
      long_oi_at_risk_usd: AtRisk,
      short_oi_at_risk_usd: AtRisk,
    }),
    estimated: z.literal(true).describe("every number except current_price and open_interest_usd is a model estimate"),
    method: z.object({
      model: z.string(),
      docs: z.string().describe("where the method, its calibration and its known limits are written down"),
      entry_window_hours: z.number(),
      entry_hours_used: z.number().describe("0 means no candles: static estimate at the current price"),
      entries_from: z.enum(["open_interest_changes", "volume", "static"]).describe("what sized the entry cohorts"),
      candles_source: z.string().nullable(),
      open_interest_history_source: z.string().nullable(),
      oi_leverage_mix: z.record(z.string(), z.number()).describe("assumed share of open interest per leverage tier at 3% daily volatility, steady state"),
      holding_half_life_hours: z.record(z.string(), z.number()),
      leverage_scale: z.number().describe("leverage multiplier from the long-run volatility: 3% / long-run daily volatility, within 0.25..2"),
      long_run_daily_volatility_pct: z.number().nullable(),
      open_mix: z.object({ long: z.record(z.string(), z.number()), short: z.record(z.string(), z.number()) }).describe("leverage split of newly opened positions used per side"),
      crowding: z.number().describe("-1..1, > 0 longs crowded (funding, long/short ratio); 0 when unknown"),
      funding_rate_8h: z.number().nullable().describe("median current funding per 8 h across venues (fraction)"),
      long_short_ratio: z.number().nullable().describe("mean long/short ratio (Binance top traders' positions, Bybit all accounts)"),
      long_short_sources: z.array(z.string()),
      liquidation_feedback: z
        .object({ long: z.number(), short: z.number(), hours: z.number(), coverage: z.number(), sources: z.array(z.string()) })
        .nullable()
        .describe("multiplier of the 25x-100x share per side from realised liquidations of the live feeds; null when not available"),
      thresholds: z
        .object({ high_from_pct: z.number(), medium_from_pct: z.number(), high_near_share_pct: z.number(), medium_wide_share_pct: z.number() })
        .describe("cascade_risk thresholds on oi_at_risk_pct (high_from_pct, medium_from_pct) and structural_risk thresholds on the bands"),
      forecast_inputs: z
        .object({
          liquidations_7d_pct_oi: z
            .number()
            .nullable()
            .describe("mean over the last 7 days (fewer while less is recorded) of each day's liquidations / that day's OI, percent per day (null: no liquidation history)"),
          turnover_24h: z.number().nullable().describe("24 h volume / open interest of the candles' venue"),
          turnover_7d: z.number().nullable().describe("mean over the last 7 days of each day's volume / that day's open interest, candles' venue"),
          daily_volatility_pct: z.number().nullable().describe("long-run daily volatility, percent"),
          liquidations_pct_oi_24h: z
            .number()
            .nullable()
            .describe("realised liquidations of the live feeds' last hours per 24 h / OI, percent (null: no feed; not a forecast input)"),
          funding_abs_8h_pct: z.number().nullable().describe("not a forecast input"),
          long_short_distance: z.number().nullable().describe("|long/short ratio - 1| (not a forecast input)"),
        })
        .describe(
          "inputs of the cascade-risk forecast: with a liquidation history liquidations_7d_pct_oi x turnover_24h (a fitted scale), else turnover_24h, turnover_7d and daily_volatility_pct",
        ),
      liquidation_history: z
        .object({ days: z.number().describe("24 h blocks with 15 minutes or more of covered feed time (at most 7)"), sources: z.array(z.string()) })
        .nullable()
        .describe("the service's own liquidation history the forecast read (Binance and OKX feeds); null: none yet, the forecast runs without it"),
      forecast_model: z.string().describe("what the forecast's coefficients were fitted on"),
      maintenance_margin_source: z.array(z.string()).describe("venues whose tier tables gave the MMRs; empty: fallback 0.5%"),
      price_sources: z.array(z.string()),
    }),
    exchanges: z.record(z.string(), z.object({ oi_usd: z.number() })),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
    timestamp: Timestamp,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const r = await computeHeatmap(ctx, symbol);
    const { market, heatmap } = r;
    const inputs = heatmap.inputs;
    const exchanges: Record<string, { oi_usd: number }> = {};
    for (const [v, usd] of Object.entries(market.oiByVenue)) exchanges[v] = { oi_usd: usd };
    const risk = heatmap.risk;
    const side = (a: typeof risk.long_oi_at_risk_usd) => ({
      within_1_sigma: Math.round(a.within_1_sigma),
      within_2_sigma: Math.round(a.within_2_sigma),
      within_5_pct: Math.round(a.within_5_pct),
      within_10_pct: Math.round(a.within_10_pct),
    });
    const tiers = (m: Partial<Record<number, number>>): Record<string, number> => Object.fromEntries(Object.entries(m).map(([l, w]) => [`${l}x`, round4(w ?? 0)]));
    return {
      symbol,
      current_price: market.price,
      open_interest_usd: market.openInterestUsd,
      cascade_risk: risk.cascade_risk,
      leverage_clusters: heatmap.clusters.map((c) => ({
        ...c,
        liquidation_price: sig(c.liquidation_price),
        entry_price: sig(c.entry_price),
        distance_pct: round2(c.distance_pct),
        oi_at_risk_usd: Math.round(c.oi_at_risk_usd),
      })),
      risk_summary: {
        total_oi_at_risk_usd: Math.round(risk.total_oi_at_risk_usd),
        oi_at_risk_pct: round4(risk.oi_at_risk_pct),
        cascade_risk: risk.cascade_risk,
        cascade_risk_reason: risk.cascade_risk_reason,
        forecast_coefficients: risk.forecast_coefficients,
        near_band_oi_pct: round2(risk.near_band_oi_pct),
        structural_risk: risk.structural_risk,
        dominant_side: risk.dominant_side,
        daily_volatility_pct: round2(risk.daily_volatility_pct),
        near_band_pct: round2(risk.near_band_pct),
        wide_band_pct: round2(risk.wide_band_pct),
        long_oi_at_risk_usd: side(risk.long_oi_at_risk_usd),
        short_oi_at_risk_usd: side(risk.short_oi_at_risk_usd),
      },
      estimated: true as const,
      method: {
        model:
          "cascade risk: log-linear forecast of the next 24 h liquidations / OI, fitted walk-forward on real Binance liquidations; structure: leverage cohorts over an open-interest-weighted entry distribution, bands relative to daily volatility (estimate)",
        docs: "docs/methods/liquidation-heatmap.md",
        entry_window_hours: ENTRY_WINDOW_HOURS,
        entry_hours_used: heatmap.entryHours,
        entries_from: inputs.entriesFrom,
        candles_source: r.candleVenue ? sourceLabel(ctx, r.candleVenue) : null,
        open_interest_history_source: r.oiHistoryVenue ? sourceLabel(ctx, r.oiHistoryVenue) : null,
        oi_leverage_mix: tiers(OI_LEVERAGE_MIX),
        holding_half_life_hours: Object.fromEntries(Object.entries(HOLDING_HALF_LIFE_HOURS).map(([l, h]) => [`${l}x`, h])),
        leverage_scale: round4(inputs.leverageScale),
        long_run_daily_volatility_pct: inputs.longRunDailyVol === null ? null : round2(inputs.longRunDailyVol * 100),
        open_mix: { long: tiers(inputs.openMix.long), short: tiers(inputs.openMix.short) },
        crowding: round4(inputs.crowding),
        funding_rate_8h: inputs.fundingRate8h,
        long_short_ratio: inputs.longShortRatio === null ? null : round4(inputs.longShortRatio),
        long_short_sources: r.ratioVenues.map((v) => sourceLabel(ctx, v)),
        liquidation_feedback: inputs.liquidationFeedback
          ? {
              long: round4(inputs.liquidationFeedback.long),
              short: round4(inputs.liquidationFeedback.short),
              hours: inputs.liquidationFeedback.hours,
              coverage: round4(inputs.liquidationFeedback.coverage),
              sources: r.liquidationVenues.map((v) => sourceLabel(ctx, v)),
            }
          : null,
        thresholds: {
          high_from_pct: pct(CASCADE_MODEL.highFrom),
          medium_from_pct: pct(CASCADE_MODEL.mediumFrom),
          high_near_share_pct: HIGH_NEAR_SHARE * 100,
          medium_wide_share_pct: MEDIUM_WIDE_SHARE * 100,
        },
        forecast_inputs: forecastInputs(inputs.cascadeFeatures),
        liquidation_history: r.history.days ? { days: r.history.days, sources: r.history.venues.map((v) => sourceLabel(ctx, v)) } : null,
        forecast_model: CASCADE_MODEL.fittedOn,
        maintenance_margin_source: r.tierVenues.map((v) => sourceLabel(ctx, v)),
        price_sources: market.priceVenues.map((v) => sourceLabel(ctx, v)),
      },
      exchanges,
      coverage: coverage(Object.keys(market.oiByVenue), undefined, oiSharePct(symbol, market.openInterestUsd, listedButUnread(market.missing), ctx.now())),
      missing_exchanges: market.missing,
      timestamp: isoNow(ctx),
    };
  },
});

/** A fraction as a percent rounded to 0.01 (thresholds in the description and the `method` block). */
function pct(fraction: number): number {
  return round2(fraction * 100);
}

/** The forecast's inputs as the `method` block reports them (percent where the name says so). */
function forecastInputs(f: CascadeFeatures) {
  const p = (x: number | null, k = 100) => (x === null ? null : round4(x * k));
  return {
    liquidations_7d_pct_oi: p(f.liquidations7d),
    turnover_24h: p(f.turnover, 1),
    turnover_7d: p(f.turnover7d, 1),
    daily_volatility_pct: p(f.volatility),
    liquidations_pct_oi_24h: p(f.liquidations),
    funding_abs_8h_pct: p(f.funding),
    long_short_distance: p(f.longShort, 1),
  };
}

/** 8 significant digits (prices of 1e-5 coins keep their precision). */
function sig(x: number): number {
  return Number(x.toPrecision(8));
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
