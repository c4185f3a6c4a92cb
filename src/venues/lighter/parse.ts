import { z } from "zod";
import { AppError } from "../../errors.js";
import type { FeedInstrument } from "../../ingestion/feeds/normalise.js";
import { splitMultiplier } from "../binance/parse.js";
import { nextHour } from "../hyperliquid/parse.js";
import type { FundingPoint, FundingSnapshot, MarginTier, OpenInterest, PerpInstrument } from "../perp/types.js";
import { Num, OptNum, parseShape, perCoin, scale } from "../wire.js";
import { LIGHTER } from "./venue-id.js";

/*
 * Pure parsers for Lighter's public REST API (`https://mainnet.zklighter.elliot.ai/api/v1`, OpenAPI in
 * github.com/elliottech/lighter-python `openapi.json`; docs https://apidocs.lighter.xyz). Bodies are `{"code":200,…}`;
 * any other `code` is a refusal (`{"code":20001,"message":"invalid param "}`).
 *
 * Units (docs/methods/venues/lighter.md):
 * - Markets are keyed by an integer `market_id` with a symbol (`BTC`, `ETH`, `1000PEPE`); USDC-margined, linear. Sizes
 *   and `open_interest` of `orderBookDetails` are in base coins per venue unit, no contract size; a `1000<COIN>` market
 *   quotes per 1000 coins (prices divided, sizes multiplied by 1000, so records are per ONE coin).
 * - Funding settles every hour on the hour ("Funding payments occur at each hour mark", docs.lighter.xyz, Funding).
 *   The venue writes rates in three units: `fundings.rate` (settled history) is an unsigned PERCENT of notional for the
 *   hour with its sign in `direction` (`long`: longs paid); `funding-rates` lists each venue's current rate as a
 *   FRACTION PER 8 HOURS (Lighter's own rows divided by 8 here); `market_stats` (websocket) writes percent per hour.
 *   The three agree on the baseline: `fundings` ETH 0.0012 (% per hour) = `funding-rates` ETH 0.000096 (per 8 h) / 8 ×
 *   100, and an equity perp's `base_interest_rate` 0.0032 (% per 8 h) = its `funding-rates` 3.2e-05.
 * - Margin fractions are integers per 10,000 (`min_initial_margin_fraction` 200 = 2 %, i.e. 50x).
 */

const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string): z.output<T> => parseShape(LIGHTER, schema, raw, endpoint);

/** Lighter's margin fractions are integers per this many (`maintenance_margin_fraction` 120 = 1.2 %). */
export const MARGIN_FRACTION_SCALE = 10_000;
/** `funding-rates` writes every venue's rate per this many hours; Lighter settles hourly. */
export const FUNDING_RATES_BASIS_HOURS = 8;

/** A Lighter perpetual: the instrument plus its integer `market_id`, the key of every request and channel. */
export interface LighterInstrument extends PerpInstrument {
  readonly marketId: number;
}

/**
 * The `market_id` of a Lighter instrument (the objects the client lists carry it), or undefined for an instrument
 * built elsewhere. The feed reads it from the instruments it is asked to subscribe.
 */
export function lighterMarketId(inst: FeedInstrument | PerpInstrument): number | undefined {
  const id = (inst as Partial<LighterInstrument>).marketId;
  return typeof id === "number" && Number.isSafeInteger(id) && id >= 0 ? id : undefined;
}

const Envelope = z.object({ code: z.number(), message: z.string().optional() });

/**
 * Throws the venue's refusal when `raw` is an envelope whose `code` is not 200 (`{"code":20001,"message":"invalid
 * param "}`). @throws AppError UPSTREAM_ERROR naming the code and message.
 */
export function assertOk(raw: unknown, endpoint: string): void {
  const env = Envelope.safeParse(raw);
  if (env.success && env.data.code !== 200) {
    throw new AppError("UPSTREAM_ERROR", `${LIGHTER} ${endpoint} refused the request (code ${env.data.code}${env.data.message ? `: ${env.data.message.trim()}` : ""})`);
  }
}

