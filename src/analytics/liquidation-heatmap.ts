import { median } from "simple-statistics";
import { cascadeFeaturesOf, type LiquidationDay } from "./cascade-features.js";
import { CASCADE_MODEL, cascadeForecast, type CascadeFeatures, type CascadeForecast, type CascadeModel, type CascadeRisk } from "./cascade-risk.js";

export type { CascadeRisk } from "./cascade-risk.js";

/**
 * Liquidation heatmap: an ESTIMATE of where open interest would be liquidated, from public data only (no
 * venue publishes its positions' leverage). Pure: inputs in, estimate out, so that it can be replayed on
 * recordings (`npm run backtest:heatmap`). Method, inputs, calibration and known limits:
 * docs/methods/liquidation-heatmap.md. In short:
 *
 * 1. Sides. Every open contract has a long and a short holder, so longs and shorts each hold the whole
 *    open interest; each side is judged on its own (a cascade runs one way).
 * 2. Cohorts. Positions are opened in the candles of the last {@link ENTRY_WINDOW_HOURS} hours at the
 *    candle's typical price (high + low + close) / 3. Opened notional per candle: with an open-interest
 *    history, the steady replacement of closed positions (spread by the candle's volume share) plus the
 *    candle's OI increase; an OI decrease first unwinds the latest increases, then closes earlier cohorts pro
 *    rata. Without one, the candle's USD volume.
 *    Positions opened before the window form one more cohort (the tail: the opening rate of the window's
 *    start for every earlier candle) at the first candle's price, so that a short history does not
 *    overweight recent, high-leverage entries.
 * 3. Leverage. Opened notional is split over 2x…100x by {@link OPEN_LEVERAGE_MIX} (the split that yields
 *    {@link OI_LEVERAGE_MIX} of open interest at steady state), moved to lower leverage where the symbol's
 *    long-run volatility exceeds {@link REFERENCE_DAILY_VOL} and to higher leverage where it is below
 *    ({@link rescaleLeverage}). On the crowded side (funding above its neutral 0.01%/8h, long/short ratio
 *    above 1) the 25x–100x share is up to twice as large, on the other side down to half ({@link crowding}).
 *    Realised liquidations, when a live feed has them, scale the 25x–100x share per side by
 *    √(realised / modelled liquidations of the same hours), within [0.5, 2]. A tier the venues do not allow
 *    gives its share to the highest allowed tier below it.
 * 4. Survival. A cell (cohort × leverage × side) whose liquidation price a later candle (or the current
 *    price) reached is gone. Survivors decay with a holding half-life per leverage
 *    ({@link HOLDING_HALF_LIFE_HOURS}: high leverage is held for hours, low leverage for days). The
 *    survivors of each side are scaled to the measured open interest (it is measured after those
 *    liquidations); removed cells are near the price, so the OI at risk falls when they go.
 * 5. Liquidation price (isolated, linear, fees ignored): long = entry × (1 − 1/L) / (1 − MMR),
 *    short = entry × (1 + 1/L) / (1 + MMR), with the MMR of the smallest tier allowing leverage L.
 * 6. Risk, relative to the market's own volatility σ (one day's move, from the candles): for each side,
 *    the OI whose liquidation level lies within one day's 1σ move of the price (near band) and within 2σ
 *    (wide band). `oi_at_risk_pct` is the near-band share of the riskier side: what an ordinary adverse day
 *    would liquidate. Cascade risk is `high` when that share exceeds {@link HIGH_NEAR_SHARE}, `medium` when
 *    at least {@link MEDIUM_WIDE_SHARE} lies within 2σ on either side, else `low`. The fixed 5% / 10% bands
 *    are reported too.
 */

/**
 * Leverage tiers of the heatmap: 5x, 10x, 25x, 50x and 100x (docs/methods/liquidation-heatmap.md), plus 2x for the low-leverage
 * open interest (≤ 3x: hedges, basis trades, well-collateralised accounts), so that the tiers hold all of it.
 */
export const LEVERAGE_TIERS = [2, 5, 10, 25, 50, 100] as const;
/** One leverage tier. */
export type LeverageTier = (typeof LEVERAGE_TIERS)[number];

/**
 * Assumed share of OPEN INTEREST per leverage tier when positions open at a steady rate and nothing is
 * liquidated, at the reference volatility {@link REFERENCE_DAILY_VOL} (sums to 1). Each tier stands for a
 * range of effective leverage: 2x for ≤ 3x, 5x for 3–7x, 10x for 7–17x, 25x for 17–37x, 50x for 37–75x,
 * 100x above. Anchor: a Hyperliquid snapshot of 2025-12-15 (PANews, on-chain analyst ai_9684xtpa) put 36% of
 * its open interest at 0–3x, 48% at 3–7x and 15% above 7x, falling off fast above 7x
 * (docs/methods/liquidation-heatmap.md, "Calibration"). The static estimate (no candles) uses it as is.
 */
export const OI_LEVERAGE_MIX: Readonly<Record<LeverageTier, number>> = { 2: 0.36, 5: 0.49, 10: 0.11, 25: 0.03, 50: 0.008, 100: 0.002 };

