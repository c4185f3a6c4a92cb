import { z } from "zod";
import { AppError } from "../../errors.js";
import { splitMultiplier } from "../binance/parse.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, OpenInterestPoint, PerpInstrument } from "../perp/types.js";
import { invalidShape, Num, OptNum, perCoin, scale } from "../wire.js";
import { HTX } from "./venue-id.js";

/*
 * Pure parsers for HTX (ex-Huobi) USDT-margined swap payloads (`linear-swap-api`, https://www.htx.com/en-us/opend/newApiPages/).
 *
 * Envelopes: the v1 and market endpoints answer `{status: "ok", data | tick, ts}` and, refused, `{status: "error",
 * err_code, err_msg, ts}` (market endpoints spell them `err-code` / `err-msg`), at HTTP 200; the v3 endpoints
 * answer `{code: 200, msg, data, ts}`. Decimals arrive as numbers or strings, times as epoch ms (klines: `id` in
 * SECONDS). Unknown contracts are codes 1013 / 1014 / 1332; 1032 is HTX's rate limit.
 *
 * Units: sizes are CONTRACTS of `contract_size` coins each (`swap_contract_info`; BTC-USDT 0.001 BTC, ETH-USDT
 * 0.01 ETH; the docs' "USDT of one contract" label is wrong, the value is in coins), kept as `contractSize`, so coins
 * = contracts × contractSize × multiplier (a numeric prefix, none seen on HTX, becomes `multiplier` as elsewhere).
 * Open interest is also sent in coins (`amount`) and USDT (`value`). Funding rates are fractions per interval; the
 * interval is `settle_period` hours of `swap_query_elements` (8 when absent). HTX settles funding in real time: the
 * `funding_rate` of `swap_funding_rate` / `swap_batch_funding_rate` is the current rate, recomputed each minute,
 * that settles at `funding_time`; `estimated_rate` and `next_funding_time` are deprecated (null).
 */

const VENUE = HTX;
const invalid = (endpoint: string, err: z.ZodError) => invalidShape(VENUE, endpoint, err);

/** HTX error codes of an unknown contract ("This contract symbol doesn't exist", "This contract doesn't exist", "The contract doesn't exist"). */
export const HTX_NOT_FOUND_CODES: ReadonlySet<string> = new Set(["1013", "1014", "1332"]);
/** HTX's error code for "The number of access exceeded the limit". */
export const HTX_RATE_LIMITED = "1032";
/** HTX's standard funding interval, used only when `swap_query_elements` states none for a contract. */
export const HTX_DEFAULT_INTERVAL_HOURS = 8;

/** Canonical base and multiplier of a USDT swap contract code (`BTC-USDT` → BTC × 1), or undefined for anything else (`BTC-USDT-250627`, `BTC-USD`). */
export function fromHtxSymbol(code: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)-USDT$/.exec(code.toUpperCase());
  return m ? splitMultiplier(m[1]!) : undefined;
}

/** Contract code of a canonical base: `toHtxSymbol("btc")` = `BTC-USDT`. */
export function toHtxSymbol(base: string, multiplier = 1): string {
  const b = base.toUpperCase();
  return multiplier === 1 ? `${b}-USDT` : `${multiplier}${b}-USDT`;
}

/** A refused request as HTX states it: its code (`1014`, `invalid-parameter`) and message. */
export interface HtxRefusal {
  code: string;
  message?: string;
}

/** The error a refusal maps to: unknown contract → NOT_FOUND (when one was asked), 1032 → UPSTREAM_UNAVAILABLE, else UPSTREAM_ERROR. */
export function refusalError(endpoint: string, r: HtxRefusal, contract?: string): AppError {
  if (contract !== undefined && HTX_NOT_FOUND_CODES.has(r.code)) return new AppError("NOT_FOUND", `htx does not list ${contract}`);
  if (r.code === HTX_RATE_LIMITED) return new AppError("UPSTREAM_UNAVAILABLE", "htx rate limit reached", { retryAfterSec: 3 });
  return new AppError("UPSTREAM_ERROR", `htx ${endpoint} failed: ${`${r.code} ${r.message ?? ""}`.trim()}`, { details: r });
}

const Code = z.union([z.number(), z.string()]).transform(String);
const RefusalBody = z.object({
  status: z.literal("error").optional(),
  code: Code.optional(),
  msg: z.string().optional(),
  err_code: Code.optional(),
  err_msg: z.string().optional(),
  "err-code": Code.optional(),
  "err-msg": z.string().optional(),
});

