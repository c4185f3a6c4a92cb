/**
 * Perpetual-futures layer of the venue simulator, built on the seeded spot {@link MarketModel}.
 *
 * ALL NUMBERS PRODUCED HERE ARE SIMULATED: listings, intervals, premiums, funding, open interest and ratios are
 * illustrative set-ups, not market data. The premium/funding dispersion and the venues' 24h turnover are
 * calibrated to real recordings ({@link PREMIUM_CALIBRATION}, {@link VOLUME_SHARE}; docs/methods/simulator.md).
 *
 * Per (venue, instrument, time), deterministic for (seed, time):
 * - index = model spot price × (1 + a tiny venue-specific deviation, ~1.5 bp);
 * - premium (= mark / index − 1), regular bases: venue mean + a base sentiment shared by the four venues (seeded
 *   level, market-wide 2-day, per-base 3-day and 12-hour layers) + a venue-specific part (seeded level, 8 h and 1 h
 *   layers) + fast 5-minute noise that mostly averages out of funding. A few configured EXTREME bases instead sit
 *   at a large mean premium with small noise;
 * - mark = index × (1 + premium) (Hyperliquid regular bases: plus a mark-only deviation, {@link HL_MARK_ONLY_SD});
 *   last = mark × (1 + ~1 bp noise);
 * - P̄ = linearly weighted average premium over the interval (16 samples). For regular bases it is soft-bounded
 *   (tanh) so that |funding| stays below 0.05 % per 8h: extreme funding happens exactly on the EXTREME bases;
 * - funding per interval, Binance/Bybit/Hyperliquid: F = clamp(P̄ + clamp(I − P̄, −0.05 %, +0.05 %), ±cap) with
 *   I = 0.01 % × intervalHours / 8, so F is pinned at I while P̄ is within 0.05 % of I (the real venues' "0.01 %"
 *   rates). Hyperliquid pays hourly: F(8h formula) / 8. OKX, per its published formula, has no interest component:
 *   F = clamp(P̄, ±cap), so its rate is never pinned. The current (accruing) rate averages over [interval start,
 *   now]; a settled rate over the whole interval, so the current rate converges to the settled one at the boundary.
 * - settlements fall on UTC multiples of the interval (Binance and Hyperliquid add a few ms of jitter like the real
 *   venues); nextFundingTime is the next boundary;
 * - open interest (coins) = base level × venue share × slow drift (shared per base, so venue ranking is stable:
 *   Binance > Hyperliquid > Bybit > OKX); USD = coins × mark;
 * - long/short ratios = exp(mean + slow noise), clamped to [0.6, 2.5];
 * - candles (any length): open = last price at the open time, close = last price at the close time (or now, for
 *   the open candle), high/low = extremes of both and of the last price sampled 12 times in between; USD volume =
 *   the venue's 24h turnover pro rata × a seeded log-normal factor per candle (pro rata of elapsed time when open);
 * - maintenance-margin tiers (CEX venues): a fixed leverage ladder from the instrument's max leverage down
 *   (10 tiers for BTC/ETH, 7 for the others), mmr = c / leverage to 4 decimals (c = 0.4 for OKX BTC/ETH, else 0.5: 100x → 0.4 %
 *   or 0.5 %, 50x → 1 %), tier caps doubling from a first cap of ≈ 0.005 % of the base's 24h volume (25k–2M USD).
 */
import { fnv1a, hash4, normalFromHash, type MarketModel } from "./market.js";
import { MINUTE_MS, HOUR_MS, DAY_MS } from "../lib/time.js";

/** Derivatives venues the simulator models. */
export type PerpSimVenue = "binance" | "bybit" | "okx" | "hyperliquid";
export const PERP_SIM_VENUES: readonly PerpSimVenue[] = ["binance", "bybit", "okx", "hyperliquid"];

