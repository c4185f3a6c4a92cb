/**
 * Seeded noise of the simulated perp layer: deterministic for (seed, stream, salt, time), so the same seed gives
 * the same numbers whatever is asked first. Each quantity draws from its own salt.
 */
import { fnv1a, hash4, normalFromHash, type MarketModel } from "../market.js";

/** One salt per noise source (premium layers, index, last price, open interest, ratios, jitter, candles). */
export const SALT = {
  premMean: 0x51a7e001,
  premBias: 0x51a7e002,
  prem8h: 0x51a7e003,
  prem1h: 0x51a7e004,
  prem5m: 0x51a7e005,
  index: 0x51a7e006,
  last: 0x51a7e007,
  oiDay: 0x51a7e008,
  oiWeek: 0x51a7e009,
  oiHour: 0x51a7e00a,
  lsMean: 0x51a7e00b,
  ls12h: 0x51a7e00c,
  ls1h: 0x51a7e00d,
  jitter: 0x51a7e00e,
  basis: 0x51a7e00f,
  candleVol: 0x51a7e010,
  baseLevel: 0x51a7e011,
  market2d: 0x51a7e012,
  base3d: 0x51a7e013,
  base12h: 0x51a7e014,
  venueLevel: 0x51a7e015,
  venue8h: 0x51a7e016,
  venue1h: 0x51a7e017,
  fast: 0x51a7e018,
  hlMark: 0x51a7e019,
} as const;

/** The noise sources of one perp model. */
export interface PerpNoise {
  /** A hash of (stream, salt, k) under the model's seed. */
  hash(stream: number, salt: number, k: number): number;
  /** A seeded N(0,1) draw for (stream, salt, k). */
  z(stream: number, salt: number, k?: number): number;
  /** Smooth N(0,1)-ish noise: hash values on a grid of `periodMs`, linearly interpolated. */
  noise(stream: number, salt: number, tsMs: number, periodMs: number): number;
  /** {@link PerpNoise.noise} rescaled to unit variance at every instant (a marginally exact N(0,1), still continuous). */
  unitNoise(stream: number, salt: number, tsMs: number, periodMs: number): number;
}

/** The noise of the perp layer over `market` (its seed). */
export function createPerpNoise(market: MarketModel): PerpNoise {
  const seedH = fnv1a(`marketgate-sim-perp:${String(market.seed)}`);
  const hash = (stream: number, salt: number, k: number): number => hash4(seedH, stream, salt, k);
  const z = (stream: number, salt: number, k = 0): number => normalFromHash(hash4(seedH, stream, salt, k));
  function noise(stream: number, salt: number, tsMs: number, periodMs: number): number {
    const k = Math.floor(tsMs / periodMs);
    const f = tsMs / periodMs - k;
    const z0 = normalFromHash(hash4(seedH, stream, salt, k | 0));
    const z1 = normalFromHash(hash4(seedH, stream, salt, (k + 1) | 0));
    return z0 * (1 - f) + z1 * f;
  }
  function unitNoise(stream: number, salt: number, tsMs: number, periodMs: number): number {
    const f = tsMs / periodMs - Math.floor(tsMs / periodMs);
    return noise(stream, salt, tsMs, periodMs) / Math.sqrt((1 - f) * (1 - f) + f * f);
  }
  return { hash, z, noise, unitNoise };
}
