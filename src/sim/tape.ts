/**
 * Deterministic trade and liquidation tape of the simulated derivatives venues.
 *
 * ALL TRADES AND LIQUIDATIONS PRODUCED HERE ARE SIMULATED.
 *
 * For every (venue, instrument) the tape is a pure function of (seed, time): time is cut into 1-second slots and each
 * slot's events are derived by hashing (seed, instrument, slot), so the websocket pushes and the REST backfill
 * endpoints serve exactly the same trades for any interval, whenever they are asked.
 * - Trades: a Poisson count per slot, uniform times inside the slot, a taker side biased by the last 15 s price
 *   move, a price around the model's last price (a few bp of short-scale noise, buyers pay the offer), a USD notional
 *   drawn from a two-component log-normal mixture fitted to real trades ({@link TRADE_SIZE_TARGETS}), all rounded
 *   like the venue's wire (tick, lot, OKX contracts, Hyperliquid 5 significant figures). The size scale grows with
 *   the cube root of the instrument's 24h turnover (a bigger venue prints more trades, not only bigger ones) and the
 *   rate (0.3-12 trades/s; Bybit BTC ≈ 2/s, as recorded; Binance BTC ≈ 11/s) is set so that rate × mean size × 24h
 *   equals the venue's hourly trading intensity (`perp.flowUsdPerDay`), which the venues' 24h tickers integrate
 *   (`perp.turnover24hUsd`): the tape's 24h notional and the tickers agree.
 *   Activity rises (up to 3×) when the price moved fast in the last 30 s, normalised so the mean rate is unchanged.
 * - Liquidations (target perps only; Hyperliquid has no public liquidation stream): far more frequent when price moved
 *   fast in the last minute; mostly longs after a fall and shorts after a rise; at most one per symbol per second on
 *   Binance and Aster (forceOrder snapshot semantics) and Deribit (see below), up to three elsewhere; priced at a
 *   bankruptcy price 0.3–0.5 % beyond the market. Binance, Bybit and OKX liquidate a share of their open interest a
 *   day: the base's level (`LIQ_TURNOVER_PRODUCT` ÷ Binance's turnover, calibration.ts) × its liquidation regime (a
 *   smooth day-scale log-normal shared by the base's venues); the move factor is mean-normalised so it bursts without
 *   moving that level. Gate, Bitget, Deribit and Aster are scaled so that their listed symbols together produce
 *   their `per_min` liquidation calibration (`VENUE_CALIBRATION`, calibration.ts) on average (Gate ≈ 1.8/min, Aster ≈ 0.1/min).
 * Ids are derived from the slot (`slot × 16 + index`, monotone per instrument): Binance and Aster aggregate ids `a`
 * (fills `f..l` = `a×4 ..`), OKX `tradeId`, Bybit `seq`, Gate `id`, Deribit `trade_seq` (and `trade_id` =
 * `<currency>-<seq>`), Bitget `tradeId` (`seq × 1000 + a hash digit triple`); Bybit `execId` is a UUID-shaped hash,
 * Hyperliquid `tid` a 50-bit hash. A Deribit liquidation is a trade with a `liquidation` field: its id is the
 * slot's last (`slot × 16 + 15`, never a regular trade's: a slot holds at most 15 trades).
 * Normalised records follow `src/ingestion/types.ts` (USD per coin, base coins, taker side, liquidated position side).
 */
import { LRUCache } from "lru-cache";
import type { Liquidation, StreamVenue, Trade } from "../ingestion/types.js";
import { fnv1a, hash4, mix32, normalFromHash, type MarketModel } from "./market.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue } from "./perp-model.js";
import { LIQ_REGIME_SD, LIQ_TURNOVER_PRODUCT, LIQ_TURNOVER_PRODUCT_MEDIAN, liquidationsPerMin, OI_PER_DAILY_VOLUME, OI_SHARE, VOLUME_SHARE } from "./perp/calibration.js";
import { createPerpNoise } from "./perp/noise.js";
import { dydxTradeId } from "./venues/dydx-wire.js";
import { krakenTradeUid } from "./venues/kraken-ids.js";
import { lighterTradeId } from "./venues/lighter-wire.js";
import { fixed, hlNum, hlPx, roundTo, trimmed } from "./venues/wire.js";
import { intMemo } from "./int-memo.js";

/** Slot length of the tape (ms). */
export const TAPE_SLOT_MS = 1000;
/** Mids at slot starts cached per instrument (a power of two: 4,096 seconds, 64 KB per instrument). */
const MID_CACHE_SLOTS = 4096;
/** Id space per slot (trade index < 16). */
const IDS_PER_SLOT = 16;
const MAX_TRADES_PER_SLOT = 15;
/** Longest interval one tape query may span. */
const MAX_QUERY_MS = 7 * 86_400_000;
/** Slots scanned at most when looking for the previous/next trades. */
const MAX_SCAN_SLOTS = 6 * 3600;
/**
 * Computed slots kept per cache (least recently used go first). The tape is a pure function, so the cache only
 * saves CPU: the websocket pushes re-read the current slot every tick, backfills re-read a few recent minutes. 4096
 * slots cover the last two minutes of 32 instruments (the 8 pre-subscribed symbols on 4 venues) and hold a few MB;
 * the former clear-at-100,000 let a streaming simulator grow by about 2 MB per minute for almost an hour (issue 16).
 */
