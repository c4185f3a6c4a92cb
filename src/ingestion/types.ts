/**
 * Normalised stream records and the venue-feed contract (trade and liquidation websockets of Binance
 * USDⓈ-M, Bybit v5 linear, OKX v5 swaps and Hyperliquid). Conventions, applied once inside each feed:
 * - `base` is the canonical base (`BTC`, `PEPE`); venue symbols never leave the feed.
 * - Prices are USD per ONE coin; sizes are base coins (OKX contracts × ctVal; 1000PEPE/kPEPE undone).
 * - `time` is the venue's event time in epoch ms.
 * - Trade `side` is the TAKER (aggressor) side: Binance `m: true` (buyer is maker) → sell; Bybit `S`,
 *   OKX `side` and Hyperliquid `B`/`A` are the taker side already.
 * - Liquidation `side` is the LIQUIDATED POSITION: `long` = a long was liquidated (price fell). Binance
 *   `o.S` SELL → long; Bybit allLiquidation `S` Buy → long (position side); OKX `posSide`, else the order
 *   side (sell → long).
 */
import { PERP_VENUES, type PerpVenue } from "../venues/perp/types.js";

/**
 * Venues with trade streams (exchange keys of the CVD endpoints): every perpetual venue (a venue definition must have a
 * feed: src/venues/validate.ts), so the ids of src/venues/perp/types.ts, the layers below the venues' key.
 */
export const STREAM_VENUES: readonly PerpVenue[] = PERP_VENUES;
/** A stream venue key. */
export type StreamVenue = PerpVenue;

/** One taker trade. */
export interface Trade {
  venue: StreamVenue;
  base: string;
  /** Venue event time, epoch ms. */
  time: number;
  /** USD per coin. */
  price: number;
  /** Base coins. */
  size: number;
  /** Taker (aggressor) side. */
  side: "buy" | "sell";
  /** Venue trade id (aggregate id on Binance), unique per venue and symbol; used to de-duplicate backfill. */
  id: string;
}

/** One forced liquidation. */
export interface Liquidation {
  venue: StreamVenue;
  base: string;
  /** Venue symbol as published (`BTCUSDT`, `BTC-USDT-SWAP`), for display. */
  venueSymbol: string;
  time: number;
  /** The liquidated position: `long` means a long was closed as price fell. */
  side: "long" | "short";
  /** Bankruptcy/fill price, USD per coin. */
  price: number;
  /** Base coins. */
  size: number;
  valueUsd: number;
}

/** An interval of a venue's stream that was not received (disconnect, silence, rotation overlap). */
export interface StreamGap {
  venue: StreamVenue;
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
}

/** Live state of one venue connection, for `/api/v1/status` and `/metrics`. */
export interface FeedState {
  venue: StreamVenue;
  connected: boolean;
  connectedSince: number | null;
  lastMessageAt: number | null;
  reconnects: number;
  subscribedSymbols: number;
  /** now − venue time of the latest trade, ms (null before any). */
  lagMs: number | null;
}
