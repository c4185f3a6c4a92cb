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

/**
 * Catalogue bases a venue does not list at all (partial listing). Gate and Bitget list every other base (MATIC was
 * migrated to POL); Aster, younger, lists fewer alts; Deribit lists few coins: see {@link DERIBIT_LINEAR_BASES}.
 */
export const ABSENT_BASES: Readonly<Record<PerpSimVenue, readonly string[]>> = {
  binance: [],
  bybit: ["MATIC"],
  okx: [],
  hyperliquid: ["TON"],
  gate: ["MATIC"],
  bitget: ["MATIC"],
  deribit: [],
  aster: ["MATIC", "ATOM", "TIA", "SEI"],
  // HTX: MATIC migrated to POL (illustrative, as Gate and Bitget).
  htx: ["MATIC"],
  // Kraken Futures `PF_` perpetuals: MATIC migrated to POL (illustrative).
  kraken: ["MATIC"],
  // dYdX v4 `<BASE>-USD` markets: MATIC migrated to POL (illustrative).
  dydx: ["MATIC"],
  // Lighter: MATIC migrated to POL (illustrative).
  lighter: ["MATIC"],
};

/**
 * Deribit's perpetuals: the inverse `BTC-PERPETUAL` (contract size 10 USD, tick 0.5) and `ETH-PERPETUAL` (1 USD,
 * tick 0.05) (Deribit contract specifications, https://www.deribit.com/pages/docs/perpetual: "contract size USD 10",
 * "Minimum Tick Size 0.5"), plus USDC-margined linear perps `<BASE>_USDC-PERPETUAL` sized in coins. The linear bases
 * are the catalogue bases found in recorded Deribit instrument lists (public code indexed by the `code` search:
 * SOL, XRP, ADA, AVAX, DOGE, DOT, LINK, TRX, LTC, NEAR, UNI, BNB, with BTC and ETH also as USDC perps).
 */
export const DERIBIT_INVERSE: Readonly<Record<string, { ctVal: string; tickSize: number; priceDecimals: number; listed: string }>> = {
  BTC: { ctVal: "10", tickSize: 0.5, priceDecimals: 1, listed: "2018-08-14" },
  ETH: { ctVal: "1", tickSize: 0.05, priceDecimals: 2, listed: "2019-03-01" },
};
export const DERIBIT_LINEAR_BASES: readonly string[] = ["SOL", "XRP", "ADA", "AVAX", "DOGE", "DOT", "LINK", "TRX", "LTC", "NEAR", "UNI", "BNB"];
/** Listing date of Deribit's USDC linear perps (all listed together; illustrative). */
export const DERIBIT_LINEAR_LISTED = "2022-11-22";

/**
 * Gate USDT futures `quanto_multiplier` (coins per contract). BTC_USDT 0.0001 as in Gate's announcement "Gate
 * Perpetual Futures Info API Add funding_rate_limit Field" (2025-08-13, its `/futures/usdt/contracts` example: also
 * `leverage_max` "125", `funding_interval` 28800, `order_price_round` "0.1"); ETH_USDT 0.01 and DOGE_USDT 10 as in
 * recorded `/futures/usdt/contracts` rows (public code indexed by the `code` search). The others follow Gate's
 * pattern of a contract worth roughly 1-100 USD (illustrative).
 */
export const GATE_QUANTO: Readonly<Record<string, string>> = {
  BTC: "0.0001",
  ETH: "0.01",
  XRP: "10",
  LTC: "0.1",
  TRX: "100",
  LINK: "1",
  ADA: "10",
  ATOM: "1",
  BNB: "0.01",
  DOGE: "10",
  DOT: "1",
  SOL: "1",
  UNI: "1",
  AVAX: "1",
  NEAR: "1",
  INJ: "0.1",
  MATIC: "10",
  SHIB: "10000",
  OP: "1",
  APT: "1",
  ARB: "10",
  SUI: "1",
  PEPE: "10000000",
  SEI: "10",
  TIA: "1",
  TON: "1",
  WIF: "1",
};

