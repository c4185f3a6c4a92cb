/**
 * Small helpers shared by the simulated derivatives venues: query parsing and venue-style number strings.
 */
import type { Request } from "express";

/** First string value of a query parameter (repeated params: the first wins). */
export function qp(req: Request, name: string): string | undefined {
  const v: unknown = req.query[name];
  if (typeof v === "string") return v;
  if (Array.isArray(v) && typeof v[0] === "string") return v[0];
  return undefined;
}

/** `x.toFixed(d)` without a negative zero (`-0.00` → `0.00`). */
export function fixed(x: number, d: number): string {
  const s = x.toFixed(d);
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

/** Fixed to `d` decimals, then trailing zeros (and a bare dot) removed: `0.00010000` → `0.0001`, `5.000` → `5`. */
export function trimmed(x: number, d: number): string {
  const s = fixed(x, d);
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

/** Rounds `x` to `d` decimals as a number. */
export function roundTo(x: number, d: number): number {
  return Number(x.toFixed(d));
}

/** Tick size string for `d` decimals: 2 → `0.01`, 0 → `1`. */
export function tickOf(d: number): string {
  return d <= 0 ? "1" : `0.${"0".repeat(d - 1)}1`;
}

/**
 * Parses an integer query value. `undefined`/empty → `dflt`; returns null when not an integer in [min, max].
 */
export function intParam(raw: string | undefined, dflt: number, min: number, max: number): number | null {
  if (raw === undefined || raw.trim() === "") return dflt;
  if (!/^-?\d+$/.test(raw.trim())) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : null;
}

/** Parses an optional epoch-ms query value: undefined when absent, null when malformed. */
export function msParam(raw: string | undefined): number | undefined | null {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^\d+$/.test(raw.trim())) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

/** Time units in milliseconds (the simulator venues' short names for `src/lib/time.ts`). */
export { DAY_MS as DAY, HOUR_MS as HOUR, MINUTE_MS as MINUTE } from "../../lib/time.js";

/** A Hyperliquid decimal string: trimmed, but always with a fractional part (`77562.0`, `0.0`). */
export function hlNum(x: number, decimals: number): string {
  const s = trimmed(x, decimals);
  return s.includes(".") ? s : `${s}.0`;
}

/** Hyperliquid price: 5 significant figures and at most 6 − szDecimals decimals. */
export function hlPx(x: number, szDecimals: number): string {
  const maxDec = Math.max(0, 6 - szDecimals);
  return hlNum(roundTo(Number(x.toPrecision(5)), maxDec), maxDec);
}
