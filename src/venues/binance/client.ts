import { AppError } from "../../errors.js";
import { VenueHttpClient, VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase, perpHttpClient } from "../perp/client-base.js";
import { memoizeKeyed } from "../../lib/memo.js";
import { BINANCE_ENDPOINTS } from "./endpoints.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, OpenInterestPoint, PerpVenueClient } from "../perp/types.js";
import {
  parseBinanceError,
  parseExchangeInfo,
  parseFundingInfo,
  parseFundingRateHistory,
  parseKlines,
  parseOpenInterest,
  parseOpenInterestHist,
  parsePremiumIndex,
  parseSpotTickerPrice,
  parseTopLongShortPositionRatio,
} from "./parse.js";

/** Venue key of Binance USDⓈ-M futures (and its spot price source) in status, metrics and errors. */
export const BINANCE = "binance";

/** Options of {@link BinancePerpClient}. */
export interface BinanceClientOptions extends PerpClientOptions {
  /** fapi request budget per minute (default `BINANCE_ENDPOINTS.rest.fapi`, endpoints.ts). */
  callsPerMin?: number;
  /** Spot REST base URL for {@link BinancePerpClient.spotPrice} (default `BINANCE_ENDPOINTS.rest.spot`). */
  spotBaseUrl?: string;
  /** Spot request budget per minute (default `BINANCE_ENDPOINTS.rest.spot`). */
  spotCallsPerMin?: number;
  /** How long the instrument list and funding intervals are cached (default 1 h). */
  instrumentsTtlMs?: number;
}

/** The catalog of a venue of Binance's fapi wire: its instruments and fundingInfo's interval hours by symbol (a symbol not listed settles every 8 h). */
export interface FapiCatalog extends Catalog {
  intervals: Map<string, number>;
}

/**
 * The `/fapi/v1` market reads Binance and the venues serving its wire (Aster) make alike: funding from
 * `premiumIndex` (all, or `?symbol=`), settled funding from `fundingRate` (limit ≤ 1000, newest first), open interest
 * from `openInterest` × the mark price of `premiumIndex`, hourly last-price candles from `klines` (at most
 * {@link maxKlines}, cached a minute). Records are per ONE coin (a `1000<COIN>USDT` multiplier undone). A venue
 * supplies its catalog ({@link loadCatalog}) and its error mapping ({@link fapiError}).
 * @throws AppError NOT_FOUND from every read when the base is not listed (or `-1121 Invalid symbol`), and what
 * {@link fapiError} maps a refused request to.
 */
export abstract class FapiPerpClient extends PerpClientBase<FapiCatalog> {
  /** Most candles `/fapi/v1/klines` returns per request. */
  protected abstract readonly maxKlines: number;
  /** Maps a refused request (about `base`, when named) to an AppError and throws it; rethrows anything else. */
  protected abstract fapiError(base?: string): (err: unknown) => never;

  /** Funding of every listed perpetual: one `premiumIndex` call without symbol. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/fapi/v1/premiumIndex").catch(this.fapiError())]);
    return parsePremiumIndex(raw, cat.bySymbol, cat.intervals, this.venue);
  }

  /** Funding of one perpetual from `premiumIndex?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const raw = await this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(this.fapiError(base));
    const snap = parsePremiumIndex(raw, cat.bySymbol, cat.intervals, this.venue)[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `${this.venue} sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `/fapi/v1/fundingRate` (limit ≤ 1000), newest first (mark price null where the rows carry none). */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(MAX_FUNDING_ROWS, Math.floor(limit));
    const raw = await this.http.getJson("/fapi/v1/fundingRate", { symbol: inst.venueSymbol, limit: n }).catch(this.fapiError(base));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins (`/fapi/v1/openInterest`, venue units × multiplier) and USD (× mark price from `premiumIndex`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { cat, inst } = await this.require(base);
    const [oiRaw, piRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/openInterest", { symbol: inst.venueSymbol }).catch(this.fapiError(base)),
      this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(this.fapiError(base)),
    ]);
    const mark = parsePremiumIndex(piRaw, cat.bySymbol, cat.intervals, this.venue)[0]?.markPrice;
    if (mark === undefined || mark === null) throw new AppError("UPSTREAM_ERROR", `${this.venue} sent no mark price for ${inst.venueSymbol}`);
    return parseOpenInterest(oiRaw, inst, mark);
  }

  /**
   * The last `limit` (at most {@link maxKlines}) hourly last-price candles from `/fapi/v1/klines?interval=1h`,
   * oldest first, the current open hour included; per ONE coin, volume in coins and USDT (`quoteVol`).
   * `limit` < 1 → []. Kept for a minute per symbol and limit ({@link CANDLES_TTL_MS}).
   * @throws AppError NOT_FOUND when not listed (or `-1121 Invalid symbol`).
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, this.maxKlines, async (inst, n) =>
      parseKlines(await this.http.getJson("/fapi/v1/klines", { symbol: inst.venueSymbol, interval: "1h", limit: n }).catch(this.fapiError(base)), inst),
    );
  }
}

/** Most rows `/fapi/v1/fundingRate` returns per request (Binance and Aster docs: default 100, max 1000). */
const MAX_FUNDING_ROWS = 1000;

/** Top-trader statistic period requested by {@link BinancePerpClient.longShort}. */
const RATIO_PERIOD = "5m";

