import { z } from "zod";
import { AppError } from "../../errors.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument } from "../perp/types.js";
import { splitMultiplier } from "../binance/parse.js";
import { invalidShape, Num, OptNum, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Bitget API v2 mix payloads, `productType=USDT-FUTURES` (https://www.bitget.com/api-doc/contract/market/...).
 * Envelope `{code, msg, requestTime, data}`: `code` is "00000" on success, another string code on failure
 * (`40034` "Parameter … does not exist" for an unknown symbol). Every value inside `data` is a string, times
 * included. USDT-FUTURES sizes are in base coins (fills and open interest "Specific coins, eg.: ETH in
 * ETHUSDT"): the contract size is 1; `sizeMultiplier` in the contract list is the order size STEP, not a
 * contract size. Records are per ONE coin of the canonical base (`1000BONKUSDT`-style prefixes undone).
 */

const VENUE = "bitget";
/** The product type every request names (USDT-margined perpetuals). */
export const BITGET_PRODUCT_TYPE = "USDT-FUTURES";
/** Bitget's code for a request parameter that does not exist (an unknown symbol): `{"code":"40034","msg":"Parameter … does not exist"}`. */
export const BITGET_PARAM_NOT_FOUND = "40034";
/** The funding interval used only when the contract list states none (Bitget's standard 8 h). */
export const BITGET_DEFAULT_INTERVAL_HOURS = 8;

const invalid = (endpoint: string, err: z.ZodError) => invalidShape(VENUE, endpoint, err);

/** Venue symbol → instrument, the context the all-symbol parsers need. */
export type BitgetInstrumentIndex = ReadonlyMap<string, PerpInstrument>;

/** The v2 envelope; `requestTime` is sent as a number or a numeric string. */
export const BitgetEnvelope = z.object({ code: z.string(), msg: z.string().optional(), requestTime: OptNum, data: z.unknown() });

/**
 * The error a failed envelope stands for: `40034` (parameter does not exist) on a request naming `symbol` →
 * NOT_FOUND; any other code → UPSTREAM_ERROR with the venue's code and message.
 */
export function bitgetEnvelopeError(code: string, msg: string | undefined, endpoint: string, symbol?: string): AppError {
  if (code === BITGET_PARAM_NOT_FOUND && symbol !== undefined) return new AppError("NOT_FOUND", `bitget does not list ${symbol} (${msg ?? code})`);
  return new AppError("UPSTREAM_ERROR", `bitget ${endpoint} failed: code ${code} ${msg ?? ""}`.trim(), { details: { code, msg } });
}

/**
 * Validates the envelope and `data` against `schema`.
 * @throws AppError NOT_FOUND / UPSTREAM_ERROR per {@link bitgetEnvelopeError}; UPSTREAM_ERROR on an unexpected shape.
 */
function unwrap<T extends z.ZodType>(raw: unknown, endpoint: string, schema: T, symbol?: string): { data: z.output<T>; requestTime: number | null } {
  const env = BitgetEnvelope.safeParse(raw);
  if (!env.success) throw invalid(endpoint, env.error);
  if (env.data.code !== "00000") throw bitgetEnvelopeError(env.data.code, env.data.msg, endpoint, symbol);
  const r = schema.safeParse(env.data.data);
  if (!r.success) throw invalid(endpoint, r.error);
  return { data: r.data, requestTime: env.data.requestTime };
}

/**
 * Canonical base and multiplier of a Bitget USDT-FUTURES symbol, or undefined when it is not `<coin>USDT`
 * (dated delivery contracts such as `BTCUSDT_250328`, coin-margined `BTCUSD`). The multiplier is read from
 * the symbol, as on Binance: `1000BONKUSDT` → BONK × 1000 (prices are per 1000 coins); `BTCUSDT` → BTC × 1.
 */
export function fromBitgetSymbol(symbol: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)USDT$/.exec(symbol.toUpperCase());
  return m ? splitMultiplier(m[1]!) : undefined;
}

const ContractsData = z.array(
  z.object({
    symbol: z.string(),
    baseCoin: z.string(),
    quoteCoin: z.string(),
    symbolType: z.string(),
    symbolStatus: z.string(),
    fundInterval: OptNum,
  }),
);

/**
 * Parses `GET /api/v2/mix/market/contracts?productType=USDT-FUTURES` into the USDT perpetuals that trade
 * (`symbolType` perpetual, `quoteCoin` USDT, `symbolStatus` normal). `fundInterval` (hours, a string) becomes
 * `fundingIntervalHours`; `contractSize` is 1 (sizes are in coins).
 * @throws AppError UPSTREAM_ERROR on a failed envelope or an unexpected shape.
 */
export function parseContracts(raw: unknown): PerpInstrument[] {
  const { data } = unwrap(raw, "/api/v2/mix/market/contracts", ContractsData);
  const out: PerpInstrument[] = [];
  for (const c of data) {
    if (c.symbolType !== "perpetual" || c.quoteCoin !== "USDT" || c.symbolStatus !== "normal") continue;
    const parsed = fromBitgetSymbol(c.symbol);
    if (!parsed) continue;
    const inst: PerpInstrument = { venue: VENUE, base: parsed.base, venueSymbol: c.symbol, multiplier: parsed.multiplier, contractSize: 1 };
    if (c.fundInterval !== null && c.fundInterval > 0) inst.fundingIntervalHours = c.fundInterval;
    out.push(inst);
  }
  return out;
}

const TickerRow = z.object({
  symbol: z.string(),
  fundingRate: OptNum,
  markPrice: OptNum,
  indexPrice: OptNum,
  holdingAmount: OptNum,
  ts: OptNum,
});
const TickersData = z.array(TickerRow);

/**
 * Parses `GET /api/v2/mix/market/tickers?productType=USDT-FUTURES` (all symbols) or `…/ticker?symbol=` (one)
 * into funding snapshots of the listed instruments (others, and rows without a funding rate, are skipped).
 * `fundingRate` is the current (accruing) rate, a fraction per interval; the interval is the contract list's
 * `fundInterval` (8 h when absent). The ticker states no next funding time (null), no premium and no interest
 * component (null). Mark and index prices are per ONE coin. `time` is the row's `ts`, else the envelope's
 * `requestTime`, else `opts.now`.
 * @throws AppError NOT_FOUND on code 40034 when `opts.symbol` names the requested symbol; UPSTREAM_ERROR on
 *   another failure or an unexpected shape.
 */
export function parseTickers(raw: unknown, instruments: BitgetInstrumentIndex, opts: { now?: number; symbol?: string } = {}): FundingSnapshot[] {
  const endpoint = opts.symbol === undefined ? "/api/v2/mix/market/tickers" : "/api/v2/mix/market/ticker";
  const { data, requestTime } = unwrap(raw, endpoint, TickersData, opts.symbol);
  const now = opts.now ?? Date.now();
  const out: FundingSnapshot[] = [];
  for (const t of data) {
    const inst = instruments.get(t.symbol);
    if (!inst || t.fundingRate === null) continue;
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: t.fundingRate,
      fundingIntervalHours: inst.fundingIntervalHours ?? BITGET_DEFAULT_INTERVAL_HOURS,
      nextFundingTime: null,
      markPrice: t.markPrice === null ? null : perCoin(t.markPrice, inst.multiplier),
      indexPrice: t.indexPrice === null ? null : perCoin(t.indexPrice, inst.multiplier),
      premium: null,
      interestRate: null,
      time: t.ts ?? requestTime ?? now,
    });
  }
  return out;
}

