import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import { BYBIT_ENDPOINTS } from "./endpoints.js";
import { parseAccountRatio, parseFundingHistory, parseInstrumentsInfo, parseRiskLimit, parseTickerOpenInterest, parseTickers } from "./parse.js";

/** Venue key of Bybit in status, metrics and errors. */
export const BYBIT = "bybit";

/** Options of {@link BybitPerpClient} (`callsPerMin` defaults to `BYBIT_ENDPOINTS.rest.api`, endpoints.ts). */
export type BybitClientOptions = PerpClientOptions;

/** At most this many instruments-info pages (1000 rows each) are followed. */
const MAX_PAGES = 10;

/**
 * Bybit v5 client, `category=linear` USDT perpetuals in status Trading, with `fundingIntervalHours`
 * (public REST, https://bybit-exchange.github.io/docs/v5/intro).
 * Endpoints: `/v5/market/instruments-info` (cursor-paginated, cached), `/v5/market/tickers`,
 * `/v5/market/funding/history`, `/v5/market/account-ratio`, `/v5/market/risk-limit`. Records are per ONE coin.
 * Errors: see {@link VenueHttpClient}; an unlisted base or retCode 10001 on a symbol request →
 * `NOT_FOUND`; HTTP 403 (rate-limit ban or geo-block) → `UPSTREAM_UNAVAILABLE`; other failures →
 * `UPSTREAM_ERROR`.
 */
export class BybitPerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: BybitClientOptions) {
    const { callsPerMin, windowSec } = BYBIT_ENDPOINTS.rest.api;
    super(BYBIT, baseUrl, opts, { callsPerMin, windowSec, listing: "USDT perpetual" });
  }

  /** Funding of every listed perpetual: one `tickers?category=linear` call. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/v5/market/tickers", { category: "linear" }).catch(mapError)]);
    return parseTickers(raw, cat.bySymbol);
  }

  /** Funding of one perpetual from `tickers?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const raw = await this.http.getJson("/v5/market/tickers", { category: "linear", symbol: inst.venueSymbol }).catch(mapError);
    const snap = parseTickers(raw, cat.bySymbol, { symbol: inst.venueSymbol })[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `bybit sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `/v5/market/funding/history` (limit ≤ 200), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(200, Math.floor(limit));
    const raw = await this.http.getJson("/v5/market/funding/history", { category: "linear", symbol: inst.venueSymbol, limit: n }).catch(mapError);
    return parseFundingHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins and USD from `tickers?symbol=` (`openInterest`, `openInterestValue`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/v5/market/tickers", { category: "linear", symbol: inst.venueSymbol }).catch(mapError);
    return parseTickerOpenInterest(raw, inst);
  }

  /** Latest 5-minute all-accounts ratio (`account-ratio`; Bybit has no public top-trader ratio), or null. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/v5/market/account-ratio", { category: "linear", symbol: inst.venueSymbol, period: "5min", limit: 1 }).catch(mapError);
    return parseAccountRatio(raw, inst, "5m");
  }

  /**
   * Maintenance-margin tiers (risk limits), first tier first, from `/v5/market/risk-limit?category=linear&symbol=`:
   * USDT notional bounds (`riskLimitValue`), max leverage and the maintenance rate as a fraction. Kept for an
   * hour per symbol ({@link TIERS_TTL_MS}).
   * @throws AppError NOT_FOUND when not listed (or retCode 10001).
   */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, async (inst) =>
      parseRiskLimit(await this.http.getJson("/v5/market/risk-limit", { category: "linear", symbol: inst.venueSymbol }).catch(mapError), inst),
    );
  }

  protected async loadCatalog(): Promise<Catalog> {
    const list: PerpInstrument[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const raw = await this.http.getJson("/v5/market/instruments-info", { category: "linear", limit: 1000, cursor }).catch(mapError);
      const { instruments, nextPageCursor } = parseInstrumentsInfo(raw);
      list.push(...instruments);
      if (!nextPageCursor || nextPageCursor === cursor) break;
      cursor = nextPageCursor;
    }
    return indexCatalog(list);
  }
}

/** Maps a refused Bybit request to an {@link AppError} (403: JSON "too frequent" = rate ban, HTML = geo-block). */
function mapError(err: unknown): never {
  if (!(err instanceof VenueHttpError)) throw err;
  if (err.status === 403) {
    if (/too frequent/i.test(err.body)) {
      throw new AppError("UPSTREAM_UNAVAILABLE", "bybit rate limit exceeded (HTTP 403); backing off", { retryAfterSec: 600 });
    }
    throw new AppError("UPSTREAM_UNAVAILABLE", "bybit refuses requests from this server's location (HTTP 403)");
  }
  throw new AppError("UPSTREAM_ERROR", `bybit refused the request (HTTP ${err.status})`);
}
