import { memoize, memoizeKeyed } from "../../lib/memo.js";
import { HOUR_MS, MINUTE_MS } from "../../lib/time.js";
import { AppError } from "../../errors.js";
import { VenueHttpClient, type VenueClientOptions } from "../../lib/venue-http.js";
import type { Candle, MarginTier, PerpInstrument, PerpVenue } from "./types.js";

/** Options of every perp venue client ({@link PerpClientBase}); `callsPerMin` defaults to the venue's budget in its endpoints.ts. */
export interface PerpClientOptions extends VenueClientOptions {
  /** How long the instrument list (and what is loaded with it) is cached (default 1 h). */
  instrumentsTtlMs?: number;
}

/** How long a symbol's maintenance-margin tiers are reused: venues change their tables rarely. */
export const TIERS_TTL_MS = HOUR_MS;
/** How long hourly candles are reused: the entry distribution of the heatmap moves slowly. */
export const CANDLES_TTL_MS = MINUTE_MS;

/**
 * A per-key cache of `ttlMs` for one kind of per-symbol data (keys are trimmed and uppercased):
 * `(key, load)` returns the kept value or runs `load` once for concurrent callers; failures are not kept.
 */
function perSymbol<T extends object>(ttlMs: number): (key: string, load: () => Promise<T>) => Promise<T> {
  const cache = memoizeKeyed(ttlMs, 1000, (a: { load: () => Promise<T> }) => a.load());
  return (key, load) => cache(key.trim().toUpperCase(), { load });
}

/** Per-venue settings of a {@link PerpClientBase}. */
export interface PerpVenueDefaults {
  /** Request budget per minute when the options set none. */
  callsPerMin: number;
  /** Budget window in seconds for venues limiting per short window (default 60, see {@link VenueHttpClient}). */
  windowSec?: number;
  /** What the venue lists, for the not-found message: `<venue> lists no <listing> for <base>` (`USDT perpetual`). */
  listing: string;
  /** The venue's rate-limit headers read after each answer (see `VenueHttpOptions.limitPause`). */
  limitPause?: (headers: Headers, nowMs: number) => number;
}

/** The cached instrument list, indexed by venue symbol and by canonical base. Venues may extend it. */
export interface Catalog {
  list: PerpInstrument[];
  bySymbol: Map<string, PerpInstrument>;
  /** Canonical base → instrument; when a base is listed twice, the smallest multiplier (`PEPEUSDT` over `1000PEPEUSDT`). */
  byBase: Map<string, PerpInstrument>;
}

/** Indexes a parsed instrument list into a {@link Catalog}. */
export function indexCatalog(list: PerpInstrument[]): Catalog {
  const byBase = new Map<string, PerpInstrument>();
  for (const i of list) {
    const prev = byBase.get(i.base);
    if (!prev || i.multiplier < prev.multiplier) byBase.set(i.base, i);
  }
  return { list, bySymbol: new Map(list.map((i) => [i.venueSymbol, i])), byBase };
}

/** A {@link VenueHttpClient} for `baseUrl` (trailing slashes dropped) with `opts`, budget defaulting to `callsPerMin`. */
export function perpHttpClient(
  venue: PerpVenue,
  baseUrl: string,
  opts: PerpClientOptions,
  defaults: Pick<PerpVenueDefaults, "callsPerMin" | "windowSec" | "limitPause">,
): VenueHttpClient {
  return new VenueHttpClient({
    venue,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    callsPerMin: opts.callsPerMin ?? defaults.callsPerMin,
    windowSec: defaults.windowSec,
    timeoutMs: opts.timeoutMs,
    metrics: opts.metrics,
    health: opts.health,
    retries: opts.retries,
    maxWaitMs: opts.maxWaitMs,
    limitPause: defaults.limitPause,
  });
}

/**
 * What the perp venue clients share: the venue's {@link VenueHttpClient} and the instrument catalog,
 * loaded by {@link loadCatalog} on first use and kept for `instrumentsTtlMs` (concurrent callers share
 * one load; a failed load is retried on the next call). Subclasses implement the data methods of
 * `PerpVenueClient`. Lookups by base are trimmed and uppercased (`pepe` finds `1000PEPEUSDT`).
 */
export abstract class PerpClientBase<C extends Catalog = Catalog> {
  protected readonly http: VenueHttpClient;
  /** Instruments (and whatever the venue loads with them), kept for `instrumentsTtlMs`. */
  protected readonly catalog: () => Promise<C>;
  private readonly listing: string;

  constructor(
    readonly venue: PerpVenue,
    baseUrl: string,
    opts: PerpClientOptions,
    defaults: PerpVenueDefaults,
  ) {
    this.http = perpHttpClient(venue, baseUrl, opts, defaults);
    this.listing = defaults.listing;
    this.catalog = memoize(opts.instrumentsTtlMs ?? 3_600_000, () => this.loadCatalog());
  }

  /** Listed perpetuals (cached; concurrent callers share one load). */
  async instruments(): Promise<PerpInstrument[]> {
    return (await this.catalog()).list;
  }

  /** The perpetual of canonical `base` (`PEPE` finds `1000PEPEUSDT` / `kPEPE`), or undefined. */
  async instrument(base: string): Promise<PerpInstrument | undefined> {
    return (await this.catalog()).byBase.get(base.trim().toUpperCase());
  }

  /** The catalog and the instrument of `base`. @throws AppError NOT_FOUND when the venue does not list it. */
  protected async require(base: string): Promise<{ cat: C; inst: PerpInstrument }> {
    const cat = await this.catalog();
    const inst = cat.byBase.get(base.trim().toUpperCase());
    if (!inst) throw new AppError("NOT_FOUND", `${this.venue} lists no ${this.listing} for ${base}`);
    return { cat, inst };
  }

  private readonly tierCache = perSymbol<MarginTier[]>(TIERS_TTL_MS);
  private readonly candleCache = perSymbol<Candle[]>(CANDLES_TTL_MS);

  /**
   * The tier table of `base`, read through `fetch` once per {@link TIERS_TTL_MS} (concurrent callers share
   * the read). For subclasses implementing `marginTiers`. @throws AppError NOT_FOUND when not listed.
   */
  protected cachedTiers(base: string, fetch: (inst: PerpInstrument) => Promise<MarginTier[]>): Promise<MarginTier[]> {
    return this.tierCache(base, async () => fetch((await this.require(base)).inst));
  }

  /**
   * The last `limit` hourly candles of `base` (clamped to the venue's `max`; `limit` < 1 → []), read through
   * `fetch(inst, n)` once per {@link CANDLES_TTL_MS} and limit. For subclasses implementing `hourlyCandles`.
   * @throws AppError NOT_FOUND when not listed.
   */
  protected cachedCandles(base: string, limit: number, max: number, fetch: (inst: PerpInstrument, n: number) => Promise<Candle[]>): Promise<Candle[]> {
    return this.candleCache(`${base}:${limit}`, async () => {
      const { inst } = await this.require(base);
      if (!(limit >= 1)) return [];
      const n = Math.min(max, Math.floor(limit));
      return (await fetch(inst, n)).slice(-n);
    });
  }

  /** Loads the instrument list from the venue (called through the {@link catalog} memo only). */
  protected abstract loadCatalog(): Promise<C>;
}
