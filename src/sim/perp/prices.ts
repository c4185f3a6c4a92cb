/**
 * Prices of the simulated perps, USD per coin, per (venue, instrument, time), deterministic for (seed, time):
 * - index = model spot price × (1 + a tiny venue-specific deviation, ~1.5 bp);
 * - premium (= mark / index − 1), regular bases: venue mean + a base sentiment shared by the four venues (seeded
 *   level, market-wide 2-day, per-base 3-day and 12-hour layers) + a venue-specific part (seeded level, 8 h and 1 h
 *   layers) + fast 5-minute noise that mostly averages out of funding. A few configured EXTREME bases instead sit
 *   at a large mean premium with small noise; dated futures carry a basis that decays to delivery;
 * - mark = index × (1 + premium) (Hyperliquid regular bases: plus a mark-only deviation, `HL_MARK_ONLY_SD`);
 *   last = mark × (1 + ~1 bp noise);
 * - P̄ = linearly weighted average premium over the interval (16 samples). For regular bases it is soft-bounded
 *   (tanh) so that |funding| stays below 0.05 % per 8h: extreme funding happens exactly on the EXTREME bases;
 * - 24h open/high/low of mark or index on a 15-minute grid.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../lib/time.js";
import { fnv1a, type MarketModel } from "../market.js";
import { BASE_SENTIMENT_SD, HL_MARK_ONLY_SD } from "./calibration.js";
import type { InstStates } from "./instrument-state.js";
import { SALT, type PerpNoise } from "./noise.js";
import type { PerpModel } from "./types.js";

const YEAR_MS = 365 * DAY_MS;
/** Samples of the average premium over a funding interval. */
const PREMIUM_SAMPLES = 16;
/** Stream of the market-wide layer of the base sentiment. */
const MARKET_STREAM = fnv1a("perp-market-sentiment");

/** The price functions of the perp model. */
export type PerpPrices = Pick<PerpModel, "indexPrice" | "premium" | "markPrice" | "lastPrice" | "avgPremium" | "dayStats">;

/** The prices of the perp model over `market`. */
export function createPrices(market: MarketModel, noises: PerpNoise, instState: InstStates): PerpPrices {
  const { noise, unitNoise } = noises;

  const indexPrice: PerpPrices["indexPrice"] = (inst, t) => {
    const st = instState(inst);
    return market.priceAt(inst.base, t) * (1 + 0.00015 * noise(st.venueBaseStream, SALT.index, t, 30 * MINUTE_MS));
  };

  const premium: PerpPrices["premium"] = (inst, t) => {
    const st = instState(inst);
    if (inst.kind === "delivery") {
      const years = Math.max(0, inst.deliveryTime - t) / YEAR_MS;
      return 0.07 * years + 0.0004 * noise(inst.stream, SALT.basis, t, HOUR_MS);
    }
    if (st.extreme) {
      const n =
        0.65 * noise(inst.stream, SALT.prem8h, t, 8 * HOUR_MS) + 0.3 * noise(inst.stream, SALT.prem1h, t, HOUR_MS) + 0.15 * noise(inst.stream, SALT.prem5m, t, 5 * MINUTE_MS);
      return st.premiumMean + st.premiumSd * n;
    }
    const c = st.calib;
    const base =
      st.baseLevel +
      BASE_SENTIMENT_SD *
        (0.4 * unitNoise(MARKET_STREAM, SALT.market2d, t, 2 * DAY_MS) +
          0.55 * unitNoise(st.baseStream, SALT.base3d, t, 3 * DAY_MS) +
          0.58 * unitNoise(st.baseStream, SALT.base12h, t, 12 * HOUR_MS));
    const venue = st.venueLevel + c.venueSd * (0.7 * unitNoise(inst.stream, SALT.venue8h, t, 8 * HOUR_MS) + 0.51 * unitNoise(inst.stream, SALT.venue1h, t, HOUR_MS));
    return c.mean + base + venue + c.fastSd * unitNoise(inst.stream, SALT.fast, t, 5 * MINUTE_MS);
  };

  const markPrice: PerpPrices["markPrice"] = (inst, t) => {
    const hlOnly = inst.venue === "hyperliquid" && !instState(inst).extreme ? HL_MARK_ONLY_SD * unitNoise(inst.stream, SALT.hlMark, t, 10 * MINUTE_MS) : 0;
    return indexPrice(inst, t) * (1 + premium(inst, t) + hlOnly);
  };

  const lastPrice: PerpPrices["lastPrice"] = (inst, t) => markPrice(inst, t) * (1 + 0.0001 * noise(inst.stream, SALT.last, t, MINUTE_MS));

  const avgPremium: PerpPrices["avgPremium"] = (inst, from, to) => {
    let avg: number;
    if (!(to > from)) avg = premium(inst, from);
    else {
      let sum = 0;
      let wsum = 0;
      for (let i = 0; i < PREMIUM_SAMPLES; i++) {
        const w = i + 1; // linearly increasing weights, latest weighted most (Binance)
        sum += w * premium(inst, from + ((to - from) * (i + 0.5)) / PREMIUM_SAMPLES);
        wsum += w;
      }
      avg = sum / wsum;
    }
    const st = instState(inst);
    if (st.extreme || inst.kind !== "perpetual") return avg;
    return st.pbarBound * Math.tanh(avg / st.pbarBound);
  };

  const dayStats: PerpPrices["dayStats"] = (inst, t, of) => {
    const f = of === "mark" ? markPrice : indexPrice;
    const open = f(inst, t - DAY_MS);
    let high = Math.max(open, f(inst, t));
    let low = Math.min(open, f(inst, t));
    const step = 15 * MINUTE_MS;
    for (let s = Math.ceil((t - DAY_MS) / step) * step; s < t; s += step) {
      const v = f(inst, s);
      if (v > high) high = v;
      if (v < low) low = v;
    }
    return { open, high, low };
  };

  return { indexPrice, premium, markPrice, lastPrice, avgPremium, dayStats };
}