/** The refusal stated by a body (`status: "error"` of v1/market endpoints, `code` ≠ 200 of v3 ones), else undefined. */
export function htxRefusal(raw: unknown): HtxRefusal | undefined {
  const r = RefusalBody.safeParse(raw);
  if (!r.success) return undefined;
  const b = r.data;
  if (b.status === "error") return { code: b.err_code ?? b["err-code"] ?? "", message: b.err_msg ?? b["err-msg"] };
  if (b.code !== undefined && b.code !== "200") return { code: b.code, message: b.msg };
  return undefined;
}

/** The refusal in the text body of an HTTP 4xx answer, if it is one. */
export function parseHtxError(text: string): HtxRefusal | undefined {
  try {
    return htxRefusal(JSON.parse(text));
  } catch {
    return undefined;
  }
}

const StatusOk = z.object({ status: z.literal("ok"), ts: z.number().optional() });
const CodeOk = z.object({ code: z.union([z.literal(200), z.literal("200")]), ts: z.number().optional() });

/**
 * Validates a body and its `field` (`data` or `tick`) against `schema`; returns it with the body's `ts`.
 * @throws AppError NOT_FOUND for an unknown `contract`, UPSTREAM_UNAVAILABLE for 1032, UPSTREAM_ERROR otherwise.
 */
function unwrap<T extends z.ZodType>(
  raw: unknown,
  endpoint: string,
  schema: T,
  opts: { field?: "data" | "tick"; contract?: string } = {},
): { value: z.output<T>; ts: number | undefined } {
  const refused = htxRefusal(raw);
  if (refused) throw refusalError(endpoint, refused, opts.contract);
  const env = z.union([StatusOk, CodeOk]).safeParse(raw);
  if (!env.success) throw invalid(endpoint, env.error);
  const field = opts.field ?? "data";
  const r = schema.safeParse((raw as Record<string, unknown>)[field]);
  if (!r.success) throw invalid(endpoint, r.error);
  return { value: r.data, ts: env.data.ts };
}

const ContractRow = z.object({
  contract_code: z.string(),
  contract_size: Num,
  contract_status: z.number(),
  business_type: z.string().optional(),
  contract_type: z.string().optional(),
});
const ContractList = z.array(z.unknown());
/** `contract_status` of a listed swap: 1 listing, or 5-8 while a funding settlement runs ("Settlement" FAQ of the docs). */
const LISTED_STATUS = new Set([1, 5, 6, 7, 8]);

/**
 * Parses `GET /linear-swap-api/v1/swap_contract_info?business_type=swap` into the listed USDT perpetuals:
 * `contractSize` = `contract_size` (coins per contract), `fundingIntervalHours` from `intervals` (contract code →
 * hours, from {@link parseSettlePeriods}) when given. Dated futures, delisted or suspended contracts and malformed
 * rows are dropped (one odd row must not hide the others).
 * @throws AppError UPSTREAM_ERROR on a refusal or when `data` is not a list.
 */
export function parseContractInfo(raw: unknown, intervals: ReadonlyMap<string, number> = new Map()): PerpInstrument[] {
  const rows = unwrap(raw, "/linear-swap-api/v1/swap_contract_info", ContractList).value;
  const out: PerpInstrument[] = [];
  for (const item of rows) {
    const r = ContractRow.safeParse(item);
    if (!r.success) continue;
    const row = r.data;
    if ((row.business_type !== undefined && row.business_type !== "swap") || (row.contract_type !== undefined && row.contract_type !== "swap")) continue;
    if (!LISTED_STATUS.has(row.contract_status) || !(row.contract_size > 0)) continue;
    const sym = fromHtxSymbol(row.contract_code);
    if (!sym) continue;
    const hours = intervals.get(row.contract_code);
    out.push({
      venue: VENUE,
      base: sym.base,
      venueSymbol: row.contract_code,
      multiplier: sym.multiplier,
      contractSize: row.contract_size,
      ...(hours ? { fundingIntervalHours: hours } : {}),
    });
  }
  return out;
}

const ElementsRows = z.array(z.unknown());
const ElementRow = z.object({ contract_code: z.string(), settle_period: Num });

/**
 * Parses `GET /linear-swap-api/v1/swap_query_elements` (every contract when `contract_code` is omitted) into contract
 * code → funding interval in hours (`settle_period`; rows without a positive one are skipped).
 * @throws AppError UPSTREAM_ERROR on a refusal or when `data` is not a list.
 */
