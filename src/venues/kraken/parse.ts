import { z } from "zod";
import { AppError } from "../../errors.js";
import { HOUR_MS } from "../../lib/time.js";
import { splitMultiplier } from "../binance/parse.js";
import type {
  Candle,
  FundingPoint,
  FundingSnapshot,
  LongShortRatio,
  MarginTier,
  OpenInterest,
  OpenInterestPoint,
  PerpInstrument,
  PerpVenue,
  PredictedFunding,
} from "../perp/types.js";
import { invalidShape, Num, OptNum, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Kraken Futures' public REST API (https://docs.kraken.com/api-reference/, OpenAPI
 * github.com/krakenfx/api-specs `futures-rest/trading/public.yml` and `futures-rest/charts/api-public.yml`).
 *
 * What is read: the multi-collateral LINEAR perpetuals `PF_<COIN>USD` (instrument type `flexible_futures`, quoted in
 * USD, margined in any of the collateral currencies). Their `contractSize` is 1 coin: sizes, `openInterest` and trade
 * `qty` are base coins (× `contractSize` × multiplier, both 1 on every listing seen). Bitcoin is `XBT` in Kraken
 * symbols (`PF_XBTUSD` → BTC). Not read: the single-collateral INVERSE perpetuals `PI_XBTUSD`… (1 USD contracts; the
 * same five coins all have a `PF_` perpetual, which holds most of the open interest), dated futures (`FI_`, `FF_`),
 * indices (`in_`, `rr_`) and the tokenised stocks, forex and commodities (`PF_AAPLxUSD`, `tradfi`, their `category`).
 *
 * Funding (hourly; the unit trap of this venue):
 * - `/tickers` `fundingRate` and `fundingRatePrediction` are ABSOLUTE rates: the currency paid per contract per hour
 *   (USD per 1-coin contract on `PF_`; BTC per 1-USD contract on `PI_`). The rate we serve is RELATIVE, a fraction of
 *   notional per hour: absolute ÷ (mark price × contract size) on a linear perpetual (ccxt `parseFundingRate` does the
 *   same division). Kraken computed the absolute rate from the relative one at the price of its hour, so the quotient
 *   differs from Kraken's own relative rate by that hour's price move (a few tenths of a percent of the rate at most).
 * - `/historicalfundingrates` rows carry both: `relativeFundingRate` (a fraction per hour, served as is) and the
 *   absolute `fundingRate`; `timestamp` is the START of the hour the rate applies to, paid at its end.
 * - The websocket `ticker` feed also carries `relative_funding_rate` (not read: the service reads funding over REST).
 */

/** The venue key of Kraken Futures (cast: the id joins `PERP_VENUES` with the wiring of src/venues/perp/types.ts). */
export const KRAKEN = "kraken" as string as PerpVenue;
/** Kraken Futures perpetuals pay funding every hour. */
export const KRAKEN_FUNDING_INTERVAL_HOURS = 1;
/** Kraken's asset codes that differ from the canonical base (`XBT` is bitcoin). */
const BASE_ALIASES: Readonly<Record<string, string>> = { XBT: "BTC" };
/** `category` values of the non-crypto `PF_` perpetuals (a live instrument list, 2026-08-08; some have `tradfi: false`). */
const NON_CRYPTO_CATEGORIES = new Set(["Forex", "xStocks", "Commodities", "Pre-IPO"]);
/** Error strings of a request naming a symbol Kraken does not list (the OpenAPI `Error` enum). */
const SYMBOL_ERRORS = new Set(["notFound", "invalidArgument", "contractNotFound", "marketUnavailable"]);

const invalid = (endpoint: string, err: z.ZodError) => invalidShape(KRAKEN, endpoint, err);

