import { AppError } from "../../errors.js";
import { memoize, memoizeKeyed } from "../../lib/memo.js";
import { HOUR_MS, MINUTE_MS } from "../../lib/time.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import { newestFundingPoints } from "../perp/funding-points.js";
import type {
  Candle,
  FundingPoint,
  FundingSnapshot,
  LongShortRatio,
  MarginTier,
  OpenInterest,
  OpenInterestPoint,
  PerpInstrument,
  PerpVenueClient,
  PredictedFunding,
} from "../perp/types.js";
import { KRAKEN_ENDPOINTS } from "./endpoints.js";
import {
  analyticsMore,
  KRAKEN,
  krakenError,
  krakenErrorOf,
  parseCandles,
  parseFundingHistory,
  parseInstruments,
  parseLongShort,
  parseMarginTiers,
  parseOpenInterestHistory,
  parseTicker,
  parseTickerOpenInterest,
  parseTickerPrediction,
  parseTickers,
} from "./parse.js";

/** Options of {@link KrakenPerpClient} (`callsPerMin` defaults to `KRAKEN_ENDPOINTS.rest.api`, endpoints.ts). */
export type KrakenClientOptions = PerpClientOptions;

/** The instrument list and the body it came from (the margin levels are read from it, no second call). */
interface KrakenCatalog extends Catalog {
  raw: unknown;
}

/** How long one ticker body (or the all-tickers body) is reused: funding, open interest and the prediction share it. */
const TICKER_TTL_MS = 2_000;
/** How long a symbol's parsed funding history is reused: the endpoint sends every hour since the listing. */
const HISTORY_TTL_MS = MINUTE_MS;
/** Longest funding history served (hourly points). */
export const KRAKEN_MAX_HISTORY = 1000;
/** Most hourly candles one charts call returns (ccxt's `fetchOHLCV` limit). */
export const KRAKEN_MAX_CANDLES = 2000;
/** Longest open-interest history served (hourly buckets, 30 days), and the analytics pages followed for it. */
export const KRAKEN_MAX_OI_HISTORY = 720;
const MAX_OI_PAGES = 4;
/** Bucket of the long/short statistic (seconds) and the window asked for it. */
const LONG_SHORT_INTERVAL_S = 300;
const LONG_SHORT_WINDOW_S = 1800;

const V3 = "/derivatives/api/v3";
const CHARTS = "/api/charts/v1";

/**
 * Kraken Futures client, multi-collateral linear perpetuals `PF_<COIN>USD` (docs/methods/venues/kraken.md), public REST
 * on `https://futures.kraken.com`: `/derivatives/api/v3/instruments` (cached; its margin levels are the tiers),
 * `/tickers` (every perpetual's funding in one call), `/tickers/{symbol}` (funding, open interest and the predicted rate
 * of one perpetual), `/derivatives/api/v4/historicalfundingrates` (hourly history), and the charts API
 * `/api/charts/v1/trade/{symbol}/1h` (hourly candles), `/analytics/{symbol}/open-interest` (hourly open interest) and
 * `/analytics/{symbol}/long-short-info` (the share of accounts long and short).
 * Funding is hourly and served as a fraction per hour: the tickers' ABSOLUTE rates (USD per contract) are divided by
 * the mark price (parse.ts explains the units). Records are per ONE coin.
 * Errors: see {@link VenueHttpClient}; an unlisted base, HTTP 404 or a symbol error on a symbol request → `NOT_FOUND`;
 * HTTP 403/451 → `UPSTREAM_UNAVAILABLE`; `apiLimitExceeded` → `UPSTREAM_UNAVAILABLE`; other failures → `UPSTREAM_ERROR`.
 */
export class KrakenPerpClient extends PerpClientBase<KrakenCatalog> implements PerpVenueClient {
  constructor(baseUrl: string, opts: KrakenClientOptions) {
    const { callsPerMin, windowSec } = KRAKEN_ENDPOINTS.rest.api;
    super(KRAKEN, baseUrl, opts, { callsPerMin, windowSec, listing: "USD perpetual" });
  }

