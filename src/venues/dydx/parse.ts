import { z } from "zod";
import { AppError } from "../../errors.js";
import { HOUR_MS } from "../../lib/time.js";
import type { Candle, FundingPoint, FundingSnapshot, MarginTier, OpenInterest, OpenInterestPoint, PerpInstrument, PredictedFunding } from "../perp/types.js";
import { Num, OptNum, parseShape, scale } from "../wire.js";
import { DYDX } from "./venue-id.js";

/*
 * Pure parsers for the dYdX v4 indexer REST API (https://docs.dydx.xyz/indexer-client/http; the response objects of
 * v4-chain `indexer/services/comlink`). Units, stated once:
 * - Markets are tickers `<BASE>-USD`, USDC-margined linear perpetuals. Prices are USD (USDC) per ONE coin and sizes,
 *   `openInterest` and `startingOpenInterest` are in coins: there are no contract multipliers (`atomicResolution` and
 *   `stepSize` only set the order quantum), so `multiplier` and `contractSize` are 1.
 * - Funding is HOURLY and settles on the hour: `historicalFunding[].rate` is the settled 1-hour rate (the protocol's
 *   8-hour premium ÷ 8, plus the market's default 1-hour rate), `price` the oracle price at settlement;
 *   `nextFundingRate` is the indexer's estimate of the accruing hour (the mean of the hour's premium samples ÷ 8 plus
 *   `defaultFundingRate1H`), fraction per hour.
 * - There is no mark price apart from the oracle price (margin, liquidations and funding all use `oraclePrice`); the
 *   perpetual's own price is the last trade, read from `/sparklines` (the close of the current 1-hour candle).
 * - Times are ISO strings; decimals are strings.
 */

const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string): z.output<T> => parseShape(DYDX, schema, raw, endpoint);

/** Market statuses that are not (or no longer) a live perpetual: delisted and settling, or not yet trading. */
const NOT_LISTED = new Set(["FINAL_SETTLEMENT", "INITIALIZING"]);

/** Canonical base of a dYdX ticker (`BTC-USD` → `BTC`), or undefined for a ticker of another shape. */
export function baseOfTicker(ticker: string): string | undefined {
  const m = /^(.+)-USD$/.exec(ticker);
  return m ? m[1]!.toUpperCase() : undefined;
}

/** The dYdX ticker of a canonical base: `BTC` → `BTC-USD`. */
export function tickerOf(base: string): string {
  return `${base.trim().toUpperCase()}-USD`;
}

const MarketRow = z.object({
  ticker: z.string(),
  status: z.string(),
  oraclePrice: OptNum,
  nextFundingRate: OptNum,
  openInterest: OptNum,
  initialMarginFraction: OptNum,
  maintenanceMarginFraction: OptNum,
  openInterestLowerCap: OptNum,
  openInterestUpperCap: OptNum,
  defaultFundingRate1H: OptNum,
});
type MarketRow = z.output<typeof MarketRow>;
const Markets = z.object({ markets: z.record(z.string(), MarketRow) });

interface Listed {
  inst: PerpInstrument;
  row: MarketRow;
}

/** The listed markets of a `/perpetualMarkets` body (tickers of another shape and {@link NOT_LISTED} statuses dropped). */
function listed(raw: unknown): Listed[] {
  const out: Listed[] = [];
  for (const row of Object.values(parse(Markets, raw, "perpetualMarkets").markets)) {
    const base = baseOfTicker(row.ticker);
    if (!base || NOT_LISTED.has(row.status)) continue;
    out.push({ inst: { venue: DYDX, base, venueSymbol: row.ticker, multiplier: 1, contractSize: 1, fundingIntervalHours: 1 }, row });
  }
  return out;
}

/**
 * Perpetuals of `GET /perpetualMarkets` (`{"markets":{"BTC-USD":{…}}}`), every status but `FINAL_SETTLEMENT` and
 * `INITIALIZING` (ACTIVE, and PAUSED / CANCEL_ONLY / POST_ONLY markets, which keep open interest and funding).
 * Sizes are coins (multiplier and contract size 1); funding is hourly.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseInstruments(raw: unknown): PerpInstrument[] {
  return listed(raw).map((l) => l.inst);
}

/** Start of the next full hour after `now` (dYdX settles funding every hour on the hour). */
export function nextHour(now: number): number {
  return Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
}

