import DataLoader from "dataloader";
import { LRUCache } from "lru-cache";
import PQueue from "p-queue";
import { AppError, toAppError } from "../../errors.js";
import type { ClientRateLimiter } from "../../lib/rate-limit.js";
import { SingleFlight } from "../../lib/single-flight.js";
import type { DexScreenerClient } from "../dexscreener/client.js";
import type { GtToken } from "../geckoterminal/parse-token.js";
import { GECKOTERMINAL_MAX_TOKENS, type GeckoTerminalTokenClient } from "../geckoterminal/token-client.js";
import type { DexChain, DexPool, OhlcvTimeframe, PoolCandle } from "./types.js";
import { splitBudget, UNPAID_SHARE_PCT, UnpaidShare, UnpaidShareSpent } from "./unpaid-share.js";

/*
 * Any token by chain and address, from GeckoTerminal and DexScreener, with the upstream economy issue 23 asks for:
 * - single-flight: concurrent requests for the same token share one load (1,000 identical → one call per source);
 * - micro-batching: single-address loads for the same chain arriving together (a batch closes after
 *   BATCH_WINDOW_MS without a new address, or BATCH_MAX_WAIT_MS) are sent as one multi-address call per source
 *   (≤ 30 addresses: GeckoTerminal `tokens/multi`, DexScreener `tokens/v1`);
 * - pacing per source at its budget, split once (unpaid-share.ts): checks before payment spend their own small
 *   share and never queue (a spent share is answered at once), paid requests and background work (alerts) share
 *   the rest through a queue that serves paid requests first; so unpaid traffic never makes a paid load wait;
 * - caching: prices {@link PRICE_TTL_MS}, token metadata and pool lists {@link META_TTL_MS}, and apart from them
 *   the tokens no source knows ({@link NEGATIVE_TTL_MS}, at most {@link MAX_UNKNOWN}), so a pre-payment existence
 *   check and the OHLCV pool choice rarely cost a call and a flood of unknown addresses evicts no known token;
 * - a per-client budget of the checks before payment that need a call ({@link DexTokenSource.existence}).
 */

/** How long a token's prices and pools are reused. */
export const PRICE_TTL_MS = 20_000;
/** How long a token's metadata and pool list (existence, symbol, pools for the OHLCV choice) are reused. */
export const META_TTL_MS = 10 * 60_000;
/** How long a snapshot that one source failed to answer is reused. */
export const PARTIAL_TTL_MS = 5_000;
/** How long "no source knows this token" is remembered (repeated probes of a bad address cost nothing). */
export const NEGATIVE_TTL_MS = 60_000;
/** Most tokens remembered as unknown (per network and address; the least recently used go first). */
export const MAX_UNKNOWN = 10_000;
/** A batch is sent once no new address joined it for this long (ms)… */
export const BATCH_WINDOW_MS = 5;
/** …or once it has waited this long (ms), whichever comes first; or at once when it holds 30 addresses. */
export const BATCH_MAX_WAIT_MS = 25;
/** Most addresses in one upstream call (both sources' documented maximum). */
export const MAX_BATCH = GECKOTERMINAL_MAX_TOKENS;

/**
 * Who is waiting on a load: a paid request, a check before payment (its own budget share, never queued), or
 * background work (alerts; queued after paid requests).
 */
export type LoadPriority = "paid" | "unpaid" | "background";
const RANK: Readonly<Record<LoadPriority, number>> = { paid: 2, unpaid: 1, background: 0 };

/** The loads sharing batches, flights and a budget: checks before payment, or the others (paid and background). */
type Lane = "unpaid" | "queued";
const laneOf = (p: LoadPriority): Lane => (p === "unpaid" ? "unpaid" : "queued");

/**
 * What a check before payment learned of a token: `known` (a source knows a pool of it), `unknown` (both
 * sources answered and neither does), `unchecked` (not asked: the unpaid share of a source's budget is spent,
 * or the caller pays anyway; the paid request decides, and a token it does not find is not charged), or
 * `failed` (a source failed and the other knows no pool of it: undecided).
 */