  /** Funding of every listed perpetual: one `/tickers` call, reused for 2 s. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, { body }] = await Promise.all([this.catalog(), this.allTickers()]);
    return parseTickers(body, cat.bySymbol);
  }

  private readonly allTickers = memoize(TICKER_TTL_MS, async () => ({ body: await this.http.getJson(`${V3}/tickers`).catch(mapError()) }));

  /** Funding of one perpetual from `/tickers/{symbol}` (fraction per hour). @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    return parseTicker(await this.ticker(inst), inst);
  }

  /** Open interest in coins and USD from `/tickers/{symbol}`. @throws AppError NOT_FOUND when not listed. */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    return parseTickerOpenInterest(await this.ticker(inst), inst);
  }

  /** Kraken's estimate of the next hour's rate (`fundingRatePrediction`), or null. @throws AppError NOT_FOUND when not listed. */
  async predictedFunding(base: string): Promise<PredictedFunding | null> {
    const { inst } = await this.require(base);
    return parseTickerPrediction(await this.ticker(inst), inst);
  }

  /**
   * Settled hourly funding, newest first, at most `limit` (capped at {@link KRAKEN_MAX_HISTORY}) points from
   * `/derivatives/api/v4/historicalfundingrates` (one call; the parsed history is kept a minute per symbol).
   */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const { points } = await this.history(inst.venueSymbol, { inst });
    return newestFundingPoints(points, Math.min(KRAKEN_MAX_HISTORY, Math.floor(limit)));
  }

  private readonly history = memoizeKeyed(HISTORY_TTL_MS, 500, async ({ inst }: { inst: PerpInstrument }) => {
    const raw = await this.http.getJson("/derivatives/api/v4/historicalfundingrates", { symbol: inst.venueSymbol }).catch(mapError(inst.venueSymbol));
    return { points: parseFundingHistory(raw, inst).slice(0, KRAKEN_MAX_HISTORY) };
  });

  /** The newest 5-minute share of accounts long and short (`long-short-info`), or null when Kraken sends none. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const since = Math.floor(Date.now() / 1000) - LONG_SHORT_WINDOW_S;
    const raw = await this.http.getJson(`${CHARTS}/analytics/${inst.venueSymbol}/long-short-info`, { since, interval: LONG_SHORT_INTERVAL_S }).catch(mapError(inst.venueSymbol));
    return parseLongShort(raw, inst, "5m");
  }

  /** Maintenance-margin tiers, first first, from the cached instrument list's `marginLevels`. @throws AppError NOT_FOUND when not listed. */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, async (inst) => parseMarginTiers((await this.catalog()).raw, inst));
  }

  /** The last `limit` (at most {@link KRAKEN_MAX_CANDLES}) hourly trade-price candles, oldest first. @throws AppError NOT_FOUND when not listed. */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, KRAKEN_MAX_CANDLES, (inst, n) => this.fetchCandles(inst, n));
  }

  /**
   * Hourly open interest, oldest first, at most `limit` (capped at {@link KRAKEN_MAX_OI_HISTORY}) points: the charts
   * `open-interest` analytics (bucket closes, pages followed while Kraken says `more`) valued at the hourly candles'
   * closes of the same hours. @throws AppError NOT_FOUND when not listed.
   */
  async openInterestHistory(base: string, limit: number): Promise<OpenInterestPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(KRAKEN_MAX_OI_HISTORY, Math.floor(limit));
    const hourStart = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const from = hourStart - (n - 1) * HOUR_MS;
    const [pages, candles] = await Promise.all([this.oiPages(inst, from / 1000), this.fetchCandles(inst, n + 1)]);
    return pages.flatMap((raw) => parseOpenInterestHistory(raw, candles, inst, HOUR_MS)).slice(-n);
  }

  private async oiPages(inst: PerpInstrument, sinceS: number): Promise<unknown[]> {
    const pages: unknown[] = [];
    let since = sinceS;
    for (let i = 0; i < MAX_OI_PAGES; i++) {
      const raw = await this.http.getJson(`${CHARTS}/analytics/${inst.venueSymbol}/open-interest`, { since, interval: 3600 }).catch(mapError(inst.venueSymbol));
      pages.push(raw);
      const ts = (raw as { result?: { timestamp?: unknown[] } } | null)?.result?.timestamp;
      const last = Array.isArray(ts) ? Number(ts.at(-1)) : NaN;
      if (!analyticsMore(raw) || !Number.isFinite(last) || last < since) break;
      since = last + 3600;
    }
    return pages;
  }

  private async fetchCandles(inst: PerpInstrument, n: number): Promise<Candle[]> {
    const to = Math.floor(Date.now() / 1000);
    const from = (Math.floor(Date.now() / HOUR_MS) - (n - 1)) * 3600;
    const raw = await this.http.getJson(`${CHARTS}/trade/${inst.venueSymbol}/1h`, { from, to }).catch(mapError(inst.venueSymbol));
    return parseCandles(raw, inst);
  }

  /** One `/tickers/{symbol}` body per perpetual, reused for 2 s (funding, open interest and the prediction share it). */
  private readonly tickers = memoizeKeyed(TICKER_TTL_MS, 1000, async ({ inst }: { inst: PerpInstrument }) => ({
    body: await this.http.getJson(`${V3}/tickers/${inst.venueSymbol}`).catch(mapError(inst.venueSymbol)),
  }));

  private async ticker(inst: PerpInstrument): Promise<unknown> {
    return (await this.tickers(inst.venueSymbol, { inst })).body;
  }

  protected async loadCatalog(): Promise<KrakenCatalog> {
    const raw = await this.http.getJson(`${V3}/instruments`).catch(mapError());
    return { ...indexCatalog(parseInstruments(raw)), raw };
  }
}

/**
 * Maps a refused Kraken request (HTTP 4xx) to an {@link AppError}: 403/451 → UPSTREAM_UNAVAILABLE (ban or geo-block);
 * a Kraken error body → {@link krakenError}; HTTP 404 on a symbol request (`/tickers/{symbol}`: "Contract could not be
 * found") → NOT_FOUND; anything else → UPSTREAM_ERROR.
 */
export function mapError(symbol?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 403 || err.status === 451)
      throw new AppError("UPSTREAM_UNAVAILABLE", `kraken refuses requests from this server (HTTP ${err.status})`, { retryAfterSec: 60 });
    const body = krakenErrorOf(err.body);
    if (body) throw krakenError(body, `HTTP ${err.status}`, symbol);
    if (err.status === 404 && symbol !== undefined) throw new AppError("NOT_FOUND", `kraken does not list ${symbol}`);
    throw new AppError("UPSTREAM_ERROR", `kraken refused the request (HTTP ${err.status})`);
  };
}
