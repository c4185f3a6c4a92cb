import { AppError } from "../../errors.js";
import { VenueHttpError, type VenueHttpClient } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase, perpHttpClient } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import { BITGET_ENDPOINTS } from "./endpoints.js";
import {
  BITGET_PRODUCT_TYPE,
  BitgetEnvelope,
  bitgetEnvelopeError,
  parseAccountLongShort,
  parseCandles,
  parseContracts,
  parseFundingHistory,
  parsePositionTiers,
  parseTickerOpenInterest,
  parseTickers,
} from "./parse.js";
import { newestFundingPoints } from "../perp/funding-points.js";

/** Venue key of Bitget in status, metrics and errors. */
export const BITGET = "bitget";

/** Options of {@link BitgetPerpClient} (`callsPerMin` defaults to `BITGET_ENDPOINTS.rest.api`, endpoints.ts). */
export type BitgetClientOptions = PerpClientOptions;

/** `history-fund-rate` serves at most 100 rows per page (`pageSize`, docs); we follow at most this many pages. */
const HISTORY_PAGE_SIZE = 100;
const MAX_HISTORY_PAGES = 5;
/** `candles` returns at most 1000 rows per call (`limit`). */
export const BITGET_MAX_CANDLES = 1000;

const productType = BITGET_PRODUCT_TYPE;

/**
 * Bitget API v2 mix client, `productType=USDT-FUTURES` perpetuals in status normal, with `fundingIntervalHours`
 * from the contract list (public REST, https://www.bitget.com/api-doc/contract/intro). Records are per ONE coin.
 * Endpoints: `/api/v2/mix/market/contracts` (cached), `/tickers` (all funding in one call), `/ticker` (one
 * symbol: funding, mark/index, open interest `holdingAmount`), `/history-fund-rate` (paged), `/account-long-short`
 * (its own 1 request/s budget), `/query-position-lever` (tiers), `/candles` (1H).
 * Bitget publishes no separate next-rate estimate (its current rate is the accruing one) and no open-interest
 * history (`open-interest` is a snapshot), so the client has no `predictedFunding` or `openInterestHistory` and
 * answers leave Bitget out of those figures with the reason.
 * Errors: see {@link VenueHttpClient}; an unlisted base or code 40034 on a symbol request → `NOT_FOUND`;
 * HTTP 403 (ban or geo-block) → `UPSTREAM_UNAVAILABLE`; other failures → `UPSTREAM_ERROR`.
 */
export class BitgetPerpClient extends PerpClientBase implements PerpVenueClient {
  /**
   * The `account-long-short` client: same base URL, 1 request/s (`BITGET_ENDPOINTS.rest.ratio`); a call over that
   * budget fails at once with UPSTREAM_UNAVAILABLE (Retry-After) instead of waiting.
   */
  private readonly ratioHttp: VenueHttpClient;

  constructor(baseUrl: string, opts: BitgetClientOptions) {
    const { callsPerMin, windowSec } = BITGET_ENDPOINTS.rest.api;
    super(BITGET, baseUrl, opts, { callsPerMin, windowSec, listing: "USDT perpetual" });
    const ratio = BITGET_ENDPOINTS.rest.ratio;
    // No waiting for that budget: an answer from eight venues must not sit out Bitget's second (the bench's
    // cache misses did: +1 s each); over budget, Bitget is left out of the answer with the reason, at once.
    this.ratioHttp = perpHttpClient(BITGET, baseUrl, { ...opts, callsPerMin: undefined, maxWaitMs: 0 }, { callsPerMin: ratio.callsPerMin, windowSec: ratio.windowSec });
  }