export type Existence = "known" | "unknown" | "unchecked" | "failed";

/** The answer of {@link DexTokenSource.existence}. */
export interface ExistenceCheck {
  /** One per address, in order. */
  existence: Existence[];
  /** When some are `unchecked` or `failed`: seconds to wait before asking again (a spent share: until it has room). */
  retryAfterSec?: number;
  /** When some are `failed`: what the sources said (the first such address). */
  failure?: string;
}

/** The two sources of token data. */
export type TokenSourceName = "geckoterminal" | "dexscreener";

/** What both sources say about one token at one time. */
export interface TokenSnapshot {
  chain: DexChain;
  /** The address as asked (canonical spelling from token-address.ts). */
  address: string;
  /** GeckoTerminal's token (price, reserve, metadata, top pools); null when it does not know the token or failed. */
  gt: GtToken | null;
  /** DexScreener's pairs where the token is base or quote; [] when it knows none or failed. */
  dsPools: DexPool[];
  /**
   * Sources that failed, with the reason (the answer uses the other); `skipped`: not asked, because the unpaid
   * share of its budget was spent, with the seconds until it has room (only loads of checks before payment;
   * such snapshots are never cached).
   */
  failed: Array<{ source: TokenSourceName; reason: string; skipped?: { retryAfterSec: number } }>;
  /** Epoch ms of the load. */
  fetchedAt: number;
}

/**
 * Metadata kept {@link META_TTL_MS} (a known token) or {@link NEGATIVE_TTL_MS} (an unknown one): whether any source
 * knows the token, and the snapshot it was read from (its pool list as last seen).
 */
export interface TokenMeta {
  known: boolean;
  name: string;
  symbol: string;
  snapshot: TokenSnapshot;
}

/** Options of {@link DexTokenSource}. */
export interface DexTokenSourceOptions {
  gt: GeckoTerminalTokenClient;
  ds: DexScreenerClient;
  /** Per-source budgets (requests per minute), the venues' configured ones. */
  gtCallsPerMin: number;
  dsCallsPerMin: number;
  /** Percent of each budget that checks before payment may spend (default {@link UNPAID_SHARE_PCT}; at most 50; 0: none). */
  unpaidSharePct?: number;
  /** Per-client budget of checks before payment that need an upstream call (429 beyond); none without it. */
  checkBudget?: ClientRateLimiter;
  /** Most tokens remembered as unknown (default {@link MAX_UNKNOWN}). */
  maxUnknown?: number;
  /** Longest wait in a source's queue before 503 (default 5000 ms). */
  maxWaitMs?: number;
  /** Quiet time that closes a batch (default {@link BATCH_WINDOW_MS}). */
  batchWindowMs?: number;
  /** Longest a batch waits (default {@link BATCH_MAX_WAIT_MS}). */
  batchMaxWaitMs?: number;
  /** The budgets' window (default 60,000 ms: `*CallsPerMin` per minute); tests shorten it. */
  budgetWindowMs?: number;
  /** Clock of `fetchedAt` and of the unknown tokens' expiry (default `Date.now`). */
  now?: () => number;
}

const keyOf = (chain: DexChain, address: string): string => `${chain}:${chain === "solana" ? address : address.toLowerCase()}`;

/** True when `pool` has the token at `address` on either side. */
export function poolHasToken(pool: DexPool, address: string): boolean {
  const k = keyOf(pool.chain, address);
  return keyOf(pool.chain, pool.baseToken.address) === k || keyOf(pool.chain, pool.quoteToken.address) === k;
}

/**
 * Token snapshots by (chain, address) from GeckoTerminal and DexScreener; see the file comment for batching,
 * pacing and caching. Errors: a load fails only when BOTH sources fail (the first error, an {@link AppError}:
 * UPSTREAM_UNAVAILABLE when a queue wait passes `maxWaitMs`, {@link UnpaidShareSpent} when a check before payment
 * found a source's share spent); one failing source is listed in `failed`.
 */
