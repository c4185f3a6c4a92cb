import { memoize } from "../../lib/memo.js";
import { AppError } from "../../errors.js";
import type { Metrics } from "../../core/metrics.js";
import type { VenueHealth } from "../../core/venue-health.js";
import { VenueHttpClient, VenueHttpError } from "../../lib/venue-http.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import {
  parseBinanceError,
  parseExchangeInfo,
  parseFundingInfo,
  parseFundingRateHistory,
  parseOpenInterest,
  parsePremiumIndex,
  parseSpotTickerPrice,
  parseTopLongShortPositionRatio,
} from "./parse.js";

/** Venue key of Binance USDⓈ-M futures (and its spot price source) in status, metrics and errors. */
export const BINANCE = "binance";

/** Default request budget: under Binance's 2,400 weight/min (premiumIndex without symbol weighs 10). */
export const BINANCE_CALLS_PER_MIN = 1000;

/** Options of {@link BinancePerpClient}. */
export interface BinanceClientOptions {
  /** Per-attempt timeout in ms. */
  timeoutMs: number;
  metrics?: Metrics;
  health?: VenueHealth;
  /** fapi request budget per minute (default {@link BINANCE_CALLS_PER_MIN}). */
  callsPerMin?: number;
  /** Spot REST base URL for {@link BinancePerpClient.spotPrice} (default `https://api.binance.com`). */
  spotBaseUrl?: string;
  /** Spot request budget per minute (default 1000; the spot limit is 6,000 weight/min). */
  spotCallsPerMin?: number;
  /** How long the instrument list and funding intervals are cached (default 1 h). */
  instrumentsTtlMs?: number;
  retries?: number;
  maxWaitMs?: number;
}

interface Catalog {
  list: PerpInstrument[];
  bySymbol: Map<string, PerpInstrument>;
  byBase: Map<string, PerpInstrument>;
  /** fundingInfo: adjusted symbols only; others are 8 h. */
  intervals: Map<string, number>;
}

/** Top-trader statistic period requested by {@link BinancePerpClient.longShort}. */
const RATIO_PERIOD = "5m";

/**
 * Binance USDⓈ-M futures client (public REST, sources.md §1–2): USDT-margined perpetuals only.
 * Endpoints: `/fapi/v1/exchangeInfo`, `/fapi/v1/fundingInfo` (both cached with the instruments),
 * `/fapi/v1/premiumIndex`, `/fapi/v1/fundingRate`, `/fapi/v1/openInterest`,
 * `/futures/data/topLongShortPositionRatio`, and spot `/api/v3/ticker/price`.
 * Records are per ONE coin (`1000PEPEUSDT` multiplier undone).
 * Errors: see {@link VenueHttpClient}; an unlisted base or `-1121 Invalid symbol` → `NOT_FOUND`;
 * HTTP 451 (restricted location) → `UPSTREAM_UNAVAILABLE`; other refusals → `UPSTREAM_ERROR`.
 */
export class BinancePerpClient implements PerpVenueClient {
  readonly venue = BINANCE;
  private readonly http: VenueHttpClient;
  private readonly spot: VenueHttpClient;
  /** Instruments (and funding intervals), kept for `instrumentsTtlMs`. */
  private readonly catalog: () => Promise<Catalog>;

  constructor(baseUrl: string, opts: BinanceClientOptions) {
    const common = { timeoutMs: opts.timeoutMs, metrics: opts.metrics, health: opts.health, retries: opts.retries, maxWaitMs: opts.maxWaitMs };
    this.http = new VenueHttpClient({ venue: BINANCE, baseUrl: baseUrl.replace(/\/+$/, ""), callsPerMin: opts.callsPerMin ?? BINANCE_CALLS_PER_MIN, ...common });
    this.spot = new VenueHttpClient({
      venue: BINANCE,
      baseUrl: (opts.spotBaseUrl ?? "https://api.binance.com").replace(/\/+$/, ""),
      callsPerMin: opts.spotCallsPerMin ?? 1000,
      ...common,
    });
    this.catalog = memoize(opts.instrumentsTtlMs ?? 3_600_000, () => this.loadCatalog());
  }

  /** USDT-margined perpetuals in status TRADING (cached; concurrent callers share one load). */
  async instruments(): Promise<PerpInstrument[]> {
    return (await this.catalog()).list;
  }

  /** The perpetual of canonical `base` (`PEPE` finds `1000PEPEUSDT`), or undefined. */
  async instrument(base: string): Promise<PerpInstrument | undefined> {
    return (await this.catalog()).byBase.get(base.trim().toUpperCase());
  }

