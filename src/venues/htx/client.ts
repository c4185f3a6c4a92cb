import { memoize } from "../../lib/memo.js";
import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import { newestFundingPoints } from "../perp/funding-points.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, OpenInterestPoint, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import { HTX_ENDPOINTS } from "./endpoints.js";
import {
  parseAdjustFactor,
  parseContractInfo,
  parseElitePositionRatio,
  parseFunding,
  parseFundingHistory,
  parseHtxError,
  parseIndexPrices,
  parseKlines,
  parseMarkPriceKline,
  parseOpenInterest,
  parseOpenInterestHistory,
  parseSettlePeriods,
  refusalError,
} from "./parse.js";
import { HTX } from "./venue-id.js";

/** How long one all-contracts funding snapshot (rates and index prices) is reused. */
const SNAPSHOT_TTL_MS = 2_000;
/** `swap_elite_position_ratio` period of the long/short read. */
const RATIO_PERIOD = "5min";
/** Rows per `swap_historical_funding_rate` page (HTX's maximum, "50 at most"). */
export const HTX_FUNDING_PAGE = 50;
/** Most settled funding points one `fundingHistory` call reads: four pages. */
export const HTX_MAX_FUNDING_HISTORY = 4 * HTX_FUNDING_PAGE;
/** Most klines `/market/history/kline` returns per request ("[1,2000]"). */
export const HTX_MAX_CANDLES = 2000;
/** Most ticks `swap_his_open_interest` returns per request ("Data Range [1,200]"). */
export const HTX_MAX_OI_HISTORY = 200;

/** Options of {@link HtxPerpClient} (`callsPerMin` defaults to `HTX_ENDPOINTS.rest.api`, endpoints.ts). */
export type HtxClientOptions = PerpClientOptions;

const noPrices = () => new Map<string, number>();

/**
 * HTX USDT-margined swap client (public REST, https://www.htx.com/en-us/opend/newApiPages/; base `https://api.hbdm.com`).
 * `instruments` from `/linear-swap-api/v1/swap_contract_info?business_type=swap` with each contract's funding interval
 * (`settle_period` of `/swap_query_elements`, both cached for `instrumentsTtlMs`); `fundingAll` / `funding` from
 * `/swap_batch_funding_rate` (every contract in one call) and `/swap_index` (index prices), reused for 2 s, `funding`
 * adding the contract's mark price (`/index/market/history/linear_swap_mark_price_kline`, best effort);
 * `fundingHistory` from `/swap_historical_funding_rate` (pages of 50, at most 4); `openInterest` from
 * `/swap_open_interest`; `openInterestHistory` from `/swap_his_open_interest?period=60min` (≤ 200 hours); `longShort`
 * from `/swap_elite_position_ratio?period=5min` (top traders' positions); `marginTiers` from `/swap_adjustfactor`
 * (see {@link parseAdjustFactor}); `hourlyCandles` from `/linear-swap-ex/market/history/kline?period=60min`.
 * No `predictedFunding`: HTX settles funding in real time, its current rate is the one that settles, and the
 * `estimated_rate` field is deprecated (null).
 * Sizes are coins (contracts × `contract_size`), prices per ONE coin.
 * Errors: an unlisted base or codes 1013 / 1014 / 1332 → `NOT_FOUND`; code 1032 (HTX's rate limit) →
 * `UPSTREAM_UNAVAILABLE`; HTTP 403 / 451 → `UPSTREAM_UNAVAILABLE`; other refusals and bad bodies → `UPSTREAM_ERROR`
 * (see {@link VenueHttpClient} for transport errors).
 */