/** Most rows `/futures/data/openInterestHist` returns per request. */
export const BINANCE_MAX_OI_HIST = 500;
/** How long an open-interest history is reused (the statistic is hourly here). */
const OI_HIST_TTL_MS = 5 * 60_000;

/** Most candles `/fapi/v1/klines` returns per request. */
export const BINANCE_MAX_KLINES = 1500;

/**
 * Binance USDⓈ-M futures client (public REST, https://developers.binance.com/docs/derivatives/usds-margined-futures/general-info):
 * USDT-margined perpetuals in status TRADING only.
 * Endpoints: `/fapi/v1/exchangeInfo`, `/fapi/v1/fundingInfo` (both cached with the instruments),
 * `/fapi/v1/premiumIndex`, `/fapi/v1/fundingRate`, `/fapi/v1/openInterest`,
 * `/futures/data/topLongShortPositionRatio`, `/futures/data/openInterestHist`, `/fapi/v1/klines`, and spot
 * `/api/v3/ticker/price`.
 * Records are per ONE coin (`1000PEPEUSDT` multiplier undone).
 * Errors: see {@link VenueHttpClient}; an unlisted base or `-1121 Invalid symbol` → `NOT_FOUND`;
 * HTTP 451 (restricted location) → `UPSTREAM_UNAVAILABLE`; other refusals → `UPSTREAM_ERROR`.
 */
export class BinancePerpClient extends FapiPerpClient implements PerpVenueClient {
  private readonly spot: VenueHttpClient;
  protected readonly maxKlines = BINANCE_MAX_KLINES;

  constructor(baseUrl: string, opts: BinanceClientOptions) {
    const { fapi, spot } = BINANCE_ENDPOINTS.rest;
    super(BINANCE, baseUrl, opts, { callsPerMin: fapi.callsPerMin, listing: "USDT perpetual" });
    this.spot = perpHttpClient(BINANCE, opts.spotBaseUrl ?? spot.url, { ...opts, callsPerMin: opts.spotCallsPerMin }, { callsPerMin: spot.callsPerMin });
  }

  /** Latest 5m top-trader position ratio (`topLongShortPositionRatio`), or null when Binance has none. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/futures/data/topLongShortPositionRatio", { symbol: inst.venueSymbol, period: RATIO_PERIOD, limit: 1 }).catch(mapError(base));
    return parseTopLongShortPositionRatio(raw, inst, RATIO_PERIOD);
  }

  private readonly oiHistCache = memoizeKeyed(OI_HIST_TTL_MS, 1000, async (a: { base: string; limit: number }) => {
    const { inst } = await this.require(a.base);
    const raw = await this.http.getJson("/futures/data/openInterestHist", { symbol: inst.venueSymbol, period: "1h", limit: a.limit }).catch(mapError(a.base));
    return parseOpenInterestHist(raw, inst).slice(-a.limit);
  });

  /**
   * The last `limit` (at most {@link BINANCE_MAX_OI_HIST}) hourly open-interest points from
   * `/futures/data/openInterestHist?period=1h` (Binance keeps 30 days), oldest first; per ONE coin.
   * `limit` < 1 → []. Kept for 5 minutes per symbol and limit. @throws AppError NOT_FOUND when not listed.
   */
  openInterestHistory(base: string, limit: number): Promise<OpenInterestPoint[]> {
    if (!(limit >= 1)) return Promise.resolve([]);
    return this.oiHistCache(`${base.trim().toUpperCase()}:${Math.min(BINANCE_MAX_OI_HIST, Math.floor(limit))}`, { base, limit: Math.min(BINANCE_MAX_OI_HIST, Math.floor(limit)) });
  }

  /**
   * Spot price of `<base>USDT` in USDT per coin (`GET /api/v3/ticker/price`), for spot/perp basis.
   * @throws AppError NOT_FOUND when Binance spot does not list the pair.
   */
  async spotPrice(base: string): Promise<number> {
    const symbol = `${base.trim().toUpperCase()}USDT`;
    const raw = await this.spot.getJson("/api/v3/ticker/price", { symbol }).catch(mapError(base, "spot"));
    return parseSpotTickerPrice(raw);
  }

  protected fapiError(base?: string): (err: unknown) => never {
    return mapError(base);
  }

  protected async loadCatalog(): Promise<FapiCatalog> {
    const [infoRaw, fundingInfoRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/exchangeInfo").catch(mapError()),
      this.http.getJson("/fapi/v1/fundingInfo").catch(mapError()),
    ]);
    return { ...indexCatalog(parseExchangeInfo(infoRaw)), intervals: parseFundingInfo(fundingInfoRaw) };
  }
}

/** Maps a refused Binance request to an {@link AppError}. */
function mapError(base?: string, market: "futures" | "spot" = "futures") {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", "binance refuses requests from this server's location (HTTP 451)");
    if (err.status === 418) throw new AppError("UPSTREAM_UNAVAILABLE", "binance has temporarily banned this IP for exceeding its rate limit", { retryAfterSec: 120 });
    const body = parseBinanceError(err.body);
    if (body?.code === -1121 && base !== undefined) {
      throw new AppError("NOT_FOUND", market === "spot" ? `binance spot does not list ${base.toUpperCase()}USDT` : `binance does not list ${base}`);
    }
    throw new AppError("UPSTREAM_ERROR", `binance refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
