/**
 * `GET /ready`: whether this replica can serve paid traffic now, per component, for load balancers and
 * orchestrators. `/health` only says the process answers (liveness: restart when it fails); `/ready` says
 * whether to send it traffic (readiness: take it out of rotation while it fails, without restarting it).
 *
 * Components (each `ok`, `fail` or `not_configured`; any `fail` makes the answer 503):
 * - `redis`: a PING on the shared Redis, when `REDIS_URL` is set;
 * - `chain_rpc`: `eth_chainId` on `RPC_URL`, when set (and the chain id must match an `eip155` `NETWORK`);
 * - `facilitator`: the facilitators' `supported` kinds (the first that answers, as payments use them), when
 *   payments are on;
 * - `perp_venues`, `dex_venues`, `cex_venues`: at least one venue of the family reachable. A venue counts when
 *   the service's own calls to it succeeded recently (the venue health states, `/api/v1/status`); only a
 *   family with no recent success is probed, with cheap uncached calls through the service's clients (their
 *   budgets and circuit breakers apply), one venue at a time in order until one answers: the next venue is
 *   tried when a probe fails or has not answered within `hedgeMs`, so a hanging venue costs little time. The
 *   venues with small budgets (GeckoTerminal, CoinGecko) are probed only when the others all failed.
 *
 * Components are checked side by side, each probe bounded by `timeoutMs`, so an answer takes a few seconds
 * at worst, and usually one call per idle family at most.
 * Answers are computed at most once per `cacheMs` (concurrent requests share one computation), so frequent
 * polling cannot spend venue budgets; a probe's success also counts as a recent call afterwards.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type { RequestHandler } from "express";
import type { Venues } from "../src/core/context.js";
import type { VenueHealth, VenueState } from "../src/core/venue-health.js";
import { AppError } from "../src/errors.js";
import { scrubUrls } from "../src/lib/redact.js";
import type { RedisHandle } from "../src/state/redis.js";

/** One component's state in the `/ready` answer. */
export interface ComponentReadiness {
  status: "ok" | "fail" | "not_configured";
  /** Time the check took (probes only). */
  latency_ms?: number;
  /** Why it failed (caller-safe: URLs redacted). */
  error?: string;
  [detail: string]: unknown;
}

/** The `/ready` body. */
export interface ReadinessReport {
  status: "ready" | "not_ready";
  checked_at: string;
  components: Record<string, ComponentReadiness>;
}

/** What the readiness checks read. */
export interface ReadinessDeps {
  health: VenueHealth;
  venues: Venues;
  /** The shared Redis (`REDIS_URL`); undefined with embedded state. */
  redis?: RedisHandle;
  /** `RPC_URL`, when set. */
  rpcUrl?: string;
  /** CAIP-2 `NETWORK`: an `eip155:<id>` network makes `chain_rpc` compare the chain id. */
  network?: string;
  /** The payment facilitator(s); undefined when payments are off. */
  facilitator?: FacilitatorClient;
  /** A venue call that succeeded within this window counts as reachable without a probe (ms, default 120 000). */
  recentMs?: number;
  /** Longest wait for one check or probe (ms, default 3000). */
  timeoutMs?: number;
  /** A venue probe that has not answered within this long starts the next venue's (ms, default 1000). */
  hedgeMs?: number;
  /** How long one computed answer is reused (ms, default 5000). */
  cacheMs?: number;
}

/**
 * A family of venues and the cheap, uncached call that probes each (calls `marketgate doctor` makes too).
 * `scarce`: a small request budget (GeckoTerminal about 30/min, CoinGecko's public plan 5/min), probed only
 * when no other venue of the family answered.
 */
interface Family {
  component: string;
  venues: Array<{ venue: string; scarce?: boolean; probe: (v: Venues) => Promise<unknown> }>;
}

/** WETH on Ethereum: the token the DEX probes ask about. */
const WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";