export class DexTokenSource {
  private readonly gt: GeckoTerminalTokenClient;
  private readonly ds: DexScreenerClient;
  /** Paid and background loads, paced at each budget minus its unpaid share. */
  private readonly queues: Record<TokenSourceName, PQueue>;
  /** The calls per window that checks before payment may spend, per source. */
  private readonly shares: Record<TokenSourceName, UnpaidShare>;
  private readonly checkBudget?: ClientRateLimiter;
  private readonly maxWaitMs: number;
  private readonly windowMs: number;
  private readonly batchMaxWaitMs: number;
  /** Last time an address joined a pending batch, per loader id (performance.now() ms). */
  private readonly lastJoin = new Map<string, number>();
  private readonly now: () => number;
  private readonly loaders = new Map<string, DataLoader<string, unknown>>();
  /** Highest priority waiting per `source:chain:key`, read by the batch function. */
  private readonly waiting = new Map<string, number>();
  private readonly flights = new SingleFlight<TokenSnapshot>();
  private readonly prices = new LRUCache<string, TokenSnapshot>({ max: 5000, ttl: PRICE_TTL_MS });
  private readonly metas = new LRUCache<string, TokenMeta>({ max: 20_000, ttl: META_TTL_MS });
  /** Tokens no source knows (both answered), apart from `metas` so that a flood of them evicts no known token. */
  private readonly unknown: LRUCache<string, TokenMeta>;
  /** Upstream requests sent per source since start (benchmarks and tests read it). */
  readonly calls: Record<TokenSourceName, number> = { geckoterminal: 0, dexscreener: 0 };
  /** The part of {@link calls} sent for checks before payment. */
  readonly unpaidCalls: Record<TokenSourceName, number> = { geckoterminal: 0, dexscreener: 0 };
  /** Calls per budget window of each source: what checks before payment may spend, and what paid and background loads keep. */
  readonly budgets: Record<TokenSourceName, { paid: number; unpaid: number; windowMs: number }>;

  constructor(opts: DexTokenSourceOptions) {
    this.gt = opts.gt;
    this.ds = opts.ds;
    this.maxWaitMs = opts.maxWaitMs ?? 5000;
    this.windowMs = opts.batchWindowMs ?? BATCH_WINDOW_MS;
    this.batchMaxWaitMs = opts.batchMaxWaitMs ?? BATCH_MAX_WAIT_MS;
    this.now = opts.now ?? Date.now;
    this.checkBudget = opts.checkBudget;
    // The injected clock decides when an unknown token is asked again (tests move it); read at every lookup.
    this.unknown = new LRUCache<string, TokenMeta>({ max: opts.maxUnknown ?? MAX_UNKNOWN, ttl: NEGATIVE_TTL_MS, ttlResolution: 0, perf: { now: this.now } });
    const window = opts.budgetWindowMs ?? 60_000;
    const split = (perMin: number) => ({ ...splitBudget((perMin * window) / 60_000, opts.unpaidSharePct ?? UNPAID_SHARE_PCT), windowMs: window });
    this.budgets = { geckoterminal: split(opts.gtCallsPerMin), dexscreener: split(opts.dsCallsPerMin) };
    const queue = (paid: number) => new PQueue({ intervalCap: paid, interval: window, carryoverConcurrencyCount: true });
    this.queues = { geckoterminal: queue(this.budgets.geckoterminal.paid), dexscreener: queue(this.budgets.dexscreener.paid) };
    this.shares = {
      geckoterminal: new UnpaidShare(this.budgets.geckoterminal.unpaid, window),
      dexscreener: new UnpaidShare(this.budgets.dexscreener.unpaid, window),
    };
  }