/** Assumed holding half-life of a position per leverage tier, hours: high leverage is held briefly. */
export const HOLDING_HALF_LIFE_HOURS: Readonly<Record<LeverageTier, number>> = { 2: 96, 5: 48, 10: 24, 25: 12, 50: 6, 100: 3 };

/**
 * Share of newly OPENED notional per tier that yields {@link OI_LEVERAGE_MIX} in the steady state:
 * OI share ÷ holding half-life, normalised (≈ 2x 15%, 5x 39%, 10x 16%, 25x 13%, 50x 10%, 100x 7%).
 */
export const OPEN_LEVERAGE_MIX: Readonly<Record<LeverageTier, number>> = (() => {
  const raw = LEVERAGE_TIERS.map((l) => OI_LEVERAGE_MIX[l] / HOLDING_HALF_LIFE_HOURS[l]);
  const total = raw.reduce((s, x) => s + x, 0);
  return Object.fromEntries(LEVERAGE_TIERS.map((l, i) => [l, raw[i]! / total])) as Record<LeverageTier, number>;
})();

/** Tiers whose share shifts with crowding and realised liquidations. */
const HIGH_TIERS: readonly LeverageTier[] = [25, 50, 100];

/** Look-back of the entry cohorts, hours (positions opened earlier form the tail cohort). */
export const ENTRY_WINDOW_HOURS = 168;
/** Maintenance-margin rate used when no venue's tier table could be read (Binance's and OKX's first tier for majors are 0.4%). */
export const FALLBACK_MMR = 0.005;

/** Neutral funding per 8 h (the 0.01% interest component): no crowding. */
export const NEUTRAL_FUNDING_8H = 0.0001;
/** Funding excess per 8 h that reads as strongly crowded (tanh(1) ≈ 0.76). */
export const FUNDING_CROWDING_SCALE_8H = 0.0004;
/** High-leverage share multiplier on the crowded side at full crowding (the other side gets its inverse). */
export const CROWDING_LEVERAGE_FACTOR = 2;

/** Half-life of the volatility estimate's weights for the risk bands, hours. */
export const VOLATILITY_HALF_LIFE_HOURS = 12;
/** Half-life of the longer-run volatility the leverage split scales with, hours. */
export const LEVERAGE_VOL_HALF_LIFE_HOURS = 168;
/**
 * Daily volatility at which {@link OI_LEVERAGE_MIX} applies (BTC/ETH-like, the bulk of the anchor's notional).
 * Traders use less leverage where prices move more: a symbol with long-run daily volatility σ gets each
 * tier's share moved to leverage L × {@link REFERENCE_DAILY_VOL} / σ ({@link rescaleLeverage}), within
 * {@link LEVERAGE_VOL_SCALE_BOUNDS}.
 */
export const REFERENCE_DAILY_VOL = 0.03;
export const LEVERAGE_VOL_SCALE_BOUNDS: readonly [number, number] = [0.25, 1];
/** Daily volatility assumed when the candles cannot give one (fewer than 4 candles). */
export const FALLBACK_DAILY_VOL = 0.03;
/** Bounds of the near (1σ) and wide (2σ) bands, fractions of the price. */
export const NEAR_BAND_BOUNDS: readonly [number, number] = [0.005, 0.075];
export const WIDE_BAND_BOUNDS: readonly [number, number] = [0.01, 0.15];

/** Fixed bands reported for reference (docs/methods/liquidation-heatmap.md), fractions of the price. */
export const FIXED_NEAR_BAND = 0.05;
export const FIXED_WIDE_BAND = 0.1;

/**
 * Structural thresholds of the near (1σ) and wide (2σ) bands, fractions of OI. They no longer decide
 * `cascade_risk` (the forecast below does, docs/methods/cascade-risk.md); they are kept
 * for the reason text and for replays of earlier calibrations.
 */
export const HIGH_NEAR_SHARE = 0.035;
export const MEDIUM_WIDE_SHARE = 0.05;

/** Realised-liquidation feedback: prior (fraction of OI) added to realised and modelled amounts, and the factor bounds. */
export const FEEDBACK_PRIOR_SHARE = 0.002;
export const FEEDBACK_BOUNDS: readonly [number, number] = [0.5, 2];

const HOUR_MS = 3_600_000;

/** Position side. */
export type Side = "long" | "short";

/** A candle as the model reads it (USD per coin, USD volume). Hourly in the service; any fixed length works. */
export interface EntryCandle {
  openTime: number;
  high: number;
  low: number;
  close: number;
  volumeUsd: number;
}

/** Open interest at `time` (epoch ms) in coins, or any unit proportional to the number of contracts. */
export interface OiPoint {
  time: number;
  oi: number;
}

/** Liquidations a live feed recorded for the symbol over the last `hours`. */
export interface RecentLiquidations {
  /** USD of long positions liquidated. */
  longUsd: number;
  /** USD of short positions liquidated. */
  shortUsd: number;
  /** Window, hours (the model compares with what its own levels say was liquidated in that window). */
  hours: number;
  /** Share of open interest on the venues the feed covers, (0, 1]: the amounts are divided by it. */
  coverage: number;
}