const SLOT_CACHE_MAX = 4096;
/** Hourly flow entries kept (one per instrument and hour asked for). */
const FLOW_CACHE_MAX = 4096;
/** The events of a slot without any: shared, so that the many empty slots cost no memory of their own. */
const NO_EVENTS: readonly never[] = Object.freeze([]);

/** Base rate of the new four venues' liquidations (per second and symbol, before activity and `liqScale`). */
const LIQ_BASE_RATE = 0.004;
/** Mean USD notional of a tape liquidation: 8,000 × E[exp(1.3 z)] (the clamp to 0.01..80 moves it by under 0.1 %). */
const LIQ_NOTIONAL_MEAN = 8000 * Math.exp(1.3 ** 2 / 2);
/** Binance's nominal turnover in the model (24h volume ÷ OI): its volume share ÷ (OI per daily volume × its OI share). */
const BINANCE_TURNOVER = VOLUME_SHARE.binance / (OI_PER_DAILY_VOLUME * OI_SHARE.binance);
/** Period of the liquidation regime's smooth noise. */
const LIQ_REGIME_PERIOD_MS = 86_400_000;
/** Index of a Deribit liquidation trade inside its slot's id space (regular trades use 0..14). */
const DERIBIT_LIQ_INDEX = 15;
/** Venues whose liquidation feed carries at most one liquidation per symbol per second (`forceOrder` snapshots; Deribit: see the header). */
const ONE_LIQ_PER_SLOT: readonly PerpSimVenue[] = ["binance", "aster", "deribit"];

/**
 * Real USD trade sizes the tape is calibrated to (`bybit/cryptofeed_v5_ws_linear_spot_publicTrade_tickers_kline_
 * 2026-08-09.ndjson`, linear `publicTrade` fills, price × size): BTCUSDT (56 fills, turnover24h 1.14e9) p50 $456,
 * p90 $18.8k, p99 $93k (max $108k), mean $8.2k; BTC+ETH+SOL pooled (244 fills) p50 $305, p90 $7.6k, p99 $74k.
 * Small samples: the p99 of 56 fills is close to their maximum. Older, smaller markets for comparison (Binance USD-M
 * `aggTrade`, `binance/cryptofeed_usdm_ws_aggTrade_5symbols_2021-04-05.ndjson`, 574 trades of five small caps):
 * p50 $198, p90 $881, p99 $2.6k.
 */
export const TRADE_SIZE_TARGETS = {
  btcBybit: { p50: 456, p90: 18_753, p99: 93_195, turnover24hUsd: 1.1426e9 },
  majorsBybit: { p50: 305, p90: 7_612, p99: 73_728 },
} as const;

/**
 * Notional = unit × X, X = exp(1.2 z) with probability 0.8, else exp(4 + z) (retail fills plus a block-trade
 * component). Quantiles of X: p50 1.465, p90 54.8, p99 283 (ratios 37 and 193, real BTC 41 and 204); mean 19.65.
 */
const SIZE_MIX = { bigWeight: 0.2, smallSd: 1.2, bigLogMedian: 4, bigSd: 1, median: 1.465, mean: 19.65 } as const;
/** Size unit (USD) of an instrument turning over {@link TRADE_SIZE_TARGETS}.btcBybit's turnover; ∝ sqrt(turnover). */
const SIZE_UNIT_REF = TRADE_SIZE_TARGETS.btcBybit.p50 / SIZE_MIX.median;
/** Trades per second, before the activity factor: at least 0.3 (a live tape), at most 12 (cost). */
const MIN_RATE = 0.3;
const MAX_RATE = 12;
/** Slots sampled (once per instrument) to estimate the mean activity factor; spaced 7,919 s from 2026-01-01. */
const ACTIVITY_SAMPLES = 128;
const ACTIVITY_T0 = Date.UTC(2026, 0, 1);

const SALT = {
  count: 0x7a9e0001,
  time: 0x7a9e0002,
  trade: 0x7a9e0003,
  liqCount: 0x7a9e0004,
  liqTime: 0x7a9e0005,
  liq: 0x7a9e0006,
  micro: 0x7a9e0007,
  liqRegime: 0x7a9e0008,
} as const;

/** One trade of the tape, in the venue's own units (see {@link normaliseTrade}). */
export interface TapeTrade {
  readonly inst: PerpInstrumentSpec;
  /** Trade time, epoch ms. */
  readonly time: number;
  /** `slot × 16 + index`: monotone per instrument; Binance `a`, OKX `tradeId`, Bybit `seq`. */
  readonly seq: number;
  /** Taker side. */
  readonly side: "buy" | "sell";
  /** Venue price string (per venue unit: 1000 coins for 1000PEPEUSDT / kPEPE). */
  readonly px: string;
  /** Venue size string (venue units; OKX contracts). */
  readonly sz: string;
  /** Binance fills merged into this aggregate trade (1..3). */
  readonly fills: number;
  /** 32-bit hash the string ids derive from. */
  readonly h: number;
}

/** One forced liquidation of the tape, in the venue's own units. */
export interface TapeLiquidation {
  readonly inst: PerpInstrumentSpec;
  readonly time: number;
  readonly seq: number;
  /** The liquidated position (`long` = a long was closed, the liquidation order SELLs). */
  readonly side: "long" | "short";
  /** Bankruptcy price string (per venue unit). */
  readonly px: string;
  /** Size string (venue units; OKX contracts). */
  readonly sz: string;
}