export function parseSettlePeriods(raw: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of unwrap(raw, "/linear-swap-api/v1/swap_query_elements", ElementsRows).value) {
    const r = ElementRow.safeParse(item);
    if (r.success && r.data.settle_period > 0) out.set(r.data.contract_code, r.data.settle_period);
  }
  return out;
}

const FundingRow = z.object({ contract_code: z.string(), funding_rate: OptNum, funding_time: OptNum });
const FundingData = z.union([z.array(FundingRow), FundingRow.transform((r) => [r])]);

/** What a funding snapshot adds to the funding rows: index prices by contract code, a mark price by contract code, the time. */
export interface HtxFundingContext {
  indexes?: ReadonlyMap<string, number>;
  marks?: ReadonlyMap<string, number>;
  /** Snapshot time when the body carries no `ts`. */
  now?: number;
}

/**
 * Parses `GET /linear-swap-api/v1/swap_batch_funding_rate` (every contract; `data` a list) or `swap_funding_rate?
 * contract_code=` (`data` one object) into funding snapshots of the contracts in `instruments`: `funding_rate` is
 * the current rate (fraction per interval, recomputed each minute) settling at `funding_time` (ms). Index and mark
 * prices (per ONE coin) come from `ctx`, null when absent; HTX sends no premium or interest term on this row (null).
 * @throws AppError on a refusal or an unexpected shape.
 */
export function parseFunding(raw: unknown, instruments: ReadonlyMap<string, PerpInstrument>, ctx: HtxFundingContext = {}): FundingSnapshot[] {
  const { value, ts } = unwrap(raw, "/linear-swap-api/v1/swap_batch_funding_rate", FundingData);
  const out: FundingSnapshot[] = [];
  for (const r of value) {
    const inst = instruments.get(r.contract_code);
    if (!inst || r.funding_rate === null) continue;
    const per = (p: number | undefined) => (p === undefined ? null : perCoin(p, inst.multiplier));
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: r.funding_rate,
      fundingIntervalHours: inst.fundingIntervalHours ?? HTX_DEFAULT_INTERVAL_HOURS,
      nextFundingTime: r.funding_time,
      markPrice: per(ctx.marks?.get(r.contract_code)),
      indexPrice: per(ctx.indexes?.get(r.contract_code)),
      premium: null,
      interestRate: null,
      time: ts ?? ctx.now ?? Date.now(),
    });
  }
  return out;
}

const IndexRows = z.array(z.object({ contract_code: z.string(), index_price: OptNum }));

/**
 * Parses `GET /linear-swap-api/v1/swap_index` (every contract, or one) into contract code → index price (USDT per
 * contract-named unit). @throws AppError on a refusal or an unexpected shape.
 */
export function parseIndexPrices(raw: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of unwrap(raw, "/linear-swap-api/v1/swap_index", IndexRows).value) if (r.index_price !== null) out.set(r.contract_code, r.index_price);
  return out;
}

const KlineRows = z.array(
  z.object({
    id: Num,
    open: Num,
    high: Num,
    low: Num,
    close: Num,
    vol: OptNum,
    amount: OptNum,
    trade_turnover: OptNum,
  }),
);

/**
 * The newest close of `GET /index/market/history/linear_swap_mark_price_kline?contract_code=&period=1min&size=`
 * (rows `{id: s, open, high, low, close, …}`), the current mark price per contract-named unit, or null when the
 * body has no row. @throws AppError NOT_FOUND for an unknown `contract`, else UPSTREAM_ERROR on a refusal or shape.
 */
export function parseMarkPriceKline(raw: unknown, contract?: string): number | null {
  const rows = unwrap(raw, "/index/market/history/linear_swap_mark_price_kline", KlineRows, { contract }).value;
  const newest = rows.reduce<(typeof rows)[number] | undefined>((a, r) => (!a || r.id > a.id ? r : a), undefined);
  return newest ? newest.close : null;
}

const HistoryData = z.object({
  data: z.array(z.object({ funding_time: Num, funding_rate: OptNum })),
  total_page: z.number().optional(),
});

