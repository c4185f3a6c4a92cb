import { z } from "zod";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, OpenInterestPoint, PerpInstrument, PerpVenue } from "../perp/types.js";
import { Num, OptNum, parseShape, perCoin, scale } from "../wire.js";

/*
 * Pure parsers for Binance USDⓈ-M futures (fapi) and spot payloads
 * (https://developers.binance.com/docs/derivatives/usds-margined-futures/general-info and
 * https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints).
 * Decimals arrive as strings, times as numbers in ms (the `/futures/data/*` `timestamp` may be a
 * string or a number). Small caps are listed per 1000 (or 1,000,000) coins (`1000PEPEUSDT`,
 * `1000000MOGUSDT`, `1MBABYDOGEUSDT`): prices are divided and sizes multiplied by that multiplier
 * so every record is per ONE coin of the canonical base. Aster (a Binance-compatible fapi) reuses the parsers
 * whose wire it shares: the instrument-level ones take the venue from the instrument, the others a `venue` argument.
 */

const VENUE = "binance";
const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string, venue: PerpVenue = VENUE): z.output<T> => parseShape(venue, schema, raw, endpoint);

/** Venue symbol → instrument, the context every per-symbol parser needs. */
export type BinanceInstrumentIndex = ReadonlyMap<string, PerpInstrument>;

/**
 * Splits a Binance/Bybit base asset into the canonical base and its size multiplier:
 * `1000PEPE` → PEPE × 1000, `1000000MOG` → MOG × 1e6, `1MBABYDOGE` → BABYDOGE × 1e6,
 * `SHIB1000` (Bybit) → SHIB × 1000. Plain assets (`BTC`, `1INCH`, `0G`, `API3`) keep multiplier 1.
 */
export function splitMultiplier(asset: string): { base: string; multiplier: number } {
  const a = asset.toUpperCase();
  const prefix = /^(10{2,})([A-Z][A-Z0-9]*)$/.exec(a);
  if (prefix) return { base: prefix[2]!, multiplier: Number(prefix[1]) };
  const million = /^1M([A-Z]{3,}[A-Z0-9]*)$/.exec(a);
  if (million) return { base: million[1]!, multiplier: 1_000_000 };
  const suffix = /^([A-Z][A-Z0-9]*[A-Z])(10{2,})$/.exec(a);
  if (suffix) return { base: suffix[1]!, multiplier: Number(suffix[2]) };
  return { base: a, multiplier: 1 };
}

/**
 * Canonical base and multiplier of a USDT-margined Binance (or Bybit) perp symbol, or undefined when
 * the symbol is not `<asset>USDT` (USDC pairs, dated `BTCUSDT_250328` futures).
 * `BTCUSDT` → { BTC, 1 }; `1000PEPEUSDT` → { PEPE, 1000 }.
 */
export function fromBinanceSymbol(symbol: string): { base: string; multiplier: number } | undefined {
  const m = /^([A-Z0-9]+)USDT$/.exec(symbol.toUpperCase());
  return m ? splitMultiplier(m[1]!) : undefined;
}

/**
 * Venue symbol of a canonical base in the numeric-prefix convention: `toBinanceSymbol("PEPE", 1000)` =
 * `1000PEPEUSDT`. Clients resolve symbols through the instrument list instead (it also covers the
 * `1MBABYDOGEUSDT` spelling).
 */
export function toBinanceSymbol(base: string, multiplier = 1): string {
  const b = base.toUpperCase();
  return multiplier === 1 ? `${b}USDT` : `${multiplier}${b}USDT`;
}

const ExchangeInfoBody = z.object({
  symbols: z.array(
    z.object({
      symbol: z.string(),
      contractType: z.string(),
      status: z.string(),
      baseAsset: z.string(),
      quoteAsset: z.string(),
    }),
  ),
});

