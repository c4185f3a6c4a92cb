import { median } from "simple-statistics";

/**
 * Liquidation heatmap: an ESTIMATE of where open interest would be liquidated, from public data only
 * (no venue publishes its positions' leverage). Method (README "Liquidation heatmap"; anchors §3.3):
 *
 * 1. Sides. Every open contract has a long and a short holder, so longs and shorts each hold the whole
 *    open interest; each side is judged on its own (a cascade runs one way).
 * 2. Entries. A side's open interest is spread over entry prices taken from hourly candles of the last
 *    {@link ENTRY_WINDOW_HOURS} hours: entry = typical price (high + low + close) / 3, weight = the hour's
 *    USD volume × 2^(−age / {@link ENTRY_HALF_LIFE_HOURS}) (positions are opened where volume trades and
 *    are closed over time). Without candles, every entry is at the current price (static tiers).
 * 3. Leverage. Each entry is split across the tiers 5x 10x 25x 50x 100x by {@link LEVERAGE_WEIGHTS}
 *    (renormalised over the tiers the venues allow for the symbol).
 * 4. Liquidation price (isolated, linear, fees ignored): long = entry × (1 − 1/L) / (1 − MMR),
 *    short = entry × (1 + 1/L) / (1 + MMR), with MMR the maintenance-margin rate of the smallest-notional
 *    tier that allows leverage L.
 * 5. Survival. A position whose liquidation price a LATER candle's low (long) or high (short) reached is
 *    already gone; the survivors are renormalised so each side still holds the whole open interest.
 * 6. Risk. For each side, OI at risk within a band = OI whose liquidation price lies within that band of
 *    the current price (below for longs, above for shorts). The larger side decides: cascade risk is high
 *    when more than 10% of OI is at risk within 5%, medium when at least 5% is at risk within 10%, else
 *    low. `oi_at_risk_*` report the 10% band (the widest the table uses).
 */

/** Leverage tiers of the heatmap (spec 2.5). */
export const LEVERAGE_TIERS = [5, 10, 25, 50, 100] as const;

/** Assumed share of positions per leverage tier (sums to 1): most open interest is carried at low leverage. */
export const LEVERAGE_WEIGHTS: Readonly<Record<(typeof LEVERAGE_TIERS)[number], number>> = { 5: 0.45, 10: 0.3, 25: 0.15, 50: 0.07, 100: 0.03 };

/** Look-back of the entry-price distribution, hours. */
export const ENTRY_WINDOW_HOURS = 72;
/** Half-life of an opened position's weight, hours (positions are closed over time). */
export const ENTRY_HALF_LIFE_HOURS = 24;
/** Maintenance-margin rate used when no venue's tier table could be read (Binance's and OKX's first tier for majors are 0.4%). */
export const FALLBACK_MMR = 0.005;

/** Price bands of the cascade-risk table (spec 2.5), fractions of the current price. */
export const NEAR_BAND = 0.05;
export const WIDE_BAND = 0.1;

/** Cascade risk level (spec 2.5). */
export type CascadeRisk = "high" | "medium" | "low";
/** Position side. */
export type Side = "long" | "short";

/** An hourly candle as the model reads it (USD per coin, USD volume). */
export interface EntryCandle {
  openTime: number;
  high: number;
  low: number;
  close: number;
  volumeUsd: number;
}

