/**
 * The shapes of the simulator's perpetual-futures layer (`src/sim/perp-model.ts`): venues, instruments, candles,
 * margin tiers and the model's interface.
 */
import type { MarketModel } from "../market.js";
import { PERP_VENUES, type PerpVenue } from "../../venues/perp/types.js";

/**
 * Derivatives venues the simulator models: every perpetual venue of the service (src/venues/perp/types.ts, the ids of
 * `VENUES`), in that order. Its per-venue tables (`Record<PerpSimVenue, …>`: calibration, listings, the REST and
 * websocket venues) fail to compile until a new venue has its entry (docs/adding-a-venue.md, "The simulator").
 */
export type PerpSimVenue = PerpVenue;
export const PERP_SIM_VENUES: readonly PerpSimVenue[] = PERP_VENUES;

/** One simulated derivatives instrument. Prices handled by the model are per ONE base coin (USD). */
export interface PerpInstrumentSpec {
  readonly venue: PerpSimVenue;
  /**
   * The venue's own symbol (`BTCUSDT`, `1000PEPEUSDT`, `BTC-USDT-SWAP`, `kPEPE`, `BTCUSDT_261225`, `BTCPERP`; Gate
   * `BTC_USDT`; Deribit `BTC-PERPETUAL`, `SOL_USDC-PERPETUAL`).
   */
  readonly symbol: string;
  /** Canonical base (model price key): `BTC`, `PEPE`. */
  readonly base: string;
  /** The venue's base-asset label (`BTC`, `1000PEPE`, `kPEPE`). */
  readonly venueBase: string;
  readonly quote: "USDT" | "USDC" | "USD";
  readonly kind: "perpetual" | "delivery";
  /** Coin-margined, USD-sized contract: OKX `BTC-USD-SWAP` (contracts worth `ctVal` USD), Deribit `BTC-PERPETUAL` / `ETH-PERPETUAL`. */
  readonly inverse: boolean;
  /** Base coins per venue unit (1000 for `1000PEPEUSDT` / `kPEPE`); venue prices and sizes are per unit. */
  readonly multiplier: number;
  /**
   * Contract size. OKX `ctVal`: coins per contract (linear) or USD per contract (inverse). Gate `quanto_multiplier`:
   * coins per contract (BTC_USDT 0.0001). Deribit `contract_size`: USD per contract for the inverse perps (BTC 10,
   * ETH 1; their `amount` is in USD, a multiple of it), 1 for the USDC linear perps (amount in coins). 1 elsewhere.
   */
  readonly ctVal: number;
  /** {@link ctVal} as the venue writes it (`"0.0001"`, `"10"`). */
  readonly ctValStr: string;
  /** Funding interval in hours (0 for dated futures). */
  readonly fundingIntervalHours: number;
  /** Dated futures: delivery time (ms); 0 for perpetuals. */
  readonly deliveryTime: number;
  readonly listTime: number;
  /** Decimals of venue prices (per venue unit) and of venue quantities (venue units, or OKX/Gate contracts). */
  readonly priceDecimals: number;
  readonly qtyDecimals: number;
  /** Price tick, per venue unit: `10^-priceDecimals`, except Deribit's inverse perps (BTC 0.5, ETH 0.05). */
  readonly tickSize: number;
  /** Absolute funding cap per interval (Hyperliquid: per 8h-equivalent). */
  readonly fundingCap: number;
  /** Binance and Aster: listed in `/fapi/v1/fundingInfo` (interval and/or cap adjusted). */
  readonly fundingInfoListed: boolean;
  /**
   * Deribit: funding accrues continuously (every ms) on the 8h rate `fundingIntervalHours = 8` expresses; there are no
   * discrete settlements, and `get_funding_rate_history` reports hourly `interest_1h` / `interest_8h` (read them with
   * `settledFundingRate(inst, hourMs)`, which is the 8h rate over the 8h before `hourMs`). False elsewhere.
   */
  readonly continuousFunding: boolean;
  /** Hyperliquid universe entry flagged `isDelisted`. */
  readonly delisted: boolean;
  /**
   * The venue's main perp of `base`, live: USDT-margined linear; Hyperliquid the USDC perp; Deribit the inverse
   * `BTC-PERPETUAL` / `ETH-PERPETUAL` for BTC/ETH and the `<BASE>_USDC-PERPETUAL` linear perp for the others.
   */
  readonly target: boolean;
  /**
   * Highest leverage of the first margin tier (Binance 125x/75x, Bybit and OKX 100x/50x, Hyperliquid per base; Gate
   * and Bitget 125x/75x, Aster 100x/50x, Deribit 50x inverse / 25x linear).
   */
  readonly maxLeverage: number;
  /** Hyperliquid size decimals. */
  readonly szDecimals: number;
  /** Hash stream of this instrument. */
  readonly stream: number;
}

/** Which long/short statistic: Binance/OKX top traders' positions, Bybit all accounts (buy/sell ratio). */
export type LongShortKind = "top_position" | "account";

