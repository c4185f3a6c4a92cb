/**
 * Perpetual-futures layer of the venue simulator, built on the seeded spot {@link MarketModel}.
 *
 * ALL NUMBERS PRODUCED HERE ARE SIMULATED: listings, intervals, premiums, funding, open interest and ratios are
 * hand-picked, illustrative set-ups, not market data.
 *
 * Per (venue, instrument, time), deterministic for (seed, time):
 * - index = model spot price × (1 + a tiny venue-specific deviation, ~1.5 bp);
 * - premium = mean + slowly varying, mean-reverting noise (8 h / 1 h / 5 min value-noise layers); the mean is
 *   seeded per base (≈ 0..3 bp) plus a venue bias, except a few configured EXTREME bases;
 * - mark = index × (1 + premium); last = mark × (1 + ~1 bp noise);
 * - funding per interval, Binance style: F = clamp(P̄ + clamp(I − P̄, −0.05 %, +0.05 %), ±cap), with P̄ the
 *   linearly weighted average premium over the interval (16 samples) and I = 0.01 % × intervalHours / 8.
 *   The current (accruing) rate averages over [interval start, now]; a settled rate over the whole interval, so the
 *   current rate converges to the settled one at the boundary. Hyperliquid pays hourly: F(8h formula) / 8.
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
  /** Linearly weighted average premium over [fromMs, toMs] (16 samples; the premium at `fromMs` when empty). */
  avgPremium(inst: PerpInstrumentSpec, fromMs: number, toMs: number): number;
  /** Interest component per interval (0.01 % per 8 h scaled; Hyperliquid: the per-hour share). */
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
  /** 24h turnover, USD. */
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
/** Venue perp turnover relative to the model's 24h (spot-aggregate) volume. */
const VOLUME_SHARE: Readonly<Record<PerpSimVenue, number>> = { binance: 1.0, bybit: 0.55, okx: 0.35, hyperliquid: 0.3 };

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

/** Decimals of a quantity whose unit is worth `unitUsd`. */
function qtyDecimalsFor(unitUsd: number): number {
  return clamp(Math.floor(Math.log10(unitUsd)) - 1, 0, 3);
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

  interface InstState {
    premiumMean: number;
    premiumSd: number;
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
    const zb = clamp(z(baseStream, SALT.premMean), -2.5, 2.5);
    const zv = clamp(z(inst.stream, SALT.premBias), -2, 2);
    const premiumMean = extreme !== undefined && inst.target ? extreme * (1 + 0.08 * zv) : 0.0001 + 0.00008 * zb + 0.00003 * zv;
    const share = (inst.target ? OI_SHARE[inst.venue] : 0.03) * (inst.delisted ? 0 : 1);
    s = {
      premiumMean,
      premiumSd: extreme !== undefined ? 0.00015 : 0.00022,
      oiBaseCoins: ((params.volume24hUsd * 0.55) / params.anchorUsd) * share,
      lsMean: {
        top_position: Math.log(1.2) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 1), -2.2, 2.2),
        account: Math.log(1.3) + 0.2 * clamp(z(inst.stream, SALT.lsMean, 2), -2.2, 2.2),
      },
      volumeShare: (inst.target ? VOLUME_SHARE[inst.venue] : 0.02) * (inst.delisted ? 0 : 1),
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
    const n = 0.65 * noise(inst.stream, SALT.prem8h, t, 8 * HOUR_MS)
      + 0.3 * noise(inst.stream, SALT.prem1h, t, HOUR_MS)
      + 0.15 * noise(inst.stream, SALT.prem5m, t, 5 * MINUTE_MS);
    return st.premiumMean + st.premiumSd * n;
  }

  const markPrice = (inst: PerpInstrumentSpec, t: number): number => indexPrice(inst, t) * (1 + premium(inst, t));
  const lastPrice = (inst: PerpInstrumentSpec, t: number): number => markPrice(inst, t) * (1 + 0.0001 * noise(inst.stream, SALT.last, t, MINUTE_MS));

  function avgPremium(inst: PerpInstrumentSpec, from: number, to: number): number {
    if (!(to > from)) return premium(inst, from);
    let sum = 0;
    let wsum = 0;
    for (let i = 0; i < PREMIUM_SAMPLES; i++) {
      const w = i + 1; // linearly increasing weights, latest weighted most (Binance)
      sum += w * premium(inst, from + ((to - from) * (i + 0.5)) / PREMIUM_SAMPLES);
      wsum += w;
    }
    return sum / wsum;
  }

  const intervalMs = (inst: PerpInstrumentSpec): number => inst.fundingIntervalHours * HOUR_MS;
  const hourlyFromEight = (inst: PerpInstrumentSpec): boolean => inst.venue === "hyperliquid";

  function interestRate(inst: PerpInstrumentSpec): number {
    if (inst.kind !== "perpetual") return 0;
    return hourlyFromEight(inst) ? INTEREST_8H / 8 : (INTEREST_8H * inst.fundingIntervalHours) / 8;
  }

  function fundingFromPremium(inst: PerpInstrumentSpec, p: number): number {
    if (inst.kind !== "perpetual") return 0;
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
    turnover24hUsd: (inst, t) => market.volume24hUsdAt(inst.base, t) * instState(inst).volumeShare,
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
