/**
 * Normalised perpetual-futures records shared by the Binance USDⓈ-M, Bybit v5 linear, OKX v5 swap and
 * Hyperliquid adapters. Conventions (applied once, inside each adapter):
 * - `base` is the canonical base symbol, uppercase, without quote or size multiplier (`BTC`, `PEPE`);
 *   venue symbols (`BTCUSDT`, `1000PEPEUSDT`, `BTC-USDT-SWAP`, `kPEPE`) never leave the adapter.
 * - Prices are USD (USDT/USDC ≈ USD) per ONE base coin, after undoing multipliers (1000PEPE, kPEPE).
 * - Sizes and open interest are in base coins (OKX contracts × ctVal; multipliers undone) and USD.
 * - Funding rates are fractions per funding interval (0.0001 = 0.01% per interval), with the interval in
 *   hours detected per symbol (Binance fundingInfo / default 8; Bybit instruments `fundingInterval`;
 *   OKX nextFundingTime − fundingTime; Hyperliquid 1).
 * - Times are epoch milliseconds.
 */
import { VENUE_WS_URLS, type VenueWsUrls } from "../endpoints.js";

/** A perpetual-futures venue key: a venue of src/venues/endpoints.ts with a trade feed (`ws`). */
export type PerpVenue = keyof VenueWsUrls;
/**
 * Venue keys used in every response (the spec's neutral exchange keys), in answer order: the venues with a trade feed
 * in `ENDPOINTS_BY_VENUE` (src/venues/endpoints.ts), so a new venue's line there lists it here too. This is the id list
 * the layers below the venues key by (they cannot import `VENUES`); `validateVenues` checks `VENUES` against it.
 */
export const PERP_VENUES = VENUE_WS_URLS.map((u) => u.key) as unknown as readonly [PerpVenue, ...PerpVenue[]];

/** A listed perpetual (USDT-margined linear on Binance/Bybit/OKX; USDC perps on Hyperliquid). */
export interface PerpInstrument {
  venue: PerpVenue;
  base: string;
  /** The venue's own symbol (`BTCUSDT`, `BTC-USDT-SWAP`, `BTC`, `1000PEPEUSDT`, `kPEPE`). */
  venueSymbol: string;
  /** Base coins per venue unit: 1000 for `1000PEPEUSDT` / `kPEPE`, else 1 (venue prices are per unit). */
  multiplier: number;
  /** Base coins per contract for sizes quoted in contracts (OKX `ctVal` × multiplier); 1 elsewhere. */
  contractSize: number;
  /** Funding interval in hours when the instrument list states it (Bybit, Hyperliquid); else undefined. */
  fundingIntervalHours?: number;
}

/** Current funding state of one perpetual. */
export interface FundingSnapshot {
  venue: PerpVenue;
  base: string;
  venueSymbol: string;
  /** Current (accruing) rate for the interval that settles at `nextFundingTime`, fraction per interval. */
  fundingRate: number;
  fundingIntervalHours: number;
  nextFundingTime: number | null;
  markPrice: number | null;
  indexPrice: number | null;
  /** Premium index as the venue reports it (fraction), when it does. */
  premium: number | null;
  /** Interest-rate component per interval (Binance `interestRate`), when reported. */
  interestRate: number | null;
  time: number;
}

/** One settled funding payment. */
export interface FundingPoint {
  venue: PerpVenue;
  base: string;
  /** Settlement time. */
  time: number;
  /** Fraction per interval. */
  rate: number;
  /** Mark price at settlement, when the venue reports it (Binance); else null. */
  markPrice: number | null;
}

/** Open interest of one perpetual. */
export interface OpenInterest {
  venue: PerpVenue;
  base: string;
  oiCoins: number;
  oiUsd: number;
  time: number;
}

/** One point of an open-interest history (Binance `openInterestHist`). */
export interface OpenInterestPoint {
  venue: PerpVenue;
  base: string;
  /** Statistic time, epoch ms (end of the period). */
  time: number;
  oiCoins: number;
  oiUsd: number;
}

