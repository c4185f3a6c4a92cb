import { z } from "zod";
import { AppError } from "../../errors.js";
import { splitMultiplier } from "../binance/parse.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, OpenInterestPoint, PerpInstrument, PredictedFunding } from "../perp/types.js";
import { Num, OptNum, parseShape, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Gate API v4 public USDT-margined futures payloads (https://www.gate.com/docs/developers/apiv4/en/#futures).
 * Bodies are bare JSON arrays or objects (no envelope); decimals arrive as strings or numbers; times are
 * Unix SECONDS (`funding_next_apply`, `t`, `time`). Sizes are CONTRACTS: one contract is `quanto_multiplier`
 * coins of the contract's named asset (BTC_USDT: 0.0001 BTC), kept as `contractSize`; a numeric prefix
 * (`1000X_USDT`, Binance's convention, none listed in the docs) becomes `multiplier` as elsewhere, so coins =
 * contracts × contractSize × multiplier and prices per ONE coin = price / multiplier. Funding rates are
 * fractions per interval, the interval being `funding_interval` seconds.
 */

const VENUE = "gate";
const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string): z.output<T> => parseShape(VENUE, schema, raw, endpoint);

/** Venue symbol → instrument, the context every per-symbol parser needs. */
export type GateInstrumentIndex = ReadonlyMap<string, PerpInstrument>;

/** Canonical base and multiplier of a USDT contract name (`BTC_USDT` → BTC × 1), or undefined for anything else (`BTC_USD`, dated futures). */
export function fromGateSymbol(name: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)_USDT$/.exec(name.toUpperCase());
  return m ? splitMultiplier(m[1]!) : undefined;
}

/** Contract name of a canonical base: `toGateSymbol("BTC")` = `BTC_USDT` (`toGateSymbol("PEPE", 1000)` = `1000PEPE_USDT`). */
export function toGateSymbol(base: string, multiplier = 1): string {
  const b = base.toUpperCase();
  return multiplier === 1 ? `${b}_USDT` : `${multiplier}${b}_USDT`;
}

/** Epoch ms of a Gate time sent in seconds (possibly fractional) or already in ms (values above 1e11). */
export function gateTimeMs(v: number): number {
  return v > 1e11 ? Math.round(v) : Math.round(v * 1000);
}

const Seconds = Num.transform((n) => gateTimeMs(n));
const OptSeconds = OptNum.transform((n) => (n === null ? null : gateTimeMs(n)));

/** One `/futures/usdt/contracts` row: the instrument and its funding state. */
const ContractRow = z.object({
  name: z.string(),
  type: z.string().optional(),
  quanto_multiplier: Num,
  status: z.string().optional(),
  in_delisting: z.boolean().optional(),
  funding_rate: OptNum,
  funding_rate_indicative: OptNum,
  funding_interval: OptNum,
  funding_next_apply: OptSeconds,
  mark_price: OptNum,
  index_price: OptNum,
  interest_rate: OptNum,
  position_size: OptNum,
});
type ContractRowT = z.output<typeof ContractRow>;
const ContractList = z.array(z.unknown());

/** Gate's standard funding interval, used only when a row states none. */
export const GATE_DEFAULT_INTERVAL_HOURS = 8;

/** Valid USDT perpetual rows of a contracts body (`type` direct, quanto > 0, `_USDT`, not delisted), with their instrument. */
function contractRows(raw: unknown): { row: ContractRowT; inst: PerpInstrument }[] {
  const list = parse(ContractList, raw, "/futures/usdt/contracts");
  const out: { row: ContractRowT; inst: PerpInstrument }[] = [];
  for (const item of list) {
    const r = ContractRow.safeParse(item);
    if (!r.success) continue; // one odd row (a pre-market listing) must not hide the others
    const row = r.data;
    if ((row.type !== undefined && row.type !== "direct") || !(row.quanto_multiplier > 0)) continue;
    if (row.in_delisting === true || (row.status !== undefined && row.status !== "trading")) continue;
    const sym = fromGateSymbol(row.name);
    if (!sym) continue;
    const hours = row.funding_interval !== null && row.funding_interval > 0 ? row.funding_interval / 3600 : undefined;
    out.push({
      row,
      inst: {
        venue: VENUE,
        base: sym.base,
        venueSymbol: row.name,
        multiplier: sym.multiplier,
        contractSize: row.quanto_multiplier,
        ...(hours ? { fundingIntervalHours: hours } : {}),
      },
    });
  }
  return out;
}

/**
 * Parses `GET /futures/usdt/contracts` into the trading USDT perpetuals: `contractSize` = `quanto_multiplier`
 * (coins of the named asset per contract), `fundingIntervalHours` = `funding_interval` / 3600. Inverse rows
 * (`type` inverse, quanto 0), delisting or non-trading contracts and malformed rows are dropped.
 * @throws AppError UPSTREAM_ERROR when the body is not a list.
 */
export function parseContracts(raw: unknown): PerpInstrument[] {
  return contractRows(raw).map((c) => c.inst);
}

/**
 * Parses `GET /futures/usdt/contracts` into funding snapshots of the listed perpetuals: `funding_rate` is the
 * rate of the interval settling at `funding_next_apply` (fraction per interval), mark and index prices per
 * ONE coin, `interest_rate` as sent, no premium (Gate publishes none on this row). `now` stamps the snapshot.
 * @throws AppError UPSTREAM_ERROR when the body is not a list.
 */
export function parseContractFunding(raw: unknown, now: number): FundingSnapshot[] {
  const out: FundingSnapshot[] = [];
  for (const { row, inst } of contractRows(raw)) {
    if (row.funding_rate === null) continue;
    const per = (p: number | null) => (p === null ? null : perCoin(p, inst.multiplier));
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: row.funding_rate,
      fundingIntervalHours: inst.fundingIntervalHours ?? GATE_DEFAULT_INTERVAL_HOURS,
      nextFundingTime: row.funding_next_apply,
      markPrice: per(row.mark_price),
      indexPrice: per(row.index_price),
      premium: null,
      interestRate: row.interest_rate,
      time: now,
    });
  }
  return out;
}

