import { AppError } from "../../errors.js";
import type { Metrics } from "../../core/metrics.js";
import type { VenueHealth } from "../../core/venue-health.js";
import { VenueHttpClient, VenueHttpError } from "../../lib/venue-http.js";
import type { FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import { parseAccountRatio, parseFundingHistory, parseInstrumentsInfo, parseTickerOpenInterest, parseTickers } from "./parse.js";
import { memoize } from "../../lib/memo.js";

/** Venue key of Bybit in status, metrics and errors. */
export const BYBIT = "bybit";

/** Default request budget: well under Bybit's 600 requests / 5 s per IP. */
export const BYBIT_CALLS_PER_MIN = 1200;

/** Options of {@link BybitPerpClient}. */
export interface BybitClientOptions {
  /** Per-attempt timeout in ms. */
  timeoutMs: number;
  metrics?: Metrics;
  health?: VenueHealth;
  /** Request budget per minute (default {@link BYBIT_CALLS_PER_MIN}). */
  callsPerMin?: number;
  /** How long the instrument list is cached (default 1 h). */
  instrumentsTtlMs?: number;
  retries?: number;
  maxWaitMs?: number;
}

interface Catalog {
  list: PerpInstrument[];
  bySymbol: Map<string, PerpInstrument>;
  byBase: Map<string, PerpInstrument>;
}

/** At most this many instruments-info pages (1000 rows each) are followed. */
const MAX_PAGES = 10;

/**
 * Bybit v5 client, `category=linear` USDT perpetuals (public REST, sources.md §3).
 * Endpoints: `/v5/market/instruments-info` (cursor-paginated, cached), `/v5/market/tickers`,
 * `/v5/market/funding/history`, `/v5/market/account-ratio`. Records are per ONE coin.
 * Errors: see {@link VenueHttpClient}; an unlisted base or retCode 10001 on a symbol request →
 * `NOT_FOUND`; HTTP 403 (rate-limit ban or geo-block) → `UPSTREAM_UNAVAILABLE`; other failures →
 * `UPSTREAM_ERROR`.
 */
export class BybitPerpClient implements PerpVenueClient {
  readonly venue = BYBIT;
  private readonly http: VenueHttpClient;
  /** Instruments (and funding intervals), kept for `instrumentsTtlMs`. */
  private readonly catalog: () => Promise<Catalog>;

  constructor(baseUrl: string, opts: BybitClientOptions) {
    this.http = new VenueHttpClient({
      venue: BYBIT,
      baseUrl: baseUrl.replace(/\/+$/, ""),
      callsPerMin: opts.callsPerMin ?? BYBIT_CALLS_PER_MIN,
      windowSec: 5,
      timeoutMs: opts.timeoutMs,
      metrics: opts.metrics,
      health: opts.health,
      retries: opts.retries,
      maxWaitMs: opts.maxWaitMs,
    });
    this.catalog = memoize(opts.instrumentsTtlMs ?? 3_600_000, () => this.loadCatalog());
  }

  /** USDT linear perpetuals in status Trading, with `fundingIntervalHours` (cached; loads are shared). */
  async instruments(): Promise<PerpInstrument[]> {
    return (await this.catalog()).list;
  }

  /** The perpetual of canonical `base` (`PEPE` finds `1000PEPEUSDT`), or undefined. */
  async instrument(base: string): Promise<PerpInstrument | undefined> {
    return (await this.catalog()).byBase.get(base.trim().toUpperCase());
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
    const raw = await this.http
      .getJson("/v5/market/account-ratio", { category: "linear", symbol: inst.venueSymbol, period: "5min", limit: 1 })
      .catch(mapError);
    return parseAccountRatio(raw, inst, "5m");
  }

  private async require(base: string): Promise<{ cat: Catalog; inst: PerpInstrument }> {
    const cat = await this.catalog();
    const inst = cat.byBase.get(base.trim().toUpperCase());
    if (!inst) throw new AppError("NOT_FOUND", `bybit lists no USDT perpetual for ${base}`);
    return { cat, inst };
  }

  private async loadCatalog(): Promise<Catalog> {
    const list: PerpInstrument[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const raw = await this.http.getJson("/v5/market/instruments-info", { category: "linear", limit: 1000, cursor }).catch(mapError);
      const { instruments, nextPageCursor } = parseInstrumentsInfo(raw);
      list.push(...instruments);
      if (!nextPageCursor || nextPageCursor === cursor) break;
      cursor = nextPageCursor;
    }
    const byBase = new Map<string, PerpInstrument>();
    for (const i of list) {
      const prev = byBase.get(i.base);
      if (!prev || i.multiplier < prev.multiplier) byBase.set(i.base, i);
    }
    return { list, bySymbol: new Map(list.map((i) => [i.venueSymbol, i])), byBase };
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