/** The tape as tests see it (`sim.tape`): normalised records per `src/ingestion/types.ts`. */
export interface SimTape {
  /**
   * Trades of the venue's main perp of `base` with `fromMs <= time < toMs`, oldest first (ties by id). Pure: the same
   * for any call at any time, including intervals not yet pushed. Throws RangeError for an unlisted base or a span
   * over 7 days.
   */
  trades(venue: PerpSimVenue, base: string, fromMs: number, toMs: number): Trade[];
  /** Liquidations of `base` (or of every listed base when `base` is `"*"`) in [fromMs, toMs), oldest first. */
  liquidations(venue: PerpSimVenue, base: string, fromMs: number, toMs: number): Liquidation[];
}

/** Full tape API used by the venue routers and the websocket hub. */
export interface Tape extends SimTape {
  readonly perp: PerpModel;
  /** Raw trades of `inst` with `fromMs <= time < toMs`, ascending. */
  tradesOf(inst: PerpInstrumentSpec, fromMs: number, toMs: number): TapeTrade[];
  /** Raw liquidations of `inst` with `fromMs <= time < toMs`, ascending (empty for non-target instruments). */
  liquidationsOf(inst: PerpInstrumentSpec, fromMs: number, toMs: number): TapeLiquidation[];
  /** Up to `limit` trades matching `keep` with `time < beforeMs` and `time >= minMs`, NEWEST first. */
  tradesBefore(inst: PerpInstrumentSpec, beforeMs: number, limit: number, minMs?: number, keep?: (t: TapeTrade) => boolean): TapeTrade[];
  /** Up to `limit` trades matching `keep` with `fromMs <= time < toMs`, OLDEST first. */
  tradesFrom(inst: PerpInstrumentSpec, fromMs: number, limit: number, toMs: number, keep?: (t: TapeTrade) => boolean): TapeTrade[];
  /**
   * Bybit tick directions (`PlusTick`, `ZeroPlusTick`, `MinusTick`, `ZeroMinusTick`) of `trades`, a contiguous run
   * of the tape: each compares the trade with the previous ones (up to 8 back), so it is pure too.
   */
  tickDirections(trades: readonly TapeTrade[]): string[];
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));
const unit = (h: number): number => h / 4294967296;
const hex8 = (x: number): string => (x >>> 0).toString(16).padStart(8, "0");
const sub = (h: number, k: number): number => mix32(h ^ Math.imul(k, 0x9e3779b9));

/** Poisson(λ) draw by inverse CDF from a uniform `u`, capped at `max`. */
function poisson(lambda: number, u: number, max: number): number {
  let p = Math.exp(-lambda);
  let cdf = p;
  let k = 0;
  while (u > cdf && k < max) {
    k += 1;
    p *= lambda / k;
    cdf += p;
  }
  return k;
}

// ---------------------------------------------------------------- ids and normalisation

/** Binance aggregate-trade fields (`a`, `p`, `q`, `f`, `l`, `T`, `m`). `m` = buyer is maker = the taker sold. */
export function binanceAggFields(t: TapeTrade): { a: number; p: string; q: string; f: number; l: number; T: number; m: boolean } {
  const f = t.seq * 4;
  return { a: t.seq, p: t.px, q: t.sz, f, l: f + t.fills - 1, T: t.time, m: t.side === "sell" };
}

/** Bybit `execId` / WS `i`: a version-5-UUID-shaped hash. */
export function bybitExecId(t: TapeTrade): string {
  const a = hex8(sub(t.h, 1));
  const b = hex8(sub(t.h, 2));
  const c = hex8(sub(t.h, 3));
  const d = hex8(sub(t.h, 4));
  const y = "89ab"[sub(t.h, 5) & 3] as string;
  return `${a}-${b.slice(0, 4)}-5${b.slice(5, 8)}-${y}${c.slice(1, 4)}-${c.slice(4, 8)}${d}`;
}

/** OKX `tradeId`. */
export const okxTradeId = (t: TapeTrade): string => String(t.seq);

/** Hyperliquid `tid`: a 50-bit hash. */
export function hlTid(t: TapeTrade): number {
  return (sub(t.h, 6) & 0x3ffff) * 4294967296 + sub(t.h, 7);
}

/** Hyperliquid transaction `hash` (0x + 64 hex). */
export function hlHash(t: TapeTrade): string {
  let s = "0x";
  for (let k = 10; k < 18; k++) s += hex8(sub(t.h, k));
  return s;
}

/** Hyperliquid `users`: [buyer, seller] pseudo addresses. */
export function hlUsers(t: TapeTrade): [string, string] {
  const addr = (k0: number): string => {
    let s = "0x";
    for (let k = k0; k < k0 + 5; k++) s += hex8(sub(t.h, k));
    return s;
  };
  return [addr(20), addr(30)];
}

/** Aster aggregate-trade fields: Aster's `<s>@aggTrade` is Binance's wire, so the same fields (see {@link binanceAggFields}). */
export const asterAggFields = binanceAggFields;

/** Gate futures trade `id` (an integer; REST `/futures/usdt/trades` and WS `futures.trades`). */
export const gateTradeId = (t: TapeTrade): number => t.seq;