/** Where a long/short ratio comes from (each venue publishes a different population). */
export type LongShortSource = "top_traders_positions" | "top_traders_accounts" | "all_accounts";

/** Latest long/short ratio of one perpetual. `longRatio + shortRatio = 1`; `lsRatio = long/short`. */
export interface LongShortRatio {
  venue: PerpVenue;
  base: string;
  longRatio: number;
  shortRatio: number;
  lsRatio: number;
  source: LongShortSource;
  /** Sampling period of the venue statistic (`5m`). */
  period: string;
  time: number;
}

/** A predicted next funding rate as published by Hyperliquid's `predictedFundings` (covers HL, Binance, Bybit). */
export interface PredictedFunding {
  venue: PerpVenue;
  base: string;
  /** Fraction per the venue's own interval. */
  rate: number;
  nextFundingTime: number | null;
  fundingIntervalHours: number | null;
}

/**
 * One maintenance-margin tier of a perpetual (public risk-limit tables: OKX `position-tiers`, Bybit
 * `risk-limit`, Hyperliquid `meta.marginTables`). Tiers are sorted by `minNotionalUsd` ascending.
 */
export interface MarginTier {
  venue: PerpVenue;
  base: string;
  /** Lower bound of the position notional this tier applies to, USD (0 for the first tier). */
  minNotionalUsd: number;
  /** Upper bound, USD; null when unbounded (last tier). */
  maxNotionalUsd: number | null;
  /** Highest leverage allowed in this tier. */
  maxLeverage: number;
  /** Maintenance margin rate, fraction of notional (0.004 = 0.4%). */
  maintenanceMarginRate: number;
}

/** One hourly candle of a perpetual's last (trade) price, USD per base coin; volumes in base coins and USD. */
export interface Candle {
  venue: PerpVenue;
  base: string;
  /** Open time, epoch ms. */
  openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volumeCoins: number;
  volumeUsd: number;
}

/**
 * REST client of one perp venue. Every method throws `AppError` (UPSTREAM_* / NOT_FOUND) on failure;
 * callers aggregate venues and degrade to partial answers.
 */
export interface PerpVenueClient {
  readonly venue: PerpVenue;
  /** Listed perpetuals (cached by the client for `instrumentsTtlMs`, default 1 h). */
  instruments(): Promise<PerpInstrument[]>;
  /** The instrument of `base`, or undefined when the venue does not list it. */
  instrument(base: string): Promise<PerpInstrument | undefined>;
  /** Funding state of every listed perpetual in as few calls as the venue allows (extreme scan). */
  fundingAll(): Promise<FundingSnapshot[]>;
  /** Funding state of one perpetual. @throws AppError NOT_FOUND when not listed. */
  funding(base: string): Promise<FundingSnapshot>;
  /** Settled funding, newest first, at most `limit` points. */
  fundingHistory(base: string, limit: number): Promise<FundingPoint[]>;
  /** Open interest in coins and USD. */
  openInterest(base: string): Promise<OpenInterest>;
  /** Latest long/short ratio, or null when the venue publishes none. */
  longShort(base: string): Promise<LongShortRatio | null>;
  /**
   * Maintenance-margin tiers, first tier first (OKX, Bybit, Hyperliquid; Binance's brackets are a signed
   * endpoint, so it has none). @throws AppError NOT_FOUND when not listed.
   */
  marginTiers?(base: string): Promise<MarginTier[]>;
  /** The last `limit` hourly candles (oldest first, the current partial hour included) (Binance, OKX). */
  hourlyCandles?(base: string, limit: number): Promise<Candle[]>;
  /** Hourly open-interest history, oldest first, at most `limit` points (Binance: the last 30 days only). */
  openInterestHistory?(base: string, limit: number): Promise<OpenInterestPoint[]>;
  /**
   * The venue's own published estimate of the next funding rate (Gate `funding_rate_indicative`, Aster
   * `premiumIndex.lastFundingRate`), or null when it publishes none for `base`; absent on venues that never
   * publish one. @throws AppError NOT_FOUND when not listed.
   */
  predictedFunding?(base: string): Promise<PredictedFunding | null>;
}
