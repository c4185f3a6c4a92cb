/**
 * The cascade-risk forecast's inputs (src/analytics/cascade-risk.ts) from the liquidation heatmap's market inputs:
 * one definition for the hourly production path and the daily backtest (docs/methods/cascade-risk.md, "The
 * inputs"). Days are the 24 h blocks that end at the last candle's close (production: 24 hourly candles
 * each; the daily backtest: one daily candle each).
 */
import type { CascadeFeatures } from "./cascade-risk.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Days the 7-day means cover. */
export const FEATURE_DAYS = 7;

/** Liquidations of one 24 h block, both sides, USD, already scaled by the caller to every venue and to the whole 24 h. */
export interface LiquidationDay {
  /** End of the 24 h block, epoch ms. */
  end: number;
  usd: number;
}

/** What the features are computed from (a structural subset of the heatmap's input). */
export interface CascadeInputs {
  /** Current price, USD. */
  price: number;
  /** Total open interest (every venue), USD. */
  openInterestUsd: number;
  /** Candles of one venue, oldest first, equally spaced: open time, close (USD) and volume (USD). */
  candles: readonly { openTime: number; close: number; volumeUsd: number }[];
  /** That venue's open-interest history (coins or any unit proportional to contracts), oldest first. */
  openInterestHistory?: readonly { time: number; oi: number }[];
  fundingRate8h?: number | null;
  longShortRatio?: number | null;
  /** Realised liquidations of the live feeds over the last `hours` (`coverage`: the covered venues' share of OI). */
  recentLiquidations?: { longUsd: number; shortUsd: number; hours: number; coverage: number } | null;
  /** Realised liquidations per day over up to the last {@link FEATURE_DAYS} days (null or empty: no history). */
  liquidationDays?: readonly LiquidationDay[] | null;
}

/**
 * The forecast's inputs:
 * - liquidations: the live feeds' realised liquidations per 24 h (amounts ÷ coverage × 24 / hours) ÷ OI;
 * - liquidations7d: the mean over the last {@link FEATURE_DAYS} `liquidationDays` of each day's USD ÷ the total OI at
 *   that day's end (today's total OI × the candle venue's OI and price path; today's OI without a history);
 * - volatility: `longRunVol`, the heatmap's long-run daily volatility;
 * - turnover: the USD volume of the last 24 h of candles ÷ the open interest of the candles' venue (the last point of
 *   the OI history × the price), else ÷ `openInterestUsd` (then every venue's OI: an underestimate);
 * - turnover7d: the mean over the last {@link FEATURE_DAYS} days of candles of each day's volume ÷ the candle venue's
 *   OI at that day's end (the same fallback);
 * - funding and long/short: |rate per 8 h| and |ratio − 1|.
 */
export function cascadeFeaturesOf(input: CascadeInputs, candleHours: number, longRunVol: number | undefined): CascadeFeatures {
  const { openInterestUsd: oi, price } = input;
  const liqs = input.recentLiquidations;
  const liquidations =
    liqs && liqs.hours > 0 && liqs.coverage > 0 && oi > 0 ? (((Math.max(0, liqs.longUsd) + Math.max(0, liqs.shortUsd)) / liqs.coverage) * (24 / liqs.hours)) / oi : null;
  const usable = input.candles.filter((c) => c.close > 0 && c.volumeUsd >= 0);
  const hist = (input.openInterestHistory ?? []).filter((p) => p.oi > 0 && Number.isFinite(p.oi));
  const at = oiPath(usable, candleHours, hist, price);
  const venueOiUsdAt = (t: number): number => (hist.length ? at(t) : oi);
  const totalOiUsdAt = (t: number): number => (hist.length ? (oi * at(t)) / (hist[hist.length - 1]!.oi * price) : oi);

  let turnover: number | null = null;
  let turnover7d: number | null = null;
  if (usable.length) {
    const perDay = Math.max(1, Math.round(24 / candleHours));
    const volumeUsd = usable.slice(-perDay).reduce((s, c) => s + c.volumeUsd, 0) * (perDay / Math.min(perDay, usable.length));
    const venueOi = venueOiUsdAt(Infinity);
    turnover = venueOi > 0 ? volumeUsd / venueOi : null;
    const end = usable[usable.length - 1]!.openTime + candleHours * HOUR_MS;
    const days: number[] = [];
    for (let j = 0; j < FEATURE_DAYS; j++) {
      const to = end - j * DAY_MS;
      const mine = usable.filter((c) => c.openTime >= to - DAY_MS && c.openTime < to);
      const dayOi = venueOiUsdAt(to);
      if (mine.length && dayOi > 0) days.push((mine.reduce((s, c) => s + c.volumeUsd, 0) * (perDay / Math.min(perDay, mine.length))) / dayOi);
    }
    turnover7d = days.length ? days.reduce((s, x) => s + x, 0) / days.length : null;
  }

  const liqDays = [...(input.liquidationDays ?? [])].filter((d) => Number.isFinite(d.usd) && d.usd >= 0 && Number.isFinite(d.end)).sort((a, b) => a.end - b.end);
  const shares = liqDays
    .slice(-FEATURE_DAYS)
    .map((d) => ({ usd: d.usd, oi: totalOiUsdAt(d.end) }))
    .filter((d) => d.oi > 0)
    .map((d) => d.usd / d.oi);
  const liquidations7d = shares.length ? shares.reduce((s, x) => s + x, 0) / shares.length : null;

  const funding = typeof input.fundingRate8h === "number" && Number.isFinite(input.fundingRate8h) ? Math.abs(input.fundingRate8h) : null;
  const ratio = input.longShortRatio;
  const longShort = typeof ratio === "number" && ratio > 0 && Number.isFinite(ratio) ? Math.abs(ratio - 1) : null;
  return { liquidations, liquidations7d, volatility: longRunVol ?? null, turnover, turnover7d, funding, longShort };
}

/**
 * The candle venue's open interest in USD at time `t`: the last OI point at or before `t` (the first one before
 * every point) × the close of the last candle ended by `t` (the current price before every candle). `Infinity`
 * gives the last point × the current price.
 */
function oiPath(candles: readonly { openTime: number; close: number }[], candleHours: number, hist: readonly { time: number; oi: number }[], price: number): (t: number) => number {
  return (t) => {
    if (!hist.length) return NaN;
    if (t === Infinity) return hist[hist.length - 1]!.oi * price;
    let p = hist[0]!;
    for (const h of hist) if (h.time <= t) p = h;
    let close = price;
    for (const c of candles) if (c.openTime + candleHours * HOUR_MS <= t) close = c.close;
    return p.oi * close;
  };
}