/** Inputs of {@link liquidationHeatmap}. Only the first four are required. */
export interface HeatmapInput {
  /** Current (mark) price, USD. */
  price: number;
  /** Total open interest, USD. */
  openInterestUsd: number;
  /** Candles, oldest first, equally spaced; the last may be the current partial one. Empty → static estimate. */
  candles: readonly EntryCandle[];
  /** Maintenance-margin rate per allowed leverage tier; tiers absent from the map are not allowed for the symbol. */
  mmrByLeverage: ReadonlyMap<number, number>;
  /** Candle length in hours (default: the median spacing of `openTime`, else 1). */
  candleHours?: number;
  /** Open-interest history (any spacing, oldest first). Absent → cohorts weighted by volume. */
  openInterestHistory?: readonly OiPoint[];
  /** Current funding rate per 8 h (median over venues, fraction). */
  fundingRate8h?: number | null;
  /** Long/short ratio (long ÷ short; mean over venues). */
  longShortRatio?: number | null;
  /** Realised liquidations of a live feed. */
  recentLiquidations?: RecentLiquidations | null;
  /**
   * Realised liquidations per day over up to the last 7 days (the cascade-risk forecast's liquidation history,
   * src/analytics/cascade-features.ts); absent or empty: the forecast runs without it.
   */
  liquidationDays?: readonly LiquidationDay[] | null;
  /** Cascade-risk model (default: the production coefficients of src/analytics/cascade-risk.ts; the daily backtest passes its walk-forward fits). */
  cascadeModel?: CascadeModel;
}

/** One (side, leverage) cluster: where its surviving positions would be liquidated on average. */
export interface LeverageCluster {
  leverage: string;
  side: Side;
  /** OI-weighted mean liquidation price of the cluster, USD. */
  liquidation_price: number;
  /** (liquidation price − current price) / current price × 100: negative below (longs), positive above (shorts). */
  distance_pct: number;
  /** Surviving open interest of the cluster, USD. */
  oi_at_risk_usd: number;
  /** OI-weighted mean entry price of the cluster, USD. */
  entry_price: number;
  maintenance_margin_rate: number;
}

/** OI of one side with liquidation levels within each band, USD. */
export interface SideAtRisk {
  /** Within one day's 1σ move (the near band; what `near_band_oi_pct` reports for the riskier side). */
  within_1_sigma: number;
  /** Within one day's 2σ move (the wide band). */
  within_2_sigma: number;
  /** Within 5% and 10% of the price (fixed bands, for reference). */
  within_5_pct: number;
  within_10_pct: number;
}

/** Risk summary (docs/methods/liquidation-heatmap.md) plus the per-side numbers it was decided from. */
export interface RiskSummary {
  /** Forecast liquidations of the next 24 h (src/analytics/cascade-risk.ts) × open interest, USD. */
  total_oi_at_risk_usd: number;
  /** Forecast share of open interest liquidated over the next 24 h, percent (what liquidation alerts compare with `threshold_pct`). */
  oi_at_risk_pct: number;
  /** Level of that forecast (thresholds from the daily backtest, docs/methods/cascade-risk.md). */
  cascade_risk: CascadeRisk;
  cascade_risk_reason: string;
  /** Which coefficient set the forecast used (with or without a liquidation history). */
  forecast_coefficients: CascadeForecast["coefficients"];
  /** Share of OI of the dominant side with liquidation levels within one day's 1σ move, percent (structural estimate). */
  near_band_oi_pct: number;
  /** Level of the structural bands alone (more than {@link HIGH_NEAR_SHARE} within 1σ: high; {@link MEDIUM_WIDE_SHARE} within 2σ: medium). */
  structural_risk: CascadeRisk;
  /** Side with the most OI within one day's 1σ move (ties: within 2σ). */
  dominant_side: Side;
  /** Daily volatility the bands derive from, percent. */
  daily_volatility_pct: number;
  /** Near (1σ) and wide (2σ) band half-widths, percent of the price. */
  near_band_pct: number;
  wide_band_pct: number;
  long_oi_at_risk_usd: SideAtRisk;
  short_oi_at_risk_usd: SideAtRisk;
}

/** What the estimate was built from (for the `method` block and the backtest). */
export interface HeatmapInputsUsed {
  /** Candle length, hours. */
  candleHours: number;
  /** Where the daily volatility came from. */
  volatilitySource: "candles" | "fallback";
  /** Whether cohorts were sized by open-interest changes (else by volume). */
  entriesFrom: "open_interest_changes" | "volume" | "static";
  /** Crowding in [−1, 1]: > 0 longs crowded (funding and long/short ratio), 0 when neither is known. */
  crowding: number;
  fundingRate8h: number | null;
  longShortRatio: number | null;
  /** Multiplier applied to the 25x–100x share per side from realised liquidations, with the window and coverage used (null: no feed). */
  liquidationFeedback: { long: number; short: number; hours: number; coverage: number } | null;
  /** Long-run daily volatility (fraction) and the leverage scale it gave (1 without candles). */
  longRunDailyVol: number | null;
  leverageScale: number;
  /** Leverage split of opened notional per side after volatility scaling, crowding and feedback (allowed tiers only). */
  openMix: Record<Side, Partial<Record<LeverageTier, number>>>;
  /** The cascade-risk forecast's inputs (src/analytics/cascade-risk.ts). */
  cascadeFeatures: CascadeFeatures;
}

