/**
 * Readiness of this replica for `GET /ready` (`http/ready.ts`): whether it can serve paid traffic now, per
 * component. `/health` only says the process answers (liveness: restart when it fails); `/ready` says whether to
 * send it traffic (readiness: take it out of rotation while it fails, without restarting it).
 *
 * The check list ({@link READINESS_CHECKS}), each component `ok`, `fail` or `not_configured` (any `fail` makes the
 * answer `not_ready`):
 * - `redis`: a PING on the shared Redis, when `REDIS_URL` is set;
 * - `chain_rpc`: `eth_chainId` on `RPC_URL`, when set (and the chain id must match an `eip155` `NETWORK`);
 * - `solana_rpc`: `getLatestBlockhash` on `SOLANA_RPC_URL`, when the self facilitator settles Solana payments;
 * - `facilitator`: the facilitators' `supported` kinds (the first that answers, as payments use them), when
 *   payments are on;
 * - `perp_venues`, `dex_venues`, `cex_venues`: at least one venue of the family reachable, from recent calls or
 *   the doctor's probes (`readiness-venues.ts`).
 *
 * Components are checked side by side, each bounded by `timeoutMs`, so an answer takes a few seconds at worst,
 * and usually one venue call per idle family at most. Answers are computed at most once per `cacheMs` (concurrent
 * requests share one computation), so frequent polling cannot spend venue budgets; a probe's success also counts
 * as a recent call afterwards.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type { Venues } from "../core/context.js";
import type { VenueHealth } from "../core/venue-health.js";
import type { RedisHandle } from "../state/redis.js";
import { timed, type ComponentReadiness } from "./readiness-check.js";
import { familyReadiness, VENUE_FAMILIES } from "./readiness-venues.js";

/** The `/ready` body. */
export interface ReadinessReport {
  status: "ready" | "not_ready";
  /** ISO 8601 time the report was computed. */
  checked_at: string;
  /** Each component's state, in {@link READINESS_CHECKS} order. */
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
  /** `SOLANA_RPC_URL` of the self facilitator, when it settles Solana payments. */
  solanaRpcUrl?: string;
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

/** {@link ReadinessDeps} with every bound set. */
type Bounded = ReadinessDeps & { recentMs: number; timeoutMs: number; hedgeMs: number };

/** One component of the answer and how it is checked (never rejects: a failure is a `fail` state). */
interface ReadinessCheck {
  component: string;
  run(deps: Bounded): Promise<ComponentReadiness>;
}

/** A PING on the shared Redis. Commands fail fast while disconnected (no offline queue): no wait for a reconnect. */
async function redisReadiness({ redis, timeoutMs }: Bounded): Promise<ComponentReadiness> {
  if (!redis) return { status: "not_configured" };
  return timed(async () => {
    const pong = await redis.client.ping();
    if (pong !== "PONG") throw new Error(`unexpected PING answer ${JSON.stringify(pong).slice(0, 40)}`);
  }, timeoutMs);
}

/** The `result` of one JSON-RPC call to `url` (`undefined` when absent). @throws Error naming `method` on an HTTP failure. */
async function rpcResult(url: string, method: string, params: unknown[], timeoutMs: number): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
  return ((await res.json()) as { result?: unknown }).result;
}

/** `eth_chainId` on `RPC_URL` (`chain_id` in the answer), compared with an `eip155:<id>` `NETWORK`. */
async function chainRpcReadiness({ rpcUrl, network, timeoutMs }: Bounded): Promise<ComponentReadiness> {
  if (!rpcUrl) return { status: "not_configured" };
  const expected = /^eip155:(\d+)$/.exec(network ?? "")?.[1];
  return timed(async () => {
    const result = await rpcResult(rpcUrl, "eth_chainId", [], timeoutMs);
    if (typeof result !== "string") throw new Error("eth_chainId: no result");
    const chainId = Number.parseInt(result, 16);
    if (expected !== undefined && chainId !== Number(expected)) throw new Error(`eth_chainId ${chainId}, NETWORK expects ${expected}`);
    return { chain_id: chainId };
  }, timeoutMs);
}

/** `getLatestBlockhash` on `SOLANA_RPC_URL` (`slot` of its context in the answer): the self facilitator settles through it. */
async function solanaRpcReadiness({ solanaRpcUrl, timeoutMs }: Bounded): Promise<ComponentReadiness> {
  if (!solanaRpcUrl) return { status: "not_configured" };
  return timed(async () => {
    const result = (await rpcResult(solanaRpcUrl, "getLatestBlockhash", [{ commitment: "confirmed" }], timeoutMs)) as
      { context?: { slot?: unknown }; value?: { blockhash?: unknown } } | undefined;
    if (typeof result?.value?.blockhash !== "string") throw new Error("getLatestBlockhash: no blockhash");
    return { slot: typeof result.context?.slot === "number" ? result.context.slot : null };
  }, timeoutMs);
}

/** The facilitators' `supported` kinds (`kinds`: how many). */
async function facilitatorReadiness({ facilitator, timeoutMs }: Bounded): Promise<ComponentReadiness> {
  if (!facilitator) return { status: "not_configured" };
  return timed(async () => {
    const supported = await facilitator.getSupported();
    return { kinds: supported.kinds.length };
  }, timeoutMs);
}

/** Every component of the `/ready` answer, in answer order. */
export const READINESS_CHECKS: readonly ReadinessCheck[] = [
  { component: "redis", run: redisReadiness },
  { component: "chain_rpc", run: chainRpcReadiness },
  { component: "solana_rpc", run: solanaRpcReadiness },
  { component: "facilitator", run: facilitatorReadiness },
  ...VENUE_FAMILIES.map((f) => ({ component: f.component, run: (deps: Bounded) => familyReadiness(f, deps) })),
];

/** Readiness of the service; see the module comment. */
export class Readiness {
  private readonly deps: Bounded;
  private readonly cacheMs: number;
  private last?: { at: number; report: ReadinessReport };
  private inflight?: Promise<ReadinessReport>;

  constructor(deps: ReadinessDeps) {
    this.deps = { ...deps, recentMs: deps.recentMs ?? 120_000, timeoutMs: deps.timeoutMs ?? 3000, hedgeMs: deps.hedgeMs ?? 1000 };
    this.cacheMs = deps.cacheMs ?? 5000;
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
    const states = await Promise.all(READINESS_CHECKS.map((c) => c.run(this.deps)));
    const components: Record<string, ComponentReadiness> = {};
    READINESS_CHECKS.forEach((c, i) => (components[c.component] = states[i]!));
    const ready = states.every((c) => c.status !== "fail");
    return { status: ready ? "ready" : "not_ready", checked_at: new Date().toISOString(), components };
  }
}