/**
 * Parses `GET /fapi/v1/exchangeInfo` into the USDT-margined perpetuals that trade
 * (`contractType` PERPETUAL, `quoteAsset` USDT, `status` TRADING). The base comes from `baseAsset`
 * (`1000PEPE` → PEPE, multiplier 1000). Binance's instrument list does not state funding intervals
 * (they come from `/fapi/v1/fundingInfo`), so `fundingIntervalHours` is left out.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseExchangeInfo(raw: unknown, venue: PerpVenue = VENUE): PerpInstrument[] {
  const body = parse(ExchangeInfoBody, raw, "/fapi/v1/exchangeInfo", venue);
  const out: PerpInstrument[] = [];
  for (const s of body.symbols) {
    if (s.contractType !== "PERPETUAL" || s.quoteAsset !== "USDT" || s.status !== "TRADING") continue;
    const { base, multiplier } = splitMultiplier(s.baseAsset);
    out.push({ venue, base, venueSymbol: s.symbol, multiplier, contractSize: 1 });
  }
  return out;
}

const FundingInfoBody = z.array(z.object({ symbol: z.string(), fundingIntervalHours: z.number().int().positive() }));

/**
 * Parses `GET /fapi/v1/fundingInfo` into venue symbol → funding interval (hours). Only symbols whose
 * cap, floor or interval was adjusted are listed; every other symbol settles every 8 h.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFundingInfo(raw: unknown, venue: PerpVenue = VENUE): Map<string, number> {
  const rows = parse(FundingInfoBody, raw, "/fapi/v1/fundingInfo", venue);
  return new Map(rows.map((r) => [r.symbol, r.fundingIntervalHours]));
}

/** Binance's standard funding interval for symbols absent from `/fapi/v1/fundingInfo`. */
export const BINANCE_DEFAULT_INTERVAL_HOURS = 8;

const PremiumIndexEntry = z.object({
  symbol: z.string(),
  markPrice: OptNum,
  indexPrice: OptNum,
  lastFundingRate: OptNum,
  interestRate: OptNum,
  nextFundingTime: z.number().optional(),
  time: z.number(),
});
const PremiumIndexBody = z.union([PremiumIndexEntry, z.array(PremiumIndexEntry)]);

