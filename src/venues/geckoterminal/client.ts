import { LRUCache } from "lru-cache";
import { AppError } from "../../errors.js";
import { VenueHttpClient, VenueHttpError, type VenueClientOptions } from "../../lib/venue-http.js";
import { DEX_CHAINS, type DexChain, type DexPool, type OhlcvTimeframe, type PoolCandle } from "../dex/types.js";
import { GECKOTERMINAL_ENDPOINTS } from "./endpoints.js";
import { parseOhlcv, parsePools } from "./parse.js";

/** Venue key of GeckoTerminal in status, metrics and errors. */
export const GECKOTERMINAL = "geckoterminal";

/** How long a token's pool list is reused: pool sets change slowly, and the budget is small. */
export const POOL_LIST_TTL_MS = 10 * 60_000;

/** Most candles one OHLCV request returns. */
export const OHLCV_MAX_LIMIT = 1000;

/** The API version pinned through the `Accept` header (apiguide.geckoterminal.com). */
const ACCEPT = "application/json;version=20230302";

/** Options of {@link GeckoTerminalClient}; `callsPerMin` defaults to `GECKOTERMINAL_ENDPOINTS.rest.api` (endpoints.ts). */
export type GeckoTerminalClientOptions = VenueClientOptions;

/**
 * GeckoTerminal public API v2 client (no key; https://apiguide.geckoterminal.com), live base `GECKOTERMINAL_ENDPOINTS.rest.api.url`,
 * header `Accept: application/json;version=20230302`.
 * Endpoints: `GET /networks/{network}/tokens/{address}/pools?page=1&include=base_token,quote_token,dex`
 * (top pools of a token; cached {@link POOL_LIST_TTL_MS} per chain and address, concurrent callers share one
 * load, failures are not kept) and `GET /networks/{network}/pools/{pool}/ohlcv/{timeframe}` (USD, base token).
 * Units: USD prices, liquidity and volume; times epoch ms; `feeBps` from the pool name when it states one.
 * Errors: see {@link VenueHttpClient}; HTTP 404 (unknown token or pool) → `NOT_FOUND`; other refusals → `UPSTREAM_ERROR`.
 */
export class GeckoTerminalClient {
  /** The request budget and transport, shared with the token-by-address client (token-client.ts) so both spend one budget. */
  readonly http: VenueHttpClient;
  private readonly pools: LRUCache<string, DexPool[], { chain: DexChain; address: string }>;

  constructor(baseUrl: string, opts: GeckoTerminalClientOptions) {
    this.http = new VenueHttpClient({
      venue: GECKOTERMINAL,
      baseUrl: baseUrl.replace(/\/+$/, ""),
      headers: { accept: ACCEPT },
      callsPerMin: opts.callsPerMin ?? GECKOTERMINAL_ENDPOINTS.rest.api.callsPerMin,
      timeoutMs: opts.timeoutMs,
      metrics: opts.metrics,
      health: opts.health,
      retries: opts.retries,
      maxWaitMs: opts.maxWaitMs,
    });
    this.pools = new LRUCache<string, DexPool[], { chain: DexChain; address: string }>({
      max: 1000,
      ttl: POOL_LIST_TTL_MS,
      fetchMethod: (_key, _stale, { context }) => this.loadPools(context.chain, context.address),
    });
  }

  /**
   * The top pools of one token (first page, as GeckoTerminal ranks them), cached 10 minutes per (chain, address).
   * EVM addresses are matched case-insensitively. The returned pools are shared with the cache: do not mutate them.
   * @throws AppError NOT_FOUND when GeckoTerminal does not know the token.
   */
  async tokenPools(chain: DexChain, address: string): Promise<DexPool[]> {
    const key = `${chain}:${chain === "solana" ? address : address.toLowerCase()}`;
    const pools = await this.pools.fetch(key, { context: { chain, address } });
    if (pools === undefined) throw new AppError("UPSTREAM_ERROR", "geckoterminal pool list load returned nothing");
    return [...pools];
  }

  private async loadPools(chain: DexChain, address: string): Promise<DexPool[]> {
    const path = `/networks/${DEX_CHAINS[chain].geckoterminal}/tokens/${encodeURIComponent(address)}/pools`;
    const raw = await this.http.getJson(path, { page: 1, include: "base_token,quote_token,dex" }).catch(mapError(`token ${address} on ${chain}`));
    return parsePools(raw);
  }

  /**
   * USD candles of one pool's base token, newest first, at most `limit` (capped at {@link OHLCV_MAX_LIMIT}),
   * ending before `beforeMs` when given (sent as unix seconds). Intervals without swaps are absent. Not cached.
   * @throws AppError NOT_FOUND when GeckoTerminal does not know the pool.
   */
  async ohlcv(chain: DexChain, poolAddress: string, tf: OhlcvTimeframe, opts: { limit: number; beforeMs?: number }): Promise<PoolCandle[]> {
    if (!(opts.limit >= 1)) return [];
    const limit = Math.min(OHLCV_MAX_LIMIT, Math.floor(opts.limit));
    const path = `/networks/${DEX_CHAINS[chain].geckoterminal}/pools/${encodeURIComponent(poolAddress)}/ohlcv/${tf.timeframe}`;
    const raw = await this.http
      .getJson(path, {
        aggregate: tf.aggregate,
        limit,
        before_timestamp: opts.beforeMs === undefined ? undefined : Math.floor(opts.beforeMs / 1000),
        currency: "usd",
        token: "base",
      })
      .catch(mapError(`pool ${poolAddress} on ${chain}`));
    return parseOhlcv(raw).slice(0, limit);
  }
}

/** Maps a refused GeckoTerminal request to an {@link AppError}. */
function mapError(what: string) {
  return (err: unknown): never => {
    if (err instanceof VenueHttpError) {
      if (err.status === 404) throw new AppError("NOT_FOUND", `geckoterminal knows no ${what}`);
      throw new AppError("UPSTREAM_ERROR", `geckoterminal refused the request (HTTP ${err.status})`);
    }
    throw err;
  };
}
