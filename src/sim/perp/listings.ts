/**
 * Who lists what in the simulated perp universe: the bases and their static set-up, per-venue listing quirks
 * (multiplied symbols, absent and delisted bases) and funding intervals and caps that differ from the defaults.
 * Illustrative set-ups, not market data.
 */
import type { PerpSimVenue } from "./types.js";

/** Static per-base set-up: OKX ctVal, Hyperliquid szDecimals / max leverage, perp listing date. */
export interface BaseRow {
  readonly base: string;
  readonly ctVal: string;
  readonly szDecimals: number;
  readonly hlLeverage: number;
  readonly listed: string;
}

/** The simulated perp universe: the 23 catalogue bases plus four perp-only extras (WIF, TIA, INJ, SEI). */
export const BASES: readonly BaseRow[] = [
  { base: "BTC", ctVal: "0.01", szDecimals: 5, hlLeverage: 40, listed: "2019-09-25" },
  { base: "ETH", ctVal: "0.1", szDecimals: 4, hlLeverage: 25, listed: "2019-11-27" },
  { base: "XRP", ctVal: "100", szDecimals: 0, hlLeverage: 20, listed: "2020-01-06" },
  { base: "LTC", ctVal: "1", szDecimals: 2, hlLeverage: 10, listed: "2020-01-09" },
  { base: "TRX", ctVal: "1000", szDecimals: 0, hlLeverage: 10, listed: "2020-01-16" },
  { base: "LINK", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2020-01-17" },
  { base: "ADA", ctVal: "100", szDecimals: 0, hlLeverage: 10, listed: "2020-01-31" },
  { base: "ATOM", ctVal: "1", szDecimals: 2, hlLeverage: 10, listed: "2020-02-07" },
  { base: "BNB", ctVal: "0.01", szDecimals: 3, hlLeverage: 10, listed: "2020-02-10" },
  { base: "DOGE", ctVal: "1000", szDecimals: 0, hlLeverage: 10, listed: "2020-07-10" },
  { base: "DOT", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2020-08-20" },
  { base: "SOL", ctVal: "1", szDecimals: 2, hlLeverage: 20, listed: "2020-09-14" },
  { base: "UNI", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2020-09-18" },
  { base: "AVAX", ctVal: "1", szDecimals: 2, hlLeverage: 10, listed: "2020-09-23" },
  { base: "NEAR", ctVal: "10", szDecimals: 1, hlLeverage: 10, listed: "2020-10-14" },
  { base: "INJ", ctVal: "0.1", szDecimals: 1, hlLeverage: 10, listed: "2020-10-20" },
  { base: "MATIC", ctVal: "10", szDecimals: 1, hlLeverage: 20, listed: "2020-10-22" },
  { base: "SHIB", ctVal: "1000000", szDecimals: 0, hlLeverage: 10, listed: "2021-05-10" },
  { base: "OP", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2022-06-01" },
  { base: "APT", ctVal: "1", szDecimals: 2, hlLeverage: 10, listed: "2022-10-19" },
  { base: "ARB", ctVal: "10", szDecimals: 1, hlLeverage: 10, listed: "2023-03-23" },
  { base: "SUI", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2023-05-03" },
  { base: "PEPE", ctVal: "10000000", szDecimals: 0, hlLeverage: 10, listed: "2023-05-05" },
  { base: "SEI", ctVal: "10", szDecimals: 0, hlLeverage: 10, listed: "2023-08-15" },
  { base: "TIA", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2023-10-31" },
  { base: "TON", ctVal: "1", szDecimals: 1, hlLeverage: 10, listed: "2023-12-01" },
  { base: "WIF", ctVal: "1", szDecimals: 0, hlLeverage: 10, listed: "2024-01-18" },
];

/** Every base the derivatives venues may list (catalogue order is not implied). */
export const SIM_PERP_BASES: readonly string[] = BASES.map((r) => r.base);

/**
 * Bases listed per 1000 coins on Binance/Bybit (`1000PEPEUSDT`) and Hyperliquid (`kPEPE`); plain on OKX (large
 * ctVal instead). Bybit writes SHIB with a suffix, `SHIB1000USDT` (base coin `SHIB1000`), as the real venue does.
 */
export const MULTIPLIED_BASES: Readonly<Record<string, number>> = { PEPE: 1000, SHIB: 1000 };
export const BYBIT_SUFFIX_MULTIPLIED: readonly string[] = ["SHIB"];

/** Catalogue bases a venue does not list at all (partial listing). */
export const ABSENT_BASES: Readonly<Record<PerpSimVenue, readonly string[]>> = {
  binance: [],
  bybit: ["MATIC"],
  okx: [],
  hyperliquid: ["TON"],
};

/** Hyperliquid universe entries flagged `isDelisted: true` (still in meta, zero OI, null premium). */
export const HL_DELISTED_BASES: readonly string[] = ["MATIC"];

/** Funding intervals (hours) that differ from the venue default (8h; Hyperliquid always 1h). */
export const FUNDING_INTERVAL_OVERRIDES: Readonly<Record<PerpSimVenue, Readonly<Record<string, number>>>> = {
  binance: { OP: 4, SEI: 4, TIA: 4, WIF: 4 },
  bybit: { ARB: 4, TIA: 4, WIF: 4, SEI: 1 },
  okx: { NEAR: 4, SEI: 4, WIF: 4 },
  hyperliquid: {},
};

/** Binance symbols whose cap/floor was adjusted while keeping the 8h interval (listed in fundingInfo too). */
export const BINANCE_CAP_ADJUSTED: Readonly<Record<string, number>> = { PEPE: 0.015 };
