import { memoize } from "../../lib/memo.js";
import { AppError } from "../../errors.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { GATE_ENDPOINTS } from "./endpoints.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, MarginTier, OpenInterest, OpenInterestPoint, PerpVenueClient, PredictedFunding } from "../perp/types.js";
import {
  GATE_CONTRACT_NOT_FOUND,
  parseCandlesticks,
  parseContractFunding,
  parseContracts,
  parseContractStatsHistory,
  parseContractStatsLongShort,
  parseContractStatsOi,
  parseFundingRateHistory,
  gateBackoffMs,
  parseGateError,
  parseGateRateLimit,
  parsePredictedFunding,
  parseRiskLimitTiers,
} from "./parse.js";

/** Venue key of Gate USDT-margined futures in status, metrics and errors. */
export const GATE = "gate";

/** How long one all-contracts snapshot (funding, predicted funding) is reused. */
const SNAPSHOT_TTL_MS = 2_000;
/** `contract_stats` period of the open interest and long/short reads. */
const STATS_PERIOD = "5m";
/** Most settled funding points we ask `/funding_rate` for (Gate's default page is 100; no larger limit is documented). */
export const GATE_MAX_FUNDING_HISTORY = 100;
/** Most candles `/candlesticks` returns per request ("Maximum of 2000 points are returned in one query"). */
export const GATE_MAX_CANDLES = 2000;
/** Most hourly `contract_stats` rows we ask for (the same 2000-point bound as candles is assumed; not documented). */
export const GATE_MAX_OI_HISTORY = 2000;

/** Options of {@link GatePerpClient} (`callsPerMin` defaults to `GATE_ENDPOINTS.rest.api`, endpoints.ts). */
export type GateClientOptions = PerpClientOptions;

/**
 * Gate API v4 USDT-margined perpetual futures client (public REST, https://www.gate.com/docs/developers/apiv4/en/#futures;
 * base URL includes `/api/v4`). Every method the venue has data for:
 * `instruments` / `fundingAll` / `funding` / `predictedFunding` from `/futures/usdt/contracts` (one call serves
 * all contracts: funding rate, `funding_rate_indicative`, interval, next settlement, mark and index; the
 * snapshot is reused for 2 s), `fundingHistory` from `/futures/usdt/funding_rate`, `openInterest`,
 * `openInterestHistory` and `longShort` from `/futures/usdt/contract_stats` (5m / 1h), `marginTiers` from
 * `/futures/usdt/risk_limit_tiers`, `hourlyCandles` from `/futures/usdt/candlesticks?interval=1h`.
 * Not published by Gate: a premium index on the funding row (null), a mark price on settled funding (null).
 * Sizes are coins (contracts × `quanto_multiplier`), prices per ONE coin.
 * Errors: see {@link VenueHttpClient}; an unlisted base, HTTP 404 or label `CONTRACT_NOT_FOUND` → `NOT_FOUND`;
 * HTTP 403 / 451 (ban, geo-block) → `UPSTREAM_UNAVAILABLE`; other refusals and bad bodies → `UPSTREAM_ERROR`.
 * Gate reports its per-endpoint budget in `X-Gate-RateLimit-*` headers: when an answer says none is left, no
 * request is sent until its reset (`parseGateRateLimit` / `gateBackoffMs`, as the HTTP client's `limitPause`),
 * beside our own budget (half of Gate's) and HTTP 429 backoff.
 */