/** The last trade price per ticker of a `GET /sparklines?timePeriod=ONE_DAY` body (closes of 1-hour candles, newest first). */
const Sparklines = z.record(z.string(), z.array(Num));

/**
 * Last trade price per ticker from `/sparklines` (`{"BTC-USD":["68526","68400",…]}`: the closes of the 1-hour candles
 * of the last day, newest first): the first close of each ticker; tickers without candles are left out.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseSparklineLast(raw: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const [ticker, closes] of Object.entries(parse(Sparklines, raw, "sparklines"))) {
    const last = closes[0];
    if (last !== undefined) out.set(ticker, last);
  }
  return out;
}

/**
 * Funding snapshots of every listed market from `/perpetualMarkets`: `nextFundingRate` is the accruing hourly rate
 * (settling at the next full hour), `oraclePrice` the index, `defaultFundingRate1H` (when sent) the interest component
 * per hour. `lastPrices` (from {@link parseSparklineLast}) gives the perpetual's own price as `markPrice`, null
 * without one (dYdX has no separate mark price). No premium index is published (null). Markets without a
 * `nextFundingRate` are skipped. dYdX sends no timestamp: `time` is `now`.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFunding(raw: unknown, lastPrices: ReadonlyMap<string, number> = new Map(), now = Date.now()): FundingSnapshot[] {
  const out: FundingSnapshot[] = [];
  for (const { inst, row } of listed(raw)) {
    if (row.nextFundingRate === null) continue;
    out.push({
      venue: DYDX,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: row.nextFundingRate,
      fundingIntervalHours: 1,
      nextFundingTime: nextHour(now),
      markPrice: lastPrices.get(inst.venueSymbol) ?? null,
      indexPrice: row.oraclePrice,
      premium: null,
      interestRate: row.defaultFundingRate1H,
      time: now,
    });
  }
  return out;
}

/**
 * The indexer's predicted rate for the hour that settles next (`nextFundingRate`, fraction per hour), from a funding
 * snapshot of {@link parseFunding}.
 */
export function predictedOf(s: FundingSnapshot): PredictedFunding {
  return { venue: DYDX, base: s.base, rate: s.fundingRate, nextFundingTime: s.nextFundingTime, fundingIntervalHours: 1 };
}

/**
 * Open interest of every listed market from `/perpetualMarkets`: `openInterest` in coins, USD at the oracle price
 * (the price dYdX values positions at). Markets without both values are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOpenInterest(raw: unknown, now = Date.now()): OpenInterest[] {
  const out: OpenInterest[] = [];
  for (const { inst, row } of listed(raw)) {
    if (row.openInterest === null || row.oraclePrice === null) continue;
    out.push({ venue: DYDX, base: inst.base, oiCoins: row.openInterest, oiUsd: scale(row.openInterest, row.oraclePrice), time: now });
  }
  return out;
}

/**
 * The initial margin fraction in force for `row`: the base IMF, raised linearly with the market's open notional
 * (`openInterest × oraclePrice`) from `openInterestLowerCap` to 100 % at `openInterestUpperCap` (USDC; dYdX
 * "Open-Interest-Based IMF", https://docs.dydx.xyz/concepts/trading/margin). Caps that are absent or not increasing
 * (`"0"`/`"0"` on BTC and ETH) leave the base IMF.
 */
export function effectiveImf(row: Pick<MarketRow, "initialMarginFraction" | "openInterest" | "oraclePrice" | "openInterestLowerCap" | "openInterestUpperCap">): number | null {
  const base = row.initialMarginFraction;
  if (base === null) return null;
  const lo = row.openInterestLowerCap;
  const hi = row.openInterestUpperCap;
  if (lo === null || hi === null || !(hi > lo) || row.openInterest === null || row.oraclePrice === null) return base;
  const scaling = (row.openInterest * row.oraclePrice - lo) / (hi - lo);
  return Math.min(1, base + Math.max(0, scaling * (1 - base)));
}

/**
 * The margin tier of `inst` from `/perpetualMarkets`: dYdX has no position-size tiers (a position's margin is its
 * notional × the market's margin fractions, whatever its size), so one unbounded tier: `maxLeverage` = 1 / the IMF in
 * force ({@link effectiveImf}), `maintenanceMarginRate` = `maintenanceMarginFraction` (never scaled).
 * @throws AppError NOT_FOUND when the body lists no such market; UPSTREAM_ERROR on an unexpected shape or margin
 *   fractions missing or outside (0, 1].
 */