/** One simulated derivatives instrument. Prices handled by the model are per ONE base coin (USD). */
export interface PerpInstrumentSpec {
  readonly venue: PerpSimVenue;
  /** The venue's own symbol (`BTCUSDT`, `1000PEPEUSDT`, `BTC-USDT-SWAP`, `kPEPE`, `BTCUSDT_261225`, `BTCPERP`). */
  readonly symbol: string;
  /** Canonical base (model price key): `BTC`, `PEPE`. */
  readonly base: string;
  /** The venue's base-asset label (`BTC`, `1000PEPE`, `kPEPE`). */
  readonly venueBase: string;
  readonly quote: "USDT" | "USDC" | "USD";
  readonly kind: "perpetual" | "delivery";
  /** OKX coin-margined swap (`BTC-USD-SWAP`): contracts worth `ctVal` USD. */
  readonly inverse: boolean;
  /** Base coins per venue unit (1000 for `1000PEPEUSDT` / `kPEPE`); venue prices and sizes are per unit. */
  readonly multiplier: number;
  /** OKX contract value: coins per contract (linear) or USD per contract (inverse); 1 elsewhere. */
  readonly ctVal: number;
  readonly ctValStr: string;
  /** Funding interval in hours (0 for dated futures). */
  readonly fundingIntervalHours: number;
  /** Dated futures: delivery time (ms); 0 for perpetuals. */
  readonly deliveryTime: number;
  readonly listTime: number;
  /** Decimals of venue prices (per venue unit) and of venue quantities (venue units, or OKX contracts). */
  readonly priceDecimals: number;
  readonly qtyDecimals: number;
  /** Absolute funding cap per interval (Hyperliquid: per 8h-equivalent). */
  readonly fundingCap: number;
  /** Binance: listed in `/fapi/v1/fundingInfo` (interval and/or cap adjusted). */
  readonly fundingInfoListed: boolean;
  /** Hyperliquid universe entry flagged `isDelisted`. */
  readonly delisted: boolean;
  /** The venue's main perp of `base` (USDT-margined linear; Hyperliquid: the USDC perp), live. */
  readonly target: boolean;
  /** Highest leverage of the first margin tier (Binance 125x/75x, Bybit and OKX 100x/50x, Hyperliquid per base). */
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

const YEAR_MS = 365 * DAY_MS;
/** Interest per 8h (0.01 %) and the Binance-style clamp band on (interest − premium). */
const INTEREST_8H = 0.0001;
const CLAMP_BAND = 0.0005;
const PREMIUM_SAMPLES = 16;

/** Static per-base set-up: OKX ctVal, Hyperliquid szDecimals / max leverage, perp listing date. */
interface BaseRow {
  readonly base: string;
  readonly ctVal: string;
  readonly szDecimals: number;
  readonly hlLeverage: number;
  readonly listed: string;
}

/** The simulated perp universe: the 23 catalogue bases plus four perp-only extras (WIF, TIA, INJ, SEI). */
const BASES: readonly BaseRow[] = [
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
const BYBIT_SUFFIX_MULTIPLIED: readonly string[] = ["SHIB"];

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
const BINANCE_CAP_ADJUSTED: Readonly<Record<string, number>> = { PEPE: 0.015 };

/** Bases with an extreme mean premium (fraction), hence |funding| ≥ 0.05 % per 8h on every venue listing them. */
export const EXTREME_PREMIUM: Readonly<Record<string, number>> = { WIF: 0.0024, PEPE: 0.0018, SEI: -0.0018 };

/** Venue shares of a base's perp open interest (Binance largest). */
const OI_SHARE: Readonly<Record<PerpSimVenue, number>> = { binance: 0.36, bybit: 0.2, okx: 0.14, hyperliquid: 0.24 };
/**
 * Venue perp 24h turnover relative to the model's 24h (CoinGecko-style aggregate) volume, target perps. Real 2026
 * turnover ÷ the simulator's aggregate volume of the same base:
 * - Bybit: `bybit/cryptofeed_v5_ws_linear_..._2026-08-09.ndjson` `turnover24h` BTC 1.14e9 (÷ 40e9 = 0.029), ETH 0.51e9
 *   (0.026), SOL 0.28e9 (0.069), DOGE 0.036e9 (0.024) → 0.027;
 * - Hyperliquid: `hyperliquid/nautilus_ws_allDexsAssetCtxs.json` `dayNtlVlm` BTC 1.52e9 (0.038), ETH 0.59e9 (0.030),
 *   SOL 0.14e9 (0.035) → 0.034 for BTC/ETH/SOL ({@link HL_MAJORS}); the 13 other named coins (DOGE, XRP, BNB, AVAX,
 *   LTC, LINK, SUI, kPEPE, ATOM, OP, ARB, INJ, APT) median 0.006 → {@link HL_ALT_VOLUME_SHARE};
 * - Binance and OKX: no 2026 volume capture; assumed 2.5× and 0.75× Bybit.
 */
export const VOLUME_SHARE: Readonly<Record<PerpSimVenue, number>> = { binance: 0.068, bybit: 0.027, okx: 0.02, hyperliquid: 0.034 };
/** Hyperliquid's turnover share for bases other than {@link HL_MAJORS} (see {@link VOLUME_SHARE}). */
export const HL_ALT_VOLUME_SHARE = 0.006;
const HL_MAJORS: readonly string[] = ["BTC", "ETH", "SOL"];
/** Turnover share of the venue-typical non-target instruments (quarterlies, USDC perp, coin-margined swaps). */
const NON_TARGET_VOLUME_SHARE = 0.002;

/**
 * Funding calibration targets, from real snapshots (fractions; "pinned" = the current rate equals the venue's
 * default for the symbol's interval, i.e. 0.01 % per 8h, 0.005 % per 4h, 0.00125 % per hour):
 * - Binance `binance/usdm_premiumIndex_all_symbols_2024-11-27.json` (371 symbols with a non-zero interest rate):
 *   8h symbols 151/205 = 73.7 % pinned (23.4 % above, 2.9 % below); 4h symbols 91/166 = 54.8 %; together 65.2 %.
 *   Of the unpinned, 88.4 % are above the default; the deviation F − I (8h-equivalent) has median 0.96 bp,
 *   p10 −1.1 bp, p90 4.3 bp. Mark/index − 1: p10 −2.3 bp, p50 4.5 bp, p90 11.8 bp.
 *   (Counting only rates of exactly 0.01 % over every symbol, 4h ones included, gives 151/371 = 40.7 %.)
 * - Hyperliquid `hyperliquid/nautilus_ws_allDexsAssetCtxs.json` (main dex, 179 live coins of 230): 126 = 70.4 %
 *   pinned at 0.00125 %/h (10.1 % above, 19.6 % below); of the unpinned 34 % above; deviation (8h-eq.) median
 *   −0.5 bp, p10 −7.4 bp, p90 3.1 bp. Mark/oracle − 1: p10 −15.3 bp, p50 −4.2 bp, p90 12.5 bp.
 *   (126 of all 230 ctxs, delisted included, is 54.8 %.)
 * - Bybit `bybit/cryptofeed_v5_ws_linear_..._2026-08-09.ndjson`: same formula as Binance; 2 of its 4 linear tickers
 *   pinned (BTC, DOGE), ETH and SOL below → calibrated like Binance with a smaller mean.
 * - OKX: no interest term (its published formula; `okx/nautilus_http_get_funding_rate_history.json` and the tardis
 *   `funding-rate` frames: 0.01515 %, −0.00236 %, 0.0481 %, none pinned) → never pinned.
 */
export const FUNDING_TARGETS = {
  binance: { pinned8h: 0.737, pinned4h: 0.548, aboveOfUnpinned: 0.884, markPremiumP10: -0.000226, markPremiumP50: 0.000447, markPremiumP90: 0.001184 },
  hyperliquid: { pinned: 0.704, aboveOfUnpinned: 0.34, markPremiumP10: -0.00153, markPremiumP50: -0.000424, markPremiumP90: 0.00125 },
  bybit: { pinned8h: 0.737 },
  okx: { pinned: 0 },
} as const;

/** Premium model of regular bases per venue (fractions): mean, sd of the venue part and of the fast noise. */
interface PremiumCalibration {
  readonly mean: number;
  readonly venueSd: number;
  readonly fastSd: number;
}
/** Sd of the base sentiment shared by every venue listing a base (fraction). */
const BASE_SENTIMENT_SD = 0.00025;
/**
 * Regular-base premium per venue, tuned so the simulated cross-section (symbols × times) reproduces
 * {@link FUNDING_TARGETS}: total slow sd = sqrt(BASE_SENTIMENT_SD² + venueSd²); fast noise widens the mark premium.
 */
export const PREMIUM_CALIBRATION: Readonly<Record<PerpSimVenue, PremiumCalibration>> = {
  binance: { mean: 0.0003, venueSd: 0.00033, fastSd: 0.00044 },
  bybit: { mean: 0.00025, venueSd: 0.00045, fastSd: 0.00044 },
  okx: { mean: 0.0001, venueSd: 0.00017, fastSd: 0.0003 },
  hyperliquid: { mean: 0, venueSd: 0.00015, fastSd: 0.0006 },
};
/**
 * Hyperliquid's mark is not oracle × (1 + premium): its mark price is a median of several references while funding
 * uses the impact-price premium (real 2026 ctxs: ETH mark/oracle −4.2 bp vs premium −2.8 bp, ATOM −14 vs −5.6 bp).
 * Sd (fraction) of the mark-only deviation added to Hyperliquid marks of regular bases (10-minute noise).
 */
export const HL_MARK_ONLY_SD = 0.0006;

const SALT = {
  premMean: 0x51a7e001,
  premBias: 0x51a7e002,
  prem8h: 0x51a7e003,
  prem1h: 0x51a7e004,
  prem5m: 0x51a7e005,
  index: 0x51a7e006,
  last: 0x51a7e007,
  oiDay: 0x51a7e008,
  oiWeek: 0x51a7e009,
  oiHour: 0x51a7e00a,
  lsMean: 0x51a7e00b,
  ls12h: 0x51a7e00c,
  ls1h: 0x51a7e00d,
  jitter: 0x51a7e00e,
  basis: 0x51a7e00f,
  candleVol: 0x51a7e010,
  baseLevel: 0x51a7e011,
  market2d: 0x51a7e012,
  base3d: 0x51a7e013,
  base12h: 0x51a7e014,
  venueLevel: 0x51a7e015,
  venue8h: 0x51a7e016,
  venue1h: 0x51a7e017,
  fast: 0x51a7e018,
  hlMark: 0x51a7e019,
} as const;

/** Leverage steps of the simulated CEX margin tiers (each table starts at the instrument's max leverage). */
const LEVERAGE_LADDER: readonly number[] = [125, 100, 75, 50, 40, 25, 20, 15, 10, 8, 6, 5, 4, 3, 2, 1];
/** Price samples between a candle's open and close. */
const CANDLE_SAMPLES = 12;

/** `x` rounded to 2 significant digits. */
function twoDigits(x: number): number {
  return Number(x.toPrecision(2));
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** Decimals of a price quoted per `unitUsd` (≈ 5 significant digits), capped at `max`. */
function priceDecimalsFor(unitUsd: number, max: number): number {
  return clamp(Math.ceil(5 - Math.log10(unitUsd)), 0, max);
}

/** Decimals of a quantity whose unit is worth `unitUsd`: a lot worth ≈ 0.03-0.3 units (BTC 0.001, SOL 0.1). */
function qtyDecimalsFor(unitUsd: number): number {
  return clamp(Math.round(Math.log10(unitUsd)) - 1, 0, 3);
}

/** Last Friday of the quarter-end month at 08:00 UTC, first one strictly after `nowMs` (Binance quarterlies). */
export function nextQuarterlyExpiry(nowMs: number): number {
  const d = new Date(nowMs);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  for (;;) {
    if (m % 3 === 2) {
      const last = new Date(Date.UTC(y, m + 1, 0, 8));
      const back = (last.getUTCDay() - 5 + 7) % 7;
      const expiry = last.getTime() - back * DAY_MS;
      if (expiry > nowMs) return expiry;
    }
    m += 1;
    if (m === 12) {
      m = 0;
      y += 1;
    }
  }
}

function yymmdd(ms: number): string {
  return new Date(ms).toISOString().slice(2, 10).replaceAll("-", "");
}

/** Builds the perp model over `market` (same seed ⇒ same numbers). */
export function createPerpModel(market: MarketModel): PerpModel {
  const seedH = fnv1a(`marketgate-sim-perp:${String(market.seed)}`);

  const z = (stream: number, salt: number, k = 0): number => normalFromHash(hash4(seedH, stream, salt, k));
  /** Smooth N(0,1)-ish noise: hash values on a grid of `periodMs`, linearly interpolated. */
  function noise(stream: number, salt: number, tsMs: number, periodMs: number): number {
    const k = Math.floor(tsMs / periodMs);
    const f = tsMs / periodMs - k;
    const z0 = normalFromHash(hash4(seedH, stream, salt, k | 0));
    const z1 = normalFromHash(hash4(seedH, stream, salt, (k + 1) | 0));
    return z0 * (1 - f) + z1 * f;
  }
  /** {@link noise} rescaled to unit variance at every instant (a marginally exact N(0,1), still continuous). */
  function unitNoise(stream: number, salt: number, tsMs: number, periodMs: number): number {
    const f = tsMs / periodMs - Math.floor(tsMs / periodMs);
    return noise(stream, salt, tsMs, periodMs) / Math.sqrt((1 - f) * (1 - f) + f * f);
  }
  const marketStream = fnv1a("perp-market-sentiment");

  interface InstState {
    /** Extreme set-up (EXTREME_PREMIUM base, target perp): premium = mean + sd × 8h/1h/5min noise, P̄ unbounded. */
    extreme: boolean;
    premiumMean: number;
    premiumSd: number;
    /** Regular bases: seeded level of the base sentiment and of the venue part (fractions), calibration row. */
    baseLevel: number;
    venueLevel: number;
    calib: PremiumCalibration;
    /** Regular perpetuals: P̄ is soft-bounded to ±this (fraction) so that |funding| < 0.05 % per 8h. */
    pbarBound: number;
    oiBaseCoins: number;
    lsMean: Record<LongShortKind, number>;
    volumeShare: number;
    /** Stream shared by every instrument of (venue, base): index deviation. */
    venueBaseStream: number;
    baseStream: number;
  }
  const stateCache = new Map<string, InstState>();

  function instState(inst: PerpInstrumentSpec): InstState {
    const key = `${inst.venue}:${inst.symbol}`;
    let s = stateCache.get(key);
    if (s) return s;
    const baseStream = fnv1a(`perp-base:${inst.base}`);
    const params = market.params(inst.base);
    const extreme = EXTREME_PREMIUM[inst.base];
    const zv = clamp(z(inst.stream, SALT.premBias), -2, 2);
    const isExtreme = extreme !== undefined && inst.target;
    const share = (inst.target ? OI_SHARE[inst.venue] : 0.03) * (inst.delisted ? 0 : 1);
    const calib = PREMIUM_CALIBRATION[inst.venue];
    // Largest |P̄| keeping |F| × 8 / h < 0.05 %: F = P̄ ∓ 0.05 % beyond the clamp band (OKX: F = P̄), 5 % margin.
    const eightHourFactor = inst.venue === "hyperliquid" ? 1 : 8 / Math.max(1, inst.fundingIntervalHours);
    const fMax = 0.0005 / eightHourFactor;
    const volShare = inst.venue === "hyperliquid" && !HL_MAJORS.includes(inst.base) ? HL_ALT_VOLUME_SHARE : VOLUME_SHARE[inst.venue];
    s = {
      extreme: isExtreme,
      premiumMean: isExtreme ? extreme * (1 + 0.08 * zv) : 0,
      premiumSd: isExtreme ? 0.00015 : 0,
      baseLevel: BASE_SENTIMENT_SD * 0.45 * z(baseStream, SALT.baseLevel),
      venueLevel: calib.venueSd * 0.5 * z(inst.stream, SALT.venueLevel),
      calib,
      pbarBound: 0.95 * (inst.venue === "okx" ? fMax : fMax + CLAMP_BAND),
      oiBaseCoins: ((params.volume24hUsd * 0.55) / params.anchorUsd) * share,
      lsMean: {
        top_position: Math.log(1.2) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 1), -2.2, 2.2),
        account: Math.log(1.3) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 2), -2.2, 2.2),
      },
      volumeShare: (inst.target ? volShare : NON_TARGET_VOLUME_SHARE) * (inst.delisted ? 0 : 1),
      venueBaseStream: fnv1a(`perp-index:${inst.venue}:${inst.base}`),
      baseStream,
    };
    stateCache.set(key, s);
    return s;
  }

  // ---- universe ----
  function makeSpec(
    venue: PerpSimVenue,
    row: BaseRow,
    over: Partial<PerpInstrumentSpec> & Pick<PerpInstrumentSpec, "symbol" | "venueBase">,
  ): PerpInstrumentSpec {
    const anchor = market.params(row.base).anchorUsd;
    const multiplier = over.multiplier ?? 1;
    const unit = anchor * multiplier;
    const interval = venue === "hyperliquid" ? 1 : FUNDING_INTERVAL_OVERRIDES[venue][row.base] ?? 8;
    const major = row.base === "BTC" || row.base === "ETH";
    const fundingCap =
      venue === "binance" ? (BINANCE_CAP_ADJUSTED[row.base] ?? (interval !== 8 ? 0.02 : major ? 0.003 : 0.0075))
        : venue === "bybit" ? (major ? 0.005 : 0.01)
          : venue === "okx" ? (major ? 0.00375 : 0.015)
            : 0.32; // Hyperliquid: 4 %/h, as an 8h equivalent
    return {
      venue,
      base: row.base,
      quote: venue === "hyperliquid" ? "USDC" : "USDT",
      kind: "perpetual",
      inverse: false,
      multiplier,
      ctVal: 1,
      ctValStr: "1",
      fundingIntervalHours: interval,
      deliveryTime: 0,
      listTime: Date.parse(`${row.listed}T08:00:00.000Z`) + (venue === "binance" ? 0 : venue === "okx" ? 3 * DAY_MS : 20 * DAY_MS),
      priceDecimals: priceDecimalsFor(unit, venue === "okx" ? 10 : 7),
      qtyDecimals: qtyDecimalsFor(unit),
      fundingCap,
      fundingInfoListed: venue === "binance" && (interval !== 8 || BINANCE_CAP_ADJUSTED[row.base] !== undefined),
      delisted: false,
      target: true,
      maxLeverage: venue === "hyperliquid" ? row.hlLeverage : venue === "binance" ? (major ? 125 : 75) : major ? 100 : 50,
      szDecimals: row.szDecimals,
      stream: fnv1a(`perp:${venue}:${over.symbol}`),
      ...over,
    };
  }

  const staticLists = new Map<PerpSimVenue, PerpInstrumentSpec[]>();
  for (const venue of PERP_SIM_VENUES) {
    const list: PerpInstrumentSpec[] = [];
    const rows = BASES.filter((r) => !ABSENT_BASES[venue].includes(r.base));
    for (const row of rows) {
      const mult = MULTIPLIED_BASES[row.base] ?? 1;
      if (venue === "binance" || venue === "bybit") {
        const suffix = venue === "bybit" && BYBIT_SUFFIX_MULTIPLIED.includes(row.base);
        const vb = mult === 1 ? row.base : suffix ? `${row.base}${mult}` : `${mult}${row.base}`;
        list.push(makeSpec(venue, row, { symbol: `${vb}USDT`, venueBase: vb, multiplier: mult }));
      } else if (venue === "okx") {
        const ctVal = Number(row.ctVal);
        const unit = market.params(row.base).anchorUsd * ctVal;
        const lot = unit >= 50 ? 2 : unit >= 5 ? 1 : 0;
        list.push(makeSpec(venue, row, { symbol: `${row.base}-USDT-SWAP`, venueBase: row.base, ctVal, ctValStr: row.ctVal, qtyDecimals: lot }));
      } else {
        const name = mult > 1 ? `k${row.base}` : row.base;
        const delisted = HL_DELISTED_BASES.includes(row.base);
        list.push(makeSpec(venue, row, { symbol: name, venueBase: name, multiplier: mult, delisted, target: !delisted }));
      }
    }
    // Venue-typical instruments that are NOT a USDT linear perp (adapters must filter them out).
    const btc = BASES[0] as BaseRow;
    const eth = BASES[1] as BaseRow;
    if (venue === "bybit") {
      for (const row of [btc, eth]) {
        list.push(makeSpec(venue, row, { symbol: `${row.base}PERP`, venueBase: row.base, quote: "USDC", target: false }));
      }
    } else if (venue === "okx") {
      for (const [row, ctv] of [[btc, "100"], [eth, "10"]] as const) {
        list.push(makeSpec(venue, row, {
          symbol: `${row.base}-USD-SWAP`, venueBase: row.base, quote: "USD", inverse: true, ctVal: Number(ctv), ctValStr: ctv,
          qtyDecimals: 0, target: false, listTime: Date.parse("2019-12-10T08:00:00.000Z"),
        }));
      }
    }
    list.sort(
      venue === "bybit" ? (a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0)
        : venue === "hyperliquid" ? () => 0
          : (a, b) => a.listTime - b.listTime,
    );
    staticLists.set(venue, list);
  }

  const bySymbol = new Map<string, PerpInstrumentSpec>();
  const perpByBase = new Map<string, PerpInstrumentSpec>();
  for (const [venue, list] of staticLists) {
    for (const inst of list) {
      bySymbol.set(`${venue}:${inst.symbol}`, inst);
      if (inst.target) perpByBase.set(`${venue}:${inst.base}`, inst);
    }
  }

  /** Binance quarterlies (BTC, ETH) for the quarter containing `nowMs`; cached per expiry. */
  const quarterlyCache = new Map<number, PerpInstrumentSpec[]>();
  function binanceQuarterlies(nowMs: number): PerpInstrumentSpec[] {
    const expiry = nextQuarterlyExpiry(nowMs);
    let list = quarterlyCache.get(expiry);
    if (!list) {
      list = [BASES[0] as BaseRow, BASES[1] as BaseRow].map((row) =>
        makeSpec("binance", row, {
          symbol: `${row.base}USDT_${yymmdd(expiry)}`, venueBase: row.base, kind: "delivery", fundingIntervalHours: 0,
          deliveryTime: expiry, listTime: expiry - 182 * DAY_MS, target: false, fundingInfoListed: false, fundingCap: 0,
        }),
      );
      quarterlyCache.set(expiry, list);
    }
    return list;
  }

  function instruments(venue: PerpSimVenue, nowMs: number): readonly PerpInstrumentSpec[] {
    const list = staticLists.get(venue) ?? [];
    return venue === "binance" ? [...list, ...binanceQuarterlies(nowMs)] : list;
  }

  // ---- prices ----
  function indexPrice(inst: PerpInstrumentSpec, t: number): number {
    const st = instState(inst);
    return market.priceAt(inst.base, t) * (1 + 0.00015 * noise(st.venueBaseStream, SALT.index, t, 30 * MINUTE_MS));
  }

  function premium(inst: PerpInstrumentSpec, t: number): number {
    const st = instState(inst);
    if (inst.kind === "delivery") {
      const years = Math.max(0, inst.deliveryTime - t) / YEAR_MS;
      return 0.07 * years + 0.0004 * noise(inst.stream, SALT.basis, t, HOUR_MS);
    }
    if (st.extreme) {
      const n = 0.65 * noise(inst.stream, SALT.prem8h, t, 8 * HOUR_MS)
        + 0.3 * noise(inst.stream, SALT.prem1h, t, HOUR_MS)
        + 0.15 * noise(inst.stream, SALT.prem5m, t, 5 * MINUTE_MS);
      return st.premiumMean + st.premiumSd * n;
    }
    const c = st.calib;
    const base = st.baseLevel + BASE_SENTIMENT_SD * (
      0.4 * unitNoise(marketStream, SALT.market2d, t, 2 * DAY_MS)
      + 0.55 * unitNoise(st.baseStream, SALT.base3d, t, 3 * DAY_MS)
      + 0.58 * unitNoise(st.baseStream, SALT.base12h, t, 12 * HOUR_MS));
    const venue = st.venueLevel + c.venueSd * (
      0.7 * unitNoise(inst.stream, SALT.venue8h, t, 8 * HOUR_MS)
      + 0.51 * unitNoise(inst.stream, SALT.venue1h, t, HOUR_MS));
    return c.mean + base + venue + c.fastSd * unitNoise(inst.stream, SALT.fast, t, 5 * MINUTE_MS);
  }

  function markPrice(inst: PerpInstrumentSpec, t: number): number {
    const hlOnly = inst.venue === "hyperliquid" && !instState(inst).extreme
      ? HL_MARK_ONLY_SD * unitNoise(inst.stream, SALT.hlMark, t, 10 * MINUTE_MS)
      : 0;
    return indexPrice(inst, t) * (1 + premium(inst, t) + hlOnly);
  }
  const lastPrice = (inst: PerpInstrumentSpec, t: number): number => markPrice(inst, t) * (1 + 0.0001 * noise(inst.stream, SALT.last, t, MINUTE_MS));

  function avgPremium(inst: PerpInstrumentSpec, from: number, to: number): number {
    let avg: number;
    if (!(to > from)) avg = premium(inst, from);
    else {
      let sum = 0;
      let wsum = 0;
      for (let i = 0; i < PREMIUM_SAMPLES; i++) {
        const w = i + 1; // linearly increasing weights, latest weighted most (Binance)
        sum += w * premium(inst, from + ((to - from) * (i + 0.5)) / PREMIUM_SAMPLES);
        wsum += w;
      }
      avg = sum / wsum;
    }
    const st = instState(inst);
    if (st.extreme || inst.kind !== "perpetual") return avg;
    return st.pbarBound * Math.tanh(avg / st.pbarBound);
  }

  const intervalMs = (inst: PerpInstrumentSpec): number => inst.fundingIntervalHours * HOUR_MS;
  const hourlyFromEight = (inst: PerpInstrumentSpec): boolean => inst.venue === "hyperliquid";

  function interestRate(inst: PerpInstrumentSpec): number {
    if (inst.kind !== "perpetual" || inst.venue === "okx") return 0;
    return hourlyFromEight(inst) ? INTEREST_8H / 8 : (INTEREST_8H * inst.fundingIntervalHours) / 8;
  }

  function fundingFromPremium(inst: PerpInstrumentSpec, p: number): number {
    if (inst.kind !== "perpetual") return 0;
    // OKX: Clamp[MA(premium − interest), floor, cap] with interest = 0 (OKX's published funding formula).
    if (inst.venue === "okx") return clamp(p, -inst.fundingCap, inst.fundingCap);
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
    const h = hash4(seedH, inst.stream, SALT.jitter, k);
    if (inst.venue === "binance") return h % 8;
    if (inst.venue === "hyperliquid") return h % 400;
    return 0;
  }

  function openInterestCoins(inst: PerpInstrumentSpec, t: number): number {
    const st = instState(inst);
    const drift = 0.25 * noise(st.baseStream, SALT.oiDay, t, DAY_MS)
      + 0.12 * noise(st.baseStream, SALT.oiWeek, t, 7 * DAY_MS)
      + 0.05 * noise(inst.stream, SALT.oiHour, t, 2 * HOUR_MS);
    return st.oiBaseCoins * Math.exp(drift);
  }

  function longShortRatio(inst: PerpInstrumentSpec, kind: LongShortKind, t: number): number {
    const st = instState(inst);
    const salt = kind === "account" ? 0x100 : 0;
    const x = st.lsMean[kind]
      + 0.2 * noise(inst.stream, SALT.ls12h ^ salt, t, 12 * HOUR_MS)
      + 0.06 * noise(inst.stream, SALT.ls1h ^ salt, t, HOUR_MS);
    return clamp(Math.exp(x), 0.6, 2.5);
  }

  function dayStats(inst: PerpInstrumentSpec, t: number, of: "mark" | "index") {
    const f = of === "mark" ? markPrice : indexPrice;
    const open = f(inst, t - DAY_MS);
    let high = Math.max(open, f(inst, t));
    let low = Math.min(open, f(inst, t));
    const step = 15 * MINUTE_MS;
    for (let s = Math.ceil((t - DAY_MS) / step) * step; s < t; s += step) {
      const v = f(inst, s);
      if (v > high) high = v;
      if (v < low) low = v;
    }
    return { open, high, low };
  }

  function candle(inst: PerpInstrumentSpec, open: number, dur: number, now: number): SimCandle {
    const close = Math.max(open, Math.min(open + dur - 1, now));
    const o = lastPrice(inst, open);
    const c = lastPrice(inst, close);
    let high = Math.max(o, c);
    let low = Math.min(o, c);
    for (let i = 1; i <= CANDLE_SAMPLES; i++) {
      const t = open + Math.round((dur * i) / (CANDLE_SAMPLES + 1));
      if (t >= close) break;
      const v = lastPrice(inst, t);
      if (v > high) high = v;
      if (v < low) low = v;
    }
    const k = Math.floor(open / dur) | 0;
    const factor = Math.exp(0.35 * clamp(z(inst.stream, SALT.candleVol ^ Math.round(dur / MINUTE_MS), k), -3, 3) - 0.06);
    const elapsed = (close + 1 - open) / dur;
    const volumeUsd = market.volume24hUsdAt(inst.base, open) * instState(inst).volumeShare * (dur / DAY_MS) * factor * Math.min(1, elapsed);
    return { open: o, high, low, close: c, volumeUsd };
  }

  const flowCache = new Map<string, number>();
  function flowUsdPerDay(inst: PerpInstrumentSpec, t: number): number {
    const hour = Math.floor(t / HOUR_MS);
    const key = `${inst.venue}:${inst.symbol}:${hour}`;
    let f = flowCache.get(key);
    if (f === undefined) {
      f = market.volume24hUsdAt(inst.base, hour * HOUR_MS) * instState(inst).volumeShare;
      if (flowCache.size >= 50_000) flowCache.clear();
      flowCache.set(key, f);
    }
    return f;
  }

  function turnover24hUsd(inst: PerpInstrumentSpec, t: number): number {
    let sum = 0;
    for (let h = Math.floor((t - DAY_MS) / HOUR_MS); h * HOUR_MS < t; h++) {
      const overlap = Math.min(t, (h + 1) * HOUR_MS) - Math.max(t - DAY_MS, h * HOUR_MS);
      if (overlap > 0) sum += (flowUsdPerDay(inst, h * HOUR_MS) * overlap) / DAY_MS;
    }
    return sum;
  }

  const tierCache = new Map<string, readonly SimMarginTier[]>();
  function marginTiers(inst: PerpInstrumentSpec): readonly SimMarginTier[] {
    const key = `${inst.venue}:${inst.symbol}`;
    const hit = tierCache.get(key);
    if (hit) return hit;
    const major = inst.base === "BTC" || inst.base === "ETH";
    const c = inst.venue === "okx" && major ? 0.4 : 0.5;
    const firstCap = twoDigits(clamp(market.params(inst.base).volume24hUsd * 0.00005, 25_000, 2_000_000));
    const ladder = LEVERAGE_LADDER.filter((l) => l <= inst.maxLeverage).slice(0, major ? 10 : 7);
    const tiers = ladder.map((lev, k) => ({ maxNotionalUsd: firstCap * 2 ** k, maxLeverage: lev, mmr: Number((c / lev).toFixed(4)) }));
    tierCache.set(key, tiers);
    return tiers;
  }

  return {
    market,
    instruments,
    instrument: (venue, symbol, nowMs) =>
      bySymbol.get(`${venue}:${symbol}`) ?? (venue === "binance" ? binanceQuarterlies(nowMs).find((i) => i.symbol === symbol) : undefined),
    perpOf: (venue, base) => perpByBase.get(`${venue}:${base.trim().toUpperCase()}`),
    spotPrice: (base, t) => market.priceAt(base, t),
    indexPrice,
    premium,
    markPrice,
    lastPrice,
    avgPremium,
    interestRate,
    intervalStart,
    nextFundingTime,
    currentFundingRate: (inst, t) => fundingFromPremium(inst, avgPremium(inst, intervalStart(inst, t), t)),
    settledFundingRate: (inst, s) => fundingFromPremium(inst, avgPremium(inst, s - intervalMs(inst), s)),
    settledPremium: (inst, s) => avgPremium(inst, s - intervalMs(inst), s),
    settlementTimes,
    settlementJitterMs,
    openInterestCoins,
    flowUsdPerDay,
    turnover24hUsd,
    longShortRatio,
    dayStats,
    candle,
    marginTiers,
  };
}

const perpCache = new WeakMap<MarketModel, PerpModel>();

/** The perp model of `market`, built once per market model and shared by every venue router. */
export function perpModelFor(market: MarketModel): PerpModel {
  let m = perpCache.get(market);
  if (!m) {
    m = createPerpModel(market);
    perpCache.set(market, m);
  }
  return m;
}
