import DataLoader from "dataloader";
import { LRUCache } from "lru-cache";
import PQueue from "p-queue";
import { AppError, toAppError } from "../../errors.js";
import { SingleFlight } from "../../lib/single-flight.js";
import type { DexScreenerClient } from "../dexscreener/client.js";
import type { GtToken } from "../geckoterminal/parse-token.js";
import { GECKOTERMINAL_MAX_TOKENS, type GeckoTerminalTokenClient } from "../geckoterminal/token-client.js";
import type { DexChain, DexPool, OhlcvTimeframe, PoolCandle } from "./types.js";

/*
 * Any token by chain and address, from GeckoTerminal and DexScreener, with the upstream economy issue 23 asks for:
 * - single-flight: concurrent requests for the same token share one load (1,000 identical → one call per source);
 * - micro-batching: single-address loads for the same chain arriving together (a batch closes after
 *   BATCH_WINDOW_MS without a new address, or BATCH_MAX_WAIT_MS) are sent as one multi-address call per source
 *   (≤ 30 addresses: GeckoTerminal `tokens/multi`, DexScreener `tokens/v1`);
 * - pacing per source at its budget, through a queue that serves paid requests first, then pre-payment checks,
 *   then background work (alerts);
 * - caching: prices {@link PRICE_TTL_MS}, token metadata and pool lists {@link META_TTL_MS} (unknown tokens
 *   {@link NEGATIVE_TTL_MS}), so a pre-payment existence check and the OHLCV pool choice rarely cost a call.
 */

/** How long a token's prices and pools are reused. */
export const PRICE_TTL_MS = 20_000;
/** How long a token's metadata and pool list (existence, symbol, pools for the OHLCV choice) are reused. */
export const META_TTL_MS = 10 * 60_000;
/** How long a snapshot that one source failed to answer is reused. */
export const PARTIAL_TTL_MS = 5_000;
/** How long "no source knows this token" is remembered (repeated probes of a bad address cost nothing). */
export const NEGATIVE_TTL_MS = 60_000;
/** A batch is sent once no new address joined it for this long (ms)… */
export const BATCH_WINDOW_MS = 5;
/** …or once it has waited this long (ms), whichever comes first; or at once when it holds 30 addresses. */
export const BATCH_MAX_WAIT_MS = 25;
/** Most addresses in one upstream call (both sources' documented maximum). */
export const MAX_BATCH = GECKOTERMINAL_MAX_TOKENS;

/** Who is waiting on a load: paid requests first, then pre-payment checks, then background work. */
export type LoadPriority = "paid" | "unpaid" | "background";
const RANK: Readonly<Record<LoadPriority, number>> = { paid: 2, unpaid: 1, background: 0 };

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
  /** Sources that failed, with the reason (the answer uses the other). */
  failed: Array<{ source: TokenSourceName; reason: string }>;
  /** Epoch ms of the load. */
  fetchedAt: number;
}

/** Metadata kept {@link META_TTL_MS}: whether any source knows the token, and the snapshot it was read from (its pool list as last seen). */
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
  /** Longest wait in a source's queue before 503 (default 5000 ms). */
  maxWaitMs?: number;
  /** Quiet time that closes a batch (default {@link BATCH_WINDOW_MS}). */
  batchWindowMs?: number;
  /** Longest a batch waits (default {@link BATCH_MAX_WAIT_MS}). */
  batchMaxWaitMs?: number;
  /** The budgets' window (default 60,000 ms: `*CallsPerMin` per minute); tests shorten it. */
  budgetWindowMs?: number;
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
 * UPSTREAM_UNAVAILABLE when a queue wait passes `maxWaitMs`); one failing source is listed in `failed`.
 */
export class DexTokenSource {
  private readonly gt: GeckoTerminalTokenClient;
  private readonly ds: DexScreenerClient;
  private readonly queues: Record<TokenSourceName, PQueue>;
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
  /** Upstream requests sent per source since start (benchmarks and tests read it). */
  readonly calls: Record<TokenSourceName, number> = { geckoterminal: 0, dexscreener: 0 };

  constructor(opts: DexTokenSourceOptions) {
    this.gt = opts.gt;
    this.ds = opts.ds;
    this.maxWaitMs = opts.maxWaitMs ?? 5000;
    this.windowMs = opts.batchWindowMs ?? BATCH_WINDOW_MS;
    this.batchMaxWaitMs = opts.batchMaxWaitMs ?? BATCH_MAX_WAIT_MS;
    this.now = opts.now ?? Date.now;
    const window = opts.budgetWindowMs ?? 60_000;
    const queue = (perMin: number) => new PQueue({ intervalCap: Math.max(1, Math.floor((perMin * window) / 60_000)), interval: window, carryoverConcurrencyCount: true });
    this.queues = { geckoterminal: queue(opts.gtCallsPerMin), dexscreener: queue(opts.dsCallsPerMin) };
  }

  /**
   * Both sources' view of one token, at most {@link PRICE_TTL_MS} old. Concurrent calls for the same token share
   * one load; loads of different tokens on one chain within the batch window share one call per source.
   * @throws AppError when both sources fail.
   */
  async snapshot(chain: DexChain, address: string, priority: LoadPriority = "paid"): Promise<TokenSnapshot> {
    const key = keyOf(chain, address);
    const hit = this.prices.get(key);
    if (hit) return hit;
    return this.flights.run(key, () => this.load(chain, address, priority));
  }