const FAMILIES: readonly Family[] = [
  {
    component: "perp_venues",
    venues: [
      { venue: "binance", probe: (v) => v.perps.binance.funding("BTC") },
      { venue: "bybit", probe: (v) => v.perps.bybit.funding("BTC") },
      { venue: "okx", probe: (v) => v.perps.okx.funding("BTC") },
      { venue: "hyperliquid", probe: (v) => v.perps.hyperliquid.funding("BTC") },
    ],
  },
  {
    component: "dex_venues",
    venues: [
      { venue: "dexscreener", probe: (v) => v.dexscreener.tokens("ethereum", [WETH]) },
      {
        venue: "geckoterminal",
        scarce: true,
        // The pool list is kept 10 minutes: the OHLCV call after it is the one that reaches GeckoTerminal.
        probe: async (v) => {
          const [pool] = await v.geckoterminal.tokenPools("ethereum", WETH);
          if (!pool) throw new Error("geckoterminal listed no WETH pool");
          return v.geckoterminal.ohlcv("ethereum", pool.pairAddress, { timeframe: "hour", aggregate: 1 }, { limit: 1 });
        },
      },
    ],
  },
  {
    component: "cex_venues",
    venues: [
      // Binance spot first: its budget is far larger than CoinGecko's. Binance's health state covers spot and futures.
      { venue: "binance", probe: (v) => v.spot.spotPrice("BTC") },
      { venue: "coingecko", scarce: true, probe: (v) => v.coingecko.simplePrice(["bitcoin"]) },
    ],
  },
];

class Timeout extends Error {}

/** `p`, or a {@link Timeout} rejection after `ms` (the call itself is not cancelled; its own timeout applies). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** A caller-safe reason: an AppError's code and message, else the message with URLs redacted. */
function reason(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  return scrubUrls(message).slice(0, 300);
}

/** Times `check`: `ok` with its details, or `fail` with the reason. */
async function timed(check: () => Promise<Record<string, unknown> | void>, timeoutMs: number): Promise<ComponentReadiness> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const details = (await within(check(), timeoutMs)) ?? {};
    return { status: "ok", latency_ms: ms(), ...details };
  } catch (err) {
    return { status: "fail", latency_ms: ms(), error: reason(err) };
  }
}

/** Readiness of the service; see the module comment. */
export class Readiness {
  private readonly recentMs: number;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private readonly hedgeMs: number;
  private last?: { at: number; report: ReadinessReport };
  private inflight?: Promise<ReadinessReport>;

  constructor(private readonly deps: ReadinessDeps) {
    this.recentMs = deps.recentMs ?? 120_000;
    this.timeoutMs = deps.timeoutMs ?? 3000;
    this.cacheMs = deps.cacheMs ?? 5000;
    this.hedgeMs = deps.hedgeMs ?? 1000;
  }

  /** The current report (reused for `cacheMs` after it was computed; concurrent callers share one computation). */
  check(): Promise<ReadinessReport> {
    if (this.inflight) return this.inflight;
    if (this.last && Date.now() - this.last.at < this.cacheMs) return Promise.resolve(this.last.report);
    this.inflight = this.compute()
      .then((report) => {
        this.last = { at: Date.now(), report };
        return report;
      })
      .finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async compute(): Promise<ReadinessReport> {
    const [redis, chain, facilitator, ...families] = await Promise.all([
      this.redis(),
      this.chainRpc(),
      this.facilitator(),
      ...FAMILIES.map((f) => this.family(f)),
    ]);
    const components: Record<string, ComponentReadiness> = { redis: redis!, chain_rpc: chain!, facilitator: facilitator! };
    FAMILIES.forEach((f, i) => (components[f.component] = families[i]!));
    const ready = Object.values(components).every((c) => c.status !== "fail");
    return { status: ready ? "ready" : "not_ready", checked_at: new Date().toISOString(), components };
  }

  private async redis(): Promise<ComponentReadiness> {
    const redis = this.deps.redis;
    if (!redis) return { status: "not_configured" };
    return timed(async () => {
      // Commands fail fast while disconnected (no offline queue): no wait for a reconnect.
      const pong = await redis.client.ping();
      if (pong !== "PONG") throw new Error(`unexpected PING answer ${JSON.stringify(pong).slice(0, 40)}`);
    }, this.timeoutMs);
  }

  private async chainRpc(): Promise<ComponentReadiness> {
    const rpcUrl = this.deps.rpcUrl;
    if (!rpcUrl) return { status: "not_configured" };
    const expected = /^eip155:(\d+)$/.exec(this.deps.network ?? "")?.[1];
    return timed(async () => {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) throw new Error(`eth_chainId: HTTP ${res.status}`);
      const body = (await res.json()) as { result?: unknown };
      if (typeof body.result !== "string") throw new Error("eth_chainId: no result");
      const chainId = Number.parseInt(body.result, 16);
      if (expected !== undefined && chainId !== Number(expected)) throw new Error(`eth_chainId ${chainId}, NETWORK expects ${expected}`);
      return { chain_id: chainId };
    }, this.timeoutMs);
  }

