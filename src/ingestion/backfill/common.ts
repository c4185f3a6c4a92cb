import { AppError } from "../../errors.js";
import type { Metrics } from "../../core/metrics.js";
import { logger as rootLogger, type Logger } from "../../lib/log.js";
import { VenueHttpClient, VenueHttpError } from "../../lib/venue-http.js";
import type { BackfillBudget, VenueEndpoints } from "../../venues/endpoint-types.js";
import type { FeedInstrument, InstrumentSource, ParsedFrame } from "../feeds/normalise.js";
import type { Liquidation, StreamVenue, Trade } from "../types.js";

/** Trades of one base over [fromMs, toMs), oldest first and de-duplicated by id; `complete` when the whole interval was covered. */
export interface BackfillResult {
  trades: Trade[];
  complete: boolean;
}

/** A venue's REST trade backfill (fills {@link StreamGap}s of its feed). */
export interface TradeBackfill {
  readonly venue: StreamVenue;
  /**
   * Trades of canonical `base` in [fromMs, toMs). Throws `AppError` when the instrument is unknown
   * (`NOT_FOUND`) or the FIRST request fails; a later failure returns what was fetched with `complete: false`.
   */
  fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult>;
  /**
   * The venue's all-market liquidations in [fromMs, toMs), on venues whose REST publishes them (Gate); absent
   * elsewhere. Never throws: a failure gives `complete: false` with what was fetched.
   */
  fetchLiquidations?(fromMs: number, toMs: number): Promise<LiquidationBackfillResult>;
}

/** Liquidations of every listed instrument over an interval, oldest first; `complete` when the whole interval was covered. */
export interface LiquidationBackfillResult {
  liquidations: Liquidation[];
  complete: boolean;
}

/** Options of every backfill. */
export interface BackfillOptions {
  /** Resolves canonical bases (a `PerpVenueClient` fits). */
  instruments: Pick<InstrumentSource, "instrument" | "instruments">;
  /** REST base URL (default: the venue's live host). */
  baseUrl?: string;
  /** An HTTP client to share (its budget); by default one is made from the options below. */
  http?: VenueHttpClient;
  /** Per-attempt timeout (default 10 000 ms). */
  timeoutMs?: number;
  /** Request budget per minute (default per venue). */
  callsPerMin?: number;
  /** HTTP retries per request (default 2, see {@link VenueHttpClient}). */
  retries?: number;
  /** Most requests per `fetchTrades` call (default per venue); beyond it the result is incomplete. */
  maxPages?: number;
  metrics?: Metrics;
  logger?: Logger;
}

/** Venue defaults of {@link restClient}. */
export interface RestDefaults {
  baseUrl: string;
  callsPerMin: number;
  windowSec?: number;
}

/**
 * The {@link RestDefaults} a venue states in its endpoints.ts: its backfill budget, on the live URL of the
 * REST base the budget names. @throws Error when it names no REST base of the venue (a programming error).
 */
export function backfillDefaults({ rest, backfill }: { rest: VenueEndpoints["rest"]; backfill: BackfillBudget }): RestDefaults {
  const base = rest[backfill.rest];
  if (!base) throw new Error(`the backfill budget names no REST base "${backfill.rest}"`);
  return { baseUrl: base.url, callsPerMin: backfill.callsPerMin, windowSec: backfill.windowSec };
}

/** The options' HTTP client, or a new {@link VenueHttpClient} for the venue. */
export function restClient(venue: StreamVenue, opts: BackfillOptions, d: RestDefaults): VenueHttpClient {
  return (
    opts.http ??
    new VenueHttpClient({
      venue,
      baseUrl: (opts.baseUrl ?? d.baseUrl).replace(/\/+$/, ""),
      callsPerMin: opts.callsPerMin ?? d.callsPerMin,
      windowSec: d.windowSec,
      timeoutMs: opts.timeoutMs ?? 10_000,
      retries: opts.retries,
      metrics: opts.metrics,
    })
  );
}

/** The venue instrument of `base`. @throws AppError NOT_FOUND when the venue does not list it. */
export async function resolveInstrument(venue: StreamVenue, opts: BackfillOptions, base: string): Promise<FeedInstrument> {
  const inst = await opts.instruments.instrument(base.trim().toUpperCase());
  if (!inst) throw new AppError("NOT_FOUND", `${venue} lists no perpetual for ${base}`);
  return inst;
}

/**
 * Runs one request of a paginated backfill and parses it. On the first page a failure (HTTP, or a body
 * with no valid row) throws an AppError; later it returns null so the caller can stop with what it has.
 * A page with some malformed rows is returned with `bad: true`.
 */
export async function page(
  venue: StreamVenue,
  first: boolean,
  log: Logger,
  request: () => Promise<unknown>,
  parse: (raw: unknown) => ParsedFrame,
): Promise<{ raw: unknown; parsed: ParsedFrame; bad: boolean } | null> {
  let raw: unknown;
  try {
    raw = await request();
  } catch (err) {
    const mapped = mapError(venue, err);
    if (first) throw mapped;
    log.warn({ err: mapped.message }, "trade backfill page failed; returning a partial result");
    return null;
  }
  const parsed = parse(raw);
  if (parsed.error && parsed.trades.length === 0) {
    const err = new AppError("UPSTREAM_ERROR", `${venue} trades returned an unexpected shape`, { details: parsed.error });
    if (first) throw err;
    log.warn({ error: parsed.error }, "malformed trade backfill page; returning a partial result");
    return null;
  }
  if (parsed.error) log.warn({ error: parsed.error }, "trade backfill page with malformed rows");
  return { raw, parsed, bad: parsed.error !== undefined };
}

function mapError(venue: StreamVenue, err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof VenueHttpError) {
    if (err.status === 451 || err.status === 403) return new AppError("UPSTREAM_UNAVAILABLE", `${venue} refuses requests from this server (HTTP ${err.status})`);
    return new AppError("UPSTREAM_ERROR", `${venue} refused the trades request (HTTP ${err.status})`);
  }
  return new AppError("UPSTREAM_ERROR", `${venue} trades request failed`, { cause: err });
}

/** Keeps trades in [fromMs, toMs), drops duplicate ids, sorts oldest first. */
export function finish(trades: Trade[], fromMs: number, toMs: number, complete: boolean): BackfillResult {
  const seen = new Set<string>();
  const out = trades.filter((t) => t.time >= fromMs && t.time < toMs && !seen.has(t.id) && seen.add(t.id));
  out.sort((a, b) => a.time - b.time);
  return { trades: out, complete };
}

/** The logger of a backfill. */
export function backfillLogger(venue: StreamVenue, opts: BackfillOptions): Logger {
  return (opts.logger ?? rootLogger).child({ component: "backfill", venue });
}