/**
 * Gate's signed trade `size`: whole contracts of `quanto_multiplier` coins, negative when the taker sold (`t.sz` is
 * the unsigned contract count).
 */
export const gateSignedSize = (t: TapeTrade): number => (t.side === "sell" ? -Number(t.sz) : Number(t.sz));

/** Bitget `tradeId`: a decimal string, increasing per symbol (`seq × 1000` plus three hash digits). */
export const bitgetTradeId = (t: TapeTrade): string => String(t.seq * 1000 + (sub(t.h, 8) % 1000));

/** Deribit's id prefix of an instrument: `BTC-PERPETUAL` → `BTC`, `SOL_USDC-PERPETUAL` → `SOL_USDC`. */
const deribitCurrency = (inst: PerpInstrumentSpec): string => inst.symbol.replace(/-PERPETUAL$/, "");

/** Deribit `trade_seq`: increasing per instrument (a trade or a liquidation trade of the tape). */
export const deribitTradeSeq = (e: TapeTrade | TapeLiquidation): number => e.seq;

/** Deribit `trade_id`, `"<currency>-<seq>"` (`"BTC-28470950"`, `"SOL_USDC-28470950"`), of a trade or a liquidation trade. */
export const deribitTradeId = (e: TapeTrade | TapeLiquidation): string => `${deribitCurrency(e.inst)}-${e.seq}`;

/** Deribit `tick_direction` codes of the tape's tick directions ({@link Tape.tickDirections}). */
export const DERIBIT_TICK_DIRECTION: Readonly<Record<string, 0 | 1 | 2 | 3>> = { PlusTick: 0, ZeroPlusTick: 1, MinusTick: 2, ZeroMinusTick: 3 };

/**
 * A Deribit liquidation as the trade it is on `trades.{instrument}.raw`: `liquidation` says who was liquidated (`"T"`
 * the taker, `"M"` the maker, `"MT"` both; 80/15/5 % by a hash), `direction` is the taker's side. A liquidated long
 * sells: as taker (`T`, `MT`) its sell is the direction; as maker (`M`) the taker bought from it.
 */
export function deribitLiquidationTrade(l: TapeLiquidation): { trade_id: string; trade_seq: number; liquidation: "M" | "T" | "MT"; direction: "buy" | "sell" } {
  const u = sub(l.seq ^ l.inst.stream, 9) % 100;
  const liquidation = u < 80 ? "T" : u < 95 ? "M" : "MT";
  const orderSide = l.side === "long" ? "sell" : "buy";
  const direction = liquidation === "M" ? (orderSide === "sell" ? "buy" : "sell") : orderSide;
  return { trade_id: deribitTradeId(l), trade_seq: l.seq, liquidation, direction };
}

/** The venue trade id the normalised record carries (`Trade.id`). */
export function tradeIdOf(t: TapeTrade): string {
  switch (t.inst.venue) {
    case "binance":
    case "okx":
    case "gate":
    case "aster":
    case "htx":
      return String(t.seq);
    case "bybit":
      return bybitExecId(t);
    case "hyperliquid":
      return String(hlTid(t));
    case "bitget":
      return bitgetTradeId(t);
    case "deribit":
      return deribitTradeId(t);
    case "kraken":
      return krakenTradeUid(t.seq, t.h, t.inst.stream);
    case "dydx":
      return dydxTradeId(t);
    case "lighter":
      return String(lighterTradeId(t));
  }
}

/**
 * USD per coin and base coins of a venue price/size pair: OKX contracts × ctVal (inverse: USD ÷ price), Gate
 * (and HTX) contracts × quanto_multiplier (`contract_size`), Deribit inverse `amount` USD ÷ price (linear: coins), elsewhere per venue unit.
 */
function unitsToCoins(inst: PerpInstrumentSpec, px: string, sz: string): { price: number; size: number } {
  const p = Number(px);
  const s = Number(sz);
  if (inst.venue === "okx") return { price: p, size: inst.inverse ? (s * inst.ctVal) / p : s * inst.ctVal };
  if (inst.venue === "gate" || inst.venue === "htx") return { price: p, size: s * inst.ctVal };
  if (inst.venue === "deribit") return { price: p, size: inst.inverse ? s / p : s };
  return { price: p / inst.multiplier, size: s * inst.multiplier };
}

/**
 * A tape trade as a consumer normalises the wire: price `Number(px) / multiplier` (OKX, Gate, Deribit: `Number(px)`),
 * size `Number(sz) × multiplier` (OKX: contracts × ctVal; Gate: contracts × quanto_multiplier; Deribit inverse: USD ÷
 * price), taker side, id per {@link tradeIdOf}.
 */
export function normaliseTrade(t: TapeTrade): Trade {
  const { price, size } = unitsToCoins(t.inst, t.px, t.sz);
  return { venue: streamVenue(t.inst), base: t.inst.base, time: t.time, price, size, side: t.side, id: tradeIdOf(t) };
}

/** The stream-venue key of an instrument's venue: the same ids (every perp venue has a feed). */
const streamVenue = (inst: PerpInstrumentSpec): StreamVenue => inst.venue;

/** A tape liquidation normalised (`valueUsd` = price × size). */
export function normaliseLiquidation(l: TapeLiquidation): Liquidation {
  const { price, size } = unitsToCoins(l.inst, l.px, l.sz);
  return {
    venue: streamVenue(l.inst),
    base: l.inst.base,
    venueSymbol: l.inst.symbol,
    time: l.time,
    side: l.side,
    price,
    size,
    valueUsd: price * size,
  };
}