/** One surviving cell (entry cohort × leverage × side) of the estimate. */
export interface LiquidationLevel {
  side: Side;
  leverage: LeverageTier;
  entry: number;
  liquidationPrice: number;
  /** Estimated open interest of the cell, USD. */
  usd: number;
}

/** Output of {@link liquidationHeatmap}. */
export interface Heatmap {
  clusters: LeverageCluster[];
  /** Every surviving cell (what the clusters average; the backtest replays them against later prices). */
  levels: LiquidationLevel[];
  risk: RiskSummary;
  /** Number of entry candles used (0 = static estimate at the current price). */
  entryHours: number;
  inputs: HeatmapInputsUsed;
}

/** Liquidation price of an isolated linear position (fees ignored; the exact linear form of docs/methods/liquidation-heatmap.md, "Method"). */
export function liquidationPrice(entry: number, leverage: number, mmr: number, side: Side): number {
  return side === "long" ? (entry * (1 - 1 / leverage)) / (1 - mmr) : (entry * (1 + 1 / leverage)) / (1 + mmr);
}

/**
 * Structural level from the dominant side's at-risk shares (fractions of OI) within one day's 1σ move (`near`)
 * and 2σ move (`wide`): high above {@link HIGH_NEAR_SHARE} near, medium from {@link MEDIUM_WIDE_SHARE} wide.
 * Reported as `structural_risk`; `cascade_risk` is the forecast's level.
 */
export function structuralRisk(nearShare: number, wideShare: number): CascadeRisk {
  if (nearShare > HIGH_NEAR_SHARE) return "high";
  if (wideShare >= MEDIUM_WIDE_SHARE) return "medium";
  return "low";
}

/**
 * Crowding in [−1, 1] (> 0: longs crowded): 0.6 × tanh((funding − 0.01%) / 0.04%) per 8 h plus
 * 0.4 × tanh(log₂ long/short ratio), renormalised over the inputs given; 0 without either.
 */
export function crowding(fundingRate8h?: number | null, longShortRatio?: number | null): number {
  let sum = 0;
  let weight = 0;
  if (typeof fundingRate8h === "number" && Number.isFinite(fundingRate8h)) {
    sum += 0.6 * Math.tanh((fundingRate8h - NEUTRAL_FUNDING_8H) / FUNDING_CROWDING_SCALE_8H);
    weight += 0.6;
  }
  if (typeof longShortRatio === "number" && longShortRatio > 0 && Number.isFinite(longShortRatio)) {
    sum += 0.4 * Math.tanh(Math.log2(longShortRatio));
    weight += 0.4;
  }
  return weight > 0 ? sum / weight : 0;
}

/** Median spacing of the candles' open times in hours (1 when fewer than two candles). */
export function candleHoursOf(candles: readonly EntryCandle[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < candles.length; i++) {
    const g = (candles[i]!.openTime - candles[i - 1]!.openTime) / HOUR_MS;
    if (g > 0) gaps.push(g);
  }
  return gaps.length ? median(gaps) : 1;
}

/**
 * One day's volatility (standard deviation of the daily log return) from the candles: the mean of the
 * close-to-close and the high-low (Parkinson) variance per candle, each weighted by age with a
 * `halfLifeHours` half-life (default {@link VOLATILITY_HALF_LIFE_HOURS}), scaled to 24 h; close-to-close alone when no
 * candle has a range. Undefined with fewer than 4 candles.
 */
export function dailyVolatility(candles: readonly EntryCandle[], candleHours = candleHoursOf(candles), halfLifeHours = VOLATILITY_HALF_LIFE_HOURS): number | undefined {
  const cs = candles.filter((c) => c.high > 0 && c.low > 0 && c.close > 0);
  if (cs.length < 4) return undefined;
  const lastOpen = cs[cs.length - 1]!.openTime;
  let cc = 0;
  let ccW = 0;
  let hl = 0;
  let hlW = 0;
  let anyRange = false;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    const w = 2 ** (-(lastOpen - c.openTime) / HOUR_MS / halfLifeHours);
    const range = Math.log(c.high / c.low);
    hl += (w * range * range) / (4 * Math.LN2);
    hlW += w;
    if (range > 0) anyRange = true;
    if (i > 0) {
      const r = Math.log(c.close / cs[i - 1]!.close);
      cc += w * r * r;
      ccW += w;
    }
  }
  // Candles without any range (high = low throughout: a close-only series such as daily aggregates) carry no
  // high-low information: close-to-close alone.
  const perCandle = anyRange ? (cc / ccW + hl / hlW) / 2 : cc / ccW;
  const daily = Math.sqrt((perCandle * 24) / candleHours);
  return Number.isFinite(daily) && daily > 0 ? daily : undefined;
}

