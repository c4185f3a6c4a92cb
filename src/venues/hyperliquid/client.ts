import { AppError } from "../../errors.js";
import { memoize } from "../../lib/memo.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { HYPERLIQUID_ENDPOINTS } from "./endpoints.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpVenueClient, PredictedFunding } from "../perp/types.js";
import { parseFunding, parseFundingHistory, parseInstruments, parseMarginTiers, parseOpenInterest, parsePredictedFundings } from "./parse.js";
import { HOUR_MS } from "../../lib/time.js";
import { newestFundingPoints } from "../perp/funding-points.js";

/** How long one `metaAndAssetCtxs` snapshot (all coins) is reused. */
export const HYPERLIQUID_SNAPSHOT_TTL_MS = 2_000;

/** Venue key of Hyperliquid in status, metrics and errors. */
export const HYPERLIQUID = "hyperliquid";

/** `fundingHistory` returns at most this many rows per call. */
const PAGE_ROWS = 500;
/** Longest history served by {@link HyperliquidPerpClient.fundingHistory} (hourly points). */
export const HYPERLIQUID_MAX_HISTORY = 1000;

/** The instrument catalog plus the `meta` half of the `metaAndAssetCtxs` it was built from (margin tables). */
interface HyperliquidCatalog extends Catalog {
  meta: unknown;
}

/** Options of {@link HyperliquidPerpClient} (`callsPerMin` defaults to `HYPERLIQUID_ENDPOINTS.rest.api`, endpoints.ts). */
export type HyperliquidClientOptions = PerpClientOptions;

/**
 * Hyperliquid client, listed (not delisted) main-dex perpetuals (`POST /info`,
 * https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals). Requests:
 * `metaAndAssetCtxs` (instruments, funding, open interest; its meta's `marginTables` are kept with the
 * instruments for {@link marginTiers}), `fundingHistory`, `predictedFundings`.
 * Funding is hourly; `kPEPE`-style coins are converted to one coin. Hyperliquid publishes no
 * long/short ratio ({@link longShort} resolves to null).
 * Errors: see {@link VenueHttpClient}; an unlisted base → `NOT_FOUND`; other failures → `UPSTREAM_ERROR`.
 */
export class HyperliquidPerpClient extends PerpClientBase<HyperliquidCatalog> implements PerpVenueClient {
  constructor(baseUrl: string, opts: HyperliquidClientOptions) {
    super(HYPERLIQUID, baseUrl, opts, { callsPerMin: HYPERLIQUID_ENDPOINTS.rest.api.callsPerMin, listing: "perpetual" });
  }

  /** Hourly funding of every perpetual: one `metaAndAssetCtxs` call. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    return parseFunding(await this.metaAndAssetCtxs());
  }

  /** Hourly funding of one perpetual. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    const snap = parseFunding(await this.metaAndAssetCtxs()).find((s) => s.venueSymbol === inst.venueSymbol);
    if (!snap) throw new AppError("NOT_FOUND", `hyperliquid sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /**
   * Settled hourly funding, newest first, at most `limit` (capped at {@link HYPERLIQUID_MAX_HISTORY})
   * points: `fundingHistory` from the hour before `now − (limit + 1) h`, paged forward 500 rows at a time.
   */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(HYPERLIQUID_MAX_HISTORY, Math.floor(limit));
    // On the hour (funding settles hourly, so no point is lost): identical reads within the hour send
    // identical bodies, which the HTTP client's single-flight coalesces; a start to the millisecond never matches.
    let startTime = Math.floor((Date.now() - (n + 1) * HOUR_MS) / HOUR_MS) * HOUR_MS;
    const points: FundingPoint[] = [];
    for (let page = 0; page <= Math.ceil(n / PAGE_ROWS); page++) {
      const raw = await this.http.postJson("/info", { type: "fundingHistory", coin: inst.venueSymbol, startTime }).catch(mapError);
      const rows = parseFundingHistory(raw, inst);
      points.push(...rows);
      const newest = rows[0];
      if (rows.length < PAGE_ROWS || !newest) break;
      startTime = newest.time + 1;
    }
    return newestFundingPoints(points, n);
  }

  /** Open interest in coins and USD (`openInterest` × `markPx`) from `metaAndAssetCtxs`. */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const oi = parseOpenInterest(await this.metaAndAssetCtxs()).find((o) => o.base === inst.base);
    if (!oi) throw new AppError("UPSTREAM_ERROR", `hyperliquid sent no open interest for ${inst.venueSymbol}`);
    return oi;
  }

  /** Hyperliquid publishes no long/short ratio: always null. */
  async longShort(_base: string): Promise<LongShortRatio | null> {
    return null;
  }

  /**
   * Predicted next funding on Hyperliquid, Binance and Bybit in one call (`predictedFundings`), each
   * a fraction per that venue's own interval (`fundingIntervalHours` when the payload states it).
   */
  async predictedFundings(): Promise<PredictedFunding[]> {
    const raw = await this.http.postJson("/info", { type: "predictedFundings" }).catch(mapError);
    return parsePredictedFundings(raw);
  }

  /**
   * Margin tiers, first tier first, from the meta loaded with the instruments (no extra request): the
   * asset's `marginTableId` table of `meta.marginTables` (USD notional bounds), else one tier at its
   * `maxLeverage`; mmr = 1 / (2 × maxLeverage).
   * @throws AppError NOT_FOUND when not listed; UPSTREAM_ERROR when the meta has no table or leverage for it.
   */
  async marginTiers(base: string): Promise<MarginTier[]> {
    const { cat, inst } = await this.require(base);
    return parseMarginTiers(cat.meta, inst);
  }

  /** One `metaAndAssetCtxs` snapshot serves every coin: kept 2 s, so per-symbol tools share it under the request budget. */
  private readonly metaAndAssetCtxs = memoize(HYPERLIQUID_SNAPSHOT_TTL_MS, async () => (await this.http.postJson("/info", { type: "metaAndAssetCtxs" }).catch(mapError)) as object);

  protected async loadCatalog(): Promise<HyperliquidCatalog> {
    const raw = await this.metaAndAssetCtxs();
    return { ...indexCatalog(parseInstruments(raw)), meta: Array.isArray(raw) ? (raw as unknown[])[0] : raw };
  }
}

/** Maps a refused `/info` request (HTTP 4xx, e.g. 422 on a malformed body) to an {@link AppError}. */
function mapError(err: unknown): never {
  if (!(err instanceof VenueHttpError)) throw err;
  throw new AppError("UPSTREAM_ERROR", `hyperliquid refused the request (HTTP ${err.status})`);
}
