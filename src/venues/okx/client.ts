import { memoize } from "../../lib/memo.js";
import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { OKX_ENDPOINTS } from "./endpoints.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import {
  OKX_NO_SUCH_INSTRUMENT,
  okxInstFamily,
  parseCandles,
  parseFundingRate,
  parseFundingRateHistory,
  parseIndexTickers,
  parseInstruments,
  parseMarkPrices,
  parseOkxError,
  parseOpenInterestRaw,
  parsePositionTiers,
  parseTopTraderPositionRatio,
} from "./parse.js";

/** Venue key of OKX in status, metrics and errors. */
export const OKX = "okx";

/** How long one all-swaps funding snapshot is reused. */
const SNAPSHOT_TTL_MS = 2_000;

/** Options of {@link OkxPerpClient} (`callsPerMin` defaults to `OKX_ENDPOINTS.rest.api`, endpoints.ts). */
export type OkxClientOptions = PerpClientOptions;

const RATIO_PERIOD = "5m";
/** Most candles `/market/candles` returns per request. */
export const OKX_MAX_CANDLES = 300;
const empty = () => new Map<string, number>();

/**
 * OKX v5 client, live USDT-margined SWAP only, `contractSize` = ctVal × ctMult (public REST, https://www.okx.com/docs-v5/en/).
 * Endpoints: `/api/v5/public/instruments` (cached), `/public/funding-rate` (`instId=ANY` for all),
 * `/public/mark-price`, `/market/index-tickers`, `/public/funding-rate-history`, `/public/open-interest`,
 * `/rubik/stat/contracts/long-short-position-ratio-contract-top-trader`, `/public/position-tiers`, `/market/candles`.
 * Sizes are coins (contracts × ctVal).
 * Mark and index prices in funding snapshots are best effort (null when those calls fail).
 * Errors: see {@link VenueHttpClient}; an unlisted base or code 51001 → `NOT_FOUND`; other failures → `UPSTREAM_ERROR`.
 */
