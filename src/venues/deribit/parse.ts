import { z } from "zod";
import { AppError } from "../../errors.js";
import type { Candle, FundingPoint, FundingSnapshot, OpenInterest, PerpInstrument } from "../perp/types.js";
import { Num, OptNum, parseShape, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Deribit's public JSON-RPC API v2 (https://docs.deribit.com/, Market Data). Every answer is
 * `{jsonrpc, result, usIn, usOut, usDiff, testnet}`; a refusal is `{error:{code, message, data}}` (HTTP 400).
 * Perpetuals come in two families (instrument list `instrument_type`):
 * - INVERSE (`reversed`): `BTC-PERPETUAL`, `ETH-PERPETUAL`, settled in the coin; `contract_size` is in USD (10 / 1)
 *   and every amount (trades, open interest) is USD: coins = USD / price.
 * - LINEAR (`linear`): `<BASE>_USDC-PERPETUAL`, settled in USDC; amounts and open interest are base coins (the
 *   `contract_size` is in coins and already applied: `amount` = `contracts` × `contract_size`). Bases with a
 *   `1000` prefix (`1000PEPE`) are priced per 1000 coins: multiplier 1000.
 * Funding accrues continuously (every millisecond) and is settled daily; `funding_8h` is the funding of the
 * trailing 8 hours as a fraction, the number we serve as the rate per an 8 h interval (see docs/methods/venues/deribit.md).
 */

const VENUE = "deribit";
const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string): z.output<T> => parseShape(VENUE, schema, raw, endpoint);

/** The interval the served funding rate is expressed over: `funding_8h` is per 8 hours. */
export const DERIBIT_FUNDING_INTERVAL_HOURS = 8;

/** The JSON-RPC error of an unknown instrument: code -32602 `Invalid params`, `data.reason` "instrument not found". */
export const DERIBIT_INVALID_PARAMS = -32602;

const ErrorBody = z.object({
  error: z.object({
    code: z.number(),
    message: z.string().optional(),
    data: z.object({ reason: z.string().optional(), param: z.string().optional() }).nullish(),
  }),
});

