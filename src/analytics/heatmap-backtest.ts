/**
 * Backtest of the liquidation-heatmap estimate (docs/methods/liquidation-heatmap.md, "Backtest"): replays a
 * recording candle by candle, computes the estimate at each instant from what was known then, and scores
 * it against what happened next: realised liquidations when the recording has them (the simulator's tape),
 * else the later price path (how much of the estimated open interest the next hours actually crossed, and
 * the adverse move). Pure: recordings in, scores out (`bench/heatmap-backtest.ts` loads the recordings).
 */
import { quantile, sampleRankCorrelation } from "simple-statistics";
import {
  ENTRY_WINDOW_HOURS,
  liquidationHeatmap,
  type CascadeRisk,
  type EntryCandle,
  type Heatmap,
  type OiPoint,
  type RecentLiquidations,
  type Side,
} from "./liquidation-heatmap.js";

const HOUR_MS = 3_600_000;

/** Liquidations of one interval by liquidated side, USD. */
export interface LiquidationTotals {
  longUsd: number;
  shortUsd: number;
}

/** A recording the backtest replays. Times are epoch ms; functions are asked about the past only. */
export interface Recording {
  name: string;
  /** Candles, oldest first, equally spaced (`candleHours`). */
  candles: readonly EntryCandle[];
  candleHours: number;
  /** Maintenance-margin rate per allowed leverage tier. */
  mmrByLeverage: ReadonlyMap<number, number>;
  /** Total open interest in USD at a time (default: 1e9, when the recording has none: shares are unaffected). */
  openInterestUsd?: (t: number) => number;
  /** Open-interest history known at `t` (points ≤ t). */
  openInterestHistory?: (t: number) => readonly OiPoint[];
  /** Funding per 8 h in force at `t`. */
  fundingRate8h?: (t: number) => number | null;
  /** Long/short ratio at `t`. */
  longShortRatio?: (t: number) => number | null;
  /** Realised liquidations in [from, to), when the recording has them. */
  liquidations?: (from: number, to: number) => LiquidationTotals;
  /** Share of OI on the venues the liquidation record covers (for the model's feedback input). */
  liquidationCoverage?: number;
}

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Candles of history required before the first instant (default 48 h worth). */
  warmupHours?: number;
  /** Horizons over which outcomes are measured, hours (default [4, 24]). */
  horizonsHours?: readonly number[];
  /** Hours between instants (default: every candle). */
  stepHours?: number;
  /** Look-back of the realised-liquidation input of the model, hours (default 6; 0 = do not feed it). */
  feedbackHours?: number;
}

/** What happened over one horizon after an instant. */
export interface Outcome {
  hours: number;
  /** Move toward the dominant side's liquidations (down for longs, up for shorts), percent of the price. */
  adverseMovePct: number;
  /** Largest move either way, percent. */
  maxMovePct: number;
  /** Share of open interest (both sides) whose estimated liquidation level the path crossed, percent. */
  crossedPct: number;
  /** Same, dominant side only. */
  crossedDominantPct: number;
  /** Realised liquidations, percent of open interest (undefined without a liquidation record). */
  realisedPct?: number;
  /** Side with more realised liquidations (undefined when none or no record). */
  realisedSide?: Side;
}

/** One replayed instant. */
export interface Instant {
  time: number;
  price: number;
  level: CascadeRisk;
  oiAtRiskPct: number;
  nearPct: number;
  /** Riskier side's share within one day's 2σ move, percent. */
  widePct: number;
  dominantSide: Side;
  dailyVolPct: number;
  /** Volatility of the trailing 24 h (realised, close to close, daily units, percent): the calm/volatile split. */
  trailingVolPct: number;
  /** Long-run daily volatility the leverage split scaled with, percent (null without candles). */
  longRunVolPct: number | null;
  crowding: number;
  outcomes: Outcome[];
}

