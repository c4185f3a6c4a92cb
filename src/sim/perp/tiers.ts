/**
 * Maintenance-margin tiers of the simulated CEX perps: a fixed leverage ladder from the instrument's max leverage
 * down (10 tiers for BTC/ETH, 7 for the others), mmr = c / leverage to 4 decimals (c = 0.4 for OKX BTC/ETH, else
 * 0.5: 100x → 0.4 % or 0.5 %, 50x → 1 %), tier caps doubling from a first cap of ≈ 0.005 % of the base's 24h volume
 * (25k–2M USD).
 */
import { clamp } from "../../lib/math.js";
import type { MarketModel } from "../market.js";
import type { PerpModel, SimMarginTier } from "./types.js";

/** Leverage steps of the simulated CEX margin tiers (each table starts at the instrument's max leverage). */
const LEVERAGE_LADDER: readonly number[] = [125, 100, 75, 50, 40, 25, 20, 15, 10, 8, 6, 5, 4, 3, 2, 1];

/** `x` rounded to 2 significant digits. */
function twoDigits(x: number): number {
  return Number(x.toPrecision(2));
}

/** The margin tiers of the perp model over `market` (cached per instrument). */
export function createMarginTiers(market: MarketModel): PerpModel["marginTiers"] {
  const tierCache = new Map<string, readonly SimMarginTier[]>();
  return (inst) => {
    const key = `${inst.venue}:${inst.symbol}`;
    const hit = tierCache.get(key);
    if (hit) return hit;
    const major = inst.base === "BTC" || inst.base === "ETH";
    const c = inst.venue === "okx" && major ? 0.4 : 0.5;
    const firstCap = twoDigits(clamp(market.params(inst.base).volume24hUsd * 0.00005, 25_000, 2_000_000));
    const ladder = LEVERAGE_LADDER.filter((l) => l <= inst.maxLeverage).slice(0, major ? 10 : 7);
    const tiers = ladder.map((lev, k) => ({ maxNotionalUsd: firstCap * 2 ** k, maxLeverage: lev, mmr: Number((c / lev).toFixed(4)) }));
    tierCache.set(key, tiers);
    return tiers;
  };
}
