import { AppError } from "../../errors.js";
import { memoize } from "../../lib/memo.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type PerpClientOptions, PerpClientBase, indexCatalog, type Catalog } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, OpenInterestPoint, PerpVenueClient, PredictedFunding } from "../perp/types.js";
import { DYDX_ENDPOINTS } from "./endpoints.js";
import {
  indexerErrorMessage,
  parseCandles,
  parseFunding,
  parseFundingHistory,
  parseInstruments,
  parseMarginTiers,
  parseOpenInterest,
  parseOpenInterestHistory,
  parseSparklineLast,
  predictedOf,
} from "./parse.js";
import { DYDX } from "./venue-id.js";

/** How long one `/perpetualMarkets` (and `/sparklines`) snapshot of every market is reused. */
export const DYDX_SNAPSHOT_TTL_MS = 2_000;
/** The indexer's largest `limit` (comlink `API_LIMIT_V4`): the longest funding, candle and OI history served. */
export const DYDX_MAX_ROWS = 1000;
/** Longest pause the indexer's rate-limit headers may impose on us (its window is 10 s). */
const MAX_LIMIT_PAUSE_MS = 10_000;

/** Options of {@link DydxPerpClient} (`callsPerMin` defaults to `DYDX_ENDPOINTS.rest.api`, endpoints.ts). */
export type DydxClientOptions = PerpClientOptions;

/**
 * How long the indexer's `RateLimit-Remaining` / `RateLimit-Reset` headers ask us to stop: until the reset (epoch ms,
 * at most 10 s away) when nothing remains, else 0 (comlink's rate limiter sets both on every answer).
 */
export function dydxLimitPause(headers: Headers, nowMs: number): number {
  const remaining = Number(headers.get("ratelimit-remaining") ?? Number.NaN);
  if (!(remaining <= 0)) return 0;
  const reset = Number(headers.get("ratelimit-reset") ?? Number.NaN);
  return Number.isFinite(reset) && reset > nowMs ? Math.min(MAX_LIMIT_PAUSE_MS, reset - nowMs) : 0;
}

/**
 * dYdX v4 client over the public indexer (`https://indexer.dydx.trade/v4`, docs/methods/venues/dydx.md): USDC-margined
 * `<BASE>-USD` perpetuals, sizes in coins, funding hourly. Requests: `/perpetualMarkets` (instruments, funding, predicted
 * funding, open interest and margin fractions, one snapshot of every market reused for 2 s), `/sparklines` (the
 * perpetual's last trade price, as the mark price), `/historicalFunding/{ticker}`, `/candles/perpetualMarkets/{ticker}`
 * (hourly candles and open-interest history). dYdX publishes no long/short ratio ({@link longShort} resolves to null).
 * Errors: an unlisted base → `NOT_FOUND` (an indexer 404 too); HTTP 403 / 451 → `UPSTREAM_UNAVAILABLE`; anything else
 * → `UPSTREAM_ERROR` (see {@link VenueHttpClient} for 429 and 5xx retries).
 */
