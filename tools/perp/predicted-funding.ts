import { z } from "zod";
import { annualizedPct, fundingSignal, pct, rate8h } from "../../src/analytics/funding.js";
import { optionalRead } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { venuesWith } from "../../src/venues/index.js";
import type { PredictedFunding } from "../../src/venues/perp/types.js";
import { iso, perps, PerpSymbol, requireListed } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

const Prediction = z.object({
  predicted_funding_rate: z.number().describe("fraction per funding_interval_hours"),
  source: z.enum(["venue", "hyperliquid_predicted_fundings"]).describe("venue: the venue's own published estimate; else Hyperliquid's prediction for that venue"),
  funding_interval_hours: z.number().nullable(),
  next_funding_time: z.string().nullable(),
});

/**
 * `GET /futures/predicted-funding/:symbol` (docs/methods/perpetuals.md): the rate accruing for the next Binance settlement
 * (premium index `lastFundingRate`), the last settled rate, mark/index/premium, time to funding, and
 * Hyperliquid's `predictedFundings` for Binance, Bybit and Hyperliquid where it lists the coin.
 */
export const predictedFunding = defineTool({
  name: "predicted_funding",
  title: "Predicted funding",
  method: "GET",
  path: "/futures/predicted-funding/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["funding"],
  summary: "Next funding rate before it settles, from Binance's premium index (and Hyperliquid's predictions)",
  description:
    "predicted_funding_rate is Binance's running estimate (lastFundingRate) for the settlement at next_funding_time; current_funding_rate is the last settled rate. A positive rate means longs pay shorts. signal (on the 8h-equivalent pct): strongly_bullish >= 0.05, bullish >= 0.02, slightly_bullish >= 0.005, neutral within ±0.005, slightly_bearish <= -0.005, bearish <= -0.02, strongly_bearish <= -0.05. predictions gives each venue's estimate of its next rate: the venue's own where it publishes one (predictions.<venue>.source venue), else Hyperliquid's predictedFundings (Binance, Bybit, Hyperliquid); venues publishing neither (OKX) are left out. When Binance does not list the symbol, the Hyperliquid prediction is used and source says so.",
  example: { symbol: "BTC" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    source: z.enum(["binance_premium_index", "hyperliquid_predicted_fundings"]),
    current_funding_rate: z.number().nullable().describe("last settled rate (fraction per interval)"),
    predicted_funding_rate: z.number(),
    predicted_annualized_pct: z.number(),
    funding_interval_hours: z.number(),
    next_funding_time: z.string().nullable(),
    time_to_funding_ms: z.number().int().nullable(),
    premium_index: z.number().nullable().describe("(mark - index) / index"),
    interest_rate: z.number().nullable(),
    mark_price: z.number().nullable(),
    index_price: z.number().nullable(),
    signal: z.string(),
    funding_history: z.array(z.object({ time: z.string(), rate: z.number() })).describe("last settled rates, newest first"),
    predictions: z
      .record(z.string(), Prediction)
      .describe("next-rate estimates per venue: the venue's own where it publishes one, else Hyperliquid's predictedFundings (binance, bybit, hyperliquid)"),
    coverage: Coverage,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx, ["binance", "hyperliquid"]),
  async handler({ symbol }, ctx) {
    const binance = perps(ctx).binance;
    const listed = await optionalRead(binance.instrument(symbol));
    const own = venuesWith("predictedFunding");
    const [snap, history, hl, published] = await Promise.all([
      listed ? optionalRead(binance.funding(symbol)) : undefined,
      listed ? optionalRead(binance.fundingHistory(symbol, 10)).then((h) => h ?? []) : [],
      optionalRead(ctx.venues.predictions.predictedFundings()).then((p) => p ?? []),
      Promise.all(own.map(async (v) => ((await optionalRead(perps(ctx)[v].instrument(symbol))) ? optionalRead(perps(ctx)[v].predictedFunding!(symbol)) : undefined))),
    ]);
    const predictions: Record<string, z.infer<typeof Prediction>> = {};
    const add = (p: PredictedFunding, source: z.infer<typeof Prediction>["source"]) => {
      predictions[p.venue] = { predicted_funding_rate: p.rate, source, funding_interval_hours: p.fundingIntervalHours, next_funding_time: iso(p.nextFundingTime) };
    };
    for (const p of hl.filter((x) => x.base === symbol)) add(p, "hyperliquid_predicted_fundings");
    // A venue's own estimate replaces Hyperliquid's guess for it.
    for (const p of published) if (p) add(p, "venue");
    const used = [...new Set([...(snap ? ["binance"] : []), ...Object.keys(predictions)])];
    const now = ctx.now();
    const base = {
      symbol,
      timestamp: isoNow(ctx),
      funding_history: history.slice(0, 10).map((p) => ({ time: iso(p.time)!, rate: p.rate })),
      predictions,
      // Binance's premium index, Hyperliquid's predictions (for Binance, Bybit and itself) and the venues' own estimates.
      coverage: coverage(used, [...new Set(["binance", "bybit", "hyperliquid", ...own])]),
    };
    if (snap) {
      const premium = snap.markPrice !== null && snap.indexPrice ? (snap.markPrice - snap.indexPrice) / snap.indexPrice : snap.premium;
      return {
        ...base,
        source: "binance_premium_index" as const,
        current_funding_rate: history[0]?.rate ?? null,
        predicted_funding_rate: snap.fundingRate,
        predicted_annualized_pct: annualizedPct(snap.fundingRate, snap.fundingIntervalHours),
        funding_interval_hours: snap.fundingIntervalHours,
        next_funding_time: iso(snap.nextFundingTime),
        time_to_funding_ms: snap.nextFundingTime === null ? null : Math.max(0, snap.nextFundingTime - now),
        premium_index: premium,
        interest_rate: snap.interestRate,
        mark_price: snap.markPrice,
        index_price: snap.indexPrice,
        signal: fundingSignal(pct(rate8h(snap.fundingRate, snap.fundingIntervalHours))),
      };
    }
    const hp = predictions.hyperliquid;
    if (!hp) throw new AppError("UPSTREAM_UNAVAILABLE", "neither Binance's premium index nor Hyperliquid's predictions answered for this symbol", { retryAfterSec: 10 });
    const interval = hp.funding_interval_hours ?? 1;
    const next = hp.next_funding_time ? Date.parse(hp.next_funding_time) : null;
    return {
      ...base,
      source: "hyperliquid_predicted_fundings" as const,
      current_funding_rate: null,
      predicted_funding_rate: hp.predicted_funding_rate,
      predicted_annualized_pct: annualizedPct(hp.predicted_funding_rate, interval),
      funding_interval_hours: interval,
      next_funding_time: hp.next_funding_time,
      time_to_funding_ms: next === null ? null : Math.max(0, next - now),
      premium_index: null,
      interest_rate: null,
      mark_price: null,
      index_price: null,
      signal: fundingSignal(pct(rate8h(hp.predicted_funding_rate, interval))),
    };
  },
});
