import { AppError } from "../../errors.js";
import { memoize } from "../../lib/memo.js";
import { HOUR_MS } from "../../lib/time.js";
import { VenueHttpError } from "../../lib/venue-http.js";
import { DERIBIT_ENDPOINTS } from "./endpoints.js";
import { type Catalog, indexCatalog, type PerpClientOptions, PerpClientBase } from "../perp/client-base.js";
import type { Candle, FundingPoint, FundingSnapshot, LongShortRatio, OpenInterest, PerpInstrument, PerpVenueClient } from "../perp/types.js";
import {
  isInstrumentNotFound,
  isInverseName,
  parseBookSummary,
  parseChart,
  parseDeribitError,
  parseFundingHistory,
  parseInstruments,
  parseTicker,
  parseTickerOpenInterest,
} from "./parse.js";
import { newestFundingPoints } from "../perp/funding-points.js";

/** Venue key of Deribit in status, metrics and errors. */
export const DERIBIT = "deribit";

/** How long one all-perpetuals funding snapshot (the book summaries) is reused. */
const SNAPSHOT_TTL_MS = 2_000;
/** Hours of funding history one `get_funding_rate_history` call covers (Deribit answers about 31 days: we ask 30). */
const HISTORY_PAGE_HOURS = 720;
/** Longest history served by {@link DeribitPerpClient.fundingHistory} (hourly points, two pages). */
export const DERIBIT_MAX_HISTORY = 1000;
/** Most hourly candles served (one `get_tradingview_chart_data` call; the venue caps an answer near 5,000 rows). */
export const DERIBIT_MAX_CANDLES = 1000;

/** Options of {@link DeribitPerpClient} (`callsPerMin` defaults to `DERIBIT_ENDPOINTS.rest.api`, endpoints.ts). */
export type DeribitClientOptions = PerpClientOptions;

/**
 * Deribit client, active perpetuals only: the inverse `BTC-PERPETUAL` / `ETH-PERPETUAL` (USD amounts) and the
 * USDC linear `<BASE>_USDC-PERPETUAL` (coin amounts) (public JSON-RPC over HTTP GET, https://docs.deribit.com/).
 * Methods: `public/get_instruments?currency=any&kind=future` (cached), `public/ticker` (funding and open interest
 * of one perpetual), `public/get_book_summary_by_currency?kind=future` per settlement currency (BTC, ETH, USDC:
 * every perpetual's funding), `public/get_funding_rate_history` (hourly, paged by 30 days), and
 * `public/get_tradingview_chart_data` (hourly candles).
 * Funding is served as `funding_8h`, a fraction per 8 h (interval 8, no next funding time: it accrues continuously);
 * history as hourly `interest_1h` points. When a base is listed both inverse and linear (BTC, ETH), the inverse
 * perpetual (the venue's main market) is read.
 * Not published, so absent: a long/short ratio ({@link longShort} resolves to null), margin tiers (Deribit states a
 * margin formula, no public tier table), open-interest history and a predicted funding rate.
 * Errors: see {@link VenueHttpClient}; an unlisted base or "instrument not found" → `NOT_FOUND`; HTTP 403/451 →
 * `UPSTREAM_UNAVAILABLE`; other failures → `UPSTREAM_ERROR`.
 */
export class DeribitPerpClient extends PerpClientBase implements PerpVenueClient {
  constructor(baseUrl: string, opts: DeribitClientOptions) {
    const { callsPerMin, windowSec } = DERIBIT_ENDPOINTS.rest.api;
    super(DERIBIT, baseUrl, opts, { callsPerMin, windowSec, listing: "perpetual" });
  }

  /**
   * Funding of every listed base (one perpetual each, the one {@link funding} reads): one book summary per settlement
   * currency (in parallel), reused for 2 s.
   */
  fundingAll(): Promise<FundingSnapshot[]> {
    return this.fundingSnapshot();
  }

  private readonly fundingSnapshot = memoize(SNAPSHOT_TTL_MS, async (): Promise<FundingSnapshot[]> => {
    const cat = await this.catalog();
    const pages = await Promise.all(
      settlementCurrencies(cat.list).map((currency) => this.http.getJson("/public/get_book_summary_by_currency", { currency, kind: "future" }).catch(mapError())),
    );
    // One snapshot per base, the perpetual `funding(base)` reads (BTC-PERPETUAL, not also BTC_USDC-PERPETUAL).
    const chosen = new Map([...cat.byBase.values()].map((i) => [i.venueSymbol, i]));
    return pages.flatMap((raw) => parseBookSummary(raw, chosen));
  });

  /** Funding of one perpetual from `public/ticker` (`funding_8h` per 8 h). @throws AppError NOT_FOUND when not listed. */
  async funding(base: string): Promise<FundingSnapshot> {
    const { inst } = await this.require(base);
    return parseTicker(await this.ticker(inst), inst);
  }

