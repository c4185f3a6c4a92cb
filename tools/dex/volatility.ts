import { z } from "zod";
import { aggregateCandles } from "../../src/analytics/dex.js";
import { clean, pct, rate8h } from "../../src/analytics/funding.js";
import { positioningSentiment } from "../../src/analytics/sentiment.js";
import {
  annualizedVolatilityPct,
  betaAndCorrelation,
  dailyVolatility,
  distributionMoments,
  maxDrawdownPct,
  riskLevel,
  sharpeRatio,
  type TimedClose,
  valueAtRiskPct,
  windowReturns,
  type WindowReturns,
} from "../../src/analytics/volatility.js";
import type { ToolContext } from "../../src/core/context.js";
import { fanOut, optionalRead } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { HOUR_MS } from "../../src/lib/time.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { perVenue } from "../perp/common.js";
import { acceptedPools, DexSymbol } from "./common.js";

const HOURS = { "1d": 24, "7d": 168, "30d": 720 } as const;

/** Hours with trades in a window, as reported in `coverage`. */
const Coverage = z.object({
  hours_with_trades: z.number().int().describe("hours of the window with at least one swap (a GeckoTerminal candle)"),
  hours_in_window: z.number().int(),
  coverage_pct: z.number().describe("hours_with_trades / hours_in_window x 100"),
});

function coverage(w: WindowReturns): z.infer<typeof Coverage> {
  return { hours_with_trades: w.intervalsWithTrades, hours_in_window: w.intervalsInWindow, coverage_pct: clean((w.intervalsWithTrades / w.intervalsInWindow) * 100) };
}

/**
 * Risk metrics of an hourly close series (oldest first; hours without trades absent) over `period`, windowed by time
 * and ending with the hour that starts at `endMs` (see {@link windowReturns}). `benchmark` (BTC closes) gives beta and
 * correlation on the hours both series traded. Pure: the tool's computation, testable on recorded candles.
 */
export function volatilityMetrics(series: readonly TimedClose[], benchmark: readonly TimedClose[], period: keyof typeof HOURS, endMs: number) {
  const win = (p: keyof typeof HOURS, s: readonly TimedClose[] = series) => windowReturns(s, endMs, HOURS[p]);
  const windows = { "24h": win("1d"), "7d": win("7d"), "30d": win("30d") };
  const w = win(period);
  const daily = dailyVolatility(w.scaled, 24);
  // Beta/correlation on the hours both series traded, over the period: both legs span the same hours.
  const assetTimes = new Set(series.map((c) => c.time));
  const benchTimes = new Set(benchmark.map((c) => c.time));
  const { beta, correlation } = betaAndCorrelation(
    win(
      period,
      series.filter((c) => benchTimes.has(c.time)),
    ).scaled,
    win(
      period,
      benchmark.filter((c) => assetTimes.has(c.time)),
    ).scaled,
  );
  const moments = distributionMoments(w.scaled);
  const r = (x: number | null) => (x === null ? null : clean(x));
  return {
    volatility_24h: r(annualizedVolatilityPct(windows["24h"].scaled, 8760)),
    volatility_7d: r(annualizedVolatilityPct(windows["7d"].scaled, 8760)),
    volatility_30d: r(annualizedVolatilityPct(windows["30d"].scaled, 8760)),
    coverage: { "24h": coverage(windows["24h"]), "7d": coverage(windows["7d"]), "30d": coverage(windows["30d"]) },
    daily_volatility_pct: daily === null ? null : clean(daily * 100),
    risk_level: riskLevel(daily === null ? 0 : daily * 100),
    risk_metrics: {
      var_95_1d: daily === null ? null : clean(valueAtRiskPct(daily, 0.95)),
      var_99_1d: daily === null ? null : clean(valueAtRiskPct(daily, 0.99)),
      sharpe_ratio: r(sharpeRatio(w.raw, 8760, w.elapsed)),
      max_drawdown_30d: clean(maxDrawdownPct(windows["30d"].closes.map((c) => c.close))),
      beta_vs_btc: r(beta),
      correlation_vs_btc: r(correlation),
    },
    price_distribution: moments && { mean: clean(moments.mean), std_dev: clean(moments.std_dev), skewness: clean(moments.skewness), kurtosis: clean(moments.kurtosis) },
  };
}

/** Hourly closes (oldest first) of `symbol` over 30 days, aggregated over its two most liquid base-side pools. */
async function hourlyCloses(symbol: string, ctx: ToolContext): Promise<TimedClose[]> {
  const { pools } = await acceptedPools(symbol, ctx);
  const top = pools.filter((p) => p.side === "base").slice(0, 2);
  if (top.length === 0) throw new AppError("UPSTREAM_ERROR", `no liquid ${symbol} pool has it as the base token; no price series`);
  const keys = top.map((p) => `${p.pool.chain}:${p.pool.pairAddress}`);
  const { results, answered } = await fanOut(keys, (k) => {
    const p = top[keys.indexOf(k)]!.pool;
    return ctx.venues.geckoterminal.ohlcv(p.chain, p.pairAddress, { timeframe: "hour", aggregate: 1 }, { limit: HOURS["30d"] + 1 });
  });
  return aggregateCandles(answered.map((k) => results[k]!))
    .reverse()
    .map((c) => ({ time: c.time, close: c.close }));
}