/**
 * The venue's predicted next rate of `inst` from a `GET /futures/usdt/contracts` body: `funding_rate_indicative`
 * (fraction per the contract's interval; Gate marks the field deprecated in favour of `funding_rate`), or null
 * when the row or the field is missing.
 * @throws AppError UPSTREAM_ERROR when the body is not a list.
 */
export function parsePredictedFunding(raw: unknown, inst: PerpInstrument): PredictedFunding | null {
  const c = contractRows(raw).find((x) => x.inst.venueSymbol === inst.venueSymbol);
  if (!c || c.row.funding_rate_indicative === null) return null;
  return {
    venue: VENUE,
    base: inst.base,
    rate: c.row.funding_rate_indicative,
    nextFundingTime: c.row.funding_next_apply,
    fundingIntervalHours: c.inst.fundingIntervalHours ?? null,
  };
}

const FundingHistoryRows = z.array(z.object({ t: Seconds, r: Num }));

/**
 * Parses `GET /futures/usdt/funding_rate?contract=` (rows `{t: seconds, r}`) into settled funding points,
 * newest first. Gate sends no mark price (null).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFundingRateHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  return parse(FundingHistoryRows, raw, "/futures/usdt/funding_rate")
    .map((r): FundingPoint => ({ venue: VENUE, base: inst.base, time: r.t, rate: r.r, markPrice: null }))
    .sort((a, b) => b.time - a.time);
}

const StatsRows = z.array(
  z.object({
    time: Seconds,
    open_interest: Num,
    open_interest_usd: OptNum,
    mark_price: OptNum,
    lsr_account: OptNum,
    top_lsr_size: OptNum,
  }),
);
type StatsRow = z.output<typeof StatsRows>[number];

/** Open interest of one `contract_stats` row: coins = contracts × contractSize × multiplier; USD sent, else coins × mark. */
function statsOi(r: StatsRow, inst: PerpInstrument): { oiCoins: number; oiUsd: number } | undefined {
  const oiCoins = scale(scale(r.open_interest, inst.contractSize), inst.multiplier);
  const oiUsd = r.open_interest_usd ?? (r.mark_price === null ? null : scale(oiCoins, perCoin(r.mark_price, inst.multiplier)));
  return oiUsd === null ? undefined : { oiCoins, oiUsd };
}