/** An entry cohort: notional opened in one candle, in relative units. */
interface Cohort {
  price: number;
  weight: number;
  /** Age at the current time; for the tail, the age of its youngest positions. */
  ageHours: number;
  /** Index of its candle (later candles decide survival); −1 for the tail. */
  index: number;
  /** The positions opened before the window (one candle's weight per earlier candle). */
  tail?: boolean;
}

interface Series {
  cohorts: Cohort[];
  candleHours: number;
  lows: number[];
  highs: number[];
  openTimes: number[];
  entriesFrom: HeatmapInputsUsed["entriesFrom"];
}

/** Open interest at time `t`: the last point at or before it (the first point before the history starts). */
function oiAt(history: readonly OiPoint[], t: number): number {
  let lo = 0;
  let hi = history.length - 1;
  if (t < history[0]!.time) return history[0]!.oi;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (history[mid]!.time <= t) lo = mid;
    else hi = mid - 1;
  }
  return history[lo]!.oi;
}

/** Cohorts from the candles (module comment, step 2). */
function cohorts(input: HeatmapInput, candleHours: number): Series {
  const { price } = input;
  const windowCandles = Math.max(1, Math.round(ENTRY_WINDOW_HOURS / candleHours));
  const usable = input.candles.filter((c) => c.high > 0 && c.low > 0 && c.close > 0 && c.volumeUsd >= 0).slice(-windowCandles);
  if (usable.length === 0) {
    return { cohorts: [{ price, weight: 1, ageHours: 0, index: 0 }], candleHours, lows: [], highs: [], openTimes: [], entriesFrom: "static" };
  }
  const n = usable.length;
  const lastOpen = usable[n - 1]!.openTime;
  const meanVol = usable.reduce((s, c) => s + c.volumeUsd, 0) / n;
  const volShare = (c: EntryCandle) => (meanVol > 0 ? c.volumeUsd / meanVol : 1);
  const history = (input.openInterestHistory ?? []).filter((p) => p.oi > 0 && Number.isFinite(p.oi) && Number.isFinite(p.time));
  const weights: number[] = new Array<number>(n).fill(0);
  let entriesFrom: Series["entriesFrom"] = "volume";
  // Opening rate per candle of the positions held before the window (the tail, below).
  let tailWeight: number;
  if (history.length >= 2) {
    entriesFrom = "open_interest_changes";
    // Steady replacement of closed positions per candle, as a fraction of OI.
    const churn = LEVERAGE_TIERS.reduce((s, l) => s + (OI_LEVERAGE_MIX[l] * Math.LN2) / HOLDING_HALF_LIFE_HOURS[l], 0) * candleHours;
    const end = (c: EntryCandle) => c.openTime + candleHours * HOUR_MS;
    let prev = oiAt(history, usable[0]!.openTime);
    tailWeight = churn * prev;
    const buildUp: number[] = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      const c = usable[i]!;
      const now = oiAt(history, end(c));
      const delta = now - prev;
      if (delta < 0 && prev > 0) {
        // A net fall first unwinds the latest build-ups (round trips of short-term traders), then closes
        // every position held so far pro rata.
        let rem = -delta;
        for (let j = i - 1; j >= 0 && rem > 0; j--) {
          const take = Math.min(rem, buildUp[j]!);
          buildUp[j]! -= take;
          weights[j]! -= take;
          rem -= take;
        }
        if (rem > 0) {
          const keep = Math.max(0, 1 - rem / prev);
          for (let j = 0; j < i; j++) {
            weights[j]! *= keep;
            buildUp[j]! *= keep;
          }
          tailWeight *= keep;
        }
      }
      buildUp[i] = Math.max(0, delta);
      weights[i] = churn * now * volShare(c) + buildUp[i]!;
      prev = now;
    }
  } else {
    for (let i = 0; i < n; i++) weights[i] = usable[i]!.volumeUsd;
    // A window without volume still has prices: weigh the candles equally.
    if (!(weights.reduce((s, w) => s + w, 0) > 0)) weights.fill(1);
    tailWeight = weights.reduce((s, w) => s + w, 0) / n;
  }
  const list: Cohort[] = usable.map((c, i) => ({
    price: (c.high + c.low + c.close) / 3,
    weight: weights[i]!,
    ageHours: (lastOpen - c.openTime) / HOUR_MS + candleHours / 2,
    index: i,
  }));
  // Positions opened before the window: every earlier candle at the mean opening rate, placed at the first
  // candle's price (their entries are unknown), so that a short window does not overweight recent leverage.
  const first = usable[0]!;
  list.unshift({ price: (first.high + first.low + first.close) / 3, weight: tailWeight, ageHours: (lastOpen - first.openTime) / HOUR_MS + candleHours, index: -1, tail: true });
  return {
    cohorts: list,
    candleHours,
    lows: usable.map((c) => c.low),
    highs: usable.map((c) => c.high),
    openTimes: usable.map((c) => c.openTime),
    entriesFrom,
  };
}

interface Cell {
  lev: LeverageTier;
  entry: number;
  liq: number;
  /** Surviving weight (0 when liquidated). */
  w: number;
  /** Weight it would have had if not liquidated, when it was liquidated within the feedback window. */
  recent: number;
}