  /**
   * Both sources' view of one token, at most {@link PRICE_TTL_MS} old (an unknown token: {@link NEGATIVE_TTL_MS}).
   * Concurrent calls for the same token share one load (checks before payment apart from the others); loads of
   * different tokens on one chain within the batch window share one call per source.
   * @throws AppError when both sources fail ({@link UnpaidShareSpent} when one was skipped for a spent share).
   */
  async snapshot(chain: DexChain, address: string, priority: LoadPriority = "paid"): Promise<TokenSnapshot> {
    const key = keyOf(chain, address);
    const hit = this.prices.get(key) ?? this.unknown.get(key)?.snapshot;
    if (hit) return hit;
    return this.flights.run(`${laneOf(priority)}:${key}`, () => this.load(chain, address, priority));
  }

  /** {@link snapshot} of several tokens of one chain (batched together). */
  async snapshots(chain: DexChain, addresses: readonly string[], priority: LoadPriority = "paid"): Promise<TokenSnapshot[]> {
    return Promise.all(addresses.map((a) => this.snapshot(chain, a, priority)));
  }

  /**
   * Metadata of a token, from the long caches when there (no call), else from a fresh {@link snapshot}. Used for
   * the OHLCV pool choice.
   * @throws AppError when both sources fail, or UPSTREAM_UNAVAILABLE when the one that answered does not know the
   * token and the other failed (it may know it: "unknown" is not decided then).
   */
  async meta(chain: DexChain, address: string, priority: LoadPriority = "paid"): Promise<TokenMeta> {
    const key = keyOf(chain, address);
    const hit = this.cachedMeta(key);
    if (hit) return hit;
    const snap = await this.snapshot(chain, address, priority);
    const meta = this.cachedMeta(key);
    if (meta) return meta;
    throw new AppError("UPSTREAM_UNAVAILABLE", `could not tell whether ${address} exists: ${snap.failed.map((f) => `${f.source} ${f.reason}`).join("; ")}`, {
      retryAfterSec: 5,
    });
  }

  /**
   * The check before payment of `addresses` (one chain): each from the caches when there, else asked of both
   * sources in one batch through their unpaid share. A token the share could not pay for is `unchecked` at once,
   * never queued. With `cachedOnly` (the caller pays anyway) nothing is asked: what the caches do not hold is
   * `unchecked`. A `client` (the rate limiters' key) that needs a call spends one point of the per-client budget.
   * @throws AppError RATE_LIMITED (with retryAfterSec) beyond the client's budget.
   */
  async existence(chain: DexChain, addresses: readonly string[], opts: { client?: string; cachedOnly?: boolean } = {}): Promise<ExistenceCheck> {
    const existence = addresses.map((a): Existence | undefined => {
      const m = this.cachedMeta(keyOf(chain, a));
      return m ? (m.known ? "known" : "unknown") : undefined;
    });
    const open = existence.flatMap((e, i) => (e === undefined ? [i] : []));
    if (open.length === 0) return { existence: existence as Existence[] };
    if (opts.cachedOnly) return { existence: existence.map((e) => e ?? "unchecked") };
    if (opts.client !== undefined && this.checkBudget) await this.checkBudget.consume(opts.client);
    const loads = await Promise.allSettled(open.map((i) => this.snapshot(chain, addresses[i]!, "unpaid")));
    const out: ExistenceCheck = { existence: existence as Existence[] };
    const note = (e: Existence, i: number, retryAfterSec?: number, failure?: string) => {
      existence[i] = e;
      if (retryAfterSec !== undefined) out.retryAfterSec = Math.max(out.retryAfterSec ?? 0, retryAfterSec);
      if (failure !== undefined) out.failure ??= failure;
    };
    loads.forEach((r, n) => {
      const i = open[n]!;
      if (r.status === "rejected") {
        const e = toAppError(r.reason);
        return r.reason instanceof UnpaidShareSpent ? note("unchecked", i, e.retryAfterSec) : note("failed", i, e.retryAfterSec, e.message);
      }
      const snap = r.value;
      const skipped = snap.failed.find((f) => f.skipped);
      if (snap.gt !== null || snap.dsPools.length > 0) note("known", i);
      else if (snap.failed.length === 0) note("unknown", i);
      else if (skipped) note("unchecked", i, skipped.skipped!.retryAfterSec);
      else note("failed", i, 5, snap.failed.map((f) => `${f.source}: ${f.reason}`).join("; "));
    });
    return out;
  }