  private async facilitator(): Promise<ComponentReadiness> {
    const f = this.deps.facilitator;
    if (!f) return { status: "not_configured" };
    return timed(async () => {
      const supported = await f.getSupported();
      return { kinds: supported.kinds.length };
    }, this.timeoutMs);
  }

  /** `ok` through the first venue of the family with a recent success; else probed (see the module comment), `ok` if one answers. */
  private async family(f: Family): Promise<ComponentReadiness> {
    const states = new Map(this.deps.health.snapshot().map((s) => [s.venue, s]));
    const at = Date.now();
    const recent = (s: VenueState | undefined) =>
      s !== undefined && s.reachable === true && s.circuit !== "open" && s.last_ok_at !== null && at - Date.parse(s.last_ok_at) <= this.recentMs;
    const fresh = f.venues.find((v) => recent(states.get(v.venue)));
    if (fresh) return { status: "ok", venue: fresh.venue, via: "recent_call", last_ok_at: states.get(fresh.venue)!.last_ok_at };
    const first = await this.probeInOrder(f.venues.filter((v) => !v.scarce));
    const second = first.ok ? undefined : await this.probeInOrder(f.venues.filter((v) => v.scarce));
    const ok = first.ok ?? second?.ok;
    const failed = [...first.failed, ...(second?.failed ?? [])];
    if (ok) return { status: "ok", venue: ok.venue, via: "probe", latency_ms: ok.latency_ms, ...(failed.length ? { failed } : {}) };
    return { status: "fail", error: `no ${f.component.replace("_venues", "")} venue reachable`, failed };
  }

  /**
   * Probes `list` one venue at a time until one answers; the next starts when a probe fails or is still
   * running after `hedgeMs`. Resolves at the first success (later answers are ignored) or when all failed;
   * `failed` lists the failures seen by then, in list order.
   */
  private probeInOrder(list: Family["venues"]): Promise<{ ok?: { venue: string; latency_ms?: number }; failed: Array<{ venue: string; error: string }> }> {
    return new Promise((resolve) => {
      const failed: Array<{ i: number; venue: string; error: string }> = [];
      const report = () => failed.sort((a, b) => a.i - b.i).map(({ venue, error }) => ({ venue, error }));
      let next = 0;
      let running = 0;
      let done = false;
      const launch = (): void => {
        if (done || next >= list.length) return;
        const i = next++;
        const v = list[i]!;
        running++;
        const hedge = setTimeout(launch, this.hedgeMs);
        void timed(() => v.probe(this.deps.venues).then(() => undefined), this.timeoutMs).then((r) => {
          clearTimeout(hedge);
          running--;
          if (done) return;
          if (r.status === "ok") {
            done = true;
            return resolve({ ok: { venue: v.venue, latency_ms: r.latency_ms }, failed: report() });
          }
          failed.push({ i, venue: v.venue, error: r.error ?? "failed" });
          if (next < list.length) launch();
          else if (running === 0) {
            done = true;
            resolve({ failed: report() });
          }
        });
      };
      if (list.length === 0) return resolve({ failed: [] });
      launch();
    });
  }
}

/** The `/ready` route: 200 when every configured component is ok, else 503; never cached by clients. */
export function readyRoute(readiness: Readiness | undefined): RequestHandler {
  return async (_req, res, next) => {
    try {
      const report: ReadinessReport = readiness ? await readiness.check() : { status: "ready", checked_at: new Date().toISOString(), components: {} };
      res.setHeader("Cache-Control", "no-store");
      res.status(report.status === "ready" ? 200 : 503).json(report);
    } catch (err) {
      next(err);
    }
  };
}