/** Cells of one side for a leverage split (module comment, steps 3–5). */
function sideCells(side: Side, series: Series, mix: Partial<Record<LeverageTier, number>>, mmr: ReadonlyMap<number, number>, price: number, feedbackFrom: number): Cell[] {
  const cells: Cell[] = [];
  const staticCase = series.entriesFrom === "static";
  const n = series.lows.length;
  for (const co of series.cohorts) {
    for (const lev of LEVERAGE_TIERS) {
      const share = mix[lev];
      if (share === undefined || !(share > 0)) continue;
      const liq = liquidationPrice(co.price, lev, mmr.get(lev)!, side);
      // Survival: the first later candle (or the current price) beyond the level liquidated the cell.
      let crossedAt = -1;
      for (let j = co.index + 1; j < n && !staticCase; j++) {
        if (side === "long" ? series.lows[j]! <= liq : series.highs[j]! >= liq) {
          crossedAt = j;
          break;
        }
      }
      const goneNow = side === "long" ? price <= liq : price >= liq;
      const h = HOLDING_HALF_LIFE_HOURS[lev];
      // The tail sums the survivors of every earlier candle: ∫ 2^(−a/h) da from its age on, in candles.
      const decay = staticCase ? h : 2 ** (-co.ageHours / h) * (co.tail ? h / (Math.LN2 * series.candleHours) : 1);
      const w = co.weight * share * decay;
      const gone = crossedAt >= 0 || goneNow;
      const recent = gone && (crossedAt < 0 || series.openTimes[crossedAt]! >= feedbackFrom) ? w : 0;
      cells.push({ lev, entry: co.price, liq, w: gone ? 0 : w, recent });
    }
  }
  return cells;
}

/**
 * Moves each tier's share to leverage L × `f` (volatility scaling), split between the two tiers that bracket
 * it in log-leverage; shares beyond the grid stay at its ends.
 */
export function rescaleLeverage(mix: Readonly<Record<LeverageTier, number>>, f: number): Record<LeverageTier, number> {
  const out = Object.fromEntries(LEVERAGE_TIERS.map((l) => [l, 0])) as Record<LeverageTier, number>;
  const logs = LEVERAGE_TIERS.map((l) => Math.log(l));
  for (const l of LEVERAGE_TIERS) {
    const target = Math.log(l * f);
    const w = mix[l];
    if (target <= logs[0]!) out[LEVERAGE_TIERS[0]] += w;
    else if (target >= logs[logs.length - 1]!) out[LEVERAGE_TIERS[LEVERAGE_TIERS.length - 1]!] += w;
    else {
      let k = 0;
      while (logs[k + 1]! <= target) k++;
      const a = (target - logs[k]!) / (logs[k + 1]! - logs[k]!);
      out[LEVERAGE_TIERS[k]!] += w * (1 - a);
      out[LEVERAGE_TIERS[k + 1]!] += w * a;
    }
  }
  return out;
}

/**
 * Opened-notional split of one side (module comment, step 3): {@link OPEN_LEVERAGE_MIX} scaled to the
 * symbol's volatility ({@link rescaleLeverage} by `volScale`), the 25x–100x shares × crowding tilt × `feedback`,
 * and the share of a tier the venues do not allow moved to the highest allowed tier below it.
 */