const Market = z.object({
  symbol: z.string(),
  market_id: z.number().int().nonnegative(),
  /** Absent on bodies before spot markets (2025); `spot` rows live in `spot_order_book_details` since. */
  market_type: z.string().optional(),
  status: z.string(),
  min_initial_margin_fraction: z.number().optional(),
  maintenance_margin_fraction: z.number().optional(),
  last_trade_price: OptNum,
  /** Base coins per venue unit (ETH 39559.3278 when `market_stats` said $122.7M): absent on the SDK's static metadata. */
  open_interest: OptNum,
  /** Strings on bodies since 2026 (`"81468.9"`); absent before. */
  mark_price: OptNum,
  index_price: OptNum,
});
/** One row of `orderBookDetails.order_book_details`, as read. */
export type LighterMarket = z.output<typeof Market>;

const Details = z.object({ order_book_details: z.array(Market) });

/** The perpetual rows of `GET /orderBookDetails` (any status). @throws AppError UPSTREAM_ERROR on a refusal or another shape. */
export function parseOrderBookDetails(raw: unknown): LighterMarket[] {
  assertOk(raw, "orderBookDetails");
  return parse(Details, raw, "orderBookDetails").order_book_details.filter((m) => (m.market_type ?? "perp") === "perp" && !m.symbol.includes("/"));
}

function toInstrument(m: LighterMarket): LighterInstrument {
  const { base, multiplier } = splitMultiplier(m.symbol);
  return { venue: LIGHTER, base, venueSymbol: m.symbol, multiplier, contractSize: 1, fundingIntervalHours: 1, marketId: m.market_id };
}

/**
 * The active perpetuals of `GET /orderBookDetails` (`status` "active"; spot markets, in `spot_order_book_details` or
 * with a `/` in their symbol, are skipped). `1000PEPE` → PEPE × 1000. Funding is hourly (`fundingIntervalHours` 1).
 * @throws AppError UPSTREAM_ERROR on a refusal or an unexpected shape.
 */
export function parseInstruments(raw: unknown): LighterInstrument[] {
  return instrumentsOf(parseOrderBookDetails(raw));
}

/** The active perpetuals among parsed `orderBookDetails` rows (see {@link parseInstruments}). */
export function instrumentsOf(rows: readonly LighterMarket[]): LighterInstrument[] {
  return rows.filter((m) => m.status === "active").map(toInstrument);
}

function rowOf(rows: readonly LighterMarket[], inst: LighterInstrument): LighterMarket {
  const row = rows.find((m) => m.market_id === inst.marketId);
  if (!row) throw new AppError("UPSTREAM_ERROR", `${LIGHTER} orderBookDetails sent no market ${inst.marketId} (${inst.venueSymbol})`);
  return row;
}

/**
 * Open interest of `inst` from `orderBookDetails` rows: `open_interest` (venue units) × multiplier coins; USD =
 * `open_interest` × `mark_price` (else `last_trade_price` on bodies without a mark).
 * @throws AppError UPSTREAM_ERROR when the market's row, its open interest or a price is missing.
 */
export function parseOpenInterest(rows: readonly LighterMarket[], inst: LighterInstrument, now = Date.now()): OpenInterest {
  const row = rowOf(rows, inst);
  const price = row.mark_price ?? row.last_trade_price;
  if (row.open_interest === null || price === null) throw new AppError("UPSTREAM_ERROR", `${LIGHTER} orderBookDetails sent no open interest for ${inst.venueSymbol}`);
  return { venue: LIGHTER, base: inst.base, oiCoins: scale(row.open_interest, inst.multiplier), oiUsd: scale(row.open_interest, price), time: now };
}

/**
 * The margin tier of `inst` from its `orderBookDetails` row. Lighter has one tier per market, whatever the notional:
 * max leverage = 10,000 / `min_initial_margin_fraction`, maintenance rate = `maintenance_margin_fraction` / 10,000.
 * @throws AppError UPSTREAM_ERROR when the row or a positive fraction is missing.
 */
