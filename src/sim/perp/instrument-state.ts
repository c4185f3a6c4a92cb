/**
 * The seeded, fixed parameters of each simulated perp instrument: its premium set-up (extreme or regular, seeded
 * levels, calibration row, P̄ bound), open-interest level, long/short means, turnover share and noise streams.
 * Computed once per instrument and model.
 */
import { clamp } from "../../lib/math.js";
import { fnv1a, type MarketModel } from "../market.js";
import {
  BASE_SENTIMENT_SD,
  EXTREME_PREMIUM,
  HL_ALT_VOLUME_SHARE,
  HL_MAJORS,
  NON_TARGET_VOLUME_SHARE,
  OI_PER_DAILY_VOLUME,
  OI_SHARE,
  PREMIUM_CALIBRATION,
  VOLUME_SHARE,
  type PremiumCalibration,
} from "./calibration.js";
import { CLAMP_BAND, DERIBIT_DAMPER } from "./funding.js";
import { HOURLY_VENUES } from "./listings.js";
import { SALT, type PerpNoise } from "./noise.js";
import type { LongShortKind, PerpInstrumentSpec } from "./types.js";

/** The fixed parameters of one instrument. */
export interface InstState {
  /** Extreme set-up (EXTREME_PREMIUM base, target perp): premium = mean + sd × 8h/1h/5min noise, P̄ unbounded. */
  extreme: boolean;
  premiumMean: number;
  premiumSd: number;
  /** Regular bases: seeded level of the base sentiment and of the venue part (fractions), calibration row. */
  baseLevel: number;
  venueLevel: number;
  calib: PremiumCalibration;
  /** Regular perpetuals: P̄ is soft-bounded to ±this (fraction) so that |funding| < 0.05 % per 8h. */
  pbarBound: number;
  oiBaseCoins: number;
  lsMean: Record<LongShortKind, number>;
  volumeShare: number;
  /** Stream shared by every instrument of (venue, base): index deviation. */
  venueBaseStream: number;
  baseStream: number;
}

/** The parameters of an instrument (cached per venue and symbol). */
export type InstStates = (inst: PerpInstrumentSpec) => InstState;

/** The instrument parameters of the perp model over `market`, drawn from `noise`. */
export function createInstStates(market: MarketModel, noise: PerpNoise): InstStates {
  const { z } = noise;
  const stateCache = new Map<string, InstState>();
  return (inst) => {
    const key = `${inst.venue}:${inst.symbol}`;
    let s = stateCache.get(key);
    if (s) return s;
    const baseStream = fnv1a(`perp-base:${inst.base}`);
    const params = market.params(inst.base);
    const extreme = EXTREME_PREMIUM[inst.base];
    const zv = clamp(z(inst.stream, SALT.premBias), -2, 2);
    const isExtreme = extreme !== undefined && inst.target;
    const share = (inst.target ? OI_SHARE[inst.venue] : 0.03) * (inst.delisted ? 0 : 1);
    const calib = PREMIUM_CALIBRATION[inst.venue];
    // Largest |P̄| keeping |F| × 8 / h < 0.05 %: F = P̄ ∓ 0.05 % beyond the clamp band (OKX: F = P̄; Deribit: P̄ ∓ 0.025 %), 5 % margin.
    const eightHourFactor = HOURLY_VENUES.includes(inst.venue) ? 1 : 8 / Math.max(1, inst.fundingIntervalHours);
    const fMax = 0.0005 / eightHourFactor;
    const volShare = inst.venue === "hyperliquid" && !HL_MAJORS.includes(inst.base) ? HL_ALT_VOLUME_SHARE : VOLUME_SHARE[inst.venue];
    s = {
      extreme: isExtreme,
      premiumMean: isExtreme ? extreme * (1 + 0.08 * zv) : 0,
      premiumSd: isExtreme ? 0.00015 : 0,
      baseLevel: BASE_SENTIMENT_SD * 0.45 * z(baseStream, SALT.baseLevel),
      venueLevel: calib.venueSd * 0.5 * z(inst.stream, SALT.venueLevel),
      calib,
      pbarBound: 0.95 * (inst.venue === "okx" ? fMax : inst.venue === "deribit" ? fMax + DERIBIT_DAMPER : fMax + CLAMP_BAND),
      oiBaseCoins: ((params.volume24hUsd * OI_PER_DAILY_VOLUME) / params.anchorUsd) * share,
      lsMean: {
        top_position: Math.log(1.2) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 1), -2.2, 2.2),
        account: Math.log(1.3) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 2), -2.2, 2.2),
      },
      volumeShare: (inst.target ? volShare : NON_TARGET_VOLUME_SHARE) * (inst.delisted ? 0 : 1),
      venueBaseStream: fnv1a(`perp-index:${inst.venue}:${inst.base}`),
      baseStream,
    };
    stateCache.set(key, s);
    return s;
  };
}