/** An ISO 8601 time (`2026-09-02T17:52:21.057577Z`) → epoch ms. */
const IsoTime = z.string().transform((s, ctx) => {
  const t = Date.parse(s);
  if (!Number.isFinite(t)) {
    ctx.addIssue({ code: "custom", message: `expected an ISO time, got ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return t;
});

/** A Kraken refusal: the `error` string (or the first `errors[]` message) and its numeric code when given. */
export interface KrakenError {
  error: string;
  code?: number;
}

const ErrorEnvelope = z.object({
  result: z.literal("error"),
  error: z.string().optional(),
  errors: z.array(z.union([z.string(), z.object({ code: z.number().optional(), message: z.string().optional() })])).optional(),
});

/** The refusal of a Kraken body (text or parsed) with `result: "error"`, or undefined when it is not one. */
export function krakenErrorOf(raw: unknown): KrakenError | undefined {
  let v = raw;
  if (typeof raw === "string") {
    try {
      v = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  const r = ErrorEnvelope.safeParse(v);
  if (!r.success) return undefined;
  const first = r.data.errors?.[0];
  if (r.data.error !== undefined) return { error: r.data.error };
  if (typeof first === "string") return { error: first };
  return { error: first?.message ?? "unknownError", code: first?.code };
}

/**
 * The error a Kraken refusal stands for: `apiLimitExceeded` → UPSTREAM_UNAVAILABLE (retry after 10 s); on a request
 * naming `symbol`, an unknown or invalid argument (`notFound`, `invalidArgument`, code 11 "Argument invalid: symbol")
 * → NOT_FOUND; anything else → UPSTREAM_ERROR with Kraken's error.
 */
export function krakenError(err: KrakenError, endpoint: string, symbol?: string): AppError {
  if (err.error === "apiLimitExceeded") return new AppError("UPSTREAM_UNAVAILABLE", `kraken ${endpoint}: API limit exceeded`, { retryAfterSec: 10 });
  if (symbol !== undefined && (SYMBOL_ERRORS.has(err.error) || err.code === 11 || /symbol/i.test(err.error))) {
    return new AppError("NOT_FOUND", `kraken does not list ${symbol} (${err.error})`);
  }
  return new AppError("UPSTREAM_ERROR", `kraken ${endpoint} failed: ${err.error}`, { details: err });
}

/**
 * Validates a `/derivatives` body against `schema` after its `result`.
 * @throws AppError per {@link krakenError} on `result: "error"`; UPSTREAM_ERROR on an unexpected shape.
 */
function unwrap<T extends z.ZodType>(raw: unknown, endpoint: string, schema: T, symbol?: string): z.output<T> {
  const err = krakenErrorOf(raw);
  if (err) throw krakenError(err, endpoint, symbol);
  const r = schema.safeParse(raw);
  if (!r.success) throw invalid(endpoint, r.error);
  return r.data;
}

/** The top of the hour after `ms` (Kraken's next funding settlement). */
export function nextHour(ms: number): number {
  return (Math.floor(ms / HOUR_MS) + 1) * HOUR_MS;
}

const p15 = (x: number): number => Number(x.toPrecision(15));

/**
 * Canonical base and multiplier of a Kraken multi-collateral perpetual: `PF_XBTUSD` → BTC × 1, `PF_ETHUSD` → ETH × 1,
 * a `1000`-prefixed coin as on Binance; undefined for anything else (`PI_XBTUSD` inverse, `FF_XBTUSD_261225` dated,
 * `PF_AAPLxUSD` tokenised stock: crypto symbols are upper case).
 */
export function fromKrakenSymbol(symbol: string): { base: string; multiplier: number } | undefined {
  const m = /^PF_([A-Z0-9]+)USD$/.exec(symbol);
  if (!m) return undefined;
  const { base, multiplier } = splitMultiplier(m[1]!);
  return { base: BASE_ALIASES[base] ?? base, multiplier };
}

const MarginLevel = z.object({ numNonContractUnits: OptNum, contracts: OptNum, initialMargin: Num, maintenanceMargin: Num });
const InstrumentRow = z.object({
  symbol: z.string(),
  type: z.string().optional(),
  tradeable: z.boolean().optional(),
  tradfi: z.boolean().optional(),
  category: z.string().nullish(),
  lastTradingTime: z.string().nullish(),
  contractSize: OptNum,
  marginLevels: z.array(MarginLevel).nullish(),
});
type InstrumentRowT = z.output<typeof InstrumentRow>;
const InstrumentsBody = z.object({ instruments: z.array(z.unknown()) });

/** The rows of a `/instruments` body that are tradeable crypto `PF_` perpetuals, with their parsed symbol. */
function perpetualRows(raw: unknown): Array<{ row: InstrumentRowT; base: string; multiplier: number }> {
  const { instruments } = unwrap(raw, "/derivatives/api/v3/instruments", InstrumentsBody);
  const out: Array<{ row: InstrumentRowT; base: string; multiplier: number }> = [];
  for (const item of instruments) {
    const r = InstrumentRow.safeParse(item);
    if (!r.success) continue; // indices and other products have other keys; they are never perpetuals
    const row = r.data;
    if (row.type !== undefined && row.type !== "flexible_futures") continue;
    if (row.lastTradingTime || row.tradeable === false || row.tradfi === true) continue;
    if (row.category && NON_CRYPTO_CATEGORIES.has(row.category)) continue;
    const sym = fromKrakenSymbol(row.symbol);
    if (sym) out.push({ row, ...sym });
  }
  return out;
}

/**
 * Parses `GET /derivatives/api/v3/instruments` into the tradeable crypto `PF_` perpetuals (type `flexible_futures`, no
 * `lastTradingTime`, not `tradfi`, not a forex/stock/commodity `category`). `contractSize` is the row's (1 coin);
 * funding is hourly.
 * @throws AppError UPSTREAM_ERROR on `result: "error"` or an unexpected shape.
 */
export function parseInstruments(raw: unknown): PerpInstrument[] {
  return perpetualRows(raw).map(({ row, base, multiplier }) => ({
    venue: KRAKEN,
    base,
    venueSymbol: row.symbol,
    multiplier,
    contractSize: row.contractSize ?? 1,
    fundingIntervalHours: KRAKEN_FUNDING_INTERVAL_HOURS,
  }));
}

/**
 * The maintenance-margin tiers of `inst` from a `/instruments` body: its `marginLevels` (Kraken's levels for
 * professional clients; `retailMarginLevels` are stricter), each applying from `numNonContractUnits` USD of position
 * notional (the quote-currency bound of linear futures) to the next level's; max leverage 1 ÷ `initialMargin`,
 * maintenance rate `maintenanceMargin` (fractions). Levels without a USD bound are skipped.
 * @throws AppError NOT_FOUND when the body does not list `inst`; UPSTREAM_ERROR on an error body or an unexpected shape.
 */
export function parseMarginTiers(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const found = perpetualRows(raw).find((r) => r.row.symbol === inst.venueSymbol);
  if (!found) throw new AppError("NOT_FOUND", `kraken does not list ${inst.venueSymbol}`);
  const levels = (found.row.marginLevels ?? [])
    .filter((l): l is typeof l & { numNonContractUnits: number } => l.numNonContractUnits !== null && l.initialMargin > 0)
    .sort((a, b) => a.numNonContractUnits - b.numNonContractUnits);
  return levels.map((l, i) => ({
    venue: KRAKEN,
    base: inst.base,
    minNotionalUsd: l.numNonContractUnits,
    maxNotionalUsd: levels[i + 1]?.numNonContractUnits ?? null,
    maxLeverage: p15(1 / l.initialMargin),
    maintenanceMarginRate: l.maintenanceMargin,
  }));
}

const TickerRow = z.object({
  symbol: z.string(),
  tag: z.string().optional(),
  markPrice: OptNum,
  indexPrice: OptNum,
  openInterest: OptNum,
  fundingRate: OptNum,
  fundingRatePrediction: OptNum,
});
type TickerRowT = z.output<typeof TickerRow>;
const TickersBody = z.object({ tickers: z.array(z.unknown()), serverTime: IsoTime.optional() });
const TickerBody = z.object({ ticker: TickerRow, serverTime: IsoTime.optional() });

/** An absolute hourly rate (currency per contract) of `inst` → a fraction of notional: ÷ (mark × contract size). */
function relativeRate(absolute: number, inst: PerpInstrument, mark: number): number {
  return p15(absolute / (mark * inst.contractSize));
}

function snapshot(row: TickerRowT, inst: PerpInstrument, time: number): FundingSnapshot | undefined {
  if (row.fundingRate === null || row.markPrice === null || !(row.markPrice > 0)) return undefined;
  return {
    venue: KRAKEN,
    base: inst.base,
    venueSymbol: inst.venueSymbol,
    fundingRate: relativeRate(row.fundingRate, inst, row.markPrice),
    fundingIntervalHours: KRAKEN_FUNDING_INTERVAL_HOURS,
    // The current rate is the one of the running hour, paid at its end.
    nextFundingTime: nextHour(time),
    markPrice: perCoin(row.markPrice, inst.multiplier),
    indexPrice: row.indexPrice === null ? null : perCoin(row.indexPrice, inst.multiplier),
    premium: null,
    interestRate: null,
    time,
  };
}

/** Looks a ticker symbol up in the catalog (`/tickers` writes `PF_XBTUSD`; its single-ticker example `pi_xbtusd`). */
const lookup = (bySymbol: ReadonlyMap<string, PerpInstrument>, symbol: string) => bySymbol.get(symbol) ?? bySymbol.get(symbol.toUpperCase());

/**
 * Parses `GET /derivatives/api/v3/tickers` (every market and index) into funding snapshots of the perpetuals in
 * `bySymbol` (other rows, and rows without `fundingRate` or a positive `markPrice`, are skipped): rate = `fundingRate`
 * ÷ (`markPrice` × contract size), a fraction per hour (see the module comment); next funding at the next full hour;
 * prices per ONE coin; time = `serverTime` (else `now`).
 * @throws AppError on an error body (see {@link krakenError}); UPSTREAM_ERROR on an unexpected shape.
 */
export function parseTickers(raw: unknown, bySymbol: ReadonlyMap<string, PerpInstrument>, now = Date.now()): FundingSnapshot[] {
  const body = unwrap(raw, "/derivatives/api/v3/tickers", TickersBody);
  const time = body.serverTime ?? now;
  const out: FundingSnapshot[] = [];
  for (const item of body.tickers) {
    const r = TickerRow.safeParse(item);
    if (!r.success) continue;
    const inst = lookup(bySymbol, r.data.symbol);
    const snap = inst && snapshot(r.data, inst, time);
    if (snap) out.push(snap);
  }
  return out;
}

/** The ticker of a `GET /derivatives/api/v3/tickers/{symbol}` body and its time. */
function tickerOf(raw: unknown, inst: PerpInstrument, now: number): { row: TickerRowT; time: number } {
  const body = unwrap(raw, `/derivatives/api/v3/tickers/${inst.venueSymbol}`, TickerBody, inst.venueSymbol);
  return { row: body.ticker, time: body.serverTime ?? now };
}

/**
 * The funding snapshot of `inst` from `GET /derivatives/api/v3/tickers/{symbol}` (see {@link parseTickers}).
 * @throws AppError NOT_FOUND on a symbol error; UPSTREAM_ERROR when the ticker has no `fundingRate` or mark price.
 */
export function parseTicker(raw: unknown, inst: PerpInstrument, now = Date.now()): FundingSnapshot {
  const { row, time } = tickerOf(raw, inst, now);
  const snap = snapshot(row, inst, time);
  if (!snap) throw new AppError("UPSTREAM_ERROR", `kraken sent no fundingRate or mark price for ${inst.venueSymbol}`);
  return snap;
}

/**
 * Open interest of `inst` from a `/tickers/{symbol}` body: `openInterest` is in contracts (× contract size ×
 * multiplier = coins; 1 coin per contract on `PF_`), USD = coins × the mark price per coin; time = `serverTime`.
 * @throws AppError NOT_FOUND on a symbol error; UPSTREAM_ERROR when the open interest or the mark price is missing.
 */
export function parseTickerOpenInterest(raw: unknown, inst: PerpInstrument, now = Date.now()): OpenInterest {
  const { row, time } = tickerOf(raw, inst, now);
  if (row.openInterest === null || row.markPrice === null || !(row.markPrice > 0)) {
    throw new AppError("UPSTREAM_ERROR", `kraken sent no open interest or mark price for ${inst.venueSymbol}`);
  }
  const coins = scale(scale(row.openInterest, inst.contractSize), inst.multiplier);
  return { venue: KRAKEN, base: inst.base, oiCoins: coins, oiUsd: p15(coins * perCoin(row.markPrice, inst.multiplier)), time };
}

/**
 * Kraken's estimate of the next hour's rate for `inst` from a `/tickers/{symbol}` body: `fundingRatePrediction` ÷
 * (mark × contract size), a fraction per hour, paid at the end of the NEXT hour (the running hour's rate is the current
 * one); null when the ticker carries no prediction.
 * @throws AppError NOT_FOUND on a symbol error; UPSTREAM_ERROR on an unexpected shape.
 */
export function parseTickerPrediction(raw: unknown, inst: PerpInstrument, now = Date.now()): PredictedFunding | null {
  const { row, time } = tickerOf(raw, inst, now);
  if (row.fundingRatePrediction === null || row.markPrice === null || !(row.markPrice > 0)) return null;
  return {
    venue: KRAKEN,
    base: inst.base,
    rate: relativeRate(row.fundingRatePrediction, inst, row.markPrice),
    nextFundingTime: nextHour(time) + HOUR_MS,
    fundingIntervalHours: KRAKEN_FUNDING_INTERVAL_HOURS,
  };
}

const HistoryBody = z.object({
  rates: z.array(z.object({ timestamp: IsoTime, relativeFundingRate: OptNum, fundingRate: OptNum })),
  serverTime: IsoTime.optional(),
});

/**
 * Parses `GET /derivatives/api/v4/historicalfundingrates?symbol=` (every hour since the listing, ascending) into
 * settled funding points, newest first: rate = `relativeFundingRate` (fraction per hour); time = the row's hour START
 * plus one hour, the settlement; rows settling after the body's `serverTime` (else `now`: the running hour's row is
 * already published) and rows without a relative rate are dropped. No mark price (null).
 * @throws AppError NOT_FOUND on a symbol error (code 11); UPSTREAM_ERROR on another error or an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument, now = Date.now()): FundingPoint[] {
  const { rates, serverTime } = unwrap(raw, "/derivatives/api/v4/historicalfundingrates", HistoryBody, inst.venueSymbol);
  const asOf = serverTime ?? now;
  const out: FundingPoint[] = [];
  for (const r of rates) {
    const settle = r.timestamp + HOUR_MS;
    if (r.relativeFundingRate === null || settle > asOf) continue;
    out.push({ venue: KRAKEN, base: inst.base, time: settle, rate: r.relativeFundingRate, markPrice: null });
  }
  return out.sort((a, b) => b.time - a.time);
}

const CandlesBody = z.object({
  candles: z.array(z.object({ time: Num, open: Num, high: Num, low: Num, close: Num, volume: Num })),
  more_candles: z.boolean().optional(),
});

/**
 * Parses `GET /api/charts/v1/trade/{symbol}/1h?from=&to=` (decimal strings, `time` in ms, `volume` in contracts) into
 * candles oldest first: prices per ONE coin, volume in coins (× contract size × multiplier) and USD = coins × the
 * candle's mean of open, high, low and close (Kraken publishes no quote volume per candle).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseCandles(raw: unknown, inst: PerpInstrument): Candle[] {
  const r = CandlesBody.safeParse(raw);
  if (!r.success) throw invalid("/api/charts/v1/trade", r.error);
  const m = inst.multiplier;
  return r.data.candles
    .map((c): Candle => {
      const coins = scale(scale(c.volume, inst.contractSize), m);
      const mean = perCoin((c.open + c.high + c.low + c.close) / 4, m);
      return {
        venue: KRAKEN,
        base: inst.base,
        openTime: c.time,
        open: perCoin(c.open, m),
        high: perCoin(c.high, m),
        low: perCoin(c.low, m),
        close: perCoin(c.close, m),
        volumeCoins: coins,
        volumeUsd: p15(coins * mean),
      };
    })
    .sort((a, b) => a.openTime - b.openTime);
}

const AnalyticsError = z.object({ severity: z.string().optional(), type: z.string().optional(), field: z.string().nullish(), msg: z.string().nullish() });
const AnalyticsBody = z.object({
  result: z.object({ timestamp: z.array(Num), data: z.unknown(), more: z.boolean().optional() }).nullable(),
  errors: z.array(AnalyticsError).nullish(),
});

/** The `result` of a charts analytics body (`timestamp` in SECONDS), or null when empty. @throws AppError UPSTREAM_ERROR on an `E` error. */
function analytics(raw: unknown, endpoint: string): { timestamp: number[]; data: unknown; more: boolean } | null {
  const r = AnalyticsBody.safeParse(raw);
  if (!r.success) throw invalid(endpoint, r.error);
  const fatal = (r.data.errors ?? []).filter((e) => e.severity === "E");
  if (fatal.length) {
    const what = fatal.map((e) => [e.type, e.field].filter(Boolean).join(" ")).join("; ");
    throw new AppError("UPSTREAM_ERROR", `kraken ${endpoint} refused the request: ${what}`, { details: fatal });
  }
  return r.data.result && { timestamp: r.data.result.timestamp, data: r.data.result.data, more: r.data.result.more ?? false };
}

/** One analytics value: a number, a decimal string, or an `[open, high, low, close]` bucket (its close). */
const BucketValue = z.union([Num, z.tuple([Num, Num, Num, Num]).transform((ohlc) => ohlc[3])]);

/** Whether a charts analytics body says more buckets follow in the requested range (`more`). */
export function analyticsMore(raw: unknown): boolean {
  return (raw as { result?: { more?: unknown } } | null)?.result?.more === true;
}

/**
 * Parses `GET /api/charts/v1/analytics/{symbol}/open-interest?since=&to=&interval=` (bucket start times in seconds;
 * each bucket the `[open, high, low, close]` of the open interest in contracts) into points oldest first: coins = the
 * bucket's close × contract size × multiplier, USD = coins × the close of the hourly trade candle opening at the same
 * time (`candles`, per coin; the latest earlier one when missing; buckets with no price are dropped), time = the
 * bucket's end (at most `now`).
 * @throws AppError UPSTREAM_ERROR on an `E` error or an unexpected shape.
 */
export function parseOpenInterestHistory(raw: unknown, candles: readonly Candle[], inst: PerpInstrument, intervalMs: number, now = Date.now()): OpenInterestPoint[] {
  const endpoint = "/api/charts/v1/analytics/open-interest";
  const res = analytics(raw, endpoint);
  if (!res) return [];
  const values = z.array(BucketValue).safeParse(res.data);
  if (!values.success) throw invalid(endpoint, values.error);
  if (values.data.length !== res.timestamp.length) throw new AppError("UPSTREAM_ERROR", `kraken ${endpoint} sent ${values.data.length} values for ${res.timestamp.length} times`);
  const prices = [...candles].sort((a, b) => a.openTime - b.openTime);
  const out: OpenInterestPoint[] = [];
  res.timestamp.forEach((ts, i) => {
    const start = ts * 1000;
    const price = prices.filter((c) => c.openTime <= start).at(-1)?.close;
    if (price === undefined) return;
    const coins = scale(scale(values.data[i]!, inst.contractSize), inst.multiplier);
    out.push({ venue: KRAKEN, base: inst.base, time: Math.min(start + intervalMs, now), oiCoins: coins, oiUsd: p15(coins * price) });
  });
  return out;
}

const LongShortData = z.object({ longCount: z.array(OptNum), shortCount: z.array(OptNum) });

/**
 * Parses `GET /api/charts/v1/analytics/{symbol}/long-short-info?since=&interval=` (per bucket the number of accounts
 * holding a long and a short position, and their shares in percent) into the newest bucket's ratio, or null when there
 * is none or no account on one side: shares from the account counts (`longCount`, `shortCount`; Kraken's `ratio`
 * column is not long ÷ short and is not read), source `all_accounts`, time = the bucket's start.
 * @throws AppError UPSTREAM_ERROR on an `E` error or an unexpected shape.
 */
export function parseLongShort(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const endpoint = "/api/charts/v1/analytics/long-short-info";
  const res = analytics(raw, endpoint);
  if (!res) return null;
  const d = LongShortData.safeParse(res.data);
  if (!d.success) throw invalid(endpoint, d.error);
  for (let i = res.timestamp.length - 1; i >= 0; i--) {
    const long = d.data.longCount[i];
    const short = d.data.shortCount[i];
    if (long === null || long === undefined || short === null || short === undefined) continue;
    if (!(long > 0) || !(short > 0)) return null;
    const total = long + short;
    return {
      venue: KRAKEN,
      base: inst.base,
      longRatio: p15(long / total),
      shortRatio: p15(short / total),
      lsRatio: p15(long / short),
      source: "all_accounts",
      period,
      time: res.timestamp[i]! * 1000,
    };
  }
  return null;
}