/**
 * Open interest of `inst` from `GET /api/v2/mix/market/ticker?symbol=&productType=USDT-FUTURES`: `holdingAmount`
 * is the open interest in venue units (coins ÷ multiplier); USD = `holdingAmount` × `markPrice` (both in venue
 * units, so the multiplier cancels). The dedicated `open-interest` endpoint sends the same size without a price.
 * @throws AppError NOT_FOUND when the row is missing (or code 40034); UPSTREAM_ERROR on an unexpected shape or
 *   a row without `holdingAmount` / `markPrice`.
 */
export function parseTickerOpenInterest(raw: unknown, inst: PerpInstrument, now = Date.now()): OpenInterest {
  const { data, requestTime } = unwrap(raw, "/api/v2/mix/market/ticker", TickersData, inst.venueSymbol);
  const t = data.find((r) => r.symbol === inst.venueSymbol);
  if (!t) throw new AppError("NOT_FOUND", `bitget sent no ticker for ${inst.venueSymbol}`);
  if (t.holdingAmount === null || t.markPrice === null) {
    throw new AppError("UPSTREAM_ERROR", `bitget /api/v2/mix/market/ticker sent no open interest or mark price for ${inst.venueSymbol}`);
  }
  return {
    venue: VENUE,
    base: inst.base,
    oiCoins: scale(t.holdingAmount, inst.multiplier),
    oiUsd: Number((t.holdingAmount * t.markPrice).toPrecision(15)),
    time: t.ts ?? requestTime ?? now,
  };
}

const HistoryData = z.array(z.object({ symbol: z.string().optional(), fundingRate: OptNum, fundingTime: Num }));