/**
 * Parses `GET /fapi/v1/premiumIndex` (one object with `symbol`, an array without) into funding
 * snapshots of the listed instruments; other symbols (USDC pairs, dated futures, halted symbols) and
 * entries without a funding rate are skipped. `lastFundingRate` is the current, accruing rate;
 * mark/index are divided by the multiplier; the interval comes from `intervals` (fundingInfo) else 8 h.
 * Binance reports no premium fraction, so `premium` is null. `nextFundingTime` 0 becomes null.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parsePremiumIndex(raw: unknown, instruments: BinanceInstrumentIndex, intervals: ReadonlyMap<string, number>, venue: PerpVenue = VENUE): FundingSnapshot[] {
  const body = parse(PremiumIndexBody, raw, "/fapi/v1/premiumIndex", venue);
  const out: FundingSnapshot[] = [];
  for (const e of Array.isArray(body) ? body : [body]) {
    const inst = instruments.get(e.symbol);
    if (!inst || e.lastFundingRate === null) continue;
    out.push({
      venue: inst.venue,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: e.lastFundingRate,
      fundingIntervalHours: intervals.get(e.symbol) ?? BINANCE_DEFAULT_INTERVAL_HOURS,
      nextFundingTime: e.nextFundingTime ? e.nextFundingTime : null,
      markPrice: e.markPrice === null ? null : perCoin(e.markPrice, inst.multiplier),
      indexPrice: e.indexPrice === null ? null : perCoin(e.indexPrice, inst.multiplier),
      premium: null,
      interestRate: e.interestRate,
      time: e.time,
    });
  }
  return out;
}

const FundingRateBody = z.array(
  z.object({
    symbol: z.string().optional(),
    fundingRate: OptNum,
    fundingTime: z.number().optional(),
    markPrice: OptNum,
  }),
);

/**
 * Parses `GET /fapi/v1/fundingRate?symbol=` (rows oldest first) into settled funding points,
 * newest first. `markPrice` may be `""` or absent (→ null); rows without a rate or a time are dropped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFundingRateHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  const rows = parse(FundingRateBody, raw, "/fapi/v1/fundingRate", inst.venue);
  const out: FundingPoint[] = [];
  for (const r of rows) {
    if (r.fundingRate === null || r.fundingTime === undefined) continue;
    out.push({
      venue: inst.venue,
      base: inst.base,
      time: r.fundingTime,
      rate: r.fundingRate,
      markPrice: r.markPrice === null ? null : perCoin(r.markPrice, inst.multiplier),
    });
  }
  return out.sort((a, b) => b.time - a.time);
}

const OpenInterestBody = z.object({ symbol: z.string(), openInterest: Num, time: z.number() });

/**
 * Parses `GET /fapi/v1/openInterest?symbol=` (`openInterest` in venue units = coins × multiplier⁻¹).
 * Binance sends no USD value: `markPrice` (per ONE coin, from premiumIndex) converts it.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOpenInterest(raw: unknown, inst: PerpInstrument, markPrice: number): OpenInterest {
  const b = parse(OpenInterestBody, raw, "/fapi/v1/openInterest", inst.venue);
  const oiCoins = scale(b.openInterest, inst.multiplier);
  return { venue: inst.venue, base: inst.base, oiCoins, oiUsd: scale(oiCoins, markPrice), time: b.time };
}

const OpenInterestHistBody = z.array(
  z.object({
    sumOpenInterest: Num,
    sumOpenInterestValue: Num,
    timestamp: Num,
  }),
);

/**
 * Parses `GET /futures/data/openInterestHist?symbol=&period=&limit=` (rows `{symbol, sumOpenInterest,
 * sumOpenInterestValue, timestamp}`, decimals as strings; `timestamp` a number live, a string in some
 * copies) into points of `inst`, oldest first: coins undo the multiplier (`1000PEPEUSDT`), USD is
 * `sumOpenInterestValue`. @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOpenInterestHist(raw: unknown, inst: PerpInstrument): OpenInterestPoint[] {
  const rows = parse(OpenInterestHistBody, raw, "/futures/data/openInterestHist");
  return rows
    .map((r): OpenInterestPoint => ({ venue: VENUE, base: inst.base, time: r.timestamp, oiCoins: scale(r.sumOpenInterest, inst.multiplier), oiUsd: r.sumOpenInterestValue }))
    .sort((a, b) => a.time - b.time);
}

const RatioBody = z.array(
  z.object({
    longAccount: Num,
    shortAccount: Num,
    longShortRatio: Num,
    timestamp: Num,
  }),
);

/**
 * Parses `GET /futures/data/topLongShortPositionRatio?symbol=&period=` (top 20% traders by margin,
 * share of positions; on USDⓈ-M the fields are named `longAccount`/`shortAccount`). `timestamp` is a
 * string in the docs and a number live; both are accepted. Returns the newest row, or null when empty.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseTopLongShortPositionRatio(raw: unknown, inst: PerpInstrument, period: string): LongShortRatio | null {
  const rows = parse(RatioBody, raw, "/futures/data/topLongShortPositionRatio");
  const last = rows.reduce<(typeof rows)[number] | undefined>((a, r) => (!a || r.timestamp > a.timestamp ? r : a), undefined);
  if (!last) return null;
  return {
    venue: VENUE,
    base: inst.base,
    longRatio: last.longAccount,
    shortRatio: last.shortAccount,
    lsRatio: last.longShortRatio,
    source: "top_traders_positions",
    period,
    time: last.timestamp,
  };
}

const KlinesBody = z.array(z.tuple([z.number(), Num, Num, Num, Num, Num, z.number(), Num], z.unknown()));

/**
 * Parses `GET /fapi/v1/klines?symbol=&interval=&limit=` (rows `[openTime, "o", "h", "l", "c", "vol",
 * closeTime, "quoteVol", trades, "takerBuyBase", "takerBuyQuote", "0"]`, oldest first; the last row is the
 * open candle) into candles of `inst`, oldest first. Prices are divided and the venue-unit volume multiplied
 * by the multiplier (`1000PEPEUSDT`), so both are per ONE coin; `volumeUsd` is `quoteVol` (USDT).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseKlines(raw: unknown, inst: PerpInstrument): Candle[] {
  const rows = parse(KlinesBody, raw, "/fapi/v1/klines", inst.venue);
  const m = inst.multiplier;
  return rows
    .map(([openTime, o, h, l, c, vol, , quoteVol]): Candle => ({
      venue: inst.venue,
      base: inst.base,
      openTime,
      open: perCoin(o, m),
      high: perCoin(h, m),
      low: perCoin(l, m),
      close: perCoin(c, m),
      volumeCoins: scale(vol, m),
      volumeUsd: quoteVol,
    }))
    .sort((a, b) => a.openTime - b.openTime);
}

const TickerPriceBody = z.object({ symbol: z.string(), price: Num });

/**
 * Parses spot `GET /api/v3/ticker/price?symbol=` into the price (quote per one base coin; spot pairs
 * carry no multiplier).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseSpotTickerPrice(raw: unknown): number {
  return parse(TickerPriceBody, raw, "/api/v3/ticker/price").price;
}

const ErrorBody = z.object({ code: z.number(), msg: z.string() });

/** The `{code,msg}` body of a refused Binance request (e.g. `-1121` Invalid symbol), if it is one. */
export function parseBinanceError(text: string): { code: number; msg: string } | undefined {
  try {
    const r = ErrorBody.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
