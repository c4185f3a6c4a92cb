import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import type { Metrics } from "../core/metrics.js";
import type { CallResult, Evidence } from "../core/circuit.js";
import { currentScope, noteVenueExchange, type RequestScope, type VenueExchange } from "../core/request-scope.js";
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
  /** Reachability record and the venue's circuit breaker (`health.circuit(venue)`); without it, no breaker. */
  health?: VenueHealth;
  /**
   * How long, in ms, the venue's own rate-limit headers on an answer ask us to stop (Gate's
   * `X-Gate-RateLimit-*`: nothing left until the reset); 0 when they ask nothing. Until then no request is sent:
   * callers wait (at most `maxWaitMs`, never past the request deadline) or get 503 with Retry-After.
   */
  limitPause?: (headers: Headers, nowMs: number) => number;
}

/**
 * What callers set on a venue's REST client (CoinGecko aside, which takes its budget from its plan): the
 * client supplies the venue key, the base URL and, when `callsPerMin` is unset, the venue's default budget.
 */
export type VenueClientOptions = Pick<VenueHttpOptions, "timeoutMs" | "metrics" | "health" | "retries" | "maxWaitMs"> & Partial<Pick<VenueHttpOptions, "callsPerMin">>;

type Outcome = "ok" | "error" | "rate_limited" | "timeout" | "deadline";

/** What a call adds to a plain GET (Hyperliquid's POST `/info`). */
interface CallInit {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

/** One attempt's result; `waitMs` is the pause before the next attempt (`capped`: a Retry-After-driven wait, bounded by `maxWaitMs`). */
type Attempt =
  | { kind: "ok"; body: unknown }
  | { kind: "refused"; error: VenueHttpError }
  | { kind: "failed"; error: AppError; unhealthy: boolean; waitMs: number; capped: boolean }
  | { kind: "cut"; error: AppError; unhealthy: boolean };

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
 * single-flight of identical concurrent GETs, and the venue's circuit breaker (from `health`, one per venue
 * key). Inside a request scope (src/core/request-scope.ts) no attempt, retry wait or budget wait runs past
 * the request's deadline: the in-flight fetch is aborted when it passes. Outside one (background jobs)
 * only the per-attempt timeout applies.
 *
 * Errors thrown: {@link VenueHttpError} for a venue 4xx (not 429); {@link AppError} `UPSTREAM_UNAVAILABLE`
 * (with `retryAfterSec`) when rate limited, over budget or while the venue's circuit is open,
 * `UPSTREAM_TIMEOUT` (per-attempt timeout or request deadline), or `UPSTREAM_ERROR`.
 */
