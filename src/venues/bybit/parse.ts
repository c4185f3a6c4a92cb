import { z } from "zod";
import { AppError } from "../../errors.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument } from "../perp/types.js";
import { splitMultiplier } from "../binance/parse.js";
import { invalidShape, Num, OptNum, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Bybit v5 `category=linear` payloads (https://bybit-exchange.github.io/docs/v5/intro, Market). Envelope
 * `{retCode, retMsg, result, time}`; every value inside `result.list` is a string, timestamps
 * included. Symbols follow Binance's numeric-prefix convention (`1000PEPEUSDT`) plus a suffix form
 * (`SHIB1000USDT`); records are per ONE coin of the canonical base.
 */

const VENUE = "bybit";
const invalid = (endpoint: string, err: z.ZodError) => invalidShape(VENUE, endpoint, err);

/** Venue symbol → instrument, the context every per-symbol parser needs. */
export type BybitInstrumentIndex = ReadonlyMap<string, PerpInstrument>;

const Envelope = z.object({ retCode: z.number(), retMsg: z.string(), result: z.unknown(), time: z.number().optional() });

/**
 * Validates the v5 envelope and `result` against `schema`.
 * @throws AppError NOT_FOUND for retCode 10001 (params / symbol invalid) when `symbol` is given,
 *   UPSTREAM_ERROR for any other non-zero retCode or an unexpected shape.
 */
function unwrap<T extends z.ZodType>(raw: unknown, endpoint: string, schema: T, symbol?: string): { result: z.output<T>; time: number | undefined } {
  const env = Envelope.safeParse(raw);
  if (!env.success) throw invalid(endpoint, env.error);
  const { retCode, retMsg } = env.data;
  if (retCode !== 0) {
    if (retCode === 10001 && symbol !== undefined) throw new AppError("NOT_FOUND", `bybit does not list ${symbol} (${retMsg})`);
    throw new AppError("UPSTREAM_ERROR", `bybit ${endpoint} failed: retCode ${retCode} ${retMsg}`, { details: { retCode, retMsg } });
  }
  const r = schema.safeParse(env.data.result);
  if (!r.success) throw invalid(endpoint, r.error);
  return { result: r.data, time: env.data.time };
}

/**
 * Canonical base and multiplier of a Bybit USDT perp symbol, or undefined when it is not `<coin>USDT`
 * (USDC `BTCPERP`, dated `BTCUSDT-26DEC25`). `1000PEPEUSDT` → PEPE × 1000; `SHIB1000USDT` → SHIB × 1000.
 */
export function fromBybitSymbol(symbol: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)USDT$/.exec(symbol.toUpperCase());
  return m ? splitMultiplier(m[1]!) : undefined;
}

/** Venue symbol in the numeric-prefix convention: `toBybitSymbol("PEPE", 1000)` = `1000PEPEUSDT`. */
export function toBybitSymbol(base: string, multiplier = 1): string {
  const b = base.toUpperCase();
  return multiplier === 1 ? `${b}USDT` : `${multiplier}${b}USDT`;
}

const InstrumentsResult = z.object({
  list: z.array(
    z.object({
      symbol: z.string(),
      contractType: z.string(),
      status: z.string(),
      baseCoin: z.string(),
      quoteCoin: z.string(),
      settleCoin: z.string().optional(),
      fundingInterval: z.number().optional(),
    }),
  ),
  nextPageCursor: z.string().optional(),
});

/**
 * Parses one page of `GET /v5/market/instruments-info?category=linear` into the USDT linear
 * perpetuals that trade (`contractType` LinearPerpetual, `quoteCoin` USDT, `status` Trading).
 * `fundingInterval` (minutes) becomes `fundingIntervalHours`. `nextPageCursor` is "" on the last page.
 * @throws AppError UPSTREAM_ERROR on a non-zero retCode or an unexpected shape.
 */
export function parseInstrumentsInfo(raw: unknown): { instruments: PerpInstrument[]; nextPageCursor: string } {
  const { result } = unwrap(raw, "/v5/market/instruments-info", InstrumentsResult);
  const instruments: PerpInstrument[] = [];
  for (const s of result.list) {
    if (s.contractType !== "LinearPerpetual" || s.quoteCoin !== "USDT" || s.status !== "Trading") continue;
    if (s.settleCoin !== undefined && s.settleCoin !== "USDT") continue;
    const { base, multiplier } = splitMultiplier(s.baseCoin);
    const inst: PerpInstrument = { venue: VENUE, base, venueSymbol: s.symbol, multiplier, contractSize: 1 };
    if (s.fundingInterval !== undefined && s.fundingInterval > 0) inst.fundingIntervalHours = s.fundingInterval / 60;
    instruments.push(inst);
  }
  return { instruments, nextPageCursor: result.nextPageCursor ?? "" };
}

const TickersResult = z.object({
  list: z.array(
    z.object({
      symbol: z.string(),
      markPrice: OptNum,
      indexPrice: OptNum,
      fundingRate: OptNum,
      nextFundingTime: OptNum,
      fundingIntervalHour: OptNum,
      openInterest: OptNum,
      openInterestValue: OptNum,
    }),
  ),
});

/** Bybit's standard interval, used only when neither the ticker nor the instrument states one. */
export const BYBIT_DEFAULT_INTERVAL_HOURS = 8;

/**
 * Parses `GET /v5/market/tickers?category=linear[&symbol=]` into funding snapshots of the listed
 * instruments (others and rows without a funding rate are skipped). The interval is the ticker's
 * `fundingIntervalHour` when sent, else the instrument's `fundingInterval`, else 8 h. Mark/index are
 * divided by the multiplier; Bybit reports no premium or interest component (null). `time` is the
 * envelope's `time` (or `opts.now` when absent).
 * @throws AppError NOT_FOUND on retCode 10001 when `opts.symbol` names the requested symbol;
 *   UPSTREAM_ERROR on another non-zero retCode or an unexpected shape.
 */
export function parseTickers(raw: unknown, instruments: BybitInstrumentIndex, opts: { now?: number; symbol?: string } = {}): FundingSnapshot[] {
  const { result, time } = unwrap(raw, "/v5/market/tickers", TickersResult, opts.symbol);
  const now = opts.now ?? Date.now();
  const out: FundingSnapshot[] = [];
  for (const t of result.list) {
    const inst = instruments.get(t.symbol);
    if (!inst || t.fundingRate === null) continue;
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: t.fundingRate,
      fundingIntervalHours: t.fundingIntervalHour ?? inst.fundingIntervalHours ?? BYBIT_DEFAULT_INTERVAL_HOURS,
      nextFundingTime: t.nextFundingTime ? t.nextFundingTime : null,
      markPrice: t.markPrice === null ? null : perCoin(t.markPrice, inst.multiplier),
      indexPrice: t.indexPrice === null ? null : perCoin(t.indexPrice, inst.multiplier),
      premium: null,
      interestRate: null,
      time: time ?? now,
    });
  }
  return out;
}

