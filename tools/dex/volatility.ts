import { z } from "zod";
import { aggregateCandles } from "../../src/analytics/dex.js";
import { clean, pct, rate8h } from "../../src/analytics/funding.js";
import { positioningSentiment } from "../../src/analytics/sentiment.js";
import {
  annualizedVolatilityPct,
  betaAndCorrelation,
  dailyVolatility,
  distributionMoments,
  logReturns,
  maxDrawdownPct,
  riskLevel,
  sharpeRatio,
  valueAtRiskPct,
} from "../../src/analytics/volatility.js";
import type { ToolContext } from "../../src/core/context.js";
import { fanOut } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, Timestamp } from "../common.js";
import { perVenue } from "../perp/common.js";
import { acceptedPools, DexSymbol } from "./common.js";

const HOURS = { "1d": 24, "7d": 168, "30d": 720 } as const;

/** Hourly closes (oldest first) of `symbol` over 30 days, aggregated over its two most liquid base-side pools. */
async function hourlyCloses(symbol: string, ctx: ToolContext): Promise<Array<{ time: number; close: number }>> {
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

/** Funding (8h pct) and long/short ratios of the symbol's perpetuals, for the sentiment block. Failures simply contribute nothing. */
async function positioning(symbol: string, ctx: ToolContext): Promise<{ funding8hPct: number[]; longShortRatios: number[] }> {
  const [funding, ls] = await Promise.all([
    perVenue(ctx, symbol, (c) => c.funding(symbol)).catch(() => undefined),
    perVenue(ctx, symbol, (c) => c.longShort(symbol)).catch(() => undefined),
  ]);
  return {
    funding8hPct: funding ? funding.answered.map((v) => pct(rate8h(funding.results[v]!.fundingRate, funding.results[v]!.fundingIntervalHours))) : [],
    longShortRatios: ls ? ls.answered.map((v) => ls.results[v]!.lsRatio) : [],
  };
}

/** `GET /volatility-index/:symbol`: volatility, VaR, Sharpe, drawdown, beta/correlation vs BTC, moments, risk level and positioning sentiment (spec 2.2). */
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
    "From hourly DEX closes (GeckoTerminal, two most liquid canonical pools) of the token and of BTC. Volatility: sample standard deviation of hourly log returns x sqrt(8760), pct. VaR 95/99: parametric 1-day (1.645 / 2.326 x daily sigma) over `period`; Sharpe: annualised mean/sigma of hourly returns, zero risk-free rate, over `period`; beta and correlation of hourly returns vs BTC over `period`; price_distribution: mean and std_dev of hourly log returns, sample skewness and excess kurtosis. risk_level applies the spec thresholds (low < 3%, medium 3-8%, high 8-15%, extreme > 15%) to the DAILY volatility (sigma x sqrt(24)) over `period`. Sentiment comes from positioning on Binance, Bybit, OKX and Hyperliquid: funding rescaled to 8h and long/short ratios (CVD joins when streams are available); sources_analyzed counts the venue observations used.",
  example: { symbol: "ETH", period: "7d" },
  input: z.object({ symbol: DexSymbol, period: z.enum(["1d", "7d", "30d"]).default("7d") }),
  output: z.object({
    symbol: z.string(),
    period: z.string(),
    volatility_24h: z.number().nullable(),
    volatility_7d: z.number().nullable(),
    volatility_30d: z.number().nullable(),
    daily_volatility_pct: z.number().nullable().describe("1-day sigma over period, pct: what risk_level is judged on"),
    risk_level: z.enum(["low", "medium", "high", "extreme"]),
    risk_metrics: z.object({
      var_95_1d: z.number().nullable(),
      var_99_1d: z.number().nullable(),
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
    data_points: z.number().int().describe("hourly closes used"),
    timestamp: Timestamp,
  }),
  async handler({ symbol, period }, ctx) {
    const [series, btc, pos] = await Promise.all([hourlyCloses(symbol, ctx), symbol === "BTC" ? undefined : hourlyCloses("BTC", ctx), positioning(symbol, ctx)]);
    if (series.length < 26) throw new AppError("UPSTREAM_ERROR", `only ${series.length} hourly candles of ${symbol}: too few for risk metrics`);
    const window = (h: number) => logReturns(series.slice(-(h + 1)).map((c) => c.close));
    const returns = window(HOURS[period]);
    const daily = dailyVolatility(returns, 24);
    const btcByTime = new Map((btc ?? series).map((c) => [c.time, c.close]));
    // Beta/correlation on the hours both series traded, over the period.
    const paired = series.slice(-(HOURS[period] + 1)).filter((c) => btcByTime.has(c.time));
    const { beta, correlation } = betaAndCorrelation(
      logReturns(paired.map((c) => c.close)),
      logReturns(paired.map((c) => btcByTime.get(c.time)!)),
    );
    const moments = distributionMoments(returns);
    const r = (x: number | null) => (x === null ? null : clean(x));
    const sentiment = positioningSentiment(pos) ?? { score: 0.5, label: "neutral" as const, sources_analyzed: 0, confidence: 0, components: { funding: null, long_short: null, cvd: null } };
    return {
      symbol,
      period,
      volatility_24h: r(annualizedVolatilityPct(window(24), 8760)),
      volatility_7d: r(annualizedVolatilityPct(window(168), 8760)),
      volatility_30d: r(annualizedVolatilityPct(window(720), 8760)),
      daily_volatility_pct: daily === null ? null : clean(daily * 100),
      risk_level: riskLevel(daily === null ? 0 : daily * 100),
      risk_metrics: {
        var_95_1d: daily === null ? null : clean(valueAtRiskPct(daily, 0.95)),
        var_99_1d: daily === null ? null : clean(valueAtRiskPct(daily, 0.99)),
        sharpe_ratio: r(sharpeRatio(returns, 8760)),
        max_drawdown_30d: clean(maxDrawdownPct(series.slice(-(HOURS["30d"] + 1)).map((c) => c.close))),
        beta_vs_btc: r(beta),
        correlation_vs_btc: r(correlation),
      },
      price_distribution: moments && { mean: clean(moments.mean), std_dev: clean(moments.std_dev), skewness: clean(moments.skewness), kurtosis: clean(moments.kurtosis) },
      sentiment,
      data_points: series.length,
      timestamp: isoNow(ctx),
    };
  },
});