export function parseMarginTiers(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const hit = listed(raw).find((l) => l.inst.venueSymbol === inst.venueSymbol);
  if (!hit) throw new AppError("NOT_FOUND", `${DYDX} perpetualMarkets lists no ${inst.venueSymbol}`);
  const imf = effectiveImf(hit.row);
  const mmf = hit.row.maintenanceMarginFraction;
  if (imf === null || mmf === null || !(imf > 0 && imf <= 1) || !(mmf > 0 && mmf <= 1)) {
    throw new AppError("UPSTREAM_ERROR", `${DYDX} perpetualMarkets sent no usable margin fractions for ${inst.venueSymbol}`);
  }
  return [{ venue: DYDX, base: inst.base, minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: Number((1 / imf).toPrecision(15)), maintenanceMarginRate: mmf }];
}

/** An ISO-8601 time → epoch ms (fails the schema when unparsable). */
const IsoTime = z.string().transform((s, ctx) => {
  const t = Date.parse(s);
  if (!Number.isFinite(t)) {
    ctx.addIssue({ code: "custom", message: `expected an ISO time, got ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return t;
});

const HistoricalFunding = z.object({ historicalFunding: z.array(z.object({ ticker: z.string(), rate: Num, price: OptNum, effectiveAt: IsoTime })) });

/**
 * Settled hourly funding from `GET /historicalFunding/{ticker}` (newest first), newest first: `rate` per hour,
 * `markPrice` the oracle price at settlement (`price`; dYdX marks positions at the oracle). Rows of other tickers are
 * left out.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  return parse(HistoricalFunding, raw, "historicalFunding")
    .historicalFunding.filter((r) => r.ticker === inst.venueSymbol)
    .map((r): FundingPoint => ({ venue: DYDX, base: inst.base, time: r.effectiveAt, rate: r.rate, markPrice: r.price }))
    .sort((a, b) => b.time - a.time);
}

const Candles = z.object({
  candles: z.array(
    z.object({
      startedAt: IsoTime,
      ticker: z.string(),
      open: Num,
      high: Num,
      low: Num,
      close: Num,
      baseTokenVolume: Num,
      usdVolume: Num,
      startingOpenInterest: OptNum,
    }),
  ),
});

/**
 * Candles of `GET /candles/perpetualMarkets/{ticker}?resolution=1HOUR` (newest first), oldest first: last-trade
 * prices in USD per coin, `baseTokenVolume` coins, `usdVolume` USD.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseCandles(raw: unknown, inst: PerpInstrument): Candle[] {
  return parse(Candles, raw, "candles")
    .candles.filter((c) => c.ticker === inst.venueSymbol)
    .map((c): Candle => ({
      venue: DYDX,
      base: inst.base,
      openTime: c.startedAt,
      open: c.open,
      high: c.high,
      low: c.low,
      close: c.close,
      volumeCoins: c.baseTokenVolume,
      volumeUsd: c.usdVolume,
    }))
    .sort((a, b) => a.openTime - b.openTime);
}

/**
 * Hourly open interest from the same candles, oldest first: `startingOpenInterest` (coins, at the candle's start) at
 * `startedAt`, valued at the candle's open. Candles without it (older indexers) are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOpenInterestHistory(raw: unknown, inst: PerpInstrument): OpenInterestPoint[] {
  return parse(Candles, raw, "candles")
    .candles.filter((c) => c.ticker === inst.venueSymbol && c.startingOpenInterest !== null)
    .map((c): OpenInterestPoint => ({ venue: DYDX, base: inst.base, time: c.startedAt, oiCoins: c.startingOpenInterest!, oiUsd: scale(c.startingOpenInterest!, c.open) }))
    .sort((a, b) => a.time - b.time);
}

const ErrorBody = z.object({ errors: z.array(z.object({ msg: z.string() })).min(1) });

/** The first message of an indexer error body (`{"errors":[{"msg":"…"}]}`), or undefined for another body. */
export function indexerErrorMessage(body: string): string | undefined {
  try {
    const r = ErrorBody.safeParse(JSON.parse(body));
    return r.success ? r.data.errors[0]!.msg : undefined;
  } catch {
    return undefined;
  }
}