export class HtxPerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: HtxClientOptions) {
    const { callsPerMin, windowSec } = HTX_ENDPOINTS.rest.api;
    super(HTX, baseUrl, opts, { callsPerMin, windowSec, listing: "USDT swap" });
  }

  /** Funding of every swap with index prices, from one `swap_batch_funding_rate` and one `swap_index` read (reused for 2 s). */
  private readonly fundingSnapshot = memoize(SNAPSHOT_TTL_MS, async (): Promise<FundingSnapshot[]> => {
    const [cat, raw, indexes] = await Promise.all([
      this.catalog(),
      this.http.getJson("/linear-swap-api/v1/swap_batch_funding_rate").catch(mapError()),
      // index prices are best effort: a funding answer without them still has its rates
      this.http.getJson("/linear-swap-api/v1/swap_index").then(parseIndexPrices).catch(noPrices),
    ]);
    return parseFunding(raw, cat.bySymbol, { indexes, now: Date.now() });
  });

  /** Funding of every USDT swap (mark prices null: HTX publishes them per contract only). */
  fundingAll(): Promise<FundingSnapshot[]> {
    return this.fundingSnapshot();
  }

  /**
   * Funding of one swap from the all-contracts snapshot, with its mark price (the newest 1-minute mark-price kline;
   * null when that read fails). @throws AppError NOT_FOUND when not listed.
   */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    const [snaps, mark] = await Promise.all([this.fundingSnapshot(), this.markPrice(inst).catch(() => null)]);
    const snap = snaps.find((f) => f.venueSymbol === inst.venueSymbol);
    if (!snap) throw new AppError("UPSTREAM_ERROR", `htx sent no funding for ${inst.venueSymbol}`);
    return mark === null ? snap : { ...snap, markPrice: Number((mark / inst.multiplier).toPrecision(15)) };
  }

  /** The contract's current mark price per contract-named unit (newest 1-minute mark-price kline close), or null. */
  private async markPrice(inst: PerpInstrument): Promise<number | null> {
    const raw = await this.http
      .getJson("/index/market/history/linear_swap_mark_price_kline", { contract_code: inst.venueSymbol, period: "1min", size: 1 })
      .catch(mapError(inst.venueSymbol));
    return parseMarkPriceKline(raw, inst.venueSymbol);
  }

  /** Settled funding, newest first, at most `limit` (≤ {@link HTX_MAX_FUNDING_HISTORY}) points, from pages of 50 read side by side. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(HTX_MAX_FUNDING_HISTORY, Math.floor(limit));
    const pages = Math.ceil(n / HTX_FUNDING_PAGE);
    const read = async (page: number) => {
      const raw = await this.http
        .getJson("/linear-swap-api/v1/swap_historical_funding_rate", { contract_code: inst.venueSymbol, page_index: page, page_size: HTX_FUNDING_PAGE })
        .catch(mapError(inst.venueSymbol));
      return parseFundingHistory(raw, inst).points;
    };
    const all = await Promise.all(Array.from({ length: pages }, (_, i) => read(i + 1)));
    return newestFundingPoints(all.flat(), n);
  }

  /** Open interest from `swap_open_interest` (`amount` coins, `value` USDT). @throws AppError NOT_FOUND when not listed. */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/linear-swap-api/v1/swap_open_interest", { contract_code: inst.venueSymbol, business_type: "swap" }).catch(mapError(inst.venueSymbol));
    return parseOpenInterest(raw, inst);
  }

  /** Hourly open interest from `swap_his_open_interest` (contracts × contract_size, USDT value), oldest first, at most `limit` (≤ 200) points. */
  async openInterestHistory(base: string, limit: number): Promise<OpenInterestPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(HTX_MAX_OI_HISTORY, Math.floor(limit));
    const raw = await this.http
      .getJson("/linear-swap-api/v1/swap_his_open_interest", { contract_code: inst.venueSymbol, period: "60min", amount_type: 1, size: n })
      .catch(mapError(inst.venueSymbol));
    return parseOpenInterestHistory(raw, inst).slice(-n);
  }

  /** The newest 5-minute top-trader position ratio (`swap_elite_position_ratio`), or null when HTX has no row. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http
      .getJson("/linear-swap-api/v1/swap_elite_position_ratio", { contract_code: inst.venueSymbol, period: RATIO_PERIOD })
      .catch(mapError(inst.venueSymbol));
    return parseElitePositionRatio(raw, inst, "5m");
  }

  /**
   * Maintenance-margin tiers from `swap_adjustfactor` (see {@link parseAdjustFactor}), bounds in USD at the current
   * mark price (index price when HTX sent no mark), fetched alongside. Kept for an hour per symbol.
   * @throws AppError NOT_FOUND when not listed; UPSTREAM_ERROR when no price is available.
   */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, async (inst) => {
      const [raw, snap] = await Promise.all([
        this.http.getJson("/linear-swap-api/v1/swap_adjustfactor", { contract_code: inst.venueSymbol }).catch(mapError(inst.venueSymbol)),
        this.funding(base),
      ]);
      const price = snap.markPrice ?? snap.indexPrice;
      if (price === null) throw new AppError("UPSTREAM_ERROR", `htx sent no mark or index price for ${inst.venueSymbol}`);
      return parseAdjustFactor(raw, inst, price);
    });
  }

  /**
   * The last `limit` (≤ 2000) hourly last-price candles of `/linear-swap-ex/market/history/kline?period=60min`, oldest
   * first, the current hour included; prices per coin, volumes in coins and USDT. Kept for a minute.
   * @throws AppError NOT_FOUND when not listed.
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, HTX_MAX_CANDLES, async (inst, n) => {
      const raw = await this.http.getJson("/linear-swap-ex/market/history/kline", { contract_code: inst.venueSymbol, period: "60min", size: n }).catch(mapError(inst.venueSymbol));
      return parseKlines(raw, inst);
    });
  }

  /** The swaps of `swap_contract_info` with their funding intervals (`swap_query_elements`), both read together. */
  protected async loadCatalog(): Promise<Catalog> {
    const [info, elements] = await Promise.all([
      this.http.getJson("/linear-swap-api/v1/swap_contract_info", { business_type: "swap" }).catch(mapError()),
      this.http.getJson("/linear-swap-api/v1/swap_query_elements").catch(mapError()),
    ]);
    return indexCatalog(parseContractInfo(info, parseSettlePeriods(elements)));
  }
}

/** Maps a refused HTX request (HTTP 4xx, possibly with an HTX error body) to an {@link AppError}. */
export function mapError(contract?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 403 || err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", `htx refuses requests from this server (HTTP ${err.status})`, { retryAfterSec: 60 });
    const body = parseHtxError(err.body);
    if (body) throw refusalError(`HTTP ${err.status}`, body, contract);
    if (contract !== undefined && err.status === 404) throw new AppError("NOT_FOUND", `htx does not list ${contract}`);
    throw new AppError("UPSTREAM_ERROR", `htx refused the request (HTTP ${err.status})`);
  };
}