export class DydxPerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: DydxClientOptions) {
    const { callsPerMin, windowSec } = DYDX_ENDPOINTS.rest.api;
    super(DYDX, baseUrl, opts, { callsPerMin, windowSec, listing: "perpetual", limitPause: dydxLimitPause });
  }

  /** One `/perpetualMarkets` body (every market), reused for {@link DYDX_SNAPSHOT_TTL_MS}. */
  private readonly markets = memoize(DYDX_SNAPSHOT_TTL_MS, async () => (await this.http.getJson("/perpetualMarkets").catch(mapError())) as object);

  /**
   * Last trade price per ticker (`/sparklines?timePeriod=ONE_DAY`), reused for {@link DYDX_SNAPSHOT_TTL_MS}. A failed
   * read gives no prices (funding is answered without a mark price rather than not at all).
   */
  private readonly lastPrices = memoize(DYDX_SNAPSHOT_TTL_MS, async () => {
    try {
      return parseSparklineLast(await this.http.getJson("/sparklines", { timePeriod: "ONE_DAY" }));
    } catch {
      return new Map<string, number>();
    }
  });

  /** Hourly funding of every listed market: `/perpetualMarkets` and `/sparklines`, read side by side. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [raw, last] = await Promise.all([this.markets(), this.lastPrices()]);
    return parseFunding(raw, last);
  }

  /** Hourly funding of one market. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    const snap = (await this.fundingAll()).find((s) => s.venueSymbol === inst.venueSymbol);
    if (!snap) throw new AppError("NOT_FOUND", `dydx sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /**
   * The indexer's predicted rate for the hour settling next (`nextFundingRate`, fraction per hour).
   * @throws AppError NOT_FOUND when not listed.
   */
  async predictedFunding(base: string): Promise<PredictedFunding | null> {
    return predictedOf(await this.funding(base));
  }

  /**
   * Settled hourly funding, newest first, at most `limit` (capped at {@link DYDX_MAX_ROWS}) points: one
   * `/historicalFunding/{ticker}?limit=` read (the indexer answers newest first).
   */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(DYDX_MAX_ROWS, Math.floor(limit));
    const raw = await this.http.getJson(`/historicalFunding/${encodeURIComponent(inst.venueSymbol)}`, { limit: n }).catch(mapError(base));
    return parseFundingHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins and USD (at the oracle price) from `/perpetualMarkets`. */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const oi = parseOpenInterest(await this.markets()).find((o) => o.base === inst.base);
    if (!oi) throw new AppError("UPSTREAM_ERROR", `dydx sent no open interest for ${inst.venueSymbol}`);
    return oi;
  }

  /** dYdX publishes no long/short ratio: always null. */
  async longShort(_base: string): Promise<LongShortRatio | null> {
    return null;
  }

  /**
   * The one margin tier of a market (dYdX has no position-size tiers) from the current `/perpetualMarkets` snapshot:
   * max leverage 1 / the initial margin fraction in force, maintenance rate the maintenance margin fraction.
   * @throws AppError NOT_FOUND when not listed.
   */
  async marginTiers(base: string): Promise<MarginTier[]> {
    const { inst } = await this.require(base);
    return parseMarginTiers(await this.markets(), inst);
  }

  /** The last `limit` (≤ {@link DYDX_MAX_ROWS}) hourly last-trade candles, oldest first, the current hour included. */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, DYDX_MAX_ROWS, async (inst, n) => parseCandles(await this.candles(inst.venueSymbol, n, base), inst));
  }

  /** Hourly open interest (`startingOpenInterest` of the 1-hour candles), oldest first, at most `limit` (≤ {@link DYDX_MAX_ROWS}). */
  async openInterestHistory(base: string, limit: number): Promise<OpenInterestPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(DYDX_MAX_ROWS, Math.floor(limit));
    return parseOpenInterestHistory(await this.candles(inst.venueSymbol, n, base), inst).slice(-n);
  }

  private candles(ticker: string, limit: number, base: string): Promise<unknown> {
    return this.http.getJson(`/candles/perpetualMarkets/${encodeURIComponent(ticker)}`, { resolution: "1HOUR", limit }).catch(mapError(base));
  }

  protected async loadCatalog(): Promise<Catalog> {
    return indexCatalog(parseInstruments(await this.markets()));
  }
}

/** Maps a refused indexer request to an {@link AppError} (the indexer's message in `details`). */
function mapError(base?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    const msg = indexerErrorMessage(err.body);
    if (err.status === 403 || err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", `dydx refuses requests from this server (HTTP ${err.status})`);
    if (err.status === 404 && base !== undefined) throw new AppError("NOT_FOUND", `dydx lists no perpetual for ${base}`);
    throw new AppError("UPSTREAM_ERROR", `dydx refused the request (HTTP ${err.status})`, msg ? { details: msg } : {});
  };
}
