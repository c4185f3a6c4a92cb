/**
 * Funding of the simulated perps. Per interval, Binance/Bybit/Hyperliquid: F = clamp(P̄ + clamp(I − P̄, −0.05 %,
 * +0.05 %), ±cap) with I = 0.01 % × intervalHours / 8, so F is pinned at I while P̄ is within 0.05 % of I;
 * Hyperliquid pays hourly, F(8h formula) / 8. Gate, Bitget and Aster use the Binance formula (Gate's funding-rate
 * page: "Premium Index + clamp(Interest Spread − Premium Index, 0.05 %, −0.05 %)"). OKX, per its published formula,
 * has no interest component: F = clamp(P̄, ±cap), so its rate is never pinned. Deribit has no interest component
 * either and a damper: F = clamp(max(0.025 %, P̄) + min(−0.025 %, P̄), ±cap) per 8h (Deribit Funding
 * Specifications), so its rate is exactly 0 while |P̄| ≤ 0.025 %; it accrues continuously, and the model's "settled"
 * rate at any instant is the 8h rate over the 8h before it (Deribit's hourly `interest_8h`). The current (accruing) rate averages over [interval start, now];
 * a settled rate over the whole interval, so the current rate converges to the settled one at the boundary.
 * Settlements fall on UTC multiples of the interval (Binance and Hyperliquid add a few ms of jitter, as the real
 * venues do); nextFundingTime is the next boundary.
 */
import { clamp } from "../../lib/math.js";
import { HOUR_MS } from "../../lib/time.js";
import { HOURLY_VENUES } from "./listings.js";
import { SALT, type PerpNoise } from "./noise.js";
import type { PerpInstrumentSpec, PerpModel } from "./types.js";

/** Interest per 8h (0.01 %). */
export const INTEREST_8H = 0.0001;
/** The Binance-style clamp band on (interest − premium). */
export const CLAMP_BAND = 0.0005;
/** Deribit's damper: premium within ±0.025 % (per 8h) pays no funding. */
export const DERIBIT_DAMPER = 0.00025;

/** The funding functions of the perp model. */
export type PerpFunding = Pick<
  PerpModel,
  "interestRate" | "intervalStart" | "nextFundingTime" | "currentFundingRate" | "settledFundingRate" | "settledPremium" | "settlementTimes" | "settlementJitterMs"
>;

/** Funding over the average premium P̄ of the prices (`avgPremium`), settlement jitter from `noise`. */
export function createFunding(noise: PerpNoise, avgPremium: PerpModel["avgPremium"]): PerpFunding {
  const intervalMs = (inst: PerpInstrumentSpec): number => inst.fundingIntervalHours * HOUR_MS;
  const hourlyFromEight = (inst: PerpInstrumentSpec): boolean => HOURLY_VENUES.includes(inst.venue);

  function interestRate(inst: PerpInstrumentSpec): number {
    if (inst.kind !== "perpetual" || inst.venue === "okx" || inst.venue === "deribit") return 0;
    return hourlyFromEight(inst) ? INTEREST_8H / 8 : (INTEREST_8H * inst.fundingIntervalHours) / 8;
  }

  function fundingFromPremium(inst: PerpInstrumentSpec, p: number): number {
    if (inst.kind !== "perpetual") return 0;
    // OKX: Clamp[MA(premium − interest), floor, cap] with interest = 0 (OKX's published funding formula).
    if (inst.venue === "okx") return clamp(p, -inst.fundingCap, inst.fundingCap);
    if (inst.venue === "deribit") return clamp(Math.max(DERIBIT_DAMPER, p) + Math.min(-DERIBIT_DAMPER, p), -inst.fundingCap, inst.fundingCap);
    const interest = hourlyFromEight(inst) ? INTEREST_8H : (INTEREST_8H * inst.fundingIntervalHours) / 8;
    const f = clamp(p + clamp(interest - p, -CLAMP_BAND, CLAMP_BAND), -inst.fundingCap, inst.fundingCap);
    return hourlyFromEight(inst) ? f / 8 : f;
  }

  function intervalStart(inst: PerpInstrumentSpec, t: number): number {
    const iv = intervalMs(inst);
    return iv > 0 ? Math.floor(t / iv) * iv : t;
  }

  function nextFundingTime(inst: PerpInstrumentSpec, t: number): number {
    const iv = intervalMs(inst);
    return iv > 0 ? (Math.floor(t / iv) + 1) * iv : 0;
  }

  function settlementTimes(inst: PerpInstrumentSpec, from: number, to: number): number[] {
    const iv = intervalMs(inst);
    if (iv <= 0) return [];
    const out: number[] = [];
    const first = Math.ceil(Math.max(from, inst.listTime) / iv) * iv;
    for (let s = first; s <= to; s += iv) out.push(s);
    return out;
  }

  function settlementJitterMs(inst: PerpInstrumentSpec, settleMs: number): number {
    const k = Math.floor(settleMs / HOUR_MS) | 0;
    const h = noise.hash(inst.stream, SALT.jitter, k);
    if (inst.venue === "binance") return h % 8;
    if (inst.venue === "hyperliquid") return h % 400;
    return 0;
  }

  return {
    interestRate,
    intervalStart,
    nextFundingTime,
    currentFundingRate: (inst, t) => fundingFromPremium(inst, avgPremium(inst, intervalStart(inst, t), t)),
    settledFundingRate: (inst, s) => fundingFromPremium(inst, avgPremium(inst, s - intervalMs(inst), s)),
    settledPremium: (inst, s) => avgPremium(inst, s - intervalMs(inst), s),
    settlementTimes,
    settlementJitterMs,
  };
}