/**
 * Parses one page of `GET /linear-swap-api/v1/swap_historical_funding_rate?contract_code=&page_index=&page_size=`
 * into settled funding points of `inst`, newest first (`funding_time` = settlement, ms; `funding_rate` = the rate
 * settled; `realized_rate` is deprecated, sent as null or the string "null"), and the number of pages. HTX sends no
 * mark price (null). @throws AppError NOT_FOUND for an unknown contract, else on a refusal or an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): { points: FundingPoint[]; totalPages: number } {
  const { value } = unwrap(raw, "/linear-swap-api/v1/swap_historical_funding_rate", HistoryData, { contract: inst.venueSymbol });
  const points: FundingPoint[] = [];
  for (const r of value.data) if (r.funding_rate !== null) points.push({ venue: VENUE, base: inst.base, time: r.funding_time, rate: r.funding_rate, markPrice: null });
  return { points: points.sort((a, b) => b.time - a.time), totalPages: value.total_page ?? 1 };
}

const OpenInterestRows = z.array(z.object({ contract_code: z.string(), volume: OptNum, amount: OptNum, value: OptNum, business_type: z.string().optional() }));

/**
 * Parses `GET /linear-swap-api/v1/swap_open_interest?contract_code=&business_type=swap` into the open interest of
 * `inst`: coins = `amount` (else `volume` contracts × contractSize), USD = `value` (USDT), time = the body's `ts`.
 * @throws AppError NOT_FOUND for an unknown contract or a body without its row; UPSTREAM_ERROR on a refusal, a shape
 *   or a row without sizes.
 */
export function parseOpenInterest(raw: unknown, inst: PerpInstrument, now = Date.now()): OpenInterest {
  const { value, ts } = unwrap(raw, "/linear-swap-api/v1/swap_open_interest", OpenInterestRows, { contract: inst.venueSymbol });
  const r = value.find((x) => x.contract_code === inst.venueSymbol && (x.business_type === undefined || x.business_type === "swap"));
  if (!r) throw new AppError("NOT_FOUND", `htx sent no open interest for ${inst.venueSymbol}`);
  const coins = r.amount !== null ? scale(r.amount, inst.multiplier) : r.volume === null ? null : scale(scale(r.volume, inst.contractSize), inst.multiplier);
  if (coins === null || r.value === null) throw new AppError("UPSTREAM_ERROR", `htx /linear-swap-api/v1/swap_open_interest sent no size for ${inst.venueSymbol}`);
  return { venue: VENUE, base: inst.base, oiCoins: coins, oiUsd: r.value, time: ts ?? now };
}

const HisOpenInterestData = z.object({ tick: z.array(z.object({ volume: Num, amount_type: z.number(), value: Num, ts: Num })) });

/**
 * Parses `GET /linear-swap-api/v1/swap_his_open_interest?contract_code=&period=60min&amount_type=1&size=` (ticks
 * newest first: `volume` in contracts when `amount_type` is 1, in coins when 2; `value` USDT; `ts` ms) into an
 * open-interest history of `inst`, OLDEST first. @throws AppError NOT_FOUND for an unknown contract, else on a
 * refusal or an unexpected shape.
 */
export function parseOpenInterestHistory(raw: unknown, inst: PerpInstrument): OpenInterestPoint[] {
  const { value } = unwrap(raw, "/linear-swap-api/v1/swap_his_open_interest", HisOpenInterestData, { contract: inst.venueSymbol });
  return value.tick
    .map((t): OpenInterestPoint => {
      const coins = t.amount_type === 1 ? scale(t.volume, inst.contractSize) : t.volume;
      return { venue: VENUE, base: inst.base, time: t.ts, oiCoins: scale(coins, inst.multiplier), oiUsd: t.value };
    })
    .sort((a, b) => a.time - b.time);
}

const EliteData = z.object({ list: z.array(z.object({ buy_ratio: Num, sell_ratio: Num, ts: Num })) });

/**
 * Parses `GET /linear-swap-api/v1/swap_elite_position_ratio?contract_code=&period=` (the top traders' net long and
 * net short POSITION shares, `buy_ratio` + `sell_ratio` = 1) into the newest long/short ratio of `inst`: long =
 * buy / (buy + sell), ratio = buy / sell. Null when the list is empty or a side is not positive.
 * @throws AppError NOT_FOUND for an unknown contract, else on a refusal or an unexpected shape.
 */