function openMix(tiers: readonly LeverageTier[], side: Side, crowd: number, feedback: number, volScale: number): Partial<Record<LeverageTier, number>> {
  const tilt = CROWDING_LEVERAGE_FACTOR ** (side === "long" ? crowd : -crowd);
  const scaled = rescaleLeverage(OPEN_LEVERAGE_MIX, volScale);
  const out: Partial<Record<LeverageTier, number>> = {};
  if (!tiers.length) return out;
  for (const l of LEVERAGE_TIERS) {
    const w = scaled[l] * (HIGH_TIERS.includes(l) ? tilt * feedback : 1);
    const to = [...tiers].reverse().find((t) => t <= l) ?? tiers[0]!;
    out[to] = (out[to] ?? 0) + w;
  }
  const total = Object.values(out).reduce((s, x) => s + x, 0);
  for (const l of tiers) out[l] = (out[l] ?? 0) / total;
  return out;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * The heatmap estimate (module comment). Pure: the same input gives the same output.
 * @throws RangeError when `price` is not a positive finite number or `openInterestUsd` is negative.
 */
export function liquidationHeatmap(input: HeatmapInput): Heatmap {
  const { price, openInterestUsd: oi } = input;
  if (!(price > 0 && Number.isFinite(price))) throw new RangeError("price must be positive");
  if (!(oi >= 0 && Number.isFinite(oi))) throw new RangeError("open interest must be non-negative");
  const tiers = LEVERAGE_TIERS.filter((l) => input.mmrByLeverage.has(l));
  const candleHours = input.candleHours && input.candleHours > 0 ? input.candleHours : candleHoursOf(input.candles);
  const series = cohorts(input, candleHours);
  const crowd = crowding(input.fundingRate8h, input.longShortRatio);

  const liqs = input.recentLiquidations;
  const useFeedback = !!liqs && liqs.hours > 0 && liqs.coverage > 0 && series.entriesFrom !== "static" && oi > 0;
  const lastOpen = series.openTimes[series.openTimes.length - 1] ?? 0;
  const feedbackFrom = useFeedback ? lastOpen + candleHours * HOUR_MS - liqs.hours * HOUR_MS : Infinity;

  const windowed = input.candles.slice(-Math.max(4, Math.round(ENTRY_WINDOW_HOURS / candleHours)));
  const vol = series.entriesFrom === "static" ? undefined : dailyVolatility(windowed, candleHours);
  const longVol = series.entriesFrom === "static" ? undefined : dailyVolatility(windowed, candleHours, LEVERAGE_VOL_HALF_LIFE_HOURS);
  const volScale = longVol === undefined ? 1 : clamp(REFERENCE_DAILY_VOL / longVol, LEVERAGE_VOL_SCALE_BOUNDS[0], LEVERAGE_VOL_SCALE_BOUNDS[1]);

  const cellsOf = (side: Side, fb: number) => {
    const mix = openMix(tiers, side, crowd, fb, volScale);
    return { mix, cells: sideCells(side, series, mix, input.mmrByLeverage, price, feedbackFrom) };
  };
  let long = cellsOf("long", 1);
  let short = cellsOf("short", 1);
  let feedback: HeatmapInputsUsed["liquidationFeedback"] = null;
  if (useFeedback) {
    // Modelled liquidations of the window in USD (survivors scale to OI) against the realised ones.
    const factor = (cells: Cell[], realisedUsd: number) => {
      const alive = cells.reduce((s, c) => s + c.w, 0);
      const modelled = alive > 0 ? (oi * cells.reduce((s, c) => s + c.recent, 0)) / alive : 0;
      const prior = FEEDBACK_PRIOR_SHARE * oi;
      return clamp(Math.sqrt((Math.max(0, realisedUsd) / liqs.coverage + prior) / (modelled + prior)), FEEDBACK_BOUNDS[0], FEEDBACK_BOUNDS[1]);
    };
    feedback = { long: factor(long.cells, liqs.longUsd), short: factor(short.cells, liqs.shortUsd), hours: liqs.hours, coverage: liqs.coverage };
    long = cellsOf("long", feedback.long);
    short = cellsOf("short", feedback.short);
  }

  const features = cascadeFeaturesOf(input, candleHours, longVol);
  const forecast = cascadeForecast(features, input.cascadeModel);

  const sigma = vol ?? FALLBACK_DAILY_VOL;
  const nearBand = clamp(sigma, NEAR_BAND_BOUNDS[0], NEAR_BAND_BOUNDS[1]);
  const wideBand = clamp(2 * sigma, WIDE_BAND_BOUNDS[0], WIDE_BAND_BOUNDS[1]);

  const levels: LiquidationLevel[] = [];
  for (const [side, { cells }] of [
    ["long", long],
    ["short", short],
  ] as const) {
    const alive = cells.reduce((s, c) => s + c.w, 0);
    if (!(alive > 0)) continue;
    for (const c of cells) if (c.w > 0) levels.push({ side, leverage: c.lev, entry: c.entry, liquidationPrice: c.liq, usd: (oi * c.w) / alive });
  }

  const clusters: LeverageCluster[] = [];
  const atRisk: Record<Side, SideAtRisk> = {
    long: { within_1_sigma: 0, within_2_sigma: 0, within_5_pct: 0, within_10_pct: 0 },
    short: { within_1_sigma: 0, within_2_sigma: 0, within_5_pct: 0, within_10_pct: 0 },
  };
  for (const [side, { cells }] of [
    ["long", long],
    ["short", short],
  ] as const) {
    const alive = cells.reduce((s, c) => s + c.w, 0);
    if (!(alive > 0)) continue;
    const r = atRisk[side];
    for (const c of cells) {
      if (!(c.w > 0)) continue;
      const usd = (oi * c.w) / alive;
      const dist = Math.abs(c.liq - price) / price;
      if (dist <= nearBand) r.within_1_sigma += usd;
      if (dist <= wideBand) r.within_2_sigma += usd;
      if (dist <= FIXED_NEAR_BAND) r.within_5_pct += usd;
      if (dist <= FIXED_WIDE_BAND) r.within_10_pct += usd;
    }
    for (const lev of tiers) {
      const mine = cells.filter((c) => c.lev === lev && c.w > 0);
      const w = mine.reduce((s, c) => s + c.w, 0);
      if (!(w > 0)) continue;
      const liq = mine.reduce((s, c) => s + c.liq * c.w, 0) / w;
      clusters.push({
        leverage: `${lev}x`,
        side,
        liquidation_price: liq,
        distance_pct: ((liq - price) / price) * 100,
        oi_at_risk_usd: (oi * w) / alive,
        entry_price: mine.reduce((s, c) => s + c.entry * c.w, 0) / w,
        maintenance_margin_rate: input.mmrByLeverage.get(lev)!,
      });
    }
  }
  clusters.sort((a, b) => Math.abs(a.distance_pct) - Math.abs(b.distance_pct));
  return {
    clusters,
    levels,
    risk: riskSummary(oi, atRisk, sigma, nearBand, wideBand, vol === undefined, forecast, features, input.cascadeModel ?? CASCADE_MODEL),
    entryHours: series.entriesFrom === "static" ? 0 : series.lows.length,
    inputs: {
      candleHours,
      volatilitySource: vol === undefined ? "fallback" : "candles",
      entriesFrom: series.entriesFrom,
      crowding: crowd,
      fundingRate8h: typeof input.fundingRate8h === "number" && Number.isFinite(input.fundingRate8h) ? input.fundingRate8h : null,
      longShortRatio: typeof input.longShortRatio === "number" && input.longShortRatio > 0 ? input.longShortRatio : null,
      liquidationFeedback: feedback,
      longRunDailyVol: longVol ?? null,
      leverageScale: volScale,
      openMix: { long: long.mix, short: short.mix },
      cascadeFeatures: features,
    },
  };
}

function riskSummary(
  oi: number,
  atRisk: Record<Side, SideAtRisk>,
  sigma: number,
  nearBand: number,
  wideBand: number,
  fallbackVol: boolean,
  forecast: CascadeForecast,
  features: CascadeFeatures,
  model: CascadeModel,
): RiskSummary {
  const { long, short } = atRisk;
  const dominant: Side =
    short.within_1_sigma > long.within_1_sigma || (short.within_1_sigma === long.within_1_sigma && short.within_2_sigma > long.within_2_sigma) ? "short" : "long";
  const share = (usd: number) => (oi > 0 ? usd / oi : 0);
  const wideSide: Side = short.within_2_sigma > long.within_2_sigma ? "short" : "long";
  const near = share(atRisk[dominant].within_1_sigma);
  const wide = share(atRisk[wideSide].within_2_sigma);
  const structural = structuralRisk(near, wide);
  const where = (s: Side, band: number, k: number) => `${s} liquidation levels within ${fmtPct(band)} ${s === "long" ? "below" : "above"} the price (one day's ${k}σ move)`;
  const bound =
    forecast.level === "high"
      ? `high: at least ${fmtPct(model.highFrom)}`
      : forecast.level === "medium"
        ? `medium: ${fmtPct(model.mediumFrom)} to ${fmtPct(model.highFrom)}`
        : `low: under ${fmtPct(model.mediumFrom)}`;
  const x = (v: number | null, unit: (v: number) => string) => (v === null ? "unknown" : unit(v));
  const times = (v: number) => `${v.toFixed(2)}x`;
  const from =
    forecast.coefficients === "with_liquidations"
      ? `the last 7 days' liquidations (${x(features.liquidations7d, fmtPct)} of OI a day) × 24 h volume (${x(features.turnover, times)} OI)`
      : `no liquidation history: 24 h volume (${x(features.turnover, times)} OI), its 7-day mean (${x(features.turnover7d, times)}) and daily volatility (${x(features.volatility, fmtPct)})`;
  const reason = `${fmtPct(forecast.share)} of open interest forecast to be liquidated over the next 24 h (${bound}), from ${from}.`;
  const structure = ` Structure: ${fmtPct(near)} of open interest sits in ${where(dominant, nearBand, 1)} and ${fmtPct(wide)} within 2σ.`;
  const volNote = fallbackVol ? ` Band volatility assumed ${fmtPct(sigma)} (too few candles).` : "";
  return {
    total_oi_at_risk_usd: forecast.share * oi,
    oi_at_risk_pct: forecast.share * 100,
    cascade_risk: forecast.level,
    cascade_risk_reason: `Estimate: ${reason}${structure}${volNote}`,
    forecast_coefficients: forecast.coefficients,
    near_band_oi_pct: near * 100,
    structural_risk: structural,
    dominant_side: dominant,
    daily_volatility_pct: sigma * 100,
    near_band_pct: nearBand * 100,
    wide_band_pct: wideBand * 100,
    long_oi_at_risk_usd: long,
    short_oi_at_risk_usd: short,
  };
}

function fmtPct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/**
 * Maintenance-margin rate per leverage tier from the venues' tier tables (each sorted by notional): for
 * leverage L, each venue contributes the MMR of its smallest-notional tier allowing L; the median across
 * venues is used. A tier no venue allows is left out (the symbol cannot be traded at that leverage).
 * Without any table, every tier gets {@link FALLBACK_MMR}.
 */
export function mmrByLeverage(tables: ReadonlyArray<ReadonlyArray<{ maxLeverage: number; maintenanceMarginRate: number }>>): Map<number, number> {
  const out = new Map<number, number>();
  const usable = tables.filter((t) => t.length > 0);
  for (const lev of LEVERAGE_TIERS) {
    if (usable.length === 0) {
      out.set(lev, FALLBACK_MMR);
      continue;
    }
    const rates = usable.map((t) => t.find((tier) => tier.maxLeverage >= lev)?.maintenanceMarginRate).filter((r): r is number => r !== undefined && r > 0 && r < 1);
    if (rates.length) out.set(lev, median(rates));
  }
  return out;
}