export function parseMarginTiers(rows: readonly LighterMarket[], inst: LighterInstrument): MarginTier[] {
  const row = rowOf(rows, inst);
  const imf = row.min_initial_margin_fraction;
  const mmf = row.maintenance_margin_fraction;
  if (!(imf !== undefined && imf > 0 && mmf !== undefined && mmf > 0))
    throw new AppError("UPSTREAM_ERROR", `${LIGHTER} orderBookDetails sent no margin fractions for ${inst.venueSymbol}`);
  return [
    {
      venue: LIGHTER,
      base: inst.base,
      minNotionalUsd: 0,
      maxNotionalUsd: null,
      maxLeverage: Number((MARGIN_FRACTION_SCALE / imf).toPrecision(15)),
      maintenanceMarginRate: mmf / MARGIN_FRACTION_SCALE,
    },
  ];
}

const FundingRates = z.object({
  funding_rates: z.array(z.object({ market_id: z.number().int(), exchange: z.string(), symbol: z.string(), rate: Num })),
});

/**
 * Lighter's own current funding per market from `GET /funding-rates`, which lists several venues' rates per Lighter
 * market (`exchange` `binance`, `bybit`, `hyperliquid`, `lighter`), each as a fraction per 8 hours: only the `lighter`
 * rows are kept, divided by 8 into the hourly rate Lighter settles. Keyed by `market_id`.
 * @throws AppError UPSTREAM_ERROR on a refusal or an unexpected shape.
 */
export function parseFundingRates(raw: unknown): Map<number, number> {
  assertOk(raw, "funding-rates");
  const out = new Map<number, number>();
  for (const r of parse(FundingRates, raw, "funding-rates").funding_rates) {
    if (r.exchange === LIGHTER) out.set(r.market_id, Number((r.rate / FUNDING_RATES_BASIS_HOURS).toPrecision(15)));
  }
  return out;
}

/**
 * Funding snapshots of `instruments` that have a Lighter rate in `hourlyRates` ({@link parseFundingRates}): the hourly
 * rate, settling at the next full hour; mark and index per ONE coin from the instrument's `orderBookDetails` row when
 * the body carries them (null otherwise). Lighter publishes no premium or interest split over REST (null), and no
 * timestamp: `time` is `now`.
 */
export function fundingSnapshots(
  hourlyRates: ReadonlyMap<number, number>,
  instruments: readonly LighterInstrument[],
  rows: readonly LighterMarket[],
  now = Date.now(),
): FundingSnapshot[] {
  const byId = new Map(rows.map((r) => [r.market_id, r]));
  const out: FundingSnapshot[] = [];
  for (const inst of instruments) {
    const rate = hourlyRates.get(inst.marketId);
    if (rate === undefined) continue;
    const row = byId.get(inst.marketId);
    const price = (v: number | null | undefined) => (v === null || v === undefined ? null : perCoin(v, inst.multiplier));
    out.push({
      venue: LIGHTER,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: rate,
      fundingIntervalHours: 1,
      nextFundingTime: nextHour(now),
      markPrice: price(row?.mark_price),
      indexPrice: price(row?.index_price),
      premium: null,
      interestRate: null,
      time: now,
    });
  }
  return out;
}

/** An unsigned percent and the side that paid → a signed fraction (`0.0012`, `short` → −0.000012; never −0). */
function signedFraction(percent: number, paidBy: "long" | "short"): number {
  const f = Number((percent / 100).toPrecision(15));
  return f === 0 ? 0 : paidBy === "long" ? f : -f;
}

const Fundings = z.object({
  fundings: z.array(z.object({ timestamp: z.number().int().positive(), rate: Num, direction: z.enum(["long", "short"]), value: OptNum })),
});

/**
 * Settled hourly funding of `inst` from `GET /fundings?market_id=&resolution=1h&…`, newest first: `timestamp` in
 * SECONDS → ms; `rate` is an unsigned percent of notional for the hour, positive when `direction` is `long` (longs
 * paid), negative when `short`, so 0.0012 long → 0.000012. Lighter's rows carry what one unit paid (`value`) but no
 * mark price (null).
 * @throws AppError UPSTREAM_ERROR on a refusal or an unexpected shape (an unknown `direction` included).
 */
export function parseFundings(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  assertOk(raw, "fundings");
  return parse(Fundings, raw, "fundings")
    .fundings.map((r) => ({ venue: LIGHTER, base: inst.base, time: r.timestamp * 1000, rate: signedFraction(r.rate, r.direction), markPrice: null }))
    .sort((a, b) => b.time - a.time);
}