/** Funding (8h pct) and long/short ratios of the symbol's perpetuals, for the sentiment block. Failures contribute nothing (see {@link optionalRead}). */
async function positioning(symbol: string, ctx: ToolContext): Promise<{ funding8hPct: number[]; longShortRatios: number[] }> {
  const [funding, ls] = await Promise.all([
    optionalRead(perVenue(ctx, symbol, (c) => c.funding(symbol))),
    optionalRead(perVenue(ctx, symbol, (c) => c.longShort(symbol), { needs: "longShort" })),
  ]);
  return {
    funding8hPct: funding ? funding.answered.map((v) => pct(rate8h(funding.results[v]!.fundingRate, funding.results[v]!.fundingIntervalHours))) : [],
    longShortRatios: ls ? ls.answered.map((v) => ls.results[v]!.lsRatio) : [],
  };
}

/** `GET /volatility-index/:symbol`: volatility, VaR, Sharpe, drawdown, beta/correlation vs BTC, moments, risk level and positioning sentiment (docs/methods/volatility.md). */
export const volatilityIndex = defineTool({
  name: "volatility_index",
  title: "Volatility and risk index",
  method: "GET",
  path: "/volatility-index/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 30,
  tags: ["dex"],
  summary: "Annualised volatility (24h/7d/30d), VaR, Sharpe, drawdown, beta vs BTC, return moments, risk level and sentiment",
  description:
    "From hourly DEX closes (GeckoTerminal, two most liquid canonical pools) of the token and of BTC. Windows are by time (the last 24, 168 or 720 hours ending with the current hour), not by candle count: GeckoTerminal omits hours without swaps, so each window says in coverage how many of its hours traded. A return across missing hours is divided by sqrt(hours elapsed), so it counts as a one-hour return. Volatility: sample standard deviation of these hourly log returns x sqrt(8760), pct. VaR 95/99: 1-day log-normal VaR of a long position over `period`, (1 - exp(-z x daily sigma)) x 100 with z 1.645 / 2.326, so never above 100%; Sharpe: annualised drift (sum of log returns / hours elapsed) over sigma, zero risk-free rate, over `period`; beta and correlation of hourly returns vs BTC on the hours both traded over `period`; price_distribution: mean and std_dev of the hour-scaled log returns, sample skewness and excess kurtosis. risk_level applies the spec thresholds (low < 3%, medium 3-8%, high 8-15%, extreme > 15%) to the DAILY volatility (sigma x sqrt(24)) over `period`. Sentiment comes from positioning on Binance, Bybit, OKX and Hyperliquid: funding rescaled to 8h and long/short ratios (CVD joins when streams are available); sources_analyzed counts the venue observations used. Method and limits: docs/methods/funding-basis-volatility.md.",
  example: { symbol: "ETH", period: "7d" },
  input: z.object({ symbol: DexSymbol, period: z.enum(["1d", "7d", "30d"]).default("7d"), ...RequireField }),
  output: z.object({
    symbol: z.string(),
    period: z.string(),
    volatility_24h: z.number().nullable().describe("annualised, pct, over the last 24 hours by time; null with fewer than 2 returns"),
    volatility_7d: z.number().nullable().describe("annualised, pct, over the last 168 hours"),
    volatility_30d: z.number().nullable().describe("annualised, pct, over the last 720 hours"),
    coverage: z
      .object({ "24h": Coverage, "7d": Coverage, "30d": Coverage })
      .describe("per volatility window: hours with trades / hours in the window; low coverage means few, long-gap returns"),
    daily_volatility_pct: z.number().nullable().describe("1-day sigma over period, pct: what risk_level is judged on"),
    risk_level: z.enum(["low", "medium", "high", "extreme"]),
    risk_metrics: z.object({
      var_95_1d: z.number().nullable().describe("1-day log-normal VaR of a long position at 95%, pct of its value (0-100)"),
      var_99_1d: z.number().nullable().describe("the same at 99%"),
      sharpe_ratio: z.number().nullable(),
      max_drawdown_30d: z.number(),
      beta_vs_btc: z.number().nullable(),
      correlation_vs_btc: z.number().nullable(),
    }),
    price_distribution: z.object({ mean: z.number(), std_dev: z.number(), skewness: z.number(), kurtosis: z.number() }).nullable(),
    sentiment: z.object({
      score: z.number(),
      label: z.enum(["bullish", "neutral", "bearish"]),
      sources_analyzed: z.number().int(),
      confidence: z.number(),
      components: z.object({ funding: z.number().nullable(), long_short: z.number().nullable(), cvd: z.number().nullable() }),
    }),
    data_points: z.number().int().describe("hourly candles fetched (hours with trades, up to 721)"),
    timestamp: Timestamp,
  }),
  async handler({ symbol, period }, ctx) {
    const [series, btc, pos] = await Promise.all([hourlyCloses(symbol, ctx), symbol === "BTC" ? undefined : hourlyCloses("BTC", ctx), positioning(symbol, ctx)]);
    if (series.length < 26) throw new AppError("UPSTREAM_ERROR", `only ${series.length} hourly candles of ${symbol}: too few for risk metrics`);
    // The window ends with the current hour (or the newest candle, should the venue's clock run ahead of ours).
    const endMs = Math.max(Math.floor(ctx.now() / HOUR_MS) * HOUR_MS, series.at(-1)!.time);
    const sentiment = positioningSentiment(pos) ?? {
      score: 0.5,
      label: "neutral" as const,
      sources_analyzed: 0,
      confidence: 0,
      components: { funding: null, long_short: null, cvd: null },
    };
    return { symbol, period, ...volatilityMetrics(series, btc ?? series, period, endMs), sentiment, data_points: series.length, timestamp: isoNow(ctx) };
  },
});
