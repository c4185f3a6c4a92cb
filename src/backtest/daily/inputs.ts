/**
 * The production heatmap's inputs for one symbol-day of a daily panel, from what was known at that day's close:
 * the last {@link WINDOW_DAYS} daily candles, the open-interest history, funding, long/short ratio and the
 * realised liquidations of the day and of the days before (docs/methods/cascade-risk.md, "The daily backtest").
 */
import { ENTRY_WINDOW_HOURS, mmrByLeverage, type EntryCandle, type HeatmapInput } from "../../analytics/liquidation-heatmap.js";
import { DAY_MS } from "../../lib/time.js";
import type { SymbolSeries } from "./panel.js";

/** Days of candles the heatmap reads: its whole entry window (168 h), as production reads 168 hourly candles. */
export const WINDOW_DAYS = Math.round(ENTRY_WINDOW_HOURS / 24);
/** Days of returns of the volatility baseline. */
export const VOL_BASELINE_DAYS = 7;
/** Days of the liquidation baselines' mean (`mean_7d`, `mean_7d_x_turnover`) and of the forecast's liquidation history. */
export const LIQ_MEAN_DAYS = 7;
/** Days of candles of the shortened window whose level agreement with the full window is reported (two days less). */
export const SHORT_WINDOW_DAYS = WINDOW_DAYS - 2;
/** Days of history a symbol-day needs before it is used (window plus the first return). */
export const HISTORY_DAYS = Math.max(WINDOW_DAYS, VOL_BASELINE_DAYS, LIQ_MEAN_DAYS) + 1;

/** No venue tier tables in the panel: the model's fallback maintenance margin for every tier (as production without tables). */
const FALLBACK_MMR = mmrByLeverage([]);

/** Epoch ms of a YYYY-MM-DD day's 00:00 UTC. */
export function dayStartMs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/** Whether symbol-day `d` has everything the heatmap and the baselines need, and a next day to score against. */
export function usable(s: SymbolSeries, d: number): boolean {
  if (d < HISTORY_DAYS || d + 1 >= s.close.length) return false;
  for (let k = d - HISTORY_DAYS; k <= d; k++) if (!(s.close[k]! > 0 && s.oi[k]! > 0 && s.volume[k]! >= 0)) return false;
  const liqOk = (k: number) => s.longLiq[k]! >= 0 && s.shortLiq[k]! >= 0;
  for (let k = d - LIQ_MEAN_DAYS + 1; k <= d + 1; k++) if (!liqOk(k)) return false;
  return Number.isFinite(s.fundingPct8h[d]!) && s.lsRatio[d]! > 0;
}

/**
 * Heatmap input of symbol-day `d`: daily candles without an intraday range (high = low = close: the panel has no
 * high/low), USD volume = base volume × close; price = close; open interest (Binance's, USD) = OI × close with the
 * OI history at each day's close; funding per 8 h as a fraction; the day's liquidations (base units × close) as
 * 24 h of a feed covering all of the OI, and each window day's as the liquidation history (`liquidationDays`).
 * `windowDays` (default the whole {@link WINDOW_DAYS}) shortens the candles, the OI history and the liquidation
 * history, for the history-length sensitivity only.
 */
export function heatmapInputFor(s: SymbolSeries, days: readonly string[], d: number, windowDays: number = WINDOW_DAYS): HeatmapInput {
  const candles: EntryCandle[] = [];
  const openInterestHistory = [];
  const liquidationDays = [];
  for (let k = d - windowDays + 1; k <= d; k++) {
    const close = s.close[k]!;
    const openTime = dayStartMs(days[k]!);
    candles.push({ openTime, high: close, low: close, close, volumeUsd: s.volume[k]! * close });
    liquidationDays.push({ end: openTime + DAY_MS, usd: (s.longLiq[k]! + s.shortLiq[k]!) * close });
  }
  for (let k = d - windowDays; k <= d; k++) openInterestHistory.push({ time: dayStartMs(days[k]!) + DAY_MS, oi: s.oi[k]! });
  const price = s.close[d]!;
  return {
    price,
    openInterestUsd: s.oi[d]! * price,
    candles,
    candleHours: 24,
    mmrByLeverage: FALLBACK_MMR,
    openInterestHistory,
    fundingRate8h: s.fundingPct8h[d]! / 100,
    longShortRatio: s.lsRatio[d]!,
    recentLiquidations: { longUsd: s.longLiq[d]! * price, shortUsd: s.shortLiq[d]! * price, hours: 24, coverage: 1 },
    liquidationDays,
  };
}

/** The baselines of the backtest, in the order they are reported. */
export const BASELINES = ["persistence", "mean_7d", "mean_7d_x_turnover", "turnover", "volatility", "funding", "long_short"] as const;
/** One baseline's name. */
export type Baseline = (typeof BASELINES)[number];

/**
 * The baselines of symbol-day `d`, each known at that day's close (issues 25 and 36): today's liquidations ÷ OI
 * (`persistence`), the mean over the last {@link LIQ_MEAN_DAYS} days of each day's liquidations ÷ OI (`mean_7d`),
 * that mean × today's volume ÷ OI (`mean_7d_x_turnover`), today's volume ÷ OI (`turnover`), the RMS of the last
 * {@link VOL_BASELINE_DAYS} daily log returns (`volatility`), |funding| and |long/short ratio − 1|.
 */
export function baselinesFor(s: SymbolSeries, d: number): Record<Baseline, number> {
  let v = 0;
  for (let k = d - VOL_BASELINE_DAYS + 1; k <= d; k++) {
    const r = Math.log(s.close[k]! / s.close[k - 1]!);
    v += r * r;
  }
  let mean = 0;
  for (let k = d - LIQ_MEAN_DAYS + 1; k <= d; k++) mean += (s.longLiq[k]! + s.shortLiq[k]!) / s.oi[k]! / LIQ_MEAN_DAYS;
  const turnover = s.volume[d]! / s.oi[d]!;
  return {
    persistence: (s.longLiq[d]! + s.shortLiq[d]!) / s.oi[d]!,
    mean_7d: mean,
    mean_7d_x_turnover: mean * turnover,
    turnover,
    volatility: Math.sqrt(v / VOL_BASELINE_DAYS),
    funding: Math.abs(s.fundingPct8h[d]!),
    long_short: Math.abs(s.lsRatio[d]! - 1),
  };
}

/** Next day's long + short liquidations ÷ the scored day's open interest (both base units), fraction. */
export function outcomeFor(s: SymbolSeries, d: number): number {
  return (s.longLiq[d + 1]! + s.shortLiq[d + 1]!) / s.oi[d]!;
}