/** Replays `rec` (module comment). Instants without a full horizon ahead are skipped. */
export function replay(rec: Recording, opts: ReplayOptions = {}): Instant[] {
  const d = rec.candleHours;
  const horizons = opts.horizonsHours ?? [4, 24];
  const warm = Math.max(1, Math.round((opts.warmupHours ?? 48) / d));
  const step = Math.max(1, Math.round((opts.stepHours ?? d) / d));
  const maxAhead = Math.ceil(Math.max(...horizons) / d);
  const window = Math.round(ENTRY_WINDOW_HOURS / d);
  const feedbackHours = opts.feedbackHours ?? 6;
  const cs = rec.candles;
  const out: Instant[] = [];
  for (let k = warm - 1; k + maxAhead < cs.length; k += step) {
    const now = cs[k]!.openTime + d * HOUR_MS;
    const price = cs[k]!.close;
    const oi = rec.openInterestUsd?.(now) ?? 1e9;
    let recent: RecentLiquidations | null = null;
    if (rec.liquidations && feedbackHours > 0) {
      const l = rec.liquidations(now - feedbackHours * HOUR_MS, now);
      recent = { ...l, hours: feedbackHours, coverage: rec.liquidationCoverage ?? 1 };
    }
    const h = liquidationHeatmap({
      price,
      openInterestUsd: oi,
      candles: cs.slice(Math.max(0, k + 1 - window), k + 1),
      candleHours: d,
      mmrByLeverage: rec.mmrByLeverage,
      openInterestHistory: rec.openInterestHistory?.(now),
      fundingRate8h: rec.fundingRate8h?.(now) ?? null,
      longShortRatio: rec.longShortRatio?.(now) ?? null,
      recentLiquidations: recent,
    });
    const outcomes = horizons.map((hours) => outcome(h, cs, k, hours, d, price, oi, rec, now));
    out.push({
      time: now,
      price,
      // The structural estimate (bands), which this price-path replay can check; cascade_risk's forecast is
      // scored on real liquidations by the daily backtest (src/backtest/daily, docs/methods/liquidation-heatmap.md).
      level: h.risk.structural_risk,
      oiAtRiskPct: h.risk.near_band_oi_pct,
      nearPct: (Math.max(h.risk.long_oi_at_risk_usd.within_1_sigma, h.risk.short_oi_at_risk_usd.within_1_sigma) / (oi || 1)) * 100,
      widePct: (Math.max(h.risk.long_oi_at_risk_usd.within_2_sigma, h.risk.short_oi_at_risk_usd.within_2_sigma) / (oi || 1)) * 100,
      dominantSide: h.risk.dominant_side,
      dailyVolPct: h.risk.daily_volatility_pct,
      trailingVolPct: trailingVol(cs, k, d) * 100,
      longRunVolPct: h.inputs.longRunDailyVol === null ? null : h.inputs.longRunDailyVol * 100,
      crowding: h.inputs.crowding,
      outcomes,
    });
  }
  return out;
}

function outcome(h: Heatmap, cs: readonly EntryCandle[], k: number, hours: number, d: number, price: number, oi: number, rec: Recording, now: number): Outcome {
  const ahead = cs.slice(k + 1, k + 1 + Math.ceil(hours / d));
  const low = Math.min(...ahead.map((c) => c.low));
  const high = Math.max(...ahead.map((c) => c.high));
  const dom = h.risk.dominant_side;
  let crossed = 0;
  let crossedDom = 0;
  for (const l of h.levels) {
    const hit = l.side === "long" ? low <= l.liquidationPrice : high >= l.liquidationPrice;
    if (!hit) continue;
    crossed += l.usd;
    if (l.side === dom) crossedDom += l.usd;
  }
  const o: Outcome = {
    hours,
    adverseMovePct: (dom === "long" ? 1 - low / price : high / price - 1) * 100,
    maxMovePct: Math.max(1 - low / price, high / price - 1) * 100,
    // Each side holds the whole OI: both sides together are out of 2 × OI.
    crossedPct: oi > 0 ? (crossed / (2 * oi)) * 100 : 0,
    crossedDominantPct: oi > 0 ? (crossedDom / oi) * 100 : 0,
  };
  if (rec.liquidations) {
    const l = rec.liquidations(now, now + hours * HOUR_MS);
    o.realisedPct = oi > 0 ? ((l.longUsd + l.shortUsd) / oi) * 100 : 0;
    if (l.longUsd !== l.shortUsd) o.realisedSide = l.longUsd > l.shortUsd ? "long" : "short";
  }
  return o;
}