/** The `error` of a Deribit JSON-RPC body (text or parsed), or undefined when it is not one. */
export function parseDeribitError(raw: unknown): { code: number; message?: string; reason?: string } | undefined {
  let v = raw;
  if (typeof raw === "string") {
    try {
      v = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  const r = ErrorBody.safeParse(v);
  if (!r.success) return undefined;
  return { code: r.data.error.code, message: r.data.error.message, reason: r.data.error.data?.reason ?? undefined };
}

/** True for the error of an unknown instrument (-32602 with reason "instrument not found"). */
export function isInstrumentNotFound(err: { code: number; reason?: string } | undefined): boolean {
  return err !== undefined && err.code === DERIBIT_INVALID_PARAMS && /instrument not found/i.test(err.reason ?? "");
}

/**
 * The `result` of a JSON-RPC body checked against `schema`.
 * @throws AppError NOT_FOUND for "instrument not found" when `instrument` is given; UPSTREAM_ERROR for any other
 *   error body or an unexpected shape.
 */
function result<T extends z.ZodType>(raw: unknown, endpoint: string, schema: T, instrument?: string): z.output<T> {
  const err = parseDeribitError(raw);
  if (err) {
    if (instrument !== undefined && isInstrumentNotFound(err)) throw new AppError("NOT_FOUND", `deribit does not list ${instrument}`);
    throw new AppError("UPSTREAM_ERROR", `deribit ${endpoint} failed: ${err.code} ${err.message ?? ""}`.trim(), { details: err });
  }
  return (parse(z.object({ result: schema }), raw, endpoint) as { result: z.output<T> }).result;
}

/** Whether a perpetual's amounts are USD (inverse `BTC-PERPETUAL`) or base coins (linear `SOL_USDC-PERPETUAL`), read from its name. */
export function isInverseName(instrumentName: string): boolean {
  return /^[A-Z0-9]+-PERPETUAL$/.test(instrumentName);
}

/**
 * Canonical base and multiplier of a Deribit perpetual name: `BTC-PERPETUAL` → BTC × 1 (inverse);
 * `SOL_USDC-PERPETUAL` → SOL × 1; `1000PEPE_USDC-PERPETUAL` → PEPE × 1000; undefined for anything else
 * (dated futures, options, combos, other settlement currencies).
 */
export function fromDeribitName(instrumentName: string): { base: string; multiplier: number; inverse: boolean } | undefined {
  const inv = /^([A-Z0-9]+)-PERPETUAL$/.exec(instrumentName);
  if (inv) return { base: inv[1]!, multiplier: 1, inverse: true };
  const lin = /^([A-Z0-9]+)_USDC-PERPETUAL$/.exec(instrumentName);
  if (!lin) return undefined;
  const k = /^1000([A-Z0-9]+)$/.exec(lin[1]!);
  return k ? { base: k[1]!, multiplier: 1000, inverse: false } : { base: lin[1]!, multiplier: 1, inverse: false };
}

const InstrumentRow = z.object({
  instrument_name: z.string(),
  kind: z.string(),
  settlement_period: z.string().optional(),
  instrument_type: z.string().optional(),
  is_active: z.boolean().optional(),
  contract_size: OptNum,
});

/**
 * Parses `public/get_instruments?currency=<BTC|ETH|USDC>&kind=future` into the active perpetuals
 * (`settlement_period` perpetual, `kind` future, `is_active` not false), inverse first (so `BTC` resolves to
 * `BTC-PERPETUAL`, the venue's main BTC market, rather than `BTC_USDC-PERPETUAL`). `contractSize` is 1: amounts
 * are already USD (inverse) or coins (linear), and inverse USD becomes coins with the price (see the feed and
 * {@link parseTicker}). Deribit states no funding interval (funding accrues continuously).
 * @throws AppError UPSTREAM_ERROR on an error body or an unexpected shape.
 */
export function parseInstruments(raw: unknown): PerpInstrument[] {
  const rows = result(raw, "public/get_instruments", z.array(z.unknown()));
  const out: PerpInstrument[] = [];
  for (const row of rows) {
    const r = InstrumentRow.safeParse(row);
    if (!r.success) continue; // combos and spot rows have other keys; they are never perpetuals
    const i = r.data;
    if (i.kind !== "future" || i.settlement_period !== "perpetual" || i.is_active === false) continue;
    const sym = fromDeribitName(i.instrument_name);
    if (!sym) continue;
    out.push({ venue: VENUE, base: sym.base, venueSymbol: i.instrument_name, multiplier: sym.multiplier, contractSize: 1 });
  }
  return out.sort((a, b) => Number(isInverseName(b.venueSymbol)) - Number(isInverseName(a.venueSymbol)));
}

const Ticker = z.object({
  instrument_name: z.string(),
  timestamp: Num,
  mark_price: OptNum,
  index_price: OptNum,
  open_interest: OptNum,
  current_funding: OptNum,
  funding_8h: OptNum,
});

/** A ticker or book-summary row reduced to what the funding and open-interest records need. */
interface FundingRow {
  instrument_name: string;
  time: number;
  mark: number | null;
  index: number | null;
  openInterest: number | null;
  funding8h: number | null;
}

function snapshot(inst: PerpInstrument, r: FundingRow): FundingSnapshot | undefined {
  if (r.funding8h === null) return undefined;
  const m = inst.multiplier;
  return {
    venue: VENUE,
    base: inst.base,
    venueSymbol: inst.venueSymbol,
    fundingRate: r.funding8h,
    fundingIntervalHours: DERIBIT_FUNDING_INTERVAL_HOURS,
    // Continuous funding has no next settlement of the quoted rate (cash settles daily at 08:00 UTC).
    nextFundingTime: null,
    markPrice: r.mark === null ? null : perCoin(r.mark, m),
    indexPrice: r.index === null ? null : perCoin(r.index, m),
    premium: null,
    interestRate: null,
    time: r.time,
  };
}

/**
 * Parses `public/ticker?instrument_name=` into the funding snapshot of `inst`: rate = `funding_8h` (fraction
 * per 8 h, the funding of the trailing 8 hours), interval 8 h, no next funding time (continuous accrual),
 * mark and index per ONE coin. `current_funding` (the instantaneous rate) is not served.
 * @throws AppError NOT_FOUND on "instrument not found"; UPSTREAM_ERROR on another error, an unexpected shape or no `funding_8h`.
 */
export function parseTicker(raw: unknown, inst: PerpInstrument): FundingSnapshot {
  const t = result(raw, "public/ticker", Ticker, inst.venueSymbol);
  const snap = snapshot(inst, {
    instrument_name: t.instrument_name,
    time: t.timestamp,
    mark: t.mark_price,
    index: t.index_price,
    openInterest: t.open_interest,
    funding8h: t.funding_8h,
  });
  if (!snap) throw new AppError("UPSTREAM_ERROR", `deribit public/ticker sent no funding_8h for ${inst.venueSymbol}`);
  return snap;
}

/**
 * Open interest of `inst` from a `public/ticker` body: `open_interest` is USD on inverse perpetuals
 * (coins = USD / mark price) and base coins on linear ones (× multiplier for `1000PEPE`; USD = coins × mark per coin).
 * @throws AppError NOT_FOUND on "instrument not found"; UPSTREAM_ERROR when the open interest or the mark price is missing.
 */
export function parseTickerOpenInterest(raw: unknown, inst: PerpInstrument): OpenInterest {
  const t = result(raw, "public/ticker", Ticker, inst.venueSymbol);
  if (t.open_interest === null || t.mark_price === null || !(t.mark_price > 0)) {
    throw new AppError("UPSTREAM_ERROR", `deribit public/ticker sent no open interest or mark price for ${inst.venueSymbol}`);
  }
  const mark = perCoin(t.mark_price, inst.multiplier);
  if (isInverseName(inst.venueSymbol)) {
    return { venue: VENUE, base: inst.base, oiCoins: perCoin(t.open_interest, mark), oiUsd: t.open_interest, time: t.timestamp };
  }
  const coins = scale(t.open_interest, inst.multiplier);
  return { venue: VENUE, base: inst.base, oiCoins: coins, oiUsd: scale(coins, mark), time: t.timestamp };
}

const SummaryRow = z.object({
  instrument_name: z.string(),
  creation_timestamp: OptNum,
  mark_price: OptNum,
  estimated_delivery_price: OptNum,
  open_interest: OptNum,
  funding_8h: OptNum,
});

/**
 * Parses `public/get_book_summary_by_currency?currency=&kind=future` (every future of one settlement currency)
 * into funding snapshots of the listed perpetuals in `instruments` (dated futures and unknown names skipped):
 * rate `funding_8h` per 8 h, index = `estimated_delivery_price` (a perpetual's index), time = `creation_timestamp`
 * (else `now`).
 * @throws AppError UPSTREAM_ERROR on an error body or an unexpected shape.
 */
export function parseBookSummary(raw: unknown, instruments: ReadonlyMap<string, PerpInstrument>, now = Date.now()): FundingSnapshot[] {
  const rows = result(raw, "public/get_book_summary_by_currency", z.array(SummaryRow));
  const out: FundingSnapshot[] = [];
  for (const r of rows) {
    const inst = instruments.get(r.instrument_name);
    if (!inst) continue;
    const snap = snapshot(inst, {
      instrument_name: r.instrument_name,
      time: r.creation_timestamp ?? now,
      mark: r.mark_price,
      index: r.estimated_delivery_price,
      openInterest: r.open_interest,
      funding8h: r.funding_8h,
    });
    if (snap) out.push(snap);
  }
  return out;
}

const FundingHistoryRow = z.object({ timestamp: Num, interest_1h: OptNum, interest_8h: OptNum, index_price: OptNum });

/**
 * Parses `public/get_funding_rate_history?instrument_name=&start_timestamp=&end_timestamp=` (hourly rows, oldest
 * first) into HOURLY funding points, newest first: rate = `interest_1h` (the funding of that hour, fraction per
 * 1 h; the tools read the 1 h interval from the spacing), time = the row's hour, no mark price.
 * @throws AppError NOT_FOUND on "instrument not found"; UPSTREAM_ERROR on another error or an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  const rows = result(raw, "public/get_funding_rate_history", z.array(FundingHistoryRow), inst.venueSymbol);
  const out: FundingPoint[] = [];
  for (const r of rows) if (r.interest_1h !== null) out.push({ venue: VENUE, base: inst.base, time: r.timestamp, rate: r.interest_1h, markPrice: null });
  return out.sort((a, b) => b.time - a.time);
}

const Chart = z.object({
  status: z.string(),
  ticks: z.array(Num),
  open: z.array(Num),
  high: z.array(Num),
  low: z.array(Num),
  close: z.array(Num),
  volume: z.array(Num),
  cost: z.array(Num),
});

/**
 * Parses `public/get_tradingview_chart_data?instrument_name=&start_timestamp=&end_timestamp=&resolution=60`
 * (parallel columns, read by key, oldest first) into candles of `inst`, oldest first: prices per ONE coin,
 * `volume` in coins (× multiplier) and `cost` in USD (USDC on linear perpetuals). `status: "no_data"` is [].
 * @throws AppError NOT_FOUND on "instrument not found"; UPSTREAM_ERROR on another error, ragged columns or an unexpected shape.
 */
export function parseChart(raw: unknown, inst: PerpInstrument): Candle[] {
  const c = result(raw, "public/get_tradingview_chart_data", Chart, inst.venueSymbol);
  if (c.status === "no_data") return [];
  const n = c.ticks.length;
  if ([c.open, c.high, c.low, c.close, c.volume, c.cost].some((col) => col.length !== n)) {
    throw new AppError("UPSTREAM_ERROR", `deribit public/get_tradingview_chart_data sent columns of different lengths for ${inst.venueSymbol}`);
  }
  const m = inst.multiplier;
  const out: Candle[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      venue: VENUE,
      base: inst.base,
      openTime: c.ticks[i]!,
      open: perCoin(c.open[i]!, m),
      high: perCoin(c.high[i]!, m),
      low: perCoin(c.low[i]!, m),
      close: perCoin(c.close[i]!, m),
      volumeCoins: scale(c.volume[i]!, m),
      volumeUsd: c.cost[i]!,
    });
  }
  return out.sort((a, b) => a.openTime - b.openTime);
}