export class VenueHttpClient {
  private readonly budget: RateLimiterMemory;
  private readonly flights = new SingleFlight<unknown>();
  /** The simulator's marks of the bodies fetched, for the calls sharing them ({@link shared}). */
  private readonly marks = new WeakMap<object, Pick<VenueExchange, "simSource" | "recording">>();
  private readonly retries: number;
  private readonly maxWaitMs: number;
  /** No request before this time (epoch ms): the venue's rate-limit headers said its budget is used up. */
  private pausedUntil = 0;

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
    return this.shared(url, url, {}, () => this.fetchWithRetry(url));
  }

  /** POSTs a JSON body to `path` and returns the parsed JSON answer (Hyperliquid `/info` style). Identical concurrent bodies share one call. */
  postJson(path: string, body: unknown): Promise<unknown> {
    const url = `${this.opts.baseUrl}${path}`;
    const payload = JSON.stringify(body);
    const init: CallInit = { method: "POST", body: payload, headers: { "content-type": "application/json" } };
    return this.shared(`POST ${url} ${payload}`, url, init, () => this.fetchWithRetry(url, init));
  }

  /**
   * Runs `load` once for concurrent identical calls (`key`). A call that shares another's fetch notes the exchange
   * in its own request scope too (status and the simulator's marks of the shared body): the request used that data.
   */
  private async shared(key: string, url: string, init: CallInit, load: () => Promise<unknown>): Promise<unknown> {
    let led = false;
    const body = await this.flights.run(key, () => {
      led = true;
      return load();
    });
    if (!led) {
      const marks = typeof body === "object" && body !== null ? this.marks.get(body) : undefined;
      this.noteExchange(url, init, performance.now(), { status: 200, ...marks });
    }
    return body;
  }

  /**
   * Waits for a slot of the request budget, at most `maxWaitMs` and never past the request deadline.
   * @throws AppError UPSTREAM_UNAVAILABLE beyond that.
   */
  private async takeBudget(scope: RequestScope | undefined): Promise<void> {
    const limitAt = Math.min(Date.now() + this.maxWaitMs, scope?.deadlineAt ?? Infinity);
    const paused = this.pausedUntil - Date.now();
    if (paused > 0) {
      if (Date.now() + paused > limitAt) {
        throw new AppError("UPSTREAM_UNAVAILABLE", `${this.opts.venue} rate limit used up (per its headers); retry shortly`, {
          retryAfterSec: Math.max(1, Math.ceil(paused / 1000)),
        });
      }
      await sleep(paused);
    }
    for (;;) {
      try {
        await this.budget.consume(this.opts.venue);
        return;
      } catch (r) {
        if (!(r instanceof RateLimiterRes)) throw r;
        if (Date.now() + r.msBeforeNext > limitAt) {
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
    else if (outcome !== "deadline") health?.fail(venue, reason ?? outcome);
  }

  private backoffMs(attempt: number): number {
    return Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
  }

  /** Runs the attempts through the venue's circuit breaker (when the client has a `health` registry). */
  private async fetchWithRetry(url: string, init: CallInit = {}): Promise<unknown> {
    const circuit = this.opts.health?.circuit(this.opts.venue);
    if (circuit) return circuit.run(() => this.attempts(url, init));
    const r = await this.attempts(url, init);
    if (r.ok) return r.value;
    throw r.error;
  }

  /**
   * The first attempt and its retries, as one call: its value, or its error with what the call says about
   * the venue's health (the latest attempt that reached the venue decides; budget and deadline add nothing).
   */
  private async attempts(url: string, init: CallInit): Promise<CallResult<unknown>> {
    const scope = currentScope();
    let last: AppError | undefined;
    let evidence: Evidence = "inconclusive";
    for (let n = 0; n <= this.retries; n++) {
      if (scope?.signal.aborted) return { ok: false, error: last ?? this.deadlineError(), evidence };
      try {
        await this.takeBudget(scope);
      } catch (err) {
        return { ok: false, error: err, evidence };
      }
      const a = await this.attempt(url, init, n, scope);
      if (a.kind === "ok") return { ok: true, value: a.body };
      if (a.kind === "refused") return { ok: false, error: a.error, evidence: "healthy" };
      if (a.kind === "cut") return { ok: false, error: a.error, evidence: a.unhealthy ? "unhealthy" : evidence };
      last = a.error;
      evidence = a.unhealthy ? "unhealthy" : "healthy";
      if (n >= this.retries || (a.capped && a.waitMs > this.maxWaitMs)) break;
      // Sleeping past the deadline would only end in the same failure later: give it now.
      if (scope && Date.now() + a.waitMs >= scope.deadlineAt) break;
      await sleep(a.waitMs);
    }
    return { ok: false, error: last!, evidence };
  }

  /** One HTTP exchange, bounded by the per-attempt timeout and, inside a request, by its deadline. */
  private async attempt(url: string, init: CallInit, n: number, scope: RequestScope | undefined): Promise<Attempt> {
    const { venue, timeoutMs } = this.opts;
    const startedAt = performance.now();
    const perAttempt = AbortSignal.timeout(timeoutMs);
    const signal = scope ? AbortSignal.any([perAttempt, scope.signal]) : perAttempt;
    let res: Response | undefined;
    let simMarks: Pick<VenueExchange, "simSource" | "recording"> | undefined;
    let text: string;
    try {
      res = await fetch(url, {
        method: init.method ?? "GET",
        body: init.body,
        headers: { accept: "application/json", ...this.opts.headers, ...init.headers },
        signal,
      });
      simMarks = { simSource: res.headers.get("x-sim-source") ?? undefined, recording: res.headers.get("x-sim-recording") ?? undefined };
      this.noteExchange(url, init, startedAt, { status: res.status, ...simMarks });
      const pause = this.opts.limitPause?.(res.headers, Date.now()) ?? 0;
      if (pause > 0) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel();
        const limited = res.status === 429;
        this.record(limited ? "rate_limited" : "error", startedAt, `HTTP ${res.status}`);
        const waitMs = retryAfterMs(res.headers.get("retry-after")) ?? this.backoffMs(n);
        const error = new AppError("UPSTREAM_UNAVAILABLE", `${venue} ${limited ? "rate limit reached" : `answered HTTP ${res.status}`}`, {
          retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)),
        });
        return { kind: "failed", error, unhealthy: !limited, waitMs, capped: true };
      }
      text = await res.text();
    } catch (err) {
      const cut = perAttempt.aborted || scope?.signal.aborted === true;
      const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
      const detail = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : undefined;
      if (res === undefined) this.noteExchange(url, init, startedAt, { failure: cut ? "timeout" : "unreachable", detail });
      if (scope?.signal.aborted && !perAttempt.aborted) {
        // Cut by the request deadline. A venue that had half its timeout and still said nothing is
        // unhealthy; a shorter cut says nothing about it (the request simply ran out of time).
        const unhealthy = performance.now() - startedAt >= timeoutMs / 2;
        this.record(unhealthy ? "timeout" : "deadline", startedAt, "timeout");
        return { kind: "cut", error: this.deadlineError(), unhealthy };
      }
      const timedOut = perAttempt.aborted;
      this.record(timedOut ? "timeout" : "error", startedAt, timedOut ? "timeout" : "network error");
      const error = timedOut
        ? new AppError("UPSTREAM_TIMEOUT", `${venue} did not answer within ${timeoutMs} ms`)
        : new AppError("UPSTREAM_UNAVAILABLE", `${venue} is unreachable`, { retryAfterSec: 5 });
      return { kind: "failed", error, unhealthy: true, waitMs: this.backoffMs(n), capped: false };
    }
    if (!res.ok) {
      this.record("ok", startedAt); // the venue is reachable; the request itself was refused
      return { kind: "refused", error: new VenueHttpError(venue, res.status, text.slice(0, 500)) };
    }
    try {
      const body: unknown = JSON.parse(text);
      if (simMarks?.simSource !== undefined && typeof body === "object" && body !== null) this.marks.set(body, simMarks);
      this.record("ok", startedAt);
      return { kind: "ok", body };
    } catch {
      this.record("error", startedAt, "malformed JSON");
      return { kind: "failed", error: new AppError("UPSTREAM_ERROR", `${venue} sent a malformed response`), unhealthy: true, waitMs: this.backoffMs(n), capped: false };
    }
  }

  /** Notes one exchange in the request scope (data-source labels, `marketgate doctor`); the query string is left out. */
  private noteExchange(url: string, init: CallInit, startedAt: number, fields: Pick<VenueExchange, "status" | "failure" | "detail" | "simSource" | "recording">): void {
    const path = url.slice(this.opts.baseUrl.length).split("?")[0] || "/";
    noteVenueExchange({ venue: this.opts.venue, endpoint: `${init.method ?? "GET"} ${path}`, ms: Math.round(performance.now() - startedAt), ...fields }, this.opts.health);
  }

  private deadlineError(): AppError {
    return new AppError("UPSTREAM_TIMEOUT", `${this.opts.venue} did not answer within the request deadline`);
  }
}