/** One candle of the last price, USD per coin; `volumeUsd` is the traded notional. */
export interface SimCandle {
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volumeUsd: number;
}

/** One maintenance-margin tier: positions up to `maxNotionalUsd` (valued at the base's anchor price) may use `maxLeverage`. */
export interface SimMarginTier {
  readonly maxNotionalUsd: number;
  readonly maxLeverage: number;
  /** Maintenance margin rate, fraction of notional. */
  readonly mmr: number;
}

/** The perp model. All prices USD per coin, open interest in coins; venue routers apply multipliers/ctVal. */
export interface PerpModel {
  readonly market: MarketModel;
  /** Every instrument of `venue` at `nowMs` (dated futures roll with time), in the venue's listing order. */
  instruments(venue: PerpSimVenue, nowMs: number): readonly PerpInstrumentSpec[];
  /** Instrument by exact venue symbol, or undefined. */
  instrument(venue: PerpSimVenue, symbol: string, nowMs: number): PerpInstrumentSpec | undefined;
  /** The target perp of canonical `base` on `venue` (undefined when not listed or delisted). */
  perpOf(venue: PerpSimVenue, base: string): PerpInstrumentSpec | undefined;
  /** Spot price from the shared model (no venue deviation). */
  spotPrice(base: string, tsMs: number): number;
  indexPrice(inst: PerpInstrumentSpec, tsMs: number): number;
  premium(inst: PerpInstrumentSpec, tsMs: number): number;
  markPrice(inst: PerpInstrumentSpec, tsMs: number): number;
  lastPrice(inst: PerpInstrumentSpec, tsMs: number): number;
  /**
   * Linearly weighted average premium over [fromMs, toMs] (16 samples; the premium at `fromMs` when empty); for
   * regular perpetuals soft-bounded so funding stays below 0.05 % per 8h (see the header). This is the P̄ of funding.
   */
  avgPremium(inst: PerpInstrumentSpec, fromMs: number, toMs: number): number;
  /** Interest component per interval (0.01 % per 8 h scaled; Hyperliquid: the per-hour share; OKX: 0). */
  interestRate(inst: PerpInstrumentSpec): number;
  /** Start of the funding interval containing `tsMs` (a boundary is the start of the next interval). */
  intervalStart(inst: PerpInstrumentSpec, tsMs: number): number;
  /** Next settlement boundary strictly after `tsMs` (UTC multiple of the interval). */
  nextFundingTime(inst: PerpInstrumentSpec, tsMs: number): number;
  /** Current (accruing) funding rate for the settlement at `nextFundingTime(tsMs)`, per interval. */
  currentFundingRate(inst: PerpInstrumentSpec, tsMs: number): number;
  /** Funding rate settled at boundary `settleMs`, per interval. */
  settledFundingRate(inst: PerpInstrumentSpec, settleMs: number): number;
  /** Average premium used for the settlement at `settleMs`. */
  settledPremium(inst: PerpInstrumentSpec, settleMs: number): number;
  /** Settlement boundaries in [fromMs, toMs], ascending, never before listing. */
  settlementTimes(inst: PerpInstrumentSpec, fromMs: number, toMs: number): number[];
  /** Millisecond jitter the venue adds to a recorded settlement time (Binance/Hyperliquid; 0 elsewhere). */
  settlementJitterMs(inst: PerpInstrumentSpec, settleMs: number): number;
  /** Open interest in base coins. */
  openInterestCoins(inst: PerpInstrumentSpec, tsMs: number): number;
  /**
   * Trading intensity of `inst` in the UTC hour containing `tsMs`, as USD per 24h: the model's aggregate 24h volume
   * at the hour's start × the venue's share. The tape trades at this intensity.
   */
  flowUsdPerDay(inst: PerpInstrumentSpec, tsMs: number): number;
  /** 24h turnover, USD: the hourly {@link flowUsdPerDay} integrated over (tsMs − 24h, tsMs], i.e. what the tape traded. */
  turnover24hUsd(inst: PerpInstrumentSpec, tsMs: number): number;
  /** Long/short ratio (long ÷ short), in [0.6, 2.5]. */
  longShortRatio(inst: PerpInstrumentSpec, kind: LongShortKind, tsMs: number): number;
  /** Open/high/low of mark (or index) over the 24h to `tsMs` (15-minute grid plus both ends), USD per coin. */
  dayStats(inst: PerpInstrumentSpec, tsMs: number, of: "mark" | "index"): { open: number; high: number; low: number };
  /**
   * Last-price candle opening at `openMs` and lasting `durationMs`, as known at `nowMs` (an open candle closes at
   * `nowMs` with pro-rata volume). Deterministic for (seed, instrument, openMs, durationMs, min(close, now)).
   */
  candle(inst: PerpInstrumentSpec, openMs: number, durationMs: number, nowMs: number): SimCandle;
  /** Maintenance-margin tiers of a CEX instrument, first tier first (fixed per instrument; caps strictly rising). */
  marginTiers(inst: PerpInstrumentSpec): readonly SimMarginTier[];
}
