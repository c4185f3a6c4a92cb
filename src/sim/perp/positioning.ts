/**
 * Positioning of the simulated perps: open interest (coins) = base level × venue share × slow drift (shared per
 * base, so the venue ranking is stable: Binance > Hyperliquid > Gate > Bybit > OKX > Bitget > Deribit > Aster), and long/short ratios = exp(mean +
 * slow noise), clamped to [0.6, 2.5].
 */
import { clamp } from "../../lib/math.js";
import { DAY_MS, HOUR_MS } from "../../lib/time.js";
import type { InstStates } from "./instrument-state.js";
import { SALT, type PerpNoise } from "./noise.js";
import type { PerpModel } from "./types.js";

/** The open-interest and long/short functions of the perp model. */
export type PerpPositioning = Pick<PerpModel, "openInterestCoins" | "longShortRatio">;

/** Open interest and long/short ratios drawn from `noises`, over the instruments' parameters. */
export function createPositioning(noises: PerpNoise, instState: InstStates): PerpPositioning {
  const { noise } = noises;
  return {
    openInterestCoins: (inst, t) => {
      const st = instState(inst);
      const drift =
        0.25 * noise(st.baseStream, SALT.oiDay, t, DAY_MS) + 0.12 * noise(st.baseStream, SALT.oiWeek, t, 7 * DAY_MS) + 0.05 * noise(inst.stream, SALT.oiHour, t, 2 * HOUR_MS);
      return st.oiBaseCoins * Math.exp(drift);
    },
    longShortRatio: (inst, kind, t) => {
      const st = instState(inst);
      const salt = kind === "account" ? 0x100 : 0;
      const x = st.lsMean[kind] + 0.2 * noise(inst.stream, SALT.ls12h ^ salt, t, 12 * HOUR_MS) + 0.06 * noise(inst.stream, SALT.ls1h ^ salt, t, HOUR_MS);
      return clamp(Math.exp(x), 0.6, 2.5);
    },
  };
}