/** Realised volatility of the 24 h before candle `k` (close to close, scaled to a day), fraction. */
function trailingVol(cs: readonly EntryCandle[], k: number, d: number): number {
  const n = Math.max(2, Math.round(24 / d));
  const rs: number[] = [];
  for (let i = Math.max(1, k - n + 1); i <= k; i++) rs.push(Math.log(cs[i]!.close / cs[i - 1]!.close));
  if (!rs.length) return 0;
  return Math.sqrt((rs.reduce((s, r) => s + r * r, 0) / rs.length) * (24 / d));
}

/** Summary statistics of a replay. */
export interface BacktestScore {
  name: string;
  instants: number;
  /** Instants per level, and as percent of all. */
  levels: Record<CascadeRisk, { count: number; pct: number }>;
  /** oi_at_risk_pct quantiles (the riskier side's share within one day's 1σ move, percent). */
  oiAtRiskPct: { p10: number; p50: number; p90: number; max: number };
  /** Quantiles of the riskier side's share within one day's 2σ move, percent. */
  widePct: { p10: number; p50: number; p90: number; max: number };
  /** Quantiles of the daily volatility the bands used, percent. */
  dailyVolPct: { p10: number; p50: number; p90: number; max: number };
  /**
   * Share of instants (percent) where a liquidation alert with `threshold` would fire: overall; in the calm /
   * volatile halves (trailing 24 h volatility below / above its median); before quiet windows (largest move of
   * the longest horizon at most its median: a firing there is a false alarm) and before busy ones (top quartile).
   */
  alert: { thresholdPct: number; firePct: number; calmFirePct: number; volatileFirePct: number; quietFirePct: number; busyFirePct: number };
  /** Level share (percent) in the calm and volatile halves. */
  levelsByRegime: { calm: Record<CascadeRisk, number>; volatile: Record<CascadeRisk, number> };
  /** Per horizon: mean outcome per level and Spearman rank correlations of oi_at_risk_pct with the outcomes. */
  horizons: Array<{
    hours: number;
    perLevel: Record<CascadeRisk, { n: number; crossedPct: number; adverseMovePct: number; realisedPct?: number }>;
    spearman: { crossedPct: number; adverseMovePct: number; realisedPct?: number };
    /** Share of instants with realised liquidations where the dominant side matched the side liquidated most. */
    sideHitPct?: number;
  }>;
}

const LEVELS: readonly CascadeRisk[] = ["high", "medium", "low"];