/**
 * Open interest of `inst` from `GET /v5/market/tickers?category=linear&symbol=`: `openInterest` is in
 * venue units (coins ÷ multiplier) for linear contracts, `openInterestValue` in USD.
 * @throws AppError NOT_FOUND when the row is missing; UPSTREAM_ERROR on an unexpected shape or missing values.
 */
export function parseTickerOpenInterest(raw: unknown, inst: PerpInstrument, now = Date.now()): OpenInterest {
  const { result, time } = unwrap(raw, "/v5/market/tickers", TickersResult, inst.venueSymbol);
  const t = result.list.find((r) => r.symbol === inst.venueSymbol);
  if (!t) throw new AppError("NOT_FOUND", `bybit sent no ticker for ${inst.venueSymbol}`);
  if (t.openInterest === null || t.openInterestValue === null) {
    throw new AppError("UPSTREAM_ERROR", `bybit /v5/market/tickers sent no open interest for ${inst.venueSymbol}`);
  }
  return { venue: VENUE, base: inst.base, oiCoins: scale(t.openInterest, inst.multiplier), oiUsd: t.openInterestValue, time: time ?? now };
}

const FundingHistoryResult = z.object({
  list: z.array(z.object({ symbol: z.string().optional(), fundingRate: OptNum, fundingRateTimestamp: Num })),
});