  /** Candles of `token` in `pool` (GeckoTerminal), through the GeckoTerminal queue at `priority` (paid or background). */
  ohlcv(chain: DexChain, pool: string, token: string, tf: OhlcvTimeframe, limit: number, priority: Exclude<LoadPriority, "unpaid"> = "paid"): Promise<PoolCandle[]> {
    return this.paced("geckoterminal", RANK[priority], () => this.gt.poolOhlcv(chain, pool, token, tf, limit));
  }

  /** The cached metadata of `key`: known ({@link META_TTL_MS}) or unknown ({@link NEGATIVE_TTL_MS}). */
  private cachedMeta(key: string): TokenMeta | undefined {
    return this.metas.get(key) ?? this.unknown.get(key);
  }

  private async load(chain: DexChain, address: string, priority: LoadPriority): Promise<TokenSnapshot> {
    const key = keyOf(chain, address);
    const [gt, ds] = await Promise.allSettled([this.enqueue("geckoterminal", chain, key, priority), this.enqueue("dexscreener", chain, key, priority)]);
    if (gt.status === "rejected" && ds.status === "rejected") {
      // A spent share first: the caller of a check before payment reads it as "unchecked", not as a failure.
      throw [gt.reason, ds.reason].find((e) => e instanceof UnpaidShareSpent) ?? toAppError(gt.reason);
    }
    const failed: TokenSnapshot["failed"] = [];
    const fail = (source: TokenSourceName, err: unknown) =>
      failed.push({ source, reason: toAppError(err).message, ...(err instanceof UnpaidShareSpent ? { skipped: { retryAfterSec: err.retryAfterSec ?? 1 } } : {}) });
    if (gt.status === "rejected") fail("geckoterminal", gt.reason);
    if (ds.status === "rejected") fail("dexscreener", ds.reason);
    const snap: TokenSnapshot = {
      chain,
      address,
      gt: gt.status === "fulfilled" ? (gt.value as GtToken | null) : null,
      dsPools: ds.status === "fulfilled" ? (ds.value as DexPool[]) : [],
      failed,
      fetchedAt: this.now(),
    };
    // A source skipped for a spent unpaid share was not asked: nothing of this load is kept (a paid load asks both).
    if (failed.some((f) => f.skipped)) return snap;
    const known = snap.gt !== null || snap.dsPools.length > 0;
    if (known) {
      // A snapshot missing a source is kept briefly: the next request may find both.
      this.prices.set(key, snap, { ttl: failed.length ? PARTIAL_TTL_MS : PRICE_TTL_MS });
      const first = snap.dsPools.find((p) => keyOf(chain, p.baseToken.address) === key)?.baseToken ?? snap.dsPools[0]?.quoteToken;
      this.metas.set(key, { known, name: snap.gt?.name || first?.name || "", symbol: snap.gt?.symbol || first?.symbol || "", snapshot: snap });
    } else if (failed.length === 0) {
      // "Unknown" is only believed when both sources answered; a failed source may know the token.
      this.unknown.set(key, { known, name: "", symbol: "", snapshot: snap });
    }
    return snap;
  }

  /** Adds one address to the chain's batch of its lane for `source`, remembering the highest priority waiting on it. */
  private enqueue(source: TokenSourceName, chain: DexChain, key: string, priority: LoadPriority): Promise<unknown> {
    const id = `${source}:${chain}:${laneOf(priority)}`;
    const w = `${id}:${key}`;
    this.waiting.set(w, Math.max(this.waiting.get(w) ?? -1, RANK[priority]));
    this.lastJoin.set(id, performance.now());
    return this.loader(source, chain, laneOf(priority)).load(key.slice(chain.length + 1));
  }