  /** Funding of every listed perpetual: one `premiumIndex` call (weight 10). */
  async fundingAll(): Promise<FundingSnapshot[]> {
    const [cat, raw] = await Promise.all([this.catalog(), this.http.getJson("/fapi/v1/premiumIndex").catch(mapError())]);
    return parsePremiumIndex(raw, cat.bySymbol, cat.intervals);
  }

  /** Funding of one perpetual from `premiumIndex?symbol=`. @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { cat, inst } = await this.require(base);
    const raw = await this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base));
    const snap = parsePremiumIndex(raw, cat.bySymbol, cat.intervals)[0];
    if (!snap) throw new AppError("UPSTREAM_ERROR", `binance sent no funding for ${inst.venueSymbol}`);
    return snap;
  }

  /** Settled funding from `/fapi/v1/fundingRate` (limit ≤ 1000), newest first. */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(1000, Math.floor(limit));
    const raw = await this.http.getJson("/fapi/v1/fundingRate", { symbol: inst.venueSymbol, limit: n }).catch(mapError(base));
    return parseFundingRateHistory(raw, inst).slice(0, n);
  }

  /** Open interest in coins (`/fapi/v1/openInterest`) and USD (× mark price from `premiumIndex`). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { cat, inst } = await this.require(base);
    const [oiRaw, piRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/openInterest", { symbol: inst.venueSymbol }).catch(mapError(base)),
      this.http.getJson("/fapi/v1/premiumIndex", { symbol: inst.venueSymbol }).catch(mapError(base)),
    ]);
    const mark = parsePremiumIndex(piRaw, cat.bySymbol, cat.intervals)[0]?.markPrice;
    if (mark === undefined || mark === null) throw new AppError("UPSTREAM_ERROR", `binance sent no mark price for ${inst.venueSymbol}`);
    return parseOpenInterest(oiRaw, inst, mark);
  }

  /** Latest 5m top-trader position ratio (`topLongShortPositionRatio`), or null when Binance has none. */
  async longShort(base: string): Promise<LongShortRatio | null> {
    const { inst } = await this.require(base);
    const raw = await this.http
      .getJson("/futures/data/topLongShortPositionRatio", { symbol: inst.venueSymbol, period: RATIO_PERIOD, limit: 1 })
      .catch(mapError(base));
    return parseTopLongShortPositionRatio(raw, inst, RATIO_PERIOD);
  }

  /**
   * Spot price of `<base>USDT` in USDT per coin (`GET /api/v3/ticker/price`), for spot/perp basis.
   * @throws AppError NOT_FOUND when Binance spot does not list the pair.
   */
  async spotPrice(base: string): Promise<number> {
    const symbol = `${base.trim().toUpperCase()}USDT`;
    const raw = await this.spot.getJson("/api/v3/ticker/price", { symbol }).catch(mapError(base, "spot"));
    return parseSpotTickerPrice(raw);
  }

  private async require(base: string): Promise<{ cat: Catalog; inst: PerpInstrument }> {
    const cat = await this.catalog();
    const inst = cat.byBase.get(base.trim().toUpperCase());
    if (!inst) throw new AppError("NOT_FOUND", `binance lists no USDT perpetual for ${base}`);
    return { cat, inst };
  }

  private async loadCatalog(): Promise<Catalog> {
    const [infoRaw, fundingInfoRaw] = await Promise.all([
      this.http.getJson("/fapi/v1/exchangeInfo").catch(mapError()),
      this.http.getJson("/fapi/v1/fundingInfo").catch(mapError()),
    ]);
    const list = parseExchangeInfo(infoRaw);
    const intervals = parseFundingInfo(fundingInfoRaw);
    const byBase = new Map<string, PerpInstrument>();
    for (const i of list) {
      const prev = byBase.get(i.base);
      if (!prev || i.multiplier < prev.multiplier) byBase.set(i.base, i);
    }
    return { list, bySymbol: new Map(list.map((i) => [i.venueSymbol, i])), byBase, intervals };
  }
}

/** Maps a refused Binance request to an {@link AppError}. */
function mapError(base?: string, market: "futures" | "spot" = "futures") {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", "binance refuses requests from this server's location (HTTP 451)");
    if (err.status === 418) throw new AppError("UPSTREAM_UNAVAILABLE", "binance has temporarily banned this IP for exceeding its rate limit", { retryAfterSec: 120 });
    const body = parseBinanceError(err.body);
    if (body?.code === -1121 && base !== undefined) {
      throw new AppError("NOT_FOUND", market === "spot" ? `binance spot does not list ${base.toUpperCase()}USDT` : `binance does not list ${base}`);
    }
    throw new AppError("UPSTREAM_ERROR", `binance refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
