import { AppError } from "../../errors.js";
import { memoize } from "../../lib/memo.js";
import { HOUR_MS } from "../../lib/time.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import { newestFundingPoints } from "../perp/funding-points.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, PerpVenueClient } from "../perp/types.js";
import { LIGHTER_ENDPOINTS } from "./endpoints.js";
import {
  fundingSnapshots,
  instrumentsOf,
  type LighterInstrument,
  type LighterMarket,
  lighterMarketId,
  parseFundingRates,
  parseFundings,
  parseMarginTiers,
  parseOpenInterest,
  parseOrderBookDetails,
} from "./parse.js";
import { LIGHTER } from "./venue-id.js";

/** How long one `orderBookDetails` (every market) or `funding-rates` answer is reused. */
export const LIGHTER_SNAPSHOT_TTL_MS = 2_000;
/** Hours one `fundings` request covers: under the ≈ 750 rows a call answers at most (open-source readers' measure). */
export const LIGHTER_FUNDINGS_PAGE_HOURS = 500;
/** Longest history served by {@link LighterPerpClient.fundingHistory} (hourly points). */
export const LIGHTER_MAX_HISTORY = 1000;

/** The instrument catalog plus the `orderBookDetails` rows it was built from (their margin fractions serve the tiers). */
interface LighterCatalog extends Catalog {
  rows: readonly LighterMarket[];
}

/** Options of {@link LighterPerpClient} (`callsPerMin` defaults to `LIGHTER_ENDPOINTS.rest.api`, endpoints.ts). */
export type LighterClientOptions = PerpClientOptions;

/**
 * Lighter client, active USDC perpetuals (https://apidocs.lighter.xyz): `GET /orderBookDetails` (instruments, open
 * interest, mark and index where the body has them, margin fractions), `GET /funding-rates` (current funding; Lighter's
 * own rows of a cross-venue list), `GET /fundings` (settled hourly funding). Funding is hourly; `1000PEPE`-style markets
 * are converted to one coin. Lighter publishes no long/short ratio ({@link longShort} resolves to null).
 * Errors: see {@link VenueHttpClient}; an unlisted base → `NOT_FOUND`; 403/451 (a restricted region) →
 * `UPSTREAM_UNAVAILABLE`; a refusal (`{"code":20001,…}`) or another failure → `UPSTREAM_ERROR`.
 */
export class LighterPerpClient extends PerpClientBase<LighterCatalog> implements PerpVenueClient {
  constructor(baseUrl: string, opts: LighterClientOptions) {
    super(LIGHTER, baseUrl, opts, { callsPerMin: LIGHTER_ENDPOINTS.rest.api.callsPerMin, listing: "perpetual" });
  }