export class OkxPerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: OkxClientOptions) {
    const { callsPerMin, windowSec } = OKX_ENDPOINTS.rest.api;
    super(OKX, baseUrl, opts, { callsPerMin, windowSec, listing: "USDT swap" });
  }

  /** Funding of every swap (`funding-rate?instId=ANY`, all mark prices, all USDT index prices): one snapshot, reused for 2 s. */
  fundingAll(): Promise<FundingSnapshot[]> {
    return this.fundingSnapshot();
  }

  private readonly fundingSnapshot = memoize(SNAPSHOT_TTL_MS, async (): Promise<FundingSnapshot[]> => {
    const [cat, raw, marks, indexes] = await Promise.all([
      this.catalog(),
      this.http.getJson("/api/v5/public/funding-rate", { instId: "ANY" }).catch(mapError()),
      this.http
        .getJson("/api/v5/public/mark-price", { instType: "SWAP" })
        .then((r) => parseMarkPrices(r))
        .catch(empty),
      this.http.getJson("/api/v5/market/index-tickers", { quoteCcy: "USDT" }).then(parseIndexTickers).catch(empty),
    ]);
    return parseFundingRate(raw, cat.bySymbol, { marks, indexes });
  });

  /**
   * Funding of one swap, read from the all-swaps snapshot: three requests serve every symbol for 2 s,
   * which keeps per-symbol tools far under OKX's 20 requests / 2 s.
   */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    const snap = (await this.fundingSnapshot()).find((f) => f.venueSymbol === inst.venueSymbol);
    if (!snap) throw new AppError("UPSTREAM_ERROR", `okx sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `funding-rate-history` (limit ≤ 100; `realizedRate` preferred), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(100, Math.floor(limit));
    const raw = await this.http.getJson("/api/v5/public/funding-rate-history", { instId: inst.venueSymbol, limit: n }).catch(mapError(inst.venueSymbol));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest from `open-interest` (`oiCcy` coins, `oiUsd`; coins × mark price when `oiUsd` is missing). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const instId = inst.venueSymbol;
    const raw = await this.http.getJson("/api/v5/public/open-interest", { instType: "SWAP", instId }).catch(mapError(instId));
    const { oiCoins, oiUsd, time } = parseOpenInterestRaw(raw, inst);
    if (oiUsd !== null) return { venue: OKX, base: inst.base, oiCoins, oiUsd, time };
    const markRaw = await this.http.getJson("/api/v5/public/mark-price", { instType: "SWAP", instId }).catch(mapError(instId));
    const mark = parseMarkPrices(markRaw, instId).get(instId);
    if (mark === undefined) throw new AppError("UPSTREAM_ERROR", `okx sent no USD open interest or mark price for ${instId}`);
    return { venue: OKX, base: inst.base, oiCoins, oiUsd: Number((oiCoins * mark).toPrecision(15)), time };
  }

  /** Latest 5m top-trader position ratio (rubik), or null when OKX has no row. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http
      .getJson("/api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader", { instId: inst.venueSymbol, period: RATIO_PERIOD, limit: 1 })
      .catch(mapError(inst.venueSymbol));
    return parseTopTraderPositionRatio(raw, inst, RATIO_PERIOD);
  }

  /**
   * Cross-margin maintenance tiers of the swap, first tier first, from `/public/position-tiers?instType=SWAP&
   * tdMode=cross&instFamily=<BASE>-USDT`. OKX bounds tiers in contracts; they become USD notional as contracts ×
   * contractSize × the current mark price (index price when OKX sent no mark) of the funding snapshot, fetched
   * alongside. `maintenanceMarginRate` is OKX's `mmr` fraction. Kept for an hour per symbol ({@link TIERS_TTL_MS}).
   * @throws AppError NOT_FOUND when not listed (or code 51001); UPSTREAM_ERROR when no price is available.
   */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, (inst) => this.fetchMarginTiers(base, inst));
  }

  private async fetchMarginTiers(base: string, inst: PerpInstrument): Promise<MarginTier[]> {
    const instId = inst.venueSymbol;
    const [raw, snap] = await Promise.all([
      this.http.getJson("/api/v5/public/position-tiers", { instType: "SWAP", tdMode: "cross", instFamily: okxInstFamily(instId) }).catch(mapError(instId)),
      this.funding(base),
    ]);
    const price = snap.markPrice ?? snap.indexPrice;
    if (price === null) throw new AppError("UPSTREAM_ERROR", `okx sent no mark or index price for ${instId}`);
    return parsePositionTiers(raw, inst, price);
  }

  /**
   * The last `limit` (at most {@link OKX_MAX_CANDLES}) hourly last-price candles from `/market/candles?bar=1H`,
   * oldest first, the current open hour included; prices per coin, volumes in coins and USDT. `limit` < 1 → [].
   * Kept for a minute per symbol and limit ({@link CANDLES_TTL_MS}).
   * @throws AppError NOT_FOUND when not listed (or code 51001).
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, OKX_MAX_CANDLES, (inst, n) => this.fetchCandles(inst, n));
  }

  private async fetchCandles(inst: PerpInstrument, n: number): Promise<Candle[]> {
    const raw = await this.http.getJson("/api/v5/market/candles", { instId: inst.venueSymbol, bar: "1H", limit: n }).catch(mapError(inst.venueSymbol));
    return parseCandles(raw, inst);
  }

  protected async loadCatalog(): Promise<Catalog> {
    const raw = await this.http.getJson("/api/v5/public/instruments", { instType: "SWAP" }).catch(mapError());
    return indexCatalog(parseInstruments(raw));
  }
}

/** Maps a refused OKX request (HTTP 4xx with a `{code,msg}` body) to an {@link AppError}. */
function mapError(instId?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    const body = parseOkxError(err.body);
    if (body?.code === OKX_NO_SUCH_INSTRUMENT && instId !== undefined) throw new AppError("NOT_FOUND", `okx does not list ${instId}`);
    throw new AppError("UPSTREAM_ERROR", `okx refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