/**
 * Parses `GET /v5/market/funding/history?category=linear&symbol=` (newest first) into settled funding
 * points, newest first. Bybit sends no mark price (null). Rows with an empty rate are dropped.
 * @throws AppError NOT_FOUND on retCode 10001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  const { result } = unwrap(raw, "/v5/market/funding/history", FundingHistoryResult, inst.venueSymbol);
  const out: FundingPoint[] = [];
  for (const r of result.list) {
    if (r.fundingRate === null) continue;
    out.push({ venue: VENUE, base: inst.base, time: r.fundingRateTimestamp, rate: r.fundingRate, markPrice: null });
  }
  return out.sort((a, b) => b.time - a.time);
}

const AccountRatioResult = z.object({
  list: z.array(z.object({ symbol: z.string().optional(), buyRatio: Num, sellRatio: Num, timestamp: Num })),
});

/**
 * Parses `GET /v5/market/account-ratio?category=linear&symbol=&period=` (all accounts: share of
 * holders long vs short; Bybit publishes no top-trader ratio). Returns the newest row, or null when
 * the list is empty (or the short share is 0, where no ratio exists). `period` is reported as given (`5m`).
 * @throws AppError NOT_FOUND on retCode 10001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseAccountRatio(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const { result } = unwrap(raw, "/v5/market/account-ratio", AccountRatioResult, inst.venueSymbol);
  const last = result.list.reduce<(typeof result.list)[number] | undefined>((a, r) => (!a || r.timestamp > a.timestamp ? r : a), undefined);
  if (!last || last.sellRatio <= 0) return null;
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: last.buyRatio,
    shortRatio: last.sellRatio,
    lsRatio: Number((last.buyRatio / last.sellRatio).toPrecision(15)),
    source: "all_accounts",
    period,
    time: last.timestamp,
  };
}

const RiskLimitResult = z.object({
  list: z.array(z.object({ symbol: z.string().optional(), riskLimitValue: Num, maintenanceMargin: Num, initialMargin: OptNum, maxLeverage: Num })),
});

/**
 * Relative tolerance of the unit check in {@link riskLimitMarginUnit}. Bybit rounds `maxLeverage` to 2 decimals, so
 * the product is never exact (recorded linear BTCUSDT rows: 0.0175 × 57.14 = 0.99995, 0.7 × 1.43 = 1.001).
 */
const MARGIN_UNIT_TOLERANCE = 0.05;

/**
 * The unit of one `/v5/market/risk-limit` row's margin fields, decided by the row itself: `initialMargin` is
 * 1 / `maxLeverage`, so `initialMargin × maxLeverage` is ≈ 1 when margins are fractions (recorded linear rows,
 * `"0.005"` / `"0.01"` at 100x) and ≈ 100 when they are percents (the docs' inverse example, `"0.5"` / `"1"` at 100x).
 * Magnitude alone cannot decide: `"1"` is 100% on the last linear tier (1x) and 1% in percent.
 * @returns the divisor that turns the row's margins into fractions (1 or 100), or null when neither unit fits
 *   (`initialMargin` missing, zero or inconsistent with `maxLeverage`).
 */
export function riskLimitMarginUnit(initialMargin: number | null, maxLeverage: number): 1 | 100 | null {
  if (initialMargin === null || !(initialMargin > 0) || !(maxLeverage > 0)) return null;
  const product = initialMargin * maxLeverage;
  if (Math.abs(product - 1) <= MARGIN_UNIT_TOLERANCE) return 1;
  if (Math.abs(product / 100 - 1) <= MARGIN_UNIT_TOLERANCE) return 100;
  return null;
}

/**
 * Parses `GET /v5/market/risk-limit?category=linear&symbol=` (rows `{id, symbol, riskLimitValue,
 * maintenanceMargin, initialMargin, isLowestRisk, maxLeverage, mmDeduction}`, decimals as strings) into the
 * margin tiers of `inst`, sorted by `riskLimitValue` (rows may arrive unsorted). `riskLimitValue` is the tier's
 * upper notional bound in USDT and the previous row's bound its lower one (0 for the first). The margin unit is
 * decided PER ROW by {@link riskLimitMarginUnit} (linear rows are fractions, `"0.005"` → 0.005; percent rows such as
 * the docs' inverse example, `"0.5"` → 0.005, are accepted too); a row whose unit cannot be decided is skipped
 * (the bounds of the others are unchanged). Rows of other symbols are skipped.
 * @throws AppError NOT_FOUND on retCode 10001; UPSTREAM_ERROR on another failure, an unexpected shape, or when
 *   rows came back but none has a decidable unit (the venue's tiers are unavailable).
 */
export function parseRiskLimit(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const { result } = unwrap(raw, "/v5/market/risk-limit", RiskLimitResult, inst.venueSymbol);
  const rows = result.list.filter((r) => r.symbol === undefined || r.symbol === inst.venueSymbol).sort((a, b) => a.riskLimitValue - b.riskLimitValue);
  const tiers: MarginTier[] = [];
  for (const [i, r] of rows.entries()) {
    const unit = riskLimitMarginUnit(r.initialMargin, r.maxLeverage);
    if (unit === null) continue;
    tiers.push({
      venue: VENUE,
      base: inst.base,
      minNotionalUsd: i === 0 ? 0 : rows[i - 1]!.riskLimitValue,
      maxNotionalUsd: r.riskLimitValue,
      maxLeverage: r.maxLeverage,
      maintenanceMarginRate: perCoin(r.maintenanceMargin, unit),
    });
  }
  if (rows.length > 0 && tiers.length === 0) {
    throw new AppError(
      "UPSTREAM_ERROR",
      `bybit /v5/market/risk-limit rows of ${inst.venueSymbol} have no recognisable margin unit (initialMargin x maxLeverage is neither ~1 nor ~100)`,
    );
  }
  return tiers;
}