/** Scores replayed instants (module comment); `thresholdPct` is the alert threshold whose firing rate is reported. */
export function score(name: string, instants: readonly Instant[], thresholdPct: number): BacktestScore {
  const n = instants.length;
  const levels = Object.fromEntries(
    LEVELS.map((l) => {
      const count = instants.filter((i) => i.level === l).length;
      return [l, { count, pct: n ? (100 * count) / n : 0 }];
    }),
  ) as BacktestScore["levels"];
  const oiq = instants.map((i) => i.oiAtRiskPct);
  const volMedian = n
    ? quantile(
        instants.map((i) => i.trailingVolPct),
        0.5,
      )
    : 0;
  const calm = instants.filter((i) => i.trailingVolPct <= volMedian);
  const volatile = instants.filter((i) => i.trailingVolPct > volMedian);
  const fire = (xs: readonly Instant[]) => (xs.length ? (100 * xs.filter((i) => i.oiAtRiskPct >= thresholdPct).length) / xs.length : 0);
  const lastMove = (i: Instant) => i.outcomes[i.outcomes.length - 1]?.maxMovePct ?? 0;
  const moveMedian = n ? quantile(instants.map(lastMove), 0.5) : 0;
  const moveP75 = n ? quantile(instants.map(lastMove), 0.75) : 0;
  const mix = (xs: readonly Instant[]) =>
    Object.fromEntries(LEVELS.map((l) => [l, xs.length ? (100 * xs.filter((i) => i.level === l).length) / xs.length : 0])) as Record<CascadeRisk, number>;
  const horizons = (instants[0]?.outcomes ?? []).map((o0, hi) => {
    const rows = instants.map((i) => ({ i, o: i.outcomes[hi]! }));
    const perLevel = Object.fromEntries(
      LEVELS.map((l) => {
        const xs = rows.filter((r) => r.i.level === l);
        const mean = (f: (o: Outcome) => number) => (xs.length ? xs.reduce((s, r) => s + f(r.o), 0) / xs.length : NaN);
        const row: { n: number; crossedPct: number; adverseMovePct: number; realisedPct?: number } = {
          n: xs.length,
          crossedPct: mean((o) => o.crossedPct),
          adverseMovePct: mean((o) => o.adverseMovePct),
        };
        if (o0.realisedPct !== undefined) row.realisedPct = mean((o) => o.realisedPct ?? 0);
        return [l, row];
      }),
    ) as BacktestScore["horizons"][number]["perLevel"];
    const x = rows.map((r) => r.i.oiAtRiskPct);
    const spearman: BacktestScore["horizons"][number]["spearman"] = {
      crossedPct: rank(
        x,
        rows.map((r) => r.o.crossedPct),
      ),
      adverseMovePct: rank(
        x,
        rows.map((r) => r.o.adverseMovePct),
      ),
    };
    const h: BacktestScore["horizons"][number] = { hours: o0.hours, perLevel, spearman };
    if (o0.realisedPct !== undefined) {
      spearman.realisedPct = rank(
        x,
        rows.map((r) => r.o.realisedPct ?? 0),
      );
      const sided = rows.filter((r) => r.o.realisedSide !== undefined);
      h.sideHitPct = sided.length ? (100 * sided.filter((r) => r.o.realisedSide === r.i.dominantSide).length) / sided.length : NaN;
    }
    return h;
  });
  return {
    name,
    instants: n,
    levels,
    oiAtRiskPct: quantiles(oiq),
    widePct: quantiles(instants.map((i) => i.widePct)),
    dailyVolPct: quantiles(instants.map((i) => i.dailyVolPct)),
    alert: {
      thresholdPct,
      firePct: fire(instants),
      calmFirePct: fire(calm),
      volatileFirePct: fire(volatile),
      quietFirePct: fire(instants.filter((i) => lastMove(i) <= moveMedian)),
      busyFirePct: fire(instants.filter((i) => lastMove(i) >= moveP75)),
    },
    levelsByRegime: { calm: mix(calm), volatile: mix(volatile) },
    horizons,
  };
}

function quantiles(xs: readonly number[]): { p10: number; p50: number; p90: number; max: number } {
  if (!xs.length) return { p10: NaN, p50: NaN, p90: NaN, max: NaN };
  return { p10: quantile([...xs], 0.1), p50: quantile([...xs], 0.5), p90: quantile([...xs], 0.9), max: Math.max(...xs) };
}

/** Spearman rank correlation (NaN when either series is constant or too short). */
function rank(x: readonly number[], y: readonly number[]): number {
  if (x.length < 3) return NaN;
  const constant = (v: readonly number[]) => v.every((a) => a === v[0]);
  if (constant(x) || constant(y)) return NaN;
  return sampleRankCorrelation([...x], [...y]);
}
