/**
 * Number spellings of the DEX venues, as seen in real payloads (src/sim/recordings/{dexscreener,
 * geckoterminal}; https://docs.dexscreener.com/api/reference, https://apiguide.geckoterminal.com). DexScreener: `priceUsd`/`priceNative` strings with 4 significant digits below 1; other values
 * JSON numbers (exponent spelling for huge ones is JSON's own). GeckoTerminal: almost everything a decimal string,
 * never in exponent notation (`"0.00000000329081451040819"`), `"1.0"` for exactly one, `"0.0"` for zero volume.
 */

/** Rewrites a JS exponent spelling (`1.5e-9`, `3e+22`) as a plain decimal; other strings pass through. */
export function plainDecimal(s: string): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const sign = m[1] ?? "";
  const digits = (m[2] ?? "") + (m[3] ?? "");
  const exp = Number(m[4]);
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + "0".repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Drops trailing fractional zeros (and a bare dot). */
export function trimZeros(s: string): string {
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

/** Fixed decimals without exponent even for huge values. */
function fixedPlain(x: number, d: number): string {
  if (Math.abs(x) < 1e21) return x.toFixed(d);
  return plainDecimal(x.toPrecision(21)).split(".")[0] ?? "0";
}

/** A whole number as a decimal string (no exponent): `9173461186`, `7709018451642509000`. */
export function intString(x: number): string {
  if (!Number.isFinite(x)) return "0";
  return BigInt(Math.round(x)).toString();
}

// ---------------------------------------------------------------------------------------------- DexScreener

/** `priceUsd`: 2 decimals from 1 up (`"82269.44"`, `"1.00"`), 4 significant digits below (`"0.0001685"`). */
export function dsPriceUsd(x: number): string {
  if (x >= 1) return fixedPlain(x, 2);
  return plainDecimal(x.toPrecision(4));
}

/** `priceNative`: up to 4 decimals from 1 up (`"105.3723"`, `"1.06"`), 4 significant digits below (`"0.0001200"`). */
export function dsPriceNative(x: number): string {
  if (x >= 1) return trimZeros(fixedPlain(x, 4));
  return plainDecimal(x.toPrecision(4));
}

/** USD amounts and percentages: 2 decimals, as numbers. */
export function ds2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** Token reserves: whole tokens from 10 000 up, else 5 significant digits. */
export function dsReserve(x: number): number {
  return x >= 10_000 ? Math.round(x) : Number(x.toPrecision(5));
}

// ---------------------------------------------------------------------------------------------- GeckoTerminal

/** Prices: 15 significant digits, plain, trailing zeros dropped; exactly 1 → `"1.0"`. */
export function gtPrice(x: number): string {
  if (x === 0) return "0.0";
  const s = trimZeros(plainDecimal(x.toPrecision(15)));
  return s.includes(".") ? s : `${s}.0`;
}

/** USD volumes: 15 significant digits; zero → `"0.0"`. */
export function gtVolume(x: number): string {
  if (x === 0) return "0.0";
  return trimZeros(plainDecimal(x.toPrecision(15)));
}

/** `reserve_in_usd`: 4 decimals, trailing zeros dropped. */
export function gtReserve(x: number): string {
  if (x === 0) return "0.0";
  return trimZeros(fixedPlain(x, 4));
}

/** `market_cap_usd`: 3 decimals, trailing zeros dropped. */
export function gtMcap(x: number): string {
  return trimZeros(fixedPlain(x, 3));
}

/** Percent changes: 2 decimals, shortest spelling (`"-0.4"`, `"0"`, `"0.86"`). */
export function gtPct(x: number): string {
  const r = Math.round(x * 100) / 100;
  return Object.is(r, -0) ? "0" : String(r).includes("e") ? plainDecimal(String(r)) : String(r);
}

/**
 * `base_token_price_quote_token` / `quote_token_price_base_token`: integers from 1e6 (`"303876137"`), 2 decimals
 * from 10 (`"2948.40"`), 8 decimals from 1e-6 (`"0.04707709"`, `"1.16599436"`), 18 decimals below.
 */
export function gtRatio(x: number): string {
  if (x >= 1e6) return fixedPlain(x, 0);
  if (x >= 10) return x.toFixed(2);
  if (x >= 1e-6) return x.toFixed(8);
  return x.toFixed(18);
}

/** GeckoTerminal address spelling: lowercase for EVM, unchanged for Solana. */
export function gtAddress(address: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(address) ? address.toLowerCase() : address;
}

/** A deterministic UUID-shaped id (GeckoTerminal request ids) from four 32-bit hashes. */
export function uuidFrom(words: readonly number[]): string {
  const hex = words
    .map((w) => (w >>> 0).toString(16).padStart(8, "0"))
    .join("")
    .padEnd(32, "0");
  const v = `4${hex.slice(13, 16)}`;
  const r = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16) + hex.slice(17, 20);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${v}-${r}-${hex.slice(20, 32)}`;
}
