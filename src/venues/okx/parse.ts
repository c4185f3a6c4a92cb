import { z } from "zod";
import { AppError } from "../../errors.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument } from "../perp/types.js";
import { invalidShape, Num, OptNum, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for OKX v5 public payloads, USDT-margined SWAP only (https://www.okx.com/docs-v5/en/, Public Data and Market Data REST).
 * Envelope `{code:"0", msg, data:[…]}`; every value is a string, timestamps included. SWAP sizes
 * are in contracts: coins = contracts × ctVal × ctMult (`contractSize`); `oiCcy` is already in coins.
 */

const VENUE = "okx";
const invalid = (endpoint: string, err: z.ZodError) => invalidShape(VENUE, endpoint, err);

/** Venue symbol → instrument, the context every per-symbol parser needs. */
export type OkxInstrumentIndex = ReadonlyMap<string, PerpInstrument>;

const Envelope = z.object({ code: z.union([z.string(), z.number()]).transform(String), msg: z.string().optional(), data: z.unknown() });

/** OKX error code for "Instrument ID does not exist". */
export const OKX_NO_SUCH_INSTRUMENT = "51001";

/**
 * Validates the envelope and `data` against `schema`.
 * @throws AppError NOT_FOUND for code 51001 when `instId` is given; UPSTREAM_ERROR for any other
 *   non-"0" code or an unexpected shape.
 */
function unwrap<T extends z.ZodType>(raw: unknown, endpoint: string, schema: T, instId?: string): z.output<T> {
  const env = Envelope.safeParse(raw);
  if (!env.success) throw invalid(endpoint, env.error);
  const { code, msg } = env.data;
  if (code !== "0") {
    if (code === OKX_NO_SUCH_INSTRUMENT && instId !== undefined) throw new AppError("NOT_FOUND", `okx does not list ${instId}`);
    throw new AppError("UPSTREAM_ERROR", `okx ${endpoint} failed: code ${code} ${msg ?? ""}`.trim(), { details: { code, msg } });
  }
  const r = schema.safeParse(env.data.data);
  if (!r.success) throw invalid(endpoint, r.error);
  return r.data;
}

/** Canonical base of a USDT-margined swap instId: `BTC-USDT-SWAP` → BTC; undefined for anything else. */
export function fromOkxSymbol(instId: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)-USDT-SWAP$/.exec(instId.toUpperCase());
  return m ? { base: m[1]!, multiplier: 1 } : undefined;
}

/** instId of the USDT swap of `base`: `toOkxSymbol("BTC")` = `BTC-USDT-SWAP`. */
export function toOkxSymbol(base: string): string {
  return `${base.toUpperCase()}-USDT-SWAP`;
}

/** Index instId of a swap (`BTC-USDT-SWAP` → `BTC-USDT`), as used by `/market/index-tickers`. */
export function okxIndexId(instId: string): string {
  return instId.replace(/-SWAP$/, "");
}

/**
 * Instrument family of a USDT-margined swap (`BTC-USDT-SWAP` → `BTC-USDT`), the `instFamily` / `uly` of
 * its instruments row, as `/public/position-tiers` expects it.
 */
export function okxInstFamily(instId: string): string {
  return instId.replace(/-SWAP$/, "");
}

const InstrumentsData = z.array(
  z.object({
    instType: z.string(),
    instId: z.string(),
    settleCcy: z.string(),
    state: z.string(),
    ctVal: Num,
    ctMult: OptNum,
  }),
);

/**
 * Parses `GET /api/v5/public/instruments?instType=SWAP` into the live USDT-margined swaps
 * (`settleCcy` USDT, `*-USDT-SWAP`, `state` live). `contractSize` = ctVal × ctMult coins per contract
 * (BTC-USDT-SWAP: 0.01). OKX lists no multiplier-prefixed symbols (multiplier 1) and no funding interval.
 * @throws AppError UPSTREAM_ERROR on a non-"0" code or an unexpected shape.
 */
export function parseInstruments(raw: unknown): PerpInstrument[] {
  const data = unwrap(raw, "/api/v5/public/instruments", InstrumentsData);
  const out: PerpInstrument[] = [];
  for (const i of data) {
    if (i.instType !== "SWAP" || i.settleCcy !== "USDT" || i.state !== "live") continue;
    const sym = fromOkxSymbol(i.instId);
    if (!sym) continue;
    out.push({ venue: VENUE, base: sym.base, venueSymbol: i.instId, multiplier: 1, contractSize: scale(i.ctVal, i.ctMult ?? 1) });
  }
  return out;
}

const FundingRateData = z.array(
  z.object({
    instId: z.string(),
    fundingRate: OptNum,
    fundingTime: OptNum,
    nextFundingTime: OptNum,
    premium: OptNum,
    interestRate: OptNum,
    ts: OptNum,
  }),
);

/** OKX's standard interval, used only when `nextFundingTime − fundingTime` cannot be computed. */
export const OKX_DEFAULT_INTERVAL_HOURS = 8;

/** Context of {@link parseFundingRate}: optional mark (by instId) and index (by index instId) prices. */
export interface OkxFundingContext {
  marks?: ReadonlyMap<string, number>;
  indexes?: ReadonlyMap<string, number>;
  /** The single instId requested (turns code 51001 into NOT_FOUND). */
  instId?: string;
  /** Snapshot time when the payload carries no `ts`. */
  now?: number;
}

/**
 * Parses `GET /api/v5/public/funding-rate?instId=` (one instId, or `ANY` for every swap) into funding
 * snapshots of the listed instruments. `fundingRate` is the current, accruing rate; the interval is
 * `round((nextFundingTime − fundingTime) / 1 h)` (8 h when either is missing). OKX publishes no
 * predicted rate (`nextFundingRate` is "" and ignored). `premium` is OKX's; mark and index come from
 * `ctx` (null when absent).
 * @throws AppError NOT_FOUND on code 51001 for `ctx.instId`; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseFundingRate(raw: unknown, instruments: OkxInstrumentIndex, ctx: OkxFundingContext = {}): FundingSnapshot[] {
  const data = unwrap(raw, "/api/v5/public/funding-rate", FundingRateData, ctx.instId);
  const out: FundingSnapshot[] = [];
  for (const r of data) {
    const inst = instruments.get(r.instId);
    if (!inst || r.fundingRate === null) continue;
    const span = r.fundingTime !== null && r.nextFundingTime !== null ? Math.round((r.nextFundingTime - r.fundingTime) / 3_600_000) : 0;
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: r.fundingRate,
      fundingIntervalHours: span >= 1 ? span : OKX_DEFAULT_INTERVAL_HOURS,
      // `fundingTime` is the settlement time of the current (accruing) rate.
      nextFundingTime: r.fundingTime,
      markPrice: ctx.marks?.get(r.instId) ?? null,
      indexPrice: ctx.indexes?.get(okxIndexId(r.instId)) ?? null,
      premium: r.premium,
      interestRate: r.interestRate,
      time: r.ts ?? ctx.now ?? Date.now(),
    });
  }
  return out;
}

const MarkPriceData = z.array(z.object({ instId: z.string(), markPx: OptNum }));

/**
 * Parses `GET /api/v5/public/mark-price?instType=SWAP[&instId=]` into instId → mark price (USDT per coin).
 * @throws AppError NOT_FOUND on code 51001 for `instId`; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseMarkPrices(raw: unknown, instId?: string): Map<string, number> {
  const data = unwrap(raw, "/api/v5/public/mark-price", MarkPriceData, instId);
  const out = new Map<string, number>();
  for (const r of data) if (r.markPx !== null) out.set(r.instId, r.markPx);
  return out;
}

const IndexTickersData = z.array(z.object({ instId: z.string(), idxPx: OptNum }));

/**
 * Parses `GET /api/v5/market/index-tickers?instId=BTC-USDT` (or `quoteCcy=USDT`) into index instId → index price.
 * @throws AppError UPSTREAM_ERROR on failure or an unexpected shape.
 */
export function parseIndexTickers(raw: unknown): Map<string, number> {
  const data = unwrap(raw, "/api/v5/market/index-tickers", IndexTickersData);
  const out = new Map<string, number>();
  for (const r of data) if (r.idxPx !== null) out.set(r.instId, r.idxPx);
  return out;
}

const FundingHistoryData = z.array(z.object({ instId: z.string().optional(), fundingRate: OptNum, realizedRate: OptNum, fundingTime: Num }));

/**
 * Parses `GET /api/v5/public/funding-rate-history?instId=` (newest first) into settled funding
 * points, newest first: `realizedRate` (the rate actually paid) when present, else `fundingRate`.
 * OKX sends no mark price (null).
 * @throws AppError NOT_FOUND on code 51001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseFundingRateHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  const data = unwrap(raw, "/api/v5/public/funding-rate-history", FundingHistoryData, inst.venueSymbol);
  const out: FundingPoint[] = [];
  for (const r of data) {
    const rate = r.realizedRate ?? r.fundingRate;
    if (rate === null) continue;
    out.push({ venue: VENUE, base: inst.base, time: r.fundingTime, rate, markPrice: null });
  }
  return out.sort((a, b) => b.time - a.time);
}

const OpenInterestData = z.array(z.object({ instId: z.string(), oi: OptNum, oiCcy: OptNum, oiUsd: OptNum, ts: Num }));

/**
 * Parses `GET /api/v5/public/open-interest?instType=SWAP&instId=` as sent: coins from `oiCcy` (else
 * `oi` contracts × contractSize) and `oiUsd` (null when absent, as in older payloads).
 * @throws AppError NOT_FOUND on code 51001 or a missing row; UPSTREAM_ERROR on an unexpected shape or no size.
 */
export function parseOpenInterestRaw(raw: unknown, inst: PerpInstrument): { oiCoins: number; oiUsd: number | null; time: number } {
  const data = unwrap(raw, "/api/v5/public/open-interest", OpenInterestData, inst.venueSymbol);
  const r = data.find((d) => d.instId === inst.venueSymbol);
  if (!r) throw new AppError("NOT_FOUND", `okx sent no open interest for ${inst.venueSymbol}`);
  const oiCoins = r.oiCcy ?? (r.oi === null ? null : scale(r.oi, inst.contractSize));
  if (oiCoins === null) throw new AppError("UPSTREAM_ERROR", `okx /api/v5/public/open-interest sent no size for ${inst.venueSymbol}`);
  return { oiCoins, oiUsd: r.oiUsd, time: r.ts };
}

/**
 * Parses `GET /api/v5/public/open-interest?instType=SWAP&instId=` into coins (`oiCcy`, else `oi` ×
 * contractSize) and USD (`oiUsd`, else coins × `markPrice` when given).
 * @throws AppError UPSTREAM_ERROR when no USD value can be had; see {@link parseOpenInterestRaw}.
 */
export function parseOpenInterest(raw: unknown, inst: PerpInstrument, markPrice?: number | null): OpenInterest {
  const { oiCoins, oiUsd, time } = parseOpenInterestRaw(raw, inst);
  const usd = oiUsd ?? (markPrice === undefined || markPrice === null ? null : scale(oiCoins, markPrice));
  if (usd === null) throw new AppError("UPSTREAM_ERROR", `okx /api/v5/public/open-interest sent no USD value for ${inst.venueSymbol}`);
  return { venue: VENUE, base: inst.base, oiCoins, oiUsd: usd, time };
}

const RatioData = z.array(z.tuple([Num, Num], z.unknown()));

/**
 * Parses `GET /api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader` (rows
 * `[ts, ratio]`, newest first; ratio = long/short positions of top traders):
 * long = r/(1+r), short = 1/(1+r). Returns the newest row, or null when empty.
 * @throws AppError NOT_FOUND on code 51001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseTopTraderPositionRatio(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const rows = unwrap(raw, "/api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader", RatioData, inst.venueSymbol);
  const newest = rows.reduce<(typeof rows)[number] | undefined>((a, r) => (!a || r[0] > a[0] ? r : a), undefined);
  if (!newest || newest[1] < 0) return null;
  const r = newest[1];
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: Number((r / (1 + r)).toPrecision(15)),
    shortRatio: Number((1 / (1 + r)).toPrecision(15)),
    lsRatio: r,
    source: "top_traders_positions",
    period,
    time: newest[0],
  };
}

const PositionTiersData = z.array(
  z.object({
    tier: Num,
    minSz: Num,
    maxSz: OptNum,
    mmr: Num,
    maxLever: Num,
    instFamily: z.string().optional(),
    uly: z.string().optional(),
  }),
);

/**
 * Parses `GET /api/v5/public/position-tiers?instType=SWAP&tdMode=cross&instFamily=BTC-USDT` (rows
 * `{tier, minSz, maxSz, mmr, imr, maxLever, instFamily, uly, …}`, every value a string) into the margin
 * tiers of `inst`, first tier first. SWAP sizes are contracts; each bound becomes USD notional as
 * contracts × `contractSize` × `priceUsd` (the current mark price per coin), so the USD bounds move with the
 * price while the venue's contract bounds stay fixed. `mmr` is a fraction (0.004 = 0.4 %). An empty `maxSz`
 * leaves the tier unbounded (null). Rows of another instrument family (when the row names one) are skipped.
 * @throws AppError NOT_FOUND on code 51001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parsePositionTiers(raw: unknown, inst: PerpInstrument, priceUsd: number): MarginTier[] {
  const rows = unwrap(raw, "/api/v5/public/position-tiers", PositionTiersData, inst.venueSymbol);
  const family = okxInstFamily(inst.venueSymbol);
  const usd = (contracts: number) => scale(scale(contracts, inst.contractSize), priceUsd);
  return rows
    .filter((r) => !r.instFamily || r.instFamily === family || r.uly === family)
    .sort((a, b) => a.tier - b.tier || a.minSz - b.minSz)
    .map((r) => ({
      venue: VENUE,
      base: inst.base,
      minNotionalUsd: usd(r.minSz),
      maxNotionalUsd: r.maxSz === null ? null : usd(r.maxSz),
      maxLeverage: r.maxLever,
      maintenanceMarginRate: r.mmr,
    }));
}

const CandlesData = z.array(z.tuple([Num, Num, Num, Num, Num, Num], OptNum));

/**
 * Parses `GET /api/v5/market/candles?instId=&bar=1H` (rows `[ts, o, h, l, c, vol, volCcy, volCcyQuote,
 * confirm]`, strings, NEWEST first; `confirm` "0" marks the current, still open candle) into candles of
 * `inst`, OLDEST first. Prices are per coin; `vol` counts contracts, so `volumeCoins` is `volCcy` (else
 * `vol` × contractSize) and `volumeUsd` is `volCcyQuote` (else coins × close, for older 7-column rows).
 * @throws AppError NOT_FOUND on code 51001; UPSTREAM_ERROR otherwise on failure or an unexpected shape.
 */
export function parseCandles(raw: unknown, inst: PerpInstrument): Candle[] {
  const rows = unwrap(raw, "/api/v5/market/candles", CandlesData, inst.venueSymbol);
  const m = inst.multiplier;
  return rows
    .map(([openTime, o, h, l, c, vol, volCcy, volCcyQuote]): Candle => {
      const coins = volCcy ?? scale(vol, inst.contractSize);
      const close = perCoin(c, m);
      return {
        venue: VENUE,
        base: inst.base,
        openTime,
        open: perCoin(o, m),
        high: perCoin(h, m),
        low: perCoin(l, m),
        close,
        volumeCoins: coins,
        volumeUsd: volCcyQuote ?? scale(coins, close),
      };
    })
    .sort((a, b) => a.openTime - b.openTime);
}

const ErrorBody = z.object({ code: z.union([z.string(), z.number()]).transform(String), msg: z.string().optional() });

/** The `{code,msg}` body of a refused OKX request (HTTP 4xx), if it is one. */
export function parseOkxError(text: string): { code: string; msg?: string } | undefined {
  try {
    const r = ErrorBody.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