  /** {@link snapshot} of several tokens of one chain (batched together). */
  async snapshots(chain: DexChain, addresses: readonly string[], priority: LoadPriority = "paid"): Promise<TokenSnapshot[]> {
    return Promise.all(addresses.map((a) => this.snapshot(chain, a, priority)));
  }

  /**
   * Metadata of a token, from the long cache when there (no call), else from a fresh {@link snapshot}. Used for
   * pre-payment existence checks and the OHLCV pool choice.
   * @throws AppError when both sources fail, or UPSTREAM_UNAVAILABLE when the one that answered does not know the
   * token and the other failed (it may know it: "unknown" is not decided then).
   */
  async meta(chain: DexChain, address: string, priority: LoadPriority = "unpaid"): Promise<TokenMeta> {
    const hit = this.metas.get(keyOf(chain, address));
    if (hit) return hit;
    const snap = await this.snapshot(chain, address, priority);
    const meta = this.metas.get(keyOf(chain, address));
    if (meta) return meta;
    throw new AppError("UPSTREAM_UNAVAILABLE", `could not tell whether ${address} exists: ${snap.failed.map((f) => `${f.source} ${f.reason}`).join("; ")}`, {
      retryAfterSec: 5,
    });
  }

  /** Candles of `token` in `pool` (GeckoTerminal), through the GeckoTerminal queue at `priority`. */
  ohlcv(chain: DexChain, pool: string, token: string, tf: OhlcvTimeframe, limit: number, priority: LoadPriority = "paid"): Promise<PoolCandle[]> {
    return this.paced("geckoterminal", RANK[priority], () => this.gt.poolOhlcv(chain, pool, token, tf, limit));
  }

  private async load(chain: DexChain, address: string, priority: LoadPriority): Promise<TokenSnapshot> {
    const key = keyOf(chain, address);
    const [gt, ds] = await Promise.allSettled([this.enqueue("geckoterminal", chain, key, priority), this.enqueue("dexscreener", chain, key, priority)]);
    if (gt.status === "rejected" && ds.status === "rejected") throw toAppError(gt.reason);
    const failed: TokenSnapshot["failed"] = [];
    if (gt.status === "rejected") failed.push({ source: "geckoterminal", reason: toAppError(gt.reason).message });
    if (ds.status === "rejected") failed.push({ source: "dexscreener", reason: toAppError(ds.reason).message });
    const snap: TokenSnapshot = {
      chain,
      address,
      gt: gt.status === "fulfilled" ? (gt.value as GtToken | null) : null,
      dsPools: ds.status === "fulfilled" ? (ds.value as DexPool[]) : [],
      failed,
      fetchedAt: this.now(),
    };
    // A snapshot missing a source is kept briefly: the next request may find both.
    this.prices.set(key, snap, { ttl: failed.length ? PARTIAL_TTL_MS : PRICE_TTL_MS });
    const known = snap.gt !== null || snap.dsPools.length > 0;
    // "Unknown" is only believed when both sources answered; a failed source may know the token.
    if (known || failed.length === 0) {
      const first = snap.dsPools.find((p) => keyOf(chain, p.baseToken.address) === key)?.baseToken ?? snap.dsPools[0]?.quoteToken;
      this.metas.set(
        key,
        {
          known,
          name: snap.gt?.name || first?.name || "",
          symbol: snap.gt?.symbol || first?.symbol || "",
          snapshot: snap,
        },
        { ttl: known ? META_TTL_MS : NEGATIVE_TTL_MS },
      );
    }
    return snap;
  }

  /** Adds one address to the chain's batch for `source`, remembering the highest priority waiting on it. */
  private enqueue(source: TokenSourceName, chain: DexChain, key: string, priority: LoadPriority): Promise<unknown> {
    const w = `${source}:${chain}:${key}`;
    this.waiting.set(w, Math.max(this.waiting.get(w) ?? -1, RANK[priority]));
    this.lastJoin.set(`${source}:${chain}`, performance.now());
    return this.loader(source, chain).load(key.slice(chain.length + 1));
  }

  private loader(source: TokenSourceName, chain: DexChain): DataLoader<string, unknown> {
    const id = `${source}:${chain}`;
    let l = this.loaders.get(id);
    if (!l) {
      l = new DataLoader<string, unknown>((addrs) => this.batch(source, chain, addrs), {
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
  private async batch(source: TokenSourceName, chain: DexChain, addrs: readonly string[]): Promise<unknown[]> {
    const unique = [...new Set(addrs)];
    let rank = 0;
    for (const a of unique) {
      const w = `${source}:${chain}:${chain}:${a}`;
      rank = Math.max(rank, this.waiting.get(w) ?? 0);
      this.waiting.delete(w);
    }
    try {
      if (source === "geckoterminal") {
        const tokens = await this.paced(source, rank, () => this.gt.tokens(chain, unique));
        const by = new Map(tokens.map((t) => [keyOf(chain, t.address), t]));
        return addrs.map((a) => by.get(keyOf(chain, a)) ?? null);
      }
      const pools = await this.paced(source, rank, () => this.ds.tokens(chain, unique));
      return addrs.map((a) => pools.filter((p) => poolHasToken(p, a)));
    } catch (err) {
      const e = toAppError(err);
      return addrs.map(() => e);
    }
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