/**
 * Parses one page of `GET /api/v2/mix/market/history-fund-rate?symbol=&productType=&pageSize=&pageNo=` (settled
 * rates, newest first; fraction per interval) into funding points, newest first. Bitget sends no mark price
 * (null). Rows with an empty rate, or of another symbol, are dropped. `rows` is the page's row count, for paging.
 * @throws AppError NOT_FOUND on code 40034; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): { points: FundingPoint[]; rows: number } {
  const { data } = unwrap(raw, "/api/v2/mix/market/history-fund-rate", HistoryData, inst.venueSymbol);
  const points: FundingPoint[] = [];
  for (const r of data) {
    if (r.fundingRate === null || (r.symbol !== undefined && r.symbol !== inst.venueSymbol)) continue;
    points.push({ venue: VENUE, base: inst.base, time: r.fundingTime, rate: r.fundingRate, markPrice: null });
  }
  return { points: points.sort((a, b) => b.time - a.time), rows: data.length };
}

const LongShortData = z.array(z.object({ longAccountRatio: Num, shortAccountRatio: Num, longShortAccountRatio: OptNum, ts: Num }));

/**
 * Parses `GET /api/v2/mix/market/account-long-short?symbol=&period=` (the share of large-trader accounts
 * long and short: "合约大户账户多空比", https://www.bitget.com/zh-CN/api-doc/common/apidata/Account-Long-Short)
 * into the newest ratio, or null when the list is empty or both shares are 0. The two shares are normalised
 * to sum to 1 and `lsRatio` is long ÷ short computed from them (the venue's own `longShortAccountRatio` is not
 * trusted: the docs example sends 0.01 / 0.12 with a ratio of 1.2). `period` is reported as given (`5m`).
 * @throws AppError NOT_FOUND on code 40034; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseAccountLongShort(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const { data } = unwrap(raw, "/api/v2/mix/market/account-long-short", LongShortData, inst.venueSymbol);
  const last = data.reduce<(typeof data)[number] | undefined>((a, r) => (!a || r.ts > a.ts ? r : a), undefined);
  if (!last) return null;
  const total = last.longAccountRatio + last.shortAccountRatio;
  if (!(total > 0) || !(last.shortAccountRatio > 0)) return null;
  const p = (v: number) => Number(v.toPrecision(15));
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: p(last.longAccountRatio / total),
    shortRatio: p(last.shortAccountRatio / total),
    lsRatio: p(last.longAccountRatio / last.shortAccountRatio),
    source: "top_traders_accounts",
    period,
    time: last.ts,
  };
}

const TiersData = z.array(z.object({ symbol: z.string().optional(), level: OptNum, startUnit: Num, endUnit: OptNum, leverage: Num, keepMarginRate: Num }));

/**
 * Parses `GET /api/v2/mix/market/query-position-lever?symbol=&productType=` (rows `{symbol, level, startUnit,
 * endUnit, leverage, keepMarginRate}`) into the margin tiers of `inst`, sorted by `startUnit`. `startUnit` /
 * `endUnit` are the tier's position VALUE bounds in USDT ("价值下限/上限"); `keepMarginRate` is the maintenance
 * margin rate as a fraction (0.004 = 0.4%). An empty `endUnit` is an unbounded last tier (null). Rows of other
 * symbols are skipped.
 * @throws AppError NOT_FOUND on code 40034; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parsePositionTiers(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const { data } = unwrap(raw, "/api/v2/mix/market/query-position-lever", TiersData, inst.venueSymbol);
  return data
    .filter((r) => r.symbol === undefined || r.symbol === inst.venueSymbol)
    .sort((a, b) => a.startUnit - b.startUnit)
    .map((r): MarginTier => ({
      venue: VENUE,
      base: inst.base,
      minNotionalUsd: r.startUnit,
      maxNotionalUsd: r.endUnit,
      maxLeverage: r.leverage,
      maintenanceMarginRate: r.keepMarginRate,
    }));
}

/** One candle row: `[ts, open, high, low, close, baseVolume, quoteVolume]`, all strings. */
const CandleRow = z.tuple([Num, Num, Num, Num, Num, Num, Num]).rest(z.unknown());

/**
 * Parses `GET /api/v2/mix/market/candles?symbol=&productType=&granularity=1H&limit=` (rows `[ts, open, high,
 * low, close, base volume, quote volume]`, strings) into candles oldest first: prices per ONE coin, volume in
 * coins (base volume × multiplier) and USD (quote volume, USDT).
 * @throws AppError NOT_FOUND on code 40034; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseCandles(raw: unknown, inst: PerpInstrument): Candle[] {
  const { data } = unwrap(raw, "/api/v2/mix/market/candles", z.array(CandleRow), inst.venueSymbol);
  return data
    .map(([openTime, open, high, low, close, baseVolume, quoteVolume]): Candle => ({
      venue: VENUE,
      base: inst.base,
      openTime,
      open: perCoin(open, inst.multiplier),
      high: perCoin(high, inst.multiplier),
      low: perCoin(low, inst.multiplier),
      close: perCoin(close, inst.multiplier),
      volumeCoins: scale(baseVolume, inst.multiplier),
      volumeUsd: quoteVolume,
    }))
    .sort((a, b) => a.openTime - b.openTime);
}
