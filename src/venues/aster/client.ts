import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { indexCatalog, type PerpClientOptions } from "../perp/client-base.js";
import type { LongShortRatio, PerpVenueClient, PredictedFunding } from "../perp/types.js";
import { type FapiCatalog, FapiPerpClient } from "../binance/client.js";
import { parseBinanceError } from "../binance/parse.js";
import { ASTER_ENDPOINTS } from "./endpoints.js";
import { asterPredicted, parseAsterExchangeInfo, parseAsterFundingInfo } from "./parse.js";

/** Venue key of Aster futures in status, metrics and errors. */
export const ASTER = "aster";

/** Most candles `/fapi/v1/klines` returns per request (docs: default 500, max 1500). */
export const ASTER_MAX_KLINES = 1500;

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
export class AsterPerpClient extends FapiPerpClient implements PerpVenueClient {
  protected readonly maxKlines = ASTER_MAX_KLINES;

  constructor(baseUrl: string, opts: PerpClientOptions) {
    super(ASTER, baseUrl, opts, { callsPerMin: ASTER_ENDPOINTS.rest.fapi.callsPerMin, listing: "USDT perpetual" });
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

  protected fapiError(base?: string): (err: unknown) => never {
    return mapError(base);
  }

  protected async loadCatalog(): Promise<FapiCatalog> {
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