/** Inputs of {@link liquidationHeatmap}. */
export interface HeatmapInput {
  /** Current (mark) price, USD. */
  price: number;
  /** Total open interest, USD. */
  openInterestUsd: number;
  /** Hourly candles, oldest first; the last may be the current partial hour. Empty → static tiers. */
  candles: readonly EntryCandle[];
  /** Maintenance-margin rate per allowed leverage tier; tiers absent from the map are not allowed for the symbol. */
  mmrByLeverage: ReadonlyMap<number, number>;
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

/** Risk summary (spec 2.5) plus the per-side numbers it was decided from. */
export interface RiskSummary {
  total_oi_at_risk_usd: number;
  oi_at_risk_pct: number;
  cascade_risk: CascadeRisk;
  cascade_risk_reason: string;
  /** Side whose liquidation levels decide the risk (most OI within 10%). */
  dominant_side: Side;
  /** Per side: OI at risk within 5% and within 10% of the price, USD. */
  long_oi_at_risk_usd: { within_5_pct: number; within_10_pct: number };
  short_oi_at_risk_usd: { within_5_pct: number; within_10_pct: number };
}

/** Output of {@link liquidationHeatmap}. */
export interface Heatmap {
  clusters: LeverageCluster[];
  risk: RiskSummary;
  /** Number of entry hours used (0 = static tiers at the current price). */
  entryHours: number;
}

/** Liquidation price of an isolated linear position (fees ignored; anchors §3.3 exact linear form). */
export function liquidationPrice(entry: number, leverage: number, mmr: number, side: Side): number {
  return side === "long" ? (entry * (1 - 1 / leverage)) / (1 - mmr) : (entry * (1 + 1 / leverage)) / (1 + mmr);
}

/** Cascade risk from the dominant side's at-risk shares (fractions of OI) within 5% and 10% (spec 2.5 table). */
export function cascadeRisk(nearShare: number, wideShare: number): CascadeRisk {
  if (nearShare > 0.1) return "high";
  if (wideShare >= 0.05) return "medium";
  return "low";
}

interface Entry {
  price: number;
  weight: number;
  /** Lowest low and highest high of the candles after the entry hour (Infinity/−Infinity when none). */
  laterLow: number;
  laterHigh: number;
}

/** Entry prices and weights from the candles (see the module comment, step 2). */
function entries(candles: readonly EntryCandle[], price: number): Entry[] {
  const usable = candles.filter((c) => c.high > 0 && c.low > 0 && c.close > 0 && c.volumeUsd >= 0).slice(-ENTRY_WINDOW_HOURS);
  if (usable.length === 0) return [{ price, weight: 1, laterLow: price, laterHigh: price }];
  const out: Entry[] = [];
  let laterLow = price;
  let laterHigh = price;
  for (let i = usable.length - 1; i >= 0; i--) {
    const c = usable[i]!;
    const age = usable.length - 1 - i;
    out.push({ price: (c.high + c.low + c.close) / 3, weight: c.volumeUsd * 2 ** (-age / ENTRY_HALF_LIFE_HOURS), laterLow, laterHigh });
    laterLow = Math.min(laterLow, c.low);
    laterHigh = Math.max(laterHigh, c.high);
  }
  const total = out.reduce((s, e) => s + e.weight, 0);
  // A window without volume still has prices: weigh the hours by age only.
  if (!(total > 0)) for (const e of out) e.weight = 1;
  return out;
}

/**
 * The heatmap estimate (module comment). Pure: the same input gives the same output.
 * @throws RangeError when `price` or `openInterestUsd` is not a positive finite number.
 */
export function liquidationHeatmap(input: HeatmapInput): Heatmap {
  const { price, openInterestUsd: oi } = input;
  if (!(price > 0 && Number.isFinite(price))) throw new RangeError("price must be positive");
  if (!(oi >= 0 && Number.isFinite(oi))) throw new RangeError("open interest must be non-negative");
  const tiers = LEVERAGE_TIERS.filter((l) => input.mmrByLeverage.has(l));
  const levTotal = tiers.reduce((s, l) => s + LEVERAGE_WEIGHTS[l], 0);
  const es = entries(input.candles, price);

  const clusters: LeverageCluster[] = [];
  const atRisk = { long: { near: 0, wide: 0 }, short: { near: 0, wide: 0 } };
  for (const side of ["long", "short"] as const) {
    const cells: { lev: number; entry: number; liq: number; w: number }[] = [];
    for (const lev of tiers) {
      const mmr = input.mmrByLeverage.get(lev)!;
      for (const e of es) {
        const liq = liquidationPrice(e.price, lev, mmr, side);
        // Survival: a later extreme (or the current price) beyond the level means the position is gone.
        const gone = side === "long" ? e.laterLow <= liq || price <= liq : e.laterHigh >= liq || price >= liq;
        if (!gone) cells.push({ lev, entry: e.price, liq, w: e.weight * (LEVERAGE_WEIGHTS[lev as 5] / levTotal) });
      }
    }
    const alive = cells.reduce((s, c) => s + c.w, 0);
    if (!(alive > 0)) continue;
    for (const c of cells) {
      const usd = (oi * c.w) / alive;
      const dist = Math.abs(c.liq - price) / price;
      if (dist <= NEAR_BAND) atRisk[side].near += usd;
      if (dist <= WIDE_BAND) atRisk[side].wide += usd;
    }
    for (const lev of tiers) {
      const mine = cells.filter((c) => c.lev === lev);
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
  return { clusters, risk: riskSummary(oi, atRisk), entryHours: input.candles.length ? es.length : 0 };
}

function riskSummary(oi: number, atRisk: Record<Side, { near: number; wide: number }>): RiskSummary {
  const dominant: Side = atRisk.short.wide > atRisk.long.wide || (atRisk.short.wide === atRisk.long.wide && atRisk.short.near > atRisk.long.near) ? "short" : "long";
  const share = (usd: number) => (oi > 0 ? usd / oi : 0);
  const nearSide: Side = atRisk.short.near > atRisk.long.near ? "short" : "long";
  const near = share(atRisk[nearSide].near);
  const wide = share(atRisk[dominant].wide);
  const level = cascadeRisk(near, wide);
  const where = (s: Side, band: number) => `${s === "long" ? "long" : "short"} liquidation levels within ${band}% ${s === "long" ? "below" : "above"} the price`;
  const reason =
    level === "high"
      ? `${fmtPct(near)} of open interest sits in ${where(nearSide, 5)} (high: more than 10% within 5%).`
      : level === "medium"
        ? `${fmtPct(wide)} of open interest sits in ${where(dominant, 10)} and ${fmtPct(near)} within 5% (medium: at least 5% within 10%).`
        : `Only ${fmtPct(wide)} of open interest sits in ${where(dominant, 10)} (low: less than 5%).`;
  return {
    total_oi_at_risk_usd: atRisk[dominant].wide,
    oi_at_risk_pct: share(atRisk[dominant].wide) * 100,
    cascade_risk: level,
    cascade_risk_reason: `Estimate: ${reason}`,
    dominant_side: dominant,
    long_oi_at_risk_usd: { within_5_pct: atRisk.long.near, within_10_pct: atRisk.long.wide },
    short_oi_at_risk_usd: { within_5_pct: atRisk.short.near, within_10_pct: atRisk.short.wide },
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