  private loader(source: TokenSourceName, chain: DexChain, lane: Lane): DataLoader<string, unknown> {
    const id = `${source}:${chain}:${lane}`;
    let l = this.loaders.get(id);
    if (!l) {
      l = new DataLoader<string, unknown>((addrs) => this.batch(source, chain, lane, addrs), {
        maxBatchSize: MAX_BATCH,
        cache: false,
        batchScheduleFn: (cb) => this.schedule(id, cb),
      });
      this.loaders.set(id, l);
    }
    return l;
  }

  /**
   * Sends a batch once no address joined it for `windowMs`, or `maxWaitMs` after it opened: requests that arrive
   * together over HTTP reach this point spread over a few milliseconds each (parsing, checks), so a fixed short
   * window would split them.
   */
  private schedule(id: string, send: () => void): void {
    const opened = performance.now();
    const tick = () => {
      const now = performance.now();
      const quietFor = now - (this.lastJoin.get(id) ?? opened);
      if (quietFor >= this.windowMs || now - opened >= this.batchMaxWaitMs) return send();
      setTimeout(tick, Math.min(this.windowMs - quietFor, this.batchMaxWaitMs - (now - opened)));
    };
    setTimeout(tick, this.windowMs);
  }

  /** One upstream call for up to 30 addresses; answers per address (GtToken | null, or DexPool[]). */
  private async batch(source: TokenSourceName, chain: DexChain, lane: Lane, addrs: readonly string[]): Promise<unknown[]> {
    const unique = [...new Set(addrs)];
    let rank = 0;
    for (const a of unique) {
      const w = `${source}:${chain}:${lane}:${chain}:${a}`;
      rank = Math.max(rank, this.waiting.get(w) ?? 0);
      this.waiting.delete(w);
    }
    const send = <T>(fn: () => Promise<T>): Promise<T> => (lane === "unpaid" ? this.unpaid(source, fn) : this.paced(source, rank, fn));
    try {
      if (source === "geckoterminal") {
        const tokens = await send(() => this.gt.tokens(chain, unique));
        const by = new Map(tokens.map((t) => [keyOf(chain, t.address), t]));
        return addrs.map((a) => by.get(keyOf(chain, a)) ?? null);
      }
      const pools = await send(() => this.ds.tokens(chain, unique));
      return addrs.map((a) => pools.filter((p) => poolHasToken(p, a)));
    } catch (err) {
      const e = err instanceof UnpaidShareSpent ? err : toAppError(err);
      return addrs.map(() => e);
    }
  }

  /** Runs `fn` on `source`'s unpaid share at once, or rejects with {@link UnpaidShareSpent} when it is spent (never waits for it). */
  private async unpaid<T>(source: TokenSourceName, fn: () => Promise<T>): Promise<T> {
    const waitMs = await this.shares[source].take();
    if (waitMs > 0) throw new UnpaidShareSpent(source, waitMs);
    this.calls[source]++;
    this.unpaidCalls[source]++;
    return fn();
  }

  /**
   * Runs `fn` in `source`'s queue at `rank`. A caller still queued after `maxWaitMs` gets a 503 and its turn, when
   * it comes, sends nothing (p-queue cannot drop a queued task; it checks an abort signal only at the start).
   */
  private async paced<T>(source: TokenSourceName, rank: number, fn: () => Promise<T>): Promise<T> {
    let started = false;
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const run = this.queues[source].add(
      async () => {
        if (expired) return undefined;
        started = true;
        this.calls[source]++;
        return fn();
      },
      { priority: rank },
    );
    const waited = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (started) return;
        expired = true;
        reject(new AppError("UPSTREAM_UNAVAILABLE", `${source} token budget in use; retry shortly`, { retryAfterSec: Math.max(1, Math.ceil(this.maxWaitMs / 1000)) }));
      }, this.maxWaitMs);
    });
    try {
      return (await Promise.race([run, waited])) as T;
    } finally {
      clearTimeout(timer);
    }
  }
}