/**
 * HTX USDT swaps: `contract_size` coins per contract. BTC-USDT 0.001 and ETH-USDT 0.01 (HTX's contract
 * specifications); other bases a power of ten near 50 USD per contract ({@link htxContractSize}; illustrative).
 */
export const HTX_CONTRACT_SIZE: Readonly<Record<string, number>> = { BTC: 0.001, ETH: 0.01 };

/** An HTX `contract_size`: {@link HTX_CONTRACT_SIZE}, else the power of ten nearest to 50 USD per contract at `anchorUsd`. */
export function htxContractSize(base: string, anchorUsd: number): number {
  return HTX_CONTRACT_SIZE[base] ?? Number(`1e${Math.round(Math.log10(50 / anchorUsd))}`);
}

/** Aster (Binance-compatible) lists the 1000× symbols where Binance does (`1000PEPEUSDT`, `1000SHIBUSDT`). */
export const ASTER_MULTIPLIED: readonly string[] = ["PEPE", "SHIB"];

/** Hyperliquid universe entries flagged `isDelisted: true` (still in meta, zero OI, null premium). */
export const HL_DELISTED_BASES: readonly string[] = ["MATIC"];

/** Funding intervals (hours) that differ from the venue default (8h; Hyperliquid always 1h). Illustrative choices. */
export const FUNDING_INTERVAL_OVERRIDES: Readonly<Record<PerpSimVenue, Readonly<Record<string, number>>>> = {
  binance: { OP: 4, SEI: 4, TIA: 4, WIF: 4 },
  bybit: { ARB: 4, TIA: 4, WIF: 4, SEI: 1 },
  okx: { NEAR: 4, SEI: 4, WIF: 4 },
  hyperliquid: {},
  // Gate `funding_interval` (seconds) is 28800 on most contracts, 14400 on some (DOGE_USDT in recorded contracts rows), 3600 on a few.
  gate: { DOGE: 4, WIF: 4, SEI: 1 },
  // Bitget `fundInterval` per symbol: 8 on most, 4 or 1 on some.
  bitget: { OP: 4, TIA: 4, WIF: 4, SEI: 1 },
  // Deribit: continuous funding expressed per 8h (no overrides).
  deribit: {},
  // Aster `fundingInfo.fundingIntervalHours`: 8 or 4.
  aster: { OP: 4, WIF: 4 },
  // HTX `swap_query_elements.settle_period`: 8 on most swaps, 4 on some (illustrative).
  htx: { WIF: 4, SEI: 4 },
  // Kraken Futures: every hour ({@link HOURLY_VENUES}).
  kraken: {},
  // dYdX v4: every hour ({@link HOURLY_VENUES}).
  dydx: {},
  // Lighter: every hour ({@link HOURLY_VENUES}).
  lighter: {},
};

/**
 * Venues that settle every hour an 8h-formula rate ÷ 8: Hyperliquid ("funding … paid every hour", one eighth of the
 * 8h rate) and Kraken Futures (hourly funding on `PF_` perpetuals, docs/methods/venues/kraken.md; its formula modelled
 * on Hyperliquid's, an analogy) and dYdX v4 (hourly funding from an impact-price premium, docs/methods/venues/dydx.md).
 * Lighter (hourly funding, Hyperliquid's formula: premium ÷ 8 plus a clamped interest, apidocs.lighter.xyz) too.
 * Their instruments' interval is 1 h whatever {@link FUNDING_INTERVAL_OVERRIDES} says.
 */
export const HOURLY_VENUES: readonly PerpSimVenue[] = ["hyperliquid", "kraken", "dydx", "lighter"];

/** Binance symbols whose cap/floor was adjusted while keeping the 8h interval (listed in fundingInfo too). */
export const BINANCE_CAP_ADJUSTED: Readonly<Record<string, number>> = { PEPE: 0.015 };