/**
 * Parses `GET /futures/usdt/contract_stats?contract=&interval=` (rows `{time: seconds, open_interest:
 * contracts, open_interest_usd, …}`) into the newest open interest of `inst`.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape, an empty body, or a row without a USD value.
 */
export function parseContractStatsOi(raw: unknown, inst: PerpInstrument): OpenInterest {
  const rows = parse(StatsRows, raw, "/futures/usdt/contract_stats");
  const newest = rows.reduce<StatsRow | undefined>((a, r) => (!a || r.time > a.time ? r : a), undefined);
  const oi = newest && statsOi(newest, inst);
  if (!newest || !oi) throw new AppError("UPSTREAM_ERROR", `gate /futures/usdt/contract_stats sent no open interest for ${inst.venueSymbol}`);
  return { venue: VENUE, base: inst.base, ...oi, time: newest.time };
}

/**
 * Parses `GET /futures/usdt/contract_stats?contract=&interval=1h&limit=` into an open-interest history of
 * `inst`, oldest first (`time` = Gate's stat time). Rows without a USD value are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseContractStatsHistory(raw: unknown, inst: PerpInstrument): OpenInterestPoint[] {
  const out: OpenInterestPoint[] = [];
  for (const r of parse(StatsRows, raw, "/futures/usdt/contract_stats")) {
    const oi = statsOi(r, inst);
    if (oi) out.push({ venue: VENUE, base: inst.base, time: r.time, ...oi });
  }
  return out.sort((a, b) => a.time - b.time);
}

/**
 * Parses `GET /futures/usdt/contract_stats?contract=&interval=` into the newest long/short ratio of `inst`:
 * `top_lsr_size` (top traders' long/short position ratio, the population Binance and OKX publish) when sent,
 * else `lsr_account` (long/short ratio of all accounts). long = r/(1+r), short = 1/(1+r). Null when neither
 * is sent or the body is empty.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseContractStatsLongShort(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const rows = parse(StatsRows, raw, "/futures/usdt/contract_stats");
  const newest = rows.reduce<StatsRow | undefined>((a, r) => (!a || r.time > a.time ? r : a), undefined);
  if (!newest) return null;
  const top = newest.top_lsr_size;
  const r = top !== null && top > 0 ? top : newest.lsr_account;
  if (r === null || !(r > 0)) return null;
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: Number((r / (1 + r)).toPrecision(15)),
    shortRatio: Number((1 / (1 + r)).toPrecision(15)),
    lsRatio: r,
    source: top !== null && top > 0 ? "top_traders_positions" : "all_accounts",
    period,
    time: newest.time,
  };
}

const TierRows = z.array(z.object({ tier: Num, risk_limit: Num, maintenance_rate: Num, leverage_max: Num, contract: z.string().optional() }));

/**
 * Parses `GET /futures/usdt/risk_limit_tiers?contract=` (rows `{tier, risk_limit, initial_rate,
 * maintenance_rate, leverage_max, contract, deduction}`) into the margin tiers of `inst`, first tier first.
 * `risk_limit` is the tier's upper bound of position value in USDT; a tier starts where the previous one
 * ends (0 for the first). Every Gate tier is bounded (the last one caps the position). Rows naming another
 * contract are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseRiskLimitTiers(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const rows = parse(TierRows, raw, "/futures/usdt/risk_limit_tiers")
    .filter((r) => r.contract === undefined || r.contract === inst.venueSymbol)
    .sort((a, b) => a.tier - b.tier);
  let lower = 0;
  return rows.map((r) => {
    const t: MarginTier = {
      venue: VENUE,
      base: inst.base,
      minNotionalUsd: lower,
      maxNotionalUsd: r.risk_limit,
      maxLeverage: r.leverage_max,
      maintenanceMarginRate: r.maintenance_rate,
    };
    lower = r.risk_limit;
    return t;
  });
}

const CandleRows = z.array(z.object({ t: Seconds, o: Num, h: Num, l: Num, c: Num, v: OptNum, sum: OptNum }));

/**
 * Parses `GET /futures/usdt/candlesticks?contract=&interval=1h` (rows `{t: seconds, o, h, l, c, v: contracts,
 * sum: quote volume}`) into candles of `inst`, oldest first: prices per ONE coin, `volumeCoins` = v ×
 * contractSize × multiplier, `volumeUsd` = `sum` (else coins × close).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseCandlesticks(raw: unknown, inst: PerpInstrument): Candle[] {
  const m = inst.multiplier;
  return parse(CandleRows, raw, "/futures/usdt/candlesticks")
    .map((r): Candle => {
      const close = perCoin(r.c, m);
      const coins = r.v === null ? 0 : scale(scale(r.v, inst.contractSize), m);
      return {
        venue: VENUE,
        base: inst.base,
        openTime: r.t,
        open: perCoin(r.o, m),
        high: perCoin(r.h, m),
        low: perCoin(r.l, m),
        close,
        volumeCoins: coins,
        volumeUsd: r.sum ?? scale(coins, close),
      };
    })
    .sort((a, b) => a.openTime - b.openTime);
}

const ErrorBody = z.object({ label: z.string(), message: z.string().optional(), detail: z.string().optional() });

/** Gate's error label for an unknown contract (named in the API v4 error list). */
export const GATE_CONTRACT_NOT_FOUND = "CONTRACT_NOT_FOUND";