// ---------------------------------------------------------------- the tape

/** Builds the tape of `market` (same seed ⇒ same tape). */
export function createTape(market: MarketModel): Tape {
  const perp = perpModelFor(market);
  const seedH = fnv1a(`marketgate-sim-tape:${String(market.seed)}`);
  const tradeCache = new LRUCache<string, readonly TapeTrade[]>({ max: SLOT_CACHE_MAX });
  const liqCache = new LRUCache<string, readonly TapeLiquidation[]>({ max: SLOT_CACHE_MAX });

  /** Activity factor of slot `slot`: 1 + min(2, 0.5 |r30| / sd of a 30 s move), in [1, 3]. */
  function activity(inst: PerpInstrumentSpec, slot: number): number {
    const r30 = Math.log(midAtSlot(inst, slot) / midAtSlot(inst, slot - 30_000 / TAPE_SLOT_MS));
    return 1 + Math.min(2, (0.5 * Math.abs(r30)) / (sigmaMin(inst) * Math.SQRT1_2));
  }
  /** Mean activity factor of `inst` (estimated once from fixed slots), so activity leaves the mean rate unchanged. */
  const activityMeans = new Map<string, number>();
  function activityMean(inst: PerpInstrumentSpec): number {
    const key = `${inst.venue}:${inst.symbol}`;
    let m = activityMeans.get(key);
    if (m === undefined) {
      let sum = 0;
      for (let k = 0; k < ACTIVITY_SAMPLES; k++) sum += activity(inst, (ACTIVITY_T0 + k * 7_919_000) / TAPE_SLOT_MS);
      m = sum / ACTIVITY_SAMPLES;
      activityMeans.set(key, m);
    }
    return m;
  }

  /** Trade rate (per second, before activity) and size unit (USD) of `inst` in the hour containing `t`. */
  const flowCache = new LRUCache<string, { rate: number; unit: number }>({ max: FLOW_CACHE_MAX });
  function flowOf(inst: PerpInstrumentSpec, t: number): { rate: number; unit: number } {
    const hour = Math.floor(t / 3_600_000);
    return cached(flowCache, `${inst.venue}:${inst.symbol}:${hour}`, () => {
      const turnover = Math.max(1, perp.flowUsdPerDay(inst, hour * 3_600_000));
      const natural = SIZE_UNIT_REF * Math.cbrt(turnover / TRADE_SIZE_TARGETS.btcBybit.turnover24hUsd);
      const rate = clamp(turnover / 86_400 / (natural * SIZE_MIX.mean), MIN_RATE, MAX_RATE);
      return { rate, unit: turnover / 86_400 / (rate * SIZE_MIX.mean) };
    });
  }
  /** A trade's USD notional from its hash (see {@link SIZE_MIX}). */
  function notionalOf(unitUsd: number, h: number): number {
    const big = unit(sub(h, 40)) < SIZE_MIX.bigWeight;
    const zz = clamp(normalFromHash(sub(h, 3)), -4, 4);
    return unitUsd * Math.exp(big ? SIZE_MIX.bigLogMedian + SIZE_MIX.bigSd * zz : SIZE_MIX.smallSd * zz);
  }

  /** Liquidation activity of a base on the new four venues: 0.5-4.5 by its aggregate volume. */
  const baseLiqActivity = (inst: PerpInstrumentSpec): number => clamp(0.6 + Math.log10(market.params(inst.base).volume24hUsd / 1e8), 0.5, 4.5);

  const noise = createPerpNoise(market);
  /**
   * Share of open interest a Binance, Bybit or OKX perp of `base` liquidates per day at `t`: the base's level × its
   * regime, exp(LIQ_REGIME_SD × a smooth unit normal of day period).
   */
  function liqShareOfOi(base: string, t: number): number {
    const level = (LIQ_TURNOVER_PRODUCT[base] ?? LIQ_TURNOVER_PRODUCT_MEDIAN) / BINANCE_TURNOVER;
    return level * Math.exp(LIQ_REGIME_SD * noise.unitNoise(fnv1a(`liq-regime:${base}`), SALT.liqRegime, t, LIQ_REGIME_PERIOD_MS));
  }
  /** Liquidations per second of `inst` in the hour containing `t`, before the move factor (Binance, Bybit and OKX). */
  const liqRateCache = new LRUCache<string, { rate: number }>({ max: FLOW_CACHE_MAX });
  function oiLiqRate(inst: PerpInstrumentSpec, t: number): number {
    const hour = Math.floor(t / 3_600_000);
    return cached(liqRateCache, `${inst.venue}:${inst.symbol}:${hour}`, () => {
      const h = hour * 3_600_000;
      const oiUsd = perp.openInterestCoins(inst, h) * perp.markPrice(inst, h);
      return { rate: (oiUsd * liqShareOfOi(inst.base, h)) / 86_400 / LIQ_NOTIONAL_MEAN / liqMoveFactorMean(inst) };
    }).rate;
  }
  /** Liquidation activity of a new venue's perp: the base's activity × the venue's scale. */
  const liqActivity = (inst: PerpInstrumentSpec): number => baseLiqActivity(inst) * liqScale(inst.venue);

  /** Mean move factor `1 + 0.5 move²` of a liquidation slot (estimated once per instrument from fixed slots, like the trade activity). */
  const moveMeans = new Map<string, number>();
  function liqMoveFactorMean(inst: PerpInstrumentSpec): number {
    const key = `${inst.venue}:${inst.symbol}`;
    let m = moveMeans.get(key);
    if (m === undefined) {
      let sum = 0;
      for (let k = 0; k < ACTIVITY_SAMPLES; k++) {
        const t0 = ACTIVITY_T0 + k * 7_919_000;
        const move = Math.abs(Math.log(mid(inst, t0) / mid(inst, t0 - 60_000))) / sigmaMin(inst);
        sum += 1 + 0.5 * move * move;
      }
      m = sum / ACTIVITY_SAMPLES;
      moveMeans.set(key, m);
    }
    return m;
  }
  /**
   * Venue factor of a new venue: its target perps' expected liquidations at factor 1 (base rate × base activity ×
   * mean move factor, per minute) scaled to its `per_min` calibration (`VENUE_CALIBRATION`).
   */
  const liqScales = new Map<PerpSimVenue, number>();
  function liqScale(venue: PerpSimVenue): number {
    let f = liqScales.get(venue);
    if (f === undefined) {
      let perMin = 0;
      for (const inst of perp.instruments(venue, ACTIVITY_T0)) {
        if (inst.target) perMin += ((60 * LIQ_BASE_RATE * baseLiqActivity(inst)) / 3) * liqMoveFactorMean(inst);
      }
      f = perMin > 0 ? (liquidationsPerMin(venue) ?? 0) / perMin : 0;
      liqScales.set(venue, f);
    }
    return f;
  }

  /** Typical (1 sd) 1-minute log move of the instrument's base. */
  const sigmaMin = (inst: PerpInstrumentSpec): number => market.params(inst.base).annualVol / Math.sqrt(525_960);

  /** Short-scale (5 s) value noise, for a livelier intra-minute price. */
  function micro(inst: PerpInstrumentSpec, t: number): number {
    const period = 5000;
    const k = Math.floor(t / period);
    const f = t / period - k;
    const z0 = normalFromHash(hash4(seedH ^ SALT.micro, inst.stream, k | 0, 0));
    const z1 = normalFromHash(hash4(seedH ^ SALT.micro, inst.stream, (k + 1) | 0, 0));
    return z0 * (1 - f) + z1 * f;
  }

  /** Traded mid, USD per coin. */
  function mid(inst: PerpInstrumentSpec, t: number): number {
    const amp = 0.0003 * market.params(inst.base).annualVol;
    return perp.lastPrice(inst, t) * (1 + amp * micro(inst, t));
  }

  // Mids at whole seconds, direct-mapped per instrument: each slot's start is read again by the slots 30 s (trade
  // activity) and 60 s (liquidation move) later. A pure function of (seed, instrument, time), so always exact.
  const midAtSlot = intMemo(MID_CACHE_SLOTS, (inst: PerpInstrumentSpec, slot: number) => mid(inst, slot * TAPE_SLOT_MS));

  /** Venue strings of a price (USD per coin) and a notional (USD). */
  function format(inst: PerpInstrumentSpec, pxCoin: number, notional: number): { px: string; sz: string } {
    const coins = notional / pxCoin;
    switch (inst.venue) {
      case "binance":
      case "bybit": {
        const pd = inst.priceDecimals;
        const qd = inst.qtyDecimals;
        const units = Math.max(10 ** -qd, roundTo(coins / inst.multiplier, qd));
        return { px: fixed(roundTo(pxCoin * inst.multiplier, pd), pd), sz: fixed(units, qd) };
      }
      case "okx": {
        const pd = inst.priceDecimals;
        const qd = inst.qtyDecimals;
        const contracts = Math.max(10 ** -qd, roundTo(inst.inverse ? notional / inst.ctVal : coins / inst.ctVal, qd));
        return { px: trimmed(roundTo(pxCoin, pd), pd), sz: trimmed(contracts, qd) };
      }
      case "hyperliquid": {
        const sd = inst.szDecimals;
        const units = Math.max(10 ** -sd, roundTo(coins / inst.multiplier, sd));
        return { px: hlPx(pxCoin * inst.multiplier, sd), sz: hlNum(units, sd) };
      }
      case "bitget":
      case "aster":
      case "kraken":
      case "dydx":
      case "lighter": {
        // Binance-like: price per venue unit, size in venue units (coins; Aster 1000PEPE units).
        const pd = inst.priceDecimals;
        const qd = inst.qtyDecimals;
        const units = Math.max(10 ** -qd, roundTo(coins / inst.multiplier, qd));
        return { px: fixed(roundTo(pxCoin * inst.multiplier, pd), pd), sz: fixed(units, qd) };
      }
      case "gate":
      case "htx": {
        // Whole contracts of `quanto_multiplier` (Gate) or `contract_size` (HTX) coins (the sign of Gate's `size` is added by `gateSignedSize`).
        const contracts = Math.max(1, Math.round(coins / inst.ctVal));
        return { px: trimmed(roundTo(pxCoin, inst.priceDecimals), inst.priceDecimals), sz: String(contracts) };
      }
      case "deribit": {
        // Inverse: `amount` in USD, a multiple of the contract size; linear USDC: coins. Prices on the tick.
        const px = fixed(roundTo(Math.round(pxCoin / inst.tickSize) * inst.tickSize, inst.priceDecimals), inst.priceDecimals);
        if (inst.inverse) return { px, sz: String(Math.max(1, Math.round(notional / inst.ctVal)) * inst.ctVal) };
        const qd = inst.qtyDecimals;
        return { px, sz: fixed(Math.max(10 ** -qd, roundTo(coins, qd)), qd) };
      }
    }
  }

  function cached<T extends object>(cache: LRUCache<string, T>, key: string, make: () => T): T {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const v = make();
    cache.set(key, v);
    return v;
  }

  /** Sorted in-slot offsets (ms) of `n` events. */
  function offsets(salt: number, inst: PerpInstrumentSpec, slot: number, n: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(hash4(seedH ^ salt, inst.stream, slot, i) % TAPE_SLOT_MS);
    return out.sort((a, b) => a - b);
  }

  function slotTrades(inst: PerpInstrumentSpec, slot: number): readonly TapeTrade[] {
    return cached(tradeCache, `${inst.venue}:${inst.symbol}:${slot}`, () => {
      const t0 = slot * TAPE_SLOT_MS;
      if (t0 + TAPE_SLOT_MS <= inst.listTime || (inst.deliveryTime > 0 && t0 >= inst.deliveryTime) || inst.delisted) return NO_EVENTS;
      // Activity: up to 3× the base rate when the last 30 s moved several "typical" 30 s moves (mean-normalised).
      const flow = flowOf(inst, t0);
      const lambda = (flow.rate / activityMean(inst)) * activity(inst, slot);
      const n = poisson(lambda, unit(hash4(seedH ^ SALT.count, inst.stream, slot, 0)), MAX_TRADES_PER_SLOT);
      if (n === 0) return NO_EVENTS;
      const offs = offsets(SALT.time, inst, slot, n);
      const out: TapeTrade[] = [];
      for (let i = 0; i < n; i++) {
        const time = t0 + (offs[i] as number);
        const h = hash4(seedH ^ SALT.trade, inst.stream, slot, i);
        const m = mid(inst, time);
        const r = Math.log(m / mid(inst, time - 15_000));
        const side = unit(sub(h, 1)) < 0.5 + 0.3 * Math.tanh(r / 0.0003) ? "buy" : "sell";
        const pxCoin = m * (1 + (side === "buy" ? 1 : -1) * 0.00004 + 0.00002 * normalFromHash(sub(h, 2)));
        const notional = notionalOf(flow.unit, h);
        const { px, sz } = format(inst, pxCoin, notional);
        out.push({ inst, time, seq: slot * IDS_PER_SLOT + i, side, px, sz, fills: 1 + (sub(h, 4) % 3), h });
      }
      return out;
    });
  }

  function slotLiquidations(inst: PerpInstrumentSpec, slot: number): readonly TapeLiquidation[] {
    if (!inst.target || inst.venue === "hyperliquid") return NO_EVENTS;
    return cached(liqCache, `${inst.venue}:${inst.symbol}:${slot}`, () => {
      const t0 = slot * TAPE_SLOT_MS;
      if (t0 + TAPE_SLOT_MS <= inst.listTime) return NO_EVENTS;
      // Far more frequent when the last minute moved several typical 1-minute moves.
      const r60 = Math.log(midAtSlot(inst, slot) / midAtSlot(inst, slot - 60_000 / TAPE_SLOT_MS));
      const move = Math.abs(r60) / sigmaMin(inst);
      const atRest = liquidationsPerMin(inst.venue) !== undefined ? (LIQ_BASE_RATE * liqActivity(inst)) / 3 : oiLiqRate(inst, t0);
      const lambda = Math.min(1.5, atRest * (1 + 0.5 * move * move));
      const u = unit(hash4(seedH ^ SALT.liqCount, inst.stream, slot, 0));
      const n = ONE_LIQ_PER_SLOT.includes(inst.venue) ? (u < 1 - Math.exp(-lambda) ? 1 : 0) : poisson(lambda, u, 3);
      if (n === 0) return NO_EVENTS;
      const offs = offsets(SALT.liqTime, inst, slot, n);
      const out: TapeLiquidation[] = [];
      for (let i = 0; i < n; i++) {
        const time = t0 + (offs[i] as number);
        const h = hash4(seedH ^ SALT.liq, inst.stream, slot, i);
        const side = unit(sub(h, 1)) < 0.5 - 0.45 * Math.tanh(r60 / sigmaMin(inst)) ? "long" : "short";
        const beyond = 0.003 + 0.002 * unit(sub(h, 2));
        const pxCoin = mid(inst, time) * (1 + (side === "long" ? -beyond : beyond));
        const notional = 8000 * clamp(Math.exp(1.3 * normalFromHash(sub(h, 3))), 0.01, 80);
        const { px, sz } = format(inst, pxCoin, notional);
        out.push({ inst, time, seq: slot * IDS_PER_SLOT + (inst.venue === "deribit" ? DERIBIT_LIQ_INDEX : i), side, px, sz });
      }
      return out;
    });
  }

  function checkSpan(fromMs: number, toMs: number): void {
    if (!(Number.isFinite(fromMs) && Number.isFinite(toMs))) throw new RangeError(`tape interval must be finite, got ${fromMs}..${toMs}`);
    if (toMs - fromMs > MAX_QUERY_MS) throw new RangeError(`tape interval longer than 7 days: ${fromMs}..${toMs}`);
  }

  function range<T extends { time: number }>(slotFn: (inst: PerpInstrumentSpec, slot: number) => readonly T[], inst: PerpInstrumentSpec, fromMs: number, toMs: number): T[] {
    checkSpan(fromMs, toMs);
    const out: T[] = [];
    if (!(toMs > fromMs)) return out;
    const last = Math.floor((toMs - 1) / TAPE_SLOT_MS);
    for (let s = Math.floor(fromMs / TAPE_SLOT_MS); s <= last; s++) {
      for (const e of slotFn(inst, s)) if (e.time >= fromMs && e.time < toMs) out.push(e);
    }
    return out;
  }

  const tradesOf = (inst: PerpInstrumentSpec, fromMs: number, toMs: number): TapeTrade[] => range(slotTrades, inst, fromMs, toMs);
  const liquidationsOf = (inst: PerpInstrumentSpec, fromMs: number, toMs: number): TapeLiquidation[] => range(slotLiquidations, inst, fromMs, toMs);

  function tradesBefore(inst: PerpInstrumentSpec, beforeMs: number, limit: number, minMs = -Infinity, keep?: (t: TapeTrade) => boolean): TapeTrade[] {
    const out: TapeTrade[] = [];
    if (limit <= 0 || !Number.isFinite(beforeMs)) return out;
    const stop = Math.max(Math.floor(beforeMs / TAPE_SLOT_MS) - MAX_SCAN_SLOTS, Number.isFinite(minMs) ? Math.floor(minMs / TAPE_SLOT_MS) : -Infinity);
    for (let s = Math.floor((beforeMs - 1) / TAPE_SLOT_MS); s >= stop && out.length < limit; s--) {
      const ev = slotTrades(inst, s);
      for (let i = ev.length - 1; i >= 0 && out.length < limit; i--) {
        const t = ev[i] as TapeTrade;
        if (t.time < beforeMs && t.time >= minMs && (!keep || keep(t))) out.push(t);
      }
    }
    return out;
  }

  function tradesFrom(inst: PerpInstrumentSpec, fromMs: number, limit: number, toMs: number, keep?: (t: TapeTrade) => boolean): TapeTrade[] {
    const out: TapeTrade[] = [];
    if (limit <= 0 || !Number.isFinite(fromMs)) return out;
    const last = Math.min(Math.floor((toMs - 1) / TAPE_SLOT_MS), Math.floor(fromMs / TAPE_SLOT_MS) + MAX_SCAN_SLOTS);
    for (let s = Math.floor(fromMs / TAPE_SLOT_MS); s <= last && out.length < limit; s++) {
      for (const t of slotTrades(inst, s)) {
        if (out.length >= limit) break;
        if (t.time >= fromMs && t.time < toMs && (!keep || keep(t))) out.push(t);
      }
    }
    return out;
  }

  function tickDirections(trades: readonly TapeTrade[]): string[] {
    const first = trades[0];
    if (!first) return [];
    const ctx = tradesBefore(first.inst, first.time, 8, first.time - 120_000).reverse();
    const px = [...ctx, ...trades].map((t) => Number(t.px));
    const out: string[] = [];
    for (let j = ctx.length; j < px.length; j++) {
      let dir = "ZeroPlusTick";
      for (let k = j; k > Math.max(0, j - 8); k--) {
        const d = (px[k] as number) - (px[k - 1] as number);
        if (d !== 0) {
          dir = k === j ? (d > 0 ? "PlusTick" : "MinusTick") : d > 0 ? "ZeroPlusTick" : "ZeroMinusTick";
          break;
        }
      }
      out.push(dir);
    }
    return out;
  }

  function target(venue: PerpSimVenue, base: string): PerpInstrumentSpec {
    const inst = perp.perpOf(venue, base);
    if (!inst) throw new RangeError(`${venue} lists no perpetual for base ${base}`);
    return inst;
  }

  return {
    perp,
    tradesOf,
    liquidationsOf,
    tradesBefore,
    tradesFrom,
    tickDirections,
    trades: (venue, base, fromMs, toMs) => tradesOf(target(venue, base), fromMs, toMs).map(normaliseTrade),
    liquidations: (venue, base, fromMs, toMs) => {
      checkSpan(fromMs, toMs);
      if (base !== "*") return liquidationsOf(target(venue, base), fromMs, toMs).map(normaliseLiquidation);
      const all = perp
        .instruments(venue, toMs)
        .filter((i) => i.target)
        .flatMap((i) => liquidationsOf(i, fromMs, toMs));
      all.sort((a, b) => a.time - b.time || (a.inst.symbol < b.inst.symbol ? -1 : a.inst.symbol > b.inst.symbol ? 1 : a.seq - b.seq));
      return all.map(normaliseLiquidation);
    },
  };
}

const tapeCache = new WeakMap<MarketModel, Tape>();

/** The tape of `market`, built once per market model and shared by the routers and the websocket hub. */
export function tapeFor(market: MarketModel): Tape {
  let t = tapeCache.get(market);
  if (!t) {
    t = createTape(market);
    tapeCache.set(market, t);
  }
  return t;
}
