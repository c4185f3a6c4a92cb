/**
 * Kraken Futures trade ids of the simulated tape: `uid`, a version-4-shaped UUID (`caa9c653-420b-4c24-a9f1-462a054d86f1`
 * in Kraken's docs), derived from the tape event's hashes so that the REST history, the websocket and the normalised
 * records (`tradeIdOf` in tape.ts) agree. Only the market's mixer is imported, so tape.ts can import this file.
 */
import { mix32 } from "../market.js";

const hex8 = (x: number): string => (x >>> 0).toString(16).padStart(8, "0");

/** A UUID from four 32-bit words, with the version (4) and variant (10xx) bits set. */
function uuidOf(a: number, b: number, c: number, d: number): string {
  const h = hex8(a) + hex8((b & 0xffff0fff) | 0x4000) + hex8((c & 0x3fffffff) | 0x80000000) + hex8(d);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The `uid` of a tape trade (its `seq`, its hash `h` and its instrument's `stream`). */
export function krakenTradeUid(seq: number, h: number, stream: number): string {
  const a = mix32(h ^ Math.imul(seq, 0x9e3779b9));
  const b = mix32(a ^ stream);
  const c = mix32(b + seq);
  return uuidOf(a, b, c, mix32(c ^ h));
}

/** The `uid` of the fill carrying a tape liquidation (its `seq` and its instrument's `stream`). */
export function krakenLiquidationUid(seq: number, stream: number): string {
  return krakenTradeUid(seq, mix32(seq ^ 0x6b72616b), stream); // "krak": liquidation ids differ from trade ids
}
