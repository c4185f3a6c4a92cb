import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, PerpVenueClient, PredictedFunding } from "../perp/types.js";
import { parseBinanceError, parseFundingRateHistory, parseKlines, parseOpenInterest } from "../binance/parse.js";
import { ASTER_ENDPOINTS } from "./endpoints.js";
import { asterPredicted, parseAsterExchangeInfo, parseAsterFundingInfo, parseAsterPremiumIndex } from "./parse.js";

/** Venue key of Aster futures in status, metrics and errors. */
export const ASTER = "aster";

/** Most candles `/fapi/v1/klines` returns per request (docs: default 500, max 1500). */
export const ASTER_MAX_KLINES = 1500;
/** Most rows `/fapi/v1/fundingRate` returns per request (docs: default 100, max 1000). */
const MAX_FUNDING_ROWS = 1000;

interface AsterCatalog extends Catalog {
  /** fundingInfo: symbol → interval hours; a symbol not listed settles every 8 h. */
  intervals: Map<string, number>;
}

/**
 * Aster futures client (Binance-compatible public REST, https://github.com/asterdex/api-docs
 * aster-finance-futures-api.md): USDT-margined perpetuals in status TRADING.
 * Endpoints: `/fapi/v1/exchangeInfo` and `/fapi/v1/fundingInfo` (both cached with the instruments),
 * `/fapi/v1/premiumIndex` (funding, mark price, the predicted rate), `/fapi/v1/fundingRate`,
 * `/fapi/v1/openInterest` (not in Aster's docs, served like Binance's), `/fapi/v1/klines`.
 * Records are per ONE coin (a `1000<COIN>USDT` multiplier undone).
 * What Aster does NOT publish, so answers say `no_public_data`: long/short ratios (no `/futures/data/*`, so
 * {@link longShort} is null), open-interest history (no `openInterestHist`: `openInterestHistory` is omitted) and
 * maintenance-margin tiers (`leverageBracket` is a signed USER_DATA endpoint: `marginTiers` is omitted).
 * Errors: see `VenueHttpClient`; an unlisted base or `-1121 Invalid symbol` → `NOT_FOUND`; HTTP 451 (restricted
 * location), 418 (IP ban) and 403 (WAF block) → `UPSTREAM_UNAVAILABLE`; other refusals → `UPSTREAM_ERROR`.
 */
export class AsterPerpClient extends PerpClientBase<AsterCatalog> implements PerpVenueClient {
  constructor(baseUrl: string, opts: PerpClientOptions) {
    super(ASTER, baseUrl, opts, { callsPerMin: ASTER_ENDPOINTS.rest.fapi.callsPerMin, listing: "USDT perpetual" });
  }

  /** Funding of every listed perpetual: one `premiumIndex` call without symbol. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/fapi/v1/premiumIndex").catch(mapError())]);
    return parseAsterPremiumIndex(raw, cat.bySymbol, cat.intervals);
  }

  /** Funding of one perpetual from `premiumIndex?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const raw = await this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base));
    const snap = parseAsterPremiumIndex(raw, cat.bySymbol, cat.intervals)[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `aster sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `/fapi/v1/fundingRate` (limit ≤ 1000), newest first; Aster's rows carry no mark price (null). */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(MAX_FUNDING_ROWS, Math.floor(limit));
    const raw = await this.http.getJson("/fapi/v1/fundingRate", { symbol: inst.venueSymbol, limit: n }).catch(mapError(base));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins (`/fapi/v1/openInterest`, venue units × multiplier) and USD (× mark price from `premiumIndex`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { cat, inst } = await this.require(base);
    const [oiRaw, piRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/openInterest", { symbol: inst.venueSymbol }).catch(mapError(base)),
      this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base)),
    ]);
    const mark = parseAsterPremiumIndex(piRaw, cat.bySymbol, cat.intervals)[0]?.markPrice;
    if (mark === undefined || mark === null) throw new AppError("UPSTREAM_ERROR", `aster sent no mark price for ${inst.venueSymbol}`);
    return parseOpenInterest(oiRaw, inst, mark);
  }

  /** Aster publishes no long/short ratio: always null (after checking the base is listed). @throws AppError NOT_FOUND when not listed. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    await this.require(base);
    return null;
  }

  /**
   * Aster's own estimate of the next funding rate: `premiumIndex.lastFundingRate` for the settlement at
   * `nextFundingTime` (fraction per the symbol's interval), or null when it names no next settlement.
   * @throws AppError NOT_FOUND when not listed.
   */
  async predictedFunding(base: string): Promise<PredictedFunding | null> {
    return asterPredicted(await this.funding(base));
  }

  /**
   * The last `limit` (at most {@link ASTER_MAX_KLINES}) hourly last-price candles from `/fapi/v1/klines?interval=1h`,
   * oldest first, the open hour included; per ONE coin, volume in coins and USDT (`quoteVol`). `limit` < 1 → [].
   * Kept for a minute per symbol and limit. @throws AppError NOT_FOUND when not listed (or `-1121 Invalid symbol`).
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, ASTER_MAX_KLINES, async (inst, n) =>
      parseKlines(await this.http.getJson("/fapi/v1/klines", { symbol: inst.venueSymbol, interval: "1h", limit: n }).catch(mapError(base)), inst),
    );
  }

  protected async loadCatalog(): Promise<AsterCatalog> {
    const [infoRaw, fundingInfoRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/exchangeInfo").catch(mapError()),
      this.http.getJson("/fapi/v1/fundingInfo").catch(mapError()),
    ]);
    return { ...indexCatalog(parseAsterExchangeInfo(infoRaw)), intervals: parseAsterFundingInfo(fundingInfoRaw) };
  }
}

/** Maps a refused Aster request to an {@link AppError}. */
function mapError(base?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", "aster refuses requests from this server's location (HTTP 451)");
    if (err.status === 418) throw new AppError("UPSTREAM_UNAVAILABLE", "aster has banned this IP for exceeding its rate limit (HTTP 418)", { retryAfterSec: 120 });
    if (err.status === 403) throw new AppError("UPSTREAM_UNAVAILABLE", "aster's web application firewall blocked the request (HTTP 403)");
    const body = parseBinanceError(err.body);
    if (body?.code === -1121 && base !== undefined) throw new AppError("NOT_FOUND", `aster does not list ${base}`);
    throw new AppError("UPSTREAM_ERROR", `aster refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