export class GatePerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: GateClientOptions) {
    const { callsPerMin, windowSec } = GATE_ENDPOINTS.rest.api;
    super(GATE, baseUrl, opts, {
      callsPerMin,
      windowSec,
      listing: "USDT perpetual",
      limitPause: (headers, nowMs) =>
        gateBackoffMs(
          parseGateRateLimit((name) => headers.get(name)),
          nowMs,
        ),
    });
  }

  /** The raw `/futures/usdt/contracts` body, reused for 2 s (funding, predicted funding). */
  private readonly contractsBody = memoize(SNAPSHOT_TTL_MS, async (): Promise<{ raw: unknown; at: number }> => {
    const raw = await this.http.getJson("/futures/usdt/contracts").catch(mapError());
    return { raw, at: Date.now() };
  });

  /** Funding of every USDT perpetual from one `/futures/usdt/contracts` read (reused for 2 s). */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const { raw, at } = await this.contractsBody();
    return parseContractFunding(raw, at);
  }

  /** Funding of one perpetual, read from the all-contracts snapshot. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    const snap = (await this.fundingAll()).find((f) => f.venueSymbol === inst.venueSymbol);
    if (!snap) throw new AppError("UPSTREAM_ERROR", `gate sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /**
   * Gate's own estimate of the next rate (`funding_rate_indicative` of the contracts row; Gate marks the field
   * deprecated), or null when the row carries none. @throws AppError NOT_FOUND when not listed.
   */
  async predictedFunding(base: string): Promise<PredictedFunding | null> {
    const { inst } = await this.require(base);
    return parsePredictedFunding((await this.contractsBody()).raw, inst);
  }

  /** Settled funding from `/futures/usdt/funding_rate` (limit ≤ 100), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(GATE_MAX_FUNDING_HISTORY, Math.floor(limit));
    const raw = await this.http.getJson("/futures/usdt/funding_rate", { contract: inst.venueSymbol, limit: n }).catch(mapError(inst.venueSymbol));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest of the newest 5m `/futures/usdt/contract_stats` row (contracts × quanto, `open_interest_usd`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/futures/usdt/contract_stats", { contract: inst.venueSymbol, interval: STATS_PERIOD, limit: 1 }).catch(mapError(inst.venueSymbol));
    return parseContractStatsOi(raw, inst);
  }

  /** Hourly open interest from `/futures/usdt/contract_stats?interval=1h`, oldest first, at most `limit` (≤ 2000) points. */
  async openInterestHistory(base: string, limit: number): Promise<OpenInterestPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(GATE_MAX_OI_HISTORY, Math.floor(limit));
    const raw = await this.http.getJson("/futures/usdt/contract_stats", { contract: inst.venueSymbol, interval: "1h", limit: n }).catch(mapError(inst.venueSymbol));
    return parseContractStatsHistory(raw, inst).slice(-n);
  }

  /** Newest 5m long/short ratio of `/futures/usdt/contract_stats` (top traders' positions, else all accounts), or null. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http.getJson("/futures/usdt/contract_stats", { contract: inst.venueSymbol, interval: STATS_PERIOD, limit: 1 }).catch(mapError(inst.venueSymbol));
    return parseContractStatsLongShort(raw, inst, STATS_PERIOD);
  }

  /**
   * Risk-limit tiers of `/futures/usdt/risk_limit_tiers?contract=`, first tier first: bounds are USDT position
   * value (`risk_limit`), `maintenance_rate` a fraction. Kept for an hour per symbol.
   * @throws AppError NOT_FOUND when not listed.
   */
  marginTiers(base: string): Promise<MarginTier[]> {
    return this.cachedTiers(base, async (inst) => {
      const raw = await this.http.getJson("/futures/usdt/risk_limit_tiers", { contract: inst.venueSymbol }).catch(mapError(inst.venueSymbol));
      return parseRiskLimitTiers(raw, inst);
    });
  }

  /**
   * The last `limit` (≤ 2000) hourly last-price candles of `/futures/usdt/candlesticks?interval=1h`, oldest
   * first, the current hour included; prices per coin, volumes in coins and USDT. Kept for a minute.
   * @throws AppError NOT_FOUND when not listed.
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, GATE_MAX_CANDLES, async (inst, n) => {
      const raw = await this.http.getJson("/futures/usdt/candlesticks", { contract: inst.venueSymbol, interval: "1h", limit: n }).catch(mapError(inst.venueSymbol));
      return parseCandlesticks(raw, inst);
    });
  }

  protected async loadCatalog(): Promise<Catalog> {
    return indexCatalog(parseContracts((await this.contractsBody()).raw));
  }
}

/** Maps a refused Gate request (HTTP 4xx with a `{label, message}` body) to an {@link AppError}. */
export function mapError(contract?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    const body = parseGateError(err.body);
    if (contract !== undefined && (body?.label === GATE_CONTRACT_NOT_FOUND || err.status === 404)) throw new AppError("NOT_FOUND", `gate does not list ${contract}`);
    if (err.status === 403 || err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", `gate refuses requests from this server (HTTP ${err.status})`, { retryAfterSec: 60 });
    throw new AppError("UPSTREAM_ERROR", `gate refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