  /** Funding of every listed perpetual: one `tickers?productType=USDT-FUTURES` call. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/api/v2/mix/market/tickers", { productType }).catch(mapError())]);
    return parseTickers(raw, cat.bySymbol);
  }

  /** Funding of one perpetual from `ticker?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const snap = parseTickers(await this.ticker(inst), cat.bySymbol, { symbol: inst.venueSymbol })[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `bitget sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `history-fund-rate` (100 per page, pages followed up to `limit`), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(HISTORY_PAGE_SIZE * MAX_HISTORY_PAGES, Math.floor(limit));
    // pageNo pages are fixed-size windows, so every page asks the same pageSize.
    const pageSize = Math.min(HISTORY_PAGE_SIZE, n);
    const out: FundingPoint[] = [];
    for (let pageNo = 1; out.length < n && pageNo <= MAX_HISTORY_PAGES; pageNo++) {
      const raw = await this.http.getJson("/api/v2/mix/market/history-fund-rate", { symbol: inst.venueSymbol, productType, pageSize, pageNo }).catch(mapError(inst.venueSymbol));
      const { points, rows } = parseFundingHistory(raw, inst);
      out.push(...points);
      if (rows < pageSize) break;
    }
    return newestFundingPoints(out, n);
  }

  /** Open interest in coins and USD from `ticker?symbol=` (`holdingAmount` × `markPrice`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    return parseTickerOpenInterest(await this.ticker(inst), inst);
  }

  /** Latest 5-minute large-trader account ratio (`account-long-short`), or null when the venue sends none. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.ratioHttp.getJson("/api/v2/mix/market/account-long-short", { symbol: inst.venueSymbol, period: "5m" }).catch(mapError(inst.venueSymbol));
    return parseAccountLongShort(raw, inst, "5m");
  }

  /**
   * Maintenance-margin tiers, first tier first, from `query-position-lever`: USDT value bounds, max leverage and
   * the maintenance rate as a fraction. Kept for an hour per symbol. @throws AppError NOT_FOUND when not listed.
   */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, async (inst) =>
      parsePositionTiers(await this.http.getJson("/api/v2/mix/market/query-position-lever", { symbol: inst.venueSymbol, productType }).catch(mapError(inst.venueSymbol)), inst),
    );
  }

  /** The last `limit` hourly candles (`candles?granularity=1H`, at most 1000), oldest first. @throws AppError NOT_FOUND when not listed. */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, BITGET_MAX_CANDLES, async (inst, n) =>
      parseCandles(
        await this.http.getJson("/api/v2/mix/market/candles", { symbol: inst.venueSymbol, productType, granularity: "1H", limit: n }).catch(mapError(inst.venueSymbol)),
        inst,
      ),
    );
  }

  protected async loadCatalog(): Promise<Catalog> {
    const raw = await this.http.getJson("/api/v2/mix/market/contracts", { productType }).catch(mapError());
    return indexCatalog(parseContracts(raw));
  }

  /** One `ticker?symbol=` body (funding and open interest share it; concurrent identical calls share one request). */
  private ticker(inst: PerpInstrument): Promise<unknown> {
    return this.http.getJson("/api/v2/mix/market/ticker", { symbol: inst.venueSymbol, productType }).catch(mapError(inst.venueSymbol));
  }
}

/**
 * Maps a refused Bitget request to an {@link AppError}: a JSON error body with code 40034 on a symbol request →
 * NOT_FOUND (Bitget answers unknown parameters with HTTP 400 and that body); HTTP 403 (ban or geo-block) →
 * UPSTREAM_UNAVAILABLE; anything else → UPSTREAM_ERROR with the venue's code when it sent one.
 */
export function mapError(symbol?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 403) throw new AppError("UPSTREAM_UNAVAILABLE", "bitget refuses requests from this server (HTTP 403)", { retryAfterSec: 60 });
    const env = parseErrorBody(err.body);
    if (env) throw bitgetEnvelopeError(env.code, env.msg, `HTTP ${err.status}`, symbol);
    throw new AppError("UPSTREAM_ERROR", `bitget refused the request (HTTP ${err.status})`);
  };
}

function parseErrorBody(body: string): { code: string; msg?: string } | undefined {
  try {
    const r = BitgetEnvelope.safeParse(JSON.parse(body));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
