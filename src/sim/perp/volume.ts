/**
 * Traded volume of the simulated perps: the hourly trading intensity the tape trades at (the model's aggregate
 * 24h volume × the venue's share), its 24h integral (turnover), and last-price candles with their USD volume.
 */
import { clamp } from "../../lib/math.js";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../lib/time.js";
import type { MarketModel } from "../market.js";
import type { InstStates } from "./instrument-state.js";
import { SALT, type PerpNoise } from "./noise.js";
import type { PerpModel, PerpInstrumentSpec, SimCandle } from "./types.js";

/** Price samples between a candle's open and close. */
const CANDLE_SAMPLES = 12;

/** The volume functions of the perp model. */
export type PerpVolume = Pick<PerpModel, "flowUsdPerDay" | "turnover24hUsd" | "candle">;

/**
 * Volume over `market`'s aggregate 24h volume. Candles: open = last price at the open time, close = last price at the
 * close time (or now, for the open candle), high/low = extremes of both and of the last price sampled 12 times in
 * between; USD volume = the venue's 24h turnover pro rata × a seeded log-normal factor per candle (pro rata of
 * elapsed time when open).
 */
export function createVolume(market: MarketModel, noise: PerpNoise, instState: InstStates, lastPrice: PerpModel["lastPrice"]): PerpVolume {
  const flowCache = new Map<string, number>();
  function flowUsdPerDay(inst: PerpInstrumentSpec, t: number): number {
    const hour = Math.floor(t / HOUR_MS);
    const key = `${inst.venue}:${inst.symbol}:${hour}`;
    let f = flowCache.get(key);
    if (f === undefined) {
      f = market.volume24hUsdAt(inst.base, hour * HOUR_MS) * instState(inst).volumeShare;
      if (flowCache.size >= 50_000) flowCache.clear();
      flowCache.set(key, f);
    }
    return f;
  }

  function turnover24hUsd(inst: PerpInstrumentSpec, t: number): number {
    let sum = 0;
    for (let h = Math.floor((t - DAY_MS) / HOUR_MS); h * HOUR_MS < t; h++) {
      const overlap = Math.min(t, (h + 1) * HOUR_MS) - Math.max(t - DAY_MS, h * HOUR_MS);
      if (overlap > 0) sum += (flowUsdPerDay(inst, h * HOUR_MS) * overlap) / DAY_MS;
    }
    return sum;
  }

  function candle(inst: PerpInstrumentSpec, open: number, dur: number, now: number): SimCandle {
    const close = Math.max(open, Math.min(open + dur - 1, now));
    const o = lastPrice(inst, open);
    const c = lastPrice(inst, close);
    let high = Math.max(o, c);
    let low = Math.min(o, c);
    for (let i = 1; i <= CANDLE_SAMPLES; i++) {
      const t = open + Math.round((dur * i) / (CANDLE_SAMPLES + 1));
      if (t >= close) break;
      const v = lastPrice(inst, t);
      if (v > high) high = v;
      if (v < low) low = v;
    }
    const k = Math.floor(open / dur) | 0;
    const factor = Math.exp(0.35 * clamp(noise.z(inst.stream, SALT.candleVol ^ Math.round(dur / MINUTE_MS), k), -3, 3) - 0.06);
    const elapsed = (close + 1 - open) / dur;
    const volumeUsd = market.volume24hUsdAt(inst.base, open) * instState(inst).volumeShare * (dur / DAY_MS) * factor * Math.min(1, elapsed);
    return { open: o, high, low, close: c, volumeUsd };
  }

  return { flowUsdPerDay, turnover24hUsd, candle };
}
