/**
 * Perpetual-futures layer of the venue simulator, built on the seeded spot {@link MarketModel}.
 *
 * ALL NUMBERS PRODUCED HERE ARE SIMULATED: listings, intervals, premiums, funding, open interest and ratios are
 * illustrative set-ups, not market data. The premium/funding dispersion and the venues' 24h turnover are
 * calibrated to real recordings (`PREMIUM_CALIBRATION`, `VOLUME_SHARE`; docs/methods/simulator.md).
 *
 * Every quantity is deterministic for (seed, instrument, time), one file each under `perp/`:
 * - `universe.ts`: the instruments of each venue (`listings.ts`: who lists what), with Binance quarterlies rolling;
 *   Gate contracts of `quanto_multiplier` coins and Deribit's inverse USD contracts carry their size in `ctVal`;
 * - `prices.ts`: index, premium, mark, last, the average premium P̄ of funding, 24h open/high/low;
 * - `funding.ts`: interest, funding rates (current and settled) and settlement times, per venue formula (Deribit:
 *   no interest, a ±0.025 % damper, continuous accrual);
 * - `positioning.ts`: open interest and long/short ratios;
 * - `volume.ts`: trading intensity (what the tape trades), 24h turnover and candles;
 * - `tiers.ts`: maintenance-margin tiers of the CEX venues;
 * - `instrument-state.ts` and `noise.ts`: each instrument's seeded parameters and the seeded noise they draw from;
 * - `calibration.ts`: the calibration targets and parameters.
 */
import type { MarketModel } from "./market.js";
import { createFunding } from "./perp/funding.js";
import { createInstStates } from "./perp/instrument-state.js";
import { createPerpNoise } from "./perp/noise.js";
import { createPositioning } from "./perp/positioning.js";
import { createPrices } from "./perp/prices.js";
import { createMarginTiers } from "./perp/tiers.js";
import type { PerpModel } from "./perp/types.js";
import { createUniverse } from "./perp/universe.js";
import { createVolume } from "./perp/volume.js";

export { EXTREME_PREMIUM, FUNDING_TARGETS } from "./perp/calibration.js";
export { SIM_PERP_BASES } from "./perp/listings.js";
export { PERP_SIM_VENUES, type LongShortKind, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue, type SimCandle, type SimMarginTier } from "./perp/types.js";

/** Builds the perp model over `market` (same seed ⇒ same numbers). */
export function createPerpModel(market: MarketModel): PerpModel {
  const noise = createPerpNoise(market);
  const instState = createInstStates(market, noise);
  const prices = createPrices(market, noise, instState);
  return {
    market,
    ...createUniverse(market),
    spotPrice: (base, t) => market.priceAt(base, t),
    ...prices,
    ...createFunding(noise, prices.avgPremium),
    ...createPositioning(noise, instState),
    ...createVolume(market, noise, instState, prices.lastPrice),
    marginTiers: createMarginTiers(market),
  };
}

const perpCache = new WeakMap<MarketModel, PerpModel>();

/** The perp model of `market`, built once per market model and shared by every venue router. */
export function perpModelFor(market: MarketModel): PerpModel {
  let m = perpCache.get(market);
  if (!m) {
    m = createPerpModel(market);
    perpCache.set(market, m);
  }
  return m;
}
