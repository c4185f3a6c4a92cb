import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import type { Metrics } from "../core/metrics.js";
import type { VenueHealth } from "../core/venue-health.js";
import { SingleFlight } from "./single-flight.js";

/** A non-retryable HTTP answer from a venue (4xx other than 429); adapters map it to an {@link AppError}. */
export class VenueHttpError extends Error {
  constructor(
    readonly venue: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${venue} answered HTTP ${status}`);
    this.name = "VenueHttpError";
  }
}

/** Options of a {@link VenueHttpClient}. */
export interface VenueHttpOptions {
  /** Venue key used in errors, metrics and `/api/v1/status` (`coingecko`). */
  venue: string;
  /** Base URL without trailing slash; paths are appended verbatim. */
  baseUrl: string;
  /** Headers sent on every request (e.g. an API key). Never logged or echoed. */
  headers?: Record<string, string>;
  /** Per-attempt timeout in milliseconds. */
  timeoutMs: number;
  /** Client-side budget: at most `callsPerMin` requests per minute; beyond that callers wait, up to `maxWaitMs`. */
  callsPerMin: number;
  /**
   * Budget window in seconds (default 60). Venues that limit per short window (OKX 20 requests / 2 s,
   * Bybit 600 / 5 s) set it so that bursts never exceed their rule: the budget is then
   * `callsPerMin × windowSec / 60` requests per window.
   */
  windowSec?: number;
  /** Retries after the first attempt on 429, 5xx, timeouts, network errors and malformed JSON. Default 2. */
  retries?: number;
  /** Longest `Retry-After` (or queue wait) we sit out inside one request before failing with 503. Default 5000 ms. */
  maxWaitMs?: number;
  metrics?: Metrics;
  health?: VenueHealth;
}

/**
 * What callers set on a venue's REST client (CoinGecko aside, which takes its budget from its plan): the
 * client supplies the venue key, the base URL and, when `callsPerMin` is unset, the venue's default budget.
 */
export type VenueClientOptions = Pick<VenueHttpOptions, "timeoutMs" | "metrics" | "health" | "retries" | "maxWaitMs"> &
  Partial<Pick<VenueHttpOptions, "callsPerMin">>;

type Outcome = "ok" | "error" | "rate_limited" | "timeout";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Parses `Retry-After` (seconds or HTTP date) into milliseconds; undefined when absent or unparsable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+(\.\d+)?$/.test(header.trim())) return Math.round(Number(header) * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * JSON-over-HTTPS client for one venue: request budget (queued, never exceeding the venue's published
 * limit), per-attempt timeout, retries with exponential backoff and jitter honouring `Retry-After`,
 * and single-flight of identical concurrent GETs.
 *
 * Errors thrown: {@link VenueHttpError} for a venue 4xx (not 429); {@link AppError} `UPSTREAM_UNAVAILABLE`
 * (with `retryAfterSec`) when rate limited or over budget, `UPSTREAM_TIMEOUT`, or `UPSTREAM_ERROR`.
 */
export class VenueHttpClient {
  private readonly budget: RateLimiterMemory;
  private readonly flights = new SingleFlight<unknown>();
  private readonly retries: number;
  private readonly maxWaitMs: number;

  constructor(private readonly opts: VenueHttpOptions) {
    const windowSec = opts.windowSec ?? 60;
    this.budget = new RateLimiterMemory({ points: Math.max(1, Math.floor((opts.callsPerMin * windowSec) / 60)), duration: windowSec });
    this.retries = opts.retries ?? 2;
    this.maxWaitMs = opts.maxWaitMs ?? 5000;
  }

  /** GETs `path` with `query` and returns the parsed JSON body. */
  getJson(path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<unknown> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const url = `${this.opts.baseUrl}${path}${qs.size ? `?${qs}` : ""}`;
    return this.flights.run(url, () => this.fetchWithRetry(url));
  }

  /** POSTs a JSON body to `path` and returns the parsed JSON answer (Hyperliquid `/info` style). Identical concurrent bodies share one call. */
  postJson(path: string, body: unknown): Promise<unknown> {
    const url = `${this.opts.baseUrl}${path}`;
    const payload = JSON.stringify(body);
    return this.flights.run(`POST ${url} ${payload}`, () => this.fetchWithRetry(url, { method: "POST", body: payload, headers: { "content-type": "application/json" } }));
  }

  /** Waits for a slot of the request budget, at most `maxWaitMs`. @throws AppError UPSTREAM_UNAVAILABLE beyond that. */
  private async takeBudget(): Promise<void> {
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      try {
        await this.budget.consume(this.opts.venue);
        return;
      } catch (r) {
        if (!(r instanceof RateLimiterRes)) throw r;
        if (Date.now() + r.msBeforeNext > deadline) {
          throw new AppError("UPSTREAM_UNAVAILABLE", `${this.opts.venue} request budget exhausted; retry shortly`, {
            retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
          });
        }
        await sleep(r.msBeforeNext);
      }
    }
  }

  private record(outcome: Outcome, startedAt: number, reason?: string): void {
    const { metrics, health, venue } = this.opts;
    metrics?.upstreamCalls.inc({ venue, outcome });
    metrics?.upstreamDuration.observe({ venue }, (performance.now() - startedAt) / 1000);
    if (outcome === "ok") health?.ok(venue);
    else health?.fail(venue, reason ?? outcome);
  }

  private backoffMs(attempt: number): number {
    return Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
  }

  private async fetchWithRetry(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<unknown> {
    const { venue } = this.opts;
    let last: AppError = new AppError("UPSTREAM_ERROR", `${venue} request failed`);
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      await this.takeBudget();
      const startedAt = performance.now();
      let res: Response;
      try {
        res = await fetch(url, {
          method: init.method ?? "GET",
          body: init.body,
          headers: { accept: "application/json", ...this.opts.headers, ...init.headers },
          signal: AbortSignal.timeout(this.opts.timeoutMs),
        });
      } catch (err) {
        const timedOut = (err as Error).name === "TimeoutError";
        this.record(timedOut ? "timeout" : "error", startedAt, timedOut ? "timeout" : "network error");
        last = timedOut
          ? new AppError("UPSTREAM_TIMEOUT", `${venue} did not answer within ${this.opts.timeoutMs} ms`)
          : new AppError("UPSTREAM_UNAVAILABLE", `${venue} is unreachable`, { retryAfterSec: 5 });
        if (attempt < this.retries) await sleep(this.backoffMs(attempt));
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel();
        const limited = res.status === 429;
        this.record(limited ? "rate_limited" : "error", startedAt, `HTTP ${res.status}`);
        const wait = retryAfterMs(res.headers.get("retry-after")) ?? this.backoffMs(attempt);
        last = new AppError("UPSTREAM_UNAVAILABLE", `${venue} ${limited ? "rate limit reached" : `answered HTTP ${res.status}`}`, {
          retryAfterSec: Math.max(1, Math.ceil(wait / 1000)),
        });
        if (attempt >= this.retries || wait > this.maxWaitMs) throw last;
        await sleep(wait);
        continue;
      }
      const text = await res.text();
      if (!res.ok) {
        this.record("ok", startedAt); // the venue is reachable; the request itself was refused
        throw new VenueHttpError(venue, res.status, text.slice(0, 500));
      }
      try {
        const body: unknown = JSON.parse(text);
        this.record("ok", startedAt);
        return body;
      } catch {
        this.record("error", startedAt, "malformed JSON");
        last = new AppError("UPSTREAM_ERROR", `${venue} sent a malformed response`);
        if (attempt < this.retries) await sleep(this.backoffMs(attempt));
      }
    }
    throw last;
  }
}