  /**
   * Hourly funding (`interest_1h`), newest first, at most `limit` (capped at {@link DERIBIT_MAX_HISTORY}) points:
   * `get_funding_rate_history` over whole hours back from the current hour, 30 days per request.
   */
  async fundingHistory(base: string, limit: number): Promise<FundingPoint[]> {
    const { inst } = await this.require(base);
    if (!(limit >= 1)) return [];
    const n = Math.min(DERIBIT_MAX_HISTORY, Math.floor(limit));
    // On the hour: identical reads within the hour send identical queries (coalesced by the HTTP client).
    let end = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const points: FundingPoint[] = [];
    // One page more than `n` needs, in case the venue's newest hour is behind this machine's clock.
    for (let page = 0; page <= Math.ceil(n / HISTORY_PAGE_HOURS) && points.length < n; page++) {
      const start = end - HISTORY_PAGE_HOURS * HOUR_MS;
      const raw = await this.http
        .getJson("/public/get_funding_rate_history", { instrument_name: inst.venueSymbol, start_timestamp: start, end_timestamp: end })
        .catch(mapError(inst.venueSymbol));
      const rows = parseFundingHistory(raw, inst);
      points.push(...rows);
      if (rows.length === 0 && points.length > 0) break; // older than the listing
      end = start - 1;
    }
    return newestFundingPoints(points, n);
  }

  /** Open interest from `public/ticker` (USD on inverse perpetuals, coins on linear ones; the other unit by the mark price). */
  async openInterest(base: string): Promise<OpenInterest> {
    const { inst } = await this.require(base);
    return parseTickerOpenInterest(await this.ticker(inst), inst);
  }

  /** Deribit publishes no long/short ratio: always null. */
  async longShort(_base: string): Promise<LongShortRatio | null> {
    return null;
  }

  /**
   * The last `limit` (at most {@link DERIBIT_MAX_CANDLES}) hourly last-price candles from
   * `get_tradingview_chart_data?resolution=60`, oldest first, the current hour included; prices per coin, volumes in
   * coins and USD. `limit` < 1 → []. Kept for a minute per symbol and limit.
   * @throws AppError NOT_FOUND when not listed.
   */
  hourlyCandles(base: string, limit: number): Promise<Candle[]> {
    return this.cachedCandles(base, limit, DERIBIT_MAX_CANDLES, (inst, n) => this.fetchCandles(inst, n));
  }

  private async fetchCandles(inst: PerpInstrument, n: number): Promise<Candle[]> {
    const end = (Math.floor(Date.now() / HOUR_MS) + 1) * HOUR_MS;
    const query = { instrument_name: inst.venueSymbol, start_timestamp: end - n * HOUR_MS, end_timestamp: end, resolution: 60 };
    const raw = await this.http.getJson("/public/get_tradingview_chart_data", query).catch(mapError(inst.venueSymbol));
    return parseChart(raw, inst);
  }

  /** One ticker per perpetual, reused for 2 s so funding and open interest of one read share it. */
  private readonly tickers = new Map<string, { at: number; body: Promise<unknown> }>();

  private ticker(inst: PerpInstrument): Promise<unknown> {
    const now = Date.now();
    const kept = this.tickers.get(inst.venueSymbol);
    if (kept && now - kept.at < SNAPSHOT_TTL_MS) return kept.body;
    const body = this.http.getJson("/public/ticker", { instrument_name: inst.venueSymbol }).catch(mapError(inst.venueSymbol));
    body.catch(() => this.tickers.delete(inst.venueSymbol));
    this.tickers.set(inst.venueSymbol, { at: now, body });
    return body;
  }

  protected async loadCatalog(): Promise<Catalog> {
    const raw = await this.http.getJson("/public/get_instruments", { currency: "any", kind: "future" }).catch(mapError());
    return indexCatalog(parseInstruments(raw));
  }
}

/** Settlement currencies whose book summaries hold the listed perpetuals: the coin of each inverse one, USDC for linear ones. */
export function settlementCurrencies(list: readonly PerpInstrument[]): string[] {
  return [...new Set(list.map((i) => (isInverseName(i.venueSymbol) ? i.base : "USDC")))];
}

/** Maps a refused Deribit request (HTTP 4xx with a JSON-RPC error body) to an {@link AppError}. */
function mapError(instrument?: string) {
  return (err: unknown): never => {
    if (!(err instanceof VenueHttpError)) throw err;
    if (err.status === 403 || err.status === 451) throw new AppError("UPSTREAM_UNAVAILABLE", `deribit refuses requests from this server (HTTP ${err.status})`);
    const body = parseDeribitError(err.body);
    if (instrument !== undefined && isInstrumentNotFound(body)) throw new AppError("NOT_FOUND", `deribit does not list ${instrument}`);
    throw new AppError("UPSTREAM_ERROR", `deribit refused the request (HTTP ${err.status})`, body ? { details: body } : {});
  };
}
