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

interface BinanceCatalog extends Catalog {
  /** fundingInfo: adjusted symbols only; others are 8 h. */
  intervals: Map<string, number>;
}

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
export class BinancePerpClient extends PerpClientBase<BinanceCatalog> implements PerpVenueClient {
  private readonly spot: VenueHttpClient;

  constructor(baseUrl: string, opts: BinanceClientOptions) {
    const { fapi, spot } = BINANCE_ENDPOINTS.rest;
    super(BINANCE, baseUrl, opts, { callsPerMin: fapi.callsPerMin, listing: "USDT perpetual" });
    this.spot = perpHttpClient(BINANCE, opts.spotBaseUrl ?? spot.url, { ...opts, callsPerMin: opts.spotCallsPerMin }, { callsPerMin: spot.callsPerMin });
  }

  /** Funding of every listed perpetual: one `premiumIndex` call (weight 10). */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/fapi/v1/premiumIndex").catch(mapError())]);
    return parsePremiumIndex(raw, cat.bySymbol, cat.intervals);
  }

  /** Funding of one perpetual from `premiumIndex?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const raw = await this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base));
    const snap = parsePremiumIndex(raw, cat.bySymbol, cat.intervals)[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `binance sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `/fapi/v1/fundingRate` (limit ≤ 1000), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(1000, Math.floor(limit));
    const raw = await this.http.getJson("/fapi/v1/fundingRate", { symbol: inst.venueSymbol, limit: n }).catch(mapError(base));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins (`/fapi/v1/openInterest`) and USD (× mark price from `premiumIndex`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { cat, inst } = await this.require(base);
    const [oiRaw, piRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/openInterest", { symbol: inst.venueSymbol }).catch(mapError(base)),
      this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base)),
    ]);
    const mark = parsePremiumIndex(piRaw, cat.bySymbol, cat.intervals)[0]?.markPrice;
    if (mark === undefined || mark === null) throw new AppError("UPSTREAM_ERROR", `binance sent no mark price for ${inst.venueSymbol}`);
    return parseOpenInterest(oiRaw, inst, mark);
  }

  /** Latest 5m top-trader position ratio (`topLongShortPositionRatio`), or null when Binance has none. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/futures/data/topLongShortPositionRatio", { symbol: inst.venueSymbol, period: RATIO_PERIOD, limit: 1 }).catch(mapError(base));
    return parseTopLongShortPositionRatio(raw, inst, RATIO_PERIOD);
  }

  /**
   * The last `limit` (at most {@link BINANCE_MAX_KLINES}) hourly last-price candles from `/fapi/v1/klines?interval=1h`,
   * oldest first, the current open hour included; per ONE coin (`1000PEPEUSDT` undone), volume in coins and USDT.
   * `limit` < 1 → []. Weight 1–10 by limit. Kept for a minute per symbol and limit ({@link CANDLES_TTL_MS}).
   * @throws AppError NOT_FOUND when not listed (or `-1121 Invalid symbol`).
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, BINANCE_MAX_KLINES, async (inst, n) =>
      parseKlines(await this.http.getJson("/fapi/v1/klines", { symbol: inst.venueSymbol, interval: "1h", limit: n }).catch(mapError(base)), inst),
    );
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

  protected async loadCatalog(): Promise<BinanceCatalog> {
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