export function parseElitePositionRatio(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const { value } = unwrap(raw, "/linear-swap-api/v1/swap_elite_position_ratio", EliteData, { contract: inst.venueSymbol });
  const newest = value.list.reduce<(typeof value.list)[number] | undefined>((a, r) => (!a || r.ts > a.ts ? r : a), undefined);
  if (!newest || !(newest.buy_ratio > 0) || !(newest.sell_ratio > 0)) return null;
  const sum = newest.buy_ratio + newest.sell_ratio;
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: Number((newest.buy_ratio / sum).toPrecision(15)),
    shortRatio: Number((newest.sell_ratio / sum).toPrecision(15)),
    lsRatio: Number((newest.buy_ratio / newest.sell_ratio).toPrecision(15)),
    source: "top_traders_positions",
    period,
    time: newest.ts,
  };
}

const AdjustFactorData = z.array(
  z.object({
    contract_code: z.string(),
    list: z.array(
      z.object({
        lever_rate: Num,
        ladders: z.array(z.object({ ladder: Num, min_size: Num, max_size: OptNum, adjust_factor: Num })),
      }),
    ),
  }),
);

/**
 * Parses `GET /linear-swap-api/v1/swap_adjustfactor?contract_code=` (isolated margin: per leverage, tiers of the NET
 * position in contracts with an adjustment factor) into the margin tiers of `inst`, first tier first. HTX states
 * "Maintenance Margin Ratio = Adjustment Factor / Leverage" (its "Tiered Adjustment Factor of USDⓈ-Margined
 * Contracts" page), so each tier's rate is read at the table of the HIGHEST leverage offered: `maxLeverage` is that
 * leverage on every tier (HTX caps position size by leverage through position limits, not through these tiers) and
 * `maintenanceMarginRate` = adjust_factor / leverage. Bounds are contracts × contractSize × `priceUsd` (the current
 * mark price per coin): a tier ends where the next one starts (`min_size` of the next; HTX's integer bounds leave a
 * gap of one contract), the last one is unbounded when `max_size` is null.
 * @throws AppError NOT_FOUND for an unknown contract, else on a refusal or an unexpected shape.
 */
export function parseAdjustFactor(raw: unknown, inst: PerpInstrument, priceUsd: number): MarginTier[] {
  const { value } = unwrap(raw, "/linear-swap-api/v1/swap_adjustfactor", AdjustFactorData, { contract: inst.venueSymbol });
  const row = value.find((r) => r.contract_code === inst.venueSymbol);
  const table = row?.list.reduce<(typeof row.list)[number] | undefined>((a, t) => (!a || t.lever_rate > a.lever_rate ? t : a), undefined);
  if (!table || !(table.lever_rate > 0)) return [];
  const usd = (contracts: number) => scale(scale(contracts, inst.contractSize), priceUsd);
  const ladders = [...table.ladders].sort((a, b) => a.ladder - b.ladder || a.min_size - b.min_size);
  return ladders.map((t, k) => {
    const next = ladders[k + 1];
    return {
      venue: VENUE,
      base: inst.base,
      minNotionalUsd: usd(t.min_size),
      maxNotionalUsd: next ? usd(next.min_size) : t.max_size === null ? null : usd(t.max_size),
      maxLeverage: table.lever_rate,
      maintenanceMarginRate: Number((t.adjust_factor / table.lever_rate).toPrecision(15)),
    };
  });
}

/**
 * Parses `GET /linear-swap-ex/market/history/kline?contract_code=&period=60min&size=` (rows `{id: open time in s,
 * open, high, low, close, vol: contracts, amount: coins, trade_turnover: USDT, count}`) into candles of `inst`,
 * oldest first: prices per ONE coin, `volumeCoins` = `amount` (else vol × contractSize), `volumeUsd` =
 * `trade_turnover` (else coins × close).
 * @throws AppError NOT_FOUND for an unknown contract, else on a refusal or an unexpected shape.
 */
export function parseKlines(raw: unknown, inst: PerpInstrument): Candle[] {
  const m = inst.multiplier;
  return unwrap(raw, "/linear-swap-ex/market/history/kline", KlineRows, { contract: inst.venueSymbol })
    .value.map((r): Candle => {
      const close = perCoin(r.close, m);
      const coins = r.amount !== null ? scale(r.amount, m) : r.vol === null ? 0 : scale(scale(r.vol, inst.contractSize), m);
      return {
        venue: VENUE,
        base: inst.base,
        openTime: r.id * 1000,
        open: perCoin(r.open, m),
        high: perCoin(r.high, m),
        low: perCoin(r.low, m),
        close,
        volumeCoins: coins,
        volumeUsd: r.trade_turnover ?? scale(coins, close),
      };
    })
    .sort((a, b) => a.openTime - b.openTime);
}
