import { memoizeKeyed } from "../../lib/memo.js";
import { AppError } from "../../errors.js";
import { VenueHttpClient, VenueHttpError, type VenueClientOptions } from "../../lib/venue-http.js";
import { DEX_CHAINS, type DexChain, type DexPool } from "../dex/types.js";
import { DEXSCREENER_ENDPOINTS } from "./endpoints.js";
import { parsePairList, parseSearch } from "./parse.js";

/** Venue key of DexScreener in status, metrics and errors. */
export const DEXSCREENER = "dexscreener";

/** Most token addresses one `GET /tokens/v1/{chainId}/{addresses}` accepts. */
export const DEXSCREENER_MAX_TOKENS = 30;

/** Options of {@link DexScreenerClient}; `callsPerMin` defaults to `DEXSCREENER_ENDPOINTS.rest.api` (endpoints.ts). */
export type DexScreenerClientOptions = VenueClientOptions;

/**
 * DexScreener public API client (no key; https://docs.dexscreener.com/api/reference), live base `DEXSCREENER_ENDPOINTS.rest.api.url`.
 * Endpoints: `GET /token-pairs/v1/{chainId}/{tokenAddress}`, `GET /tokens/v1/{chainId}/{a,b,…}` (≤ 30 per
 * call; longer lists are split), `GET /latest/dex/search?q=`. Results are {@link DexPool}s in USD (liquidity,
 * volume) with `feeBps` null (DexScreener states no fee); pairs on chains we do not aggregate are dropped.
 * Nothing is cached here (DexScreener's edge caches about 60 s); identical concurrent calls share one request.
 * Errors: see {@link VenueHttpClient}; HTTP 404 → `NOT_FOUND`; other refusals → `UPSTREAM_ERROR`.
 */
/** How long a token's pool list is reused. */
const PAIRS_TTL_MS = 20_000;

export class DexScreenerClient {
  private readonly http: VenueHttpClient;

  constructor(baseUrl: string, opts: DexScreenerClientOptions) {
    this.http = new VenueHttpClient({
      venue: DEXSCREENER,
      baseUrl: baseUrl.replace(/\/+$/, ""),
      callsPerMin: opts.callsPerMin ?? DEXSCREENER_ENDPOINTS.rest.api.callsPerMin,
      timeoutMs: opts.timeoutMs,
      metrics: opts.metrics,
      health: opts.health,
      retries: opts.retries,
      maxWaitMs: opts.maxWaitMs,
    });
  }

  /**
   * Every pool of one token on one chain (`token-pairs/v1`); [] when DexScreener knows none. Kept 20 s per
   * token: every DEX tool of a symbol reads the same lists (ETH has nine canonical contracts), so this keeps
   * bursts of different tools under the 300 requests/min limit. Returned arrays are shared: do not mutate.
   */
  tokenPairs(chain: DexChain, address: string): Promise<DexPool[]> {
    return this.pairs(`${chain}:${chain === "solana" ? address : address.toLowerCase()}`, { chain, address });
  }

  private readonly pairs = memoizeKeyed(PAIRS_TTL_MS, 2000, async ({ chain, address }: { chain: DexChain; address: string }) => {
    const path = `/token-pairs/v1/${DEX_CHAINS[chain].dexscreener}/${encodeURIComponent(address)}`;
    const raw = await this.http.getJson(path).catch(mapError(`token ${address} on ${chain}`));
    return parsePairList(raw, "/token-pairs/v1");
  });

  /**
   * Pools of several tokens on one chain (`tokens/v1`), 30 addresses per request; a pool listed for two
   * requested tokens appears once. [] for an empty list.
   */
  async tokens(chain: DexChain, addresses: readonly string[]): Promise<DexPool[]> {
    const unique = [...new Set(addresses)];
    const chunks: string[][] = [];
    for (let i = 0; i < unique.length; i += DEXSCREENER_MAX_TOKENS) chunks.push(unique.slice(i, i + DEXSCREENER_MAX_TOKENS));
    const lists = await Promise.all(
      chunks.map(async (chunk) => {
        const path = `/tokens/v1/${DEX_CHAINS[chain].dexscreener}/${chunk.map(encodeURIComponent).join(",")}`;
        const raw = await this.http.getJson(path).catch(mapError(`tokens on ${chain}`));
        return parsePairList(raw, "/tokens/v1");
      }),
    );
    const seen = new Set<string>();
    const out: DexPool[] = [];
    for (const pool of lists.flat()) {
      const key = `${pool.chain}:${pool.chain === "solana" ? pool.pairAddress : pool.pairAddress.toLowerCase()}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(pool);
    }
    return out;
  }

  /** Free-text pair search (`latest/dex/search?q=`, e.g. `SOL/USDC` or a token address); pools on our chains only. */
  async search(q: string): Promise<DexPool[]> {
    const raw = await this.http.getJson("/latest/dex/search", { q }).catch(mapError(`search '${q}'`));
    return parseSearch(raw);
  }
}

/** Maps a refused DexScreener request to an {@link AppError}. */
function mapError(what: string) {
  return (err: unknown): never => {
    if (err instanceof VenueHttpError) {
      if (err.status === 404) throw new AppError("NOT_FOUND", `dexscreener knows no ${what}`);
      throw new AppError("UPSTREAM_ERROR", `dexscreener refused the request (HTTP ${err.status})`);
    }
    throw err;
  };
}