/** The `{label, message}` body of a refused Gate request, if it is one. */
export function parseGateError(text: string): { label: string; message?: string } | undefined {
  try {
    const r = ErrorBody.safeParse(JSON.parse(text));
    return r.success ? { label: r.data.label, message: r.data.message ?? r.data.detail } : undefined;
  } catch {
    return undefined;
  }
}

/** Gate's per-endpoint budget as its response headers state it. */
export interface GateRateLimit {
  /** `X-Gate-RateLimit-Requests-Remain`: requests left in the current window of this endpoint. */
  remain: number;
  /** `X-Gate-RateLimit-Limit`: the endpoint's limit per window (200 for public endpoints). */
  limit: number;
  /** `X-Gate-RateLimit-Reset-Timestamp` as epoch ms: when the window resets (the server's time when not exceeded). */
  resetAtMs: number | null;
}

/**
 * Reads the `X-Gate-RateLimit-*` headers of a Gate answer (https://www.gate.io/docs/developers/apiv4/en/#frequency-limit-rule),
 * or undefined when they are absent or not numbers. The reset timestamp is sent in seconds (ms values accepted).
 */
export function parseGateRateLimit(get: (name: string) => string | null | undefined): GateRateLimit | undefined {
  const n = (name: string) => {
    const v = get(name);
    const x = v === null || v === undefined || v.trim() === "" ? Number.NaN : Number(v);
    return Number.isFinite(x) ? x : undefined;
  };
  const remain = n("x-gate-ratelimit-requests-remain");
  const limit = n("x-gate-ratelimit-limit");
  if (remain === undefined || limit === undefined) return undefined;
  const reset = n("x-gate-ratelimit-reset-timestamp");
  return { remain, limit, resetAtMs: reset === undefined ? null : gateTimeMs(reset) };
}

/**
 * How long to hold the next request to the same endpoint, ms: until the window resets when the headers say none is
 * left (1 s when the reset time is missing or past), else 0. For a header hook of the shared HTTP client, which does
 * not expose response headers today.
 */
export function gateBackoffMs(rl: GateRateLimit | undefined, nowMs: number): number {
  if (!rl || rl.remain > 0) return 0;
  return rl.resetAtMs !== null && rl.resetAtMs > nowMs ? rl.resetAtMs - nowMs : 1000;
}