  /** Hourly funding of every perpetual: `funding-rates` and `orderBookDetails` (mark, index), both shared for 2 s. */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [rates, rows, cat] = await Promise.all([this.fundingRates(), this.details(), this.catalog()]);
    return fundingSnapshots(rates, cat.list as LighterInstrument[], rows);
  }

  /** Hourly funding of one perpetual. @throws AppError NOT_FOUND when not listed; UPSTREAM_ERROR when the venue sent no rate for it. */
  async funding(base: string): Promise<FundingSnapshot> {
    const inst = await this.market(base);
    const [rates, rows] = await Promise.all([this.fundingRates(), this.details()]);
    const [snap] = fundingSnapshots(rates, [inst], rows);
    if (!snap) throw new AppError("UPSTREAM_ERROR", `${LIGHTER} funding-rates sent no rate for ${inst.venueSymbol}`);
    return snap;
  }

  /**
   * Settled hourly funding, newest first, at most `limit` (capped at {@link LIGHTER_MAX_HISTORY}) points: `fundings` in
   * windows of {@link LIGHTER_FUNDINGS_PAGE_HOURS} settlements ending at the last full hour, walking back while the
   * window came back filled to its start (a market listed later has nothing older). Each window ends a second before
   * the hour after its last settlement, so it holds that settlement whether the venue reads the end as inclusive or
   * not. Windows are on the hour, so identical reads within the hour send identical requests (the HTTP client's
   * single-flight coalesces them).
   */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const inst = await this.market(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(LIGHTER_MAX_HISTORY, Math.floor(limit));
    let last = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const points: FundingPoint[] = [];
    for (let page = 0; page <= Math.ceil(n / LIGHTER_FUNDINGS_PAGE_HOURS); page++) {
      const hours = Math.min(LIGHTER_FUNDINGS_PAGE_HOURS, n - points.length);
      const first = last - (hours - 1) * HOUR_MS;
      const query = { market_id: inst.marketId, resolution: "1h", start_timestamp: first / 1000, end_timestamp: (last + HOUR_MS) / 1000 - 1, count_back: hours };
      const rows = parseFundings(await this.http.getJson("/fundings", query).catch(mapError), inst);
      points.push(...rows);
      const oldest = rows.at(-1)?.time ?? Infinity;
      if (points.length >= n || oldest >= first + HOUR_MS) break;
      last = first - HOUR_MS;
    }
    return newestFundingPoints(points, n);
  }

  /** Open interest in coins and USD (`open_interest` × `mark_price`, else × `last_trade_price`) from `orderBookDetails`. */
  async openInterest(base: string): Promise<OpenInterest> {
    const inst = await this.market(base);
    return parseOpenInterest(await this.details(), inst);
  }

  /** Lighter publishes no long/short ratio: always null. */
  async longShort(_base: string): Promise<LongShortRatio | null> {
    return null;
  }

  /**
   * The market's one margin tier from the `orderBookDetails` rows loaded with the instruments (no extra request): max
   * leverage 10,000 / `min_initial_margin_fraction`, maintenance rate `maintenance_margin_fraction` / 10,000.
   * @throws AppError NOT_FOUND when not listed; UPSTREAM_ERROR when the row has no fractions.
   */
  async marginTiers(base: string): Promise<MarginTier[]> {
    const inst = await this.market(base);
    return parseMarginTiers((await this.catalog()).rows, inst);
  }

  /** The listed market of `base` with its id. @throws AppError NOT_FOUND when not listed. */
  private async market(base: string): Promise<LighterInstrument> {
    const { inst } = await this.require(base);
    const marketId = lighterMarketId(inst);
    if (marketId === undefined) throw new AppError("NOT_FOUND", `${LIGHTER} lists no market id for ${base}`);
    return { ...inst, marketId };
  }

  /** One `orderBookDetails` answer serves every market: kept 2 s, so per-symbol tools share it under the request budget. */
  private readonly details = memoize(LIGHTER_SNAPSHOT_TTL_MS, async () => parseOrderBookDetails(await this.http.getJson("/orderBookDetails").catch(mapError)));

  /** One `funding-rates` answer (Lighter's hourly rate by market id), kept 2 s like {@link details}. */
  private readonly fundingRates = memoize(LIGHTER_SNAPSHOT_TTL_MS, async () => parseFundingRates(await this.http.getJson("/funding-rates").catch(mapError)));

  protected async loadCatalog(): Promise<LighterCatalog> {
    const rows = await this.details();
    return { ...indexCatalog(instrumentsOf(rows)), rows };
  }
}

/** Maps a refused request to an {@link AppError}: 403/451 are the venue's regional block, a `{"code","message"}` body names the refusal. */
function mapError(err: unknown): never {
  if (!(err instanceof VenueHttpError)) throw err;
  if (err.status === 403 || err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", `${LIGHTER} refuses requests from this server (HTTP ${err.status})`);
  const body = refusalOf(err.body);
  throw new AppError("UPSTREAM_ERROR", `${LIGHTER} refused the request (HTTP ${err.status}${body ? `, code ${body.code}: ${body.message}` : ""})`);
}

/** The `{"code","message"}` of a refusal body, when it is one. */
function refusalOf(text: string): { code: number; message: string } | undefined {
  try {
    const v = JSON.parse(text) as { code?: unknown; message?: unknown };
    return typeof v.code === "number" ? { code: v.code, message: typeof v.message === "string" ? v.message.trim() : "" } : undefined;
  } catch {
    return undefined;
  }
}
