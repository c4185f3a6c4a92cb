import { AppError } from "../../errors.js";
import { VenueHttpError, type VenueHttpClient } from "../../lib/venue-http.js";
import { DEX_CHAINS, type DexChain, type OhlcvTimeframe, type PoolCandle } from "../dex/types.js";
import { OHLCV_MAX_LIMIT } from "./client.js";
import { parseOhlcv } from "./parse.js";
import { parseTokens, type GtToken } from "./parse-token.js";

/** Most addresses one `GET /networks/{network}/tokens/multi/{addresses}` accepts (apiguide.geckoterminal.com). */
export const GECKOTERMINAL_MAX_TOKENS = 30;

/**
 * GeckoTerminal token-by-address reads over the venue's shared {@link VenueHttpClient} (one budget with
 * client.ts). Endpoints: `GET /networks/{network}/tokens/{address}?include=top_pools` (one address) and
 * `GET /networks/{network}/tokens/multi/{a,b,…}?include=top_pools` (2 to 30), and pool OHLCV charted for a
 * chosen token (`token=<address>`, so a token that is the quote side of its best pool is charted right).
 * Nothing is cached here (see src/venues/dex/token-source.ts). Errors: see {@link VenueHttpClient}; other 4xx →
 * `UPSTREAM_ERROR`.
 */
export class GeckoTerminalTokenClient {
  constructor(private readonly http: VenueHttpClient) {}

  /**
   * The tokens GeckoTerminal knows among `addresses` (≤ 30, one request), each with its top pools; unknown
   * addresses are simply absent (a single-address 404 becomes []).
   * @throws AppError BAD_REQUEST for more than 30 addresses (a caller bug; callers batch by 30).
   */
  async tokens(chain: DexChain, addresses: readonly string[]): Promise<GtToken[]> {
    if (addresses.length === 0) return [];
    if (addresses.length > GECKOTERMINAL_MAX_TOKENS) throw new AppError("BAD_REQUEST", `at most ${GECKOTERMINAL_MAX_TOKENS} addresses per GeckoTerminal call`);
    const net = DEX_CHAINS[chain].geckoterminal;
    const single = addresses.length === 1;
    const path = single ? `/networks/${net}/tokens/${encodeURIComponent(addresses[0]!)}` : `/networks/${net}/tokens/multi/${addresses.map(encodeURIComponent).join(",")}`;
    try {
      const raw = await this.http.getJson(path, { include: "top_pools" });
      return parseTokens(raw, single ? "/networks/{network}/tokens/{address}" : "/networks/{network}/tokens/multi/{addresses}");
    } catch (err) {
      if (err instanceof VenueHttpError) {
        if (err.status === 404) return [];
        throw new AppError("UPSTREAM_ERROR", `geckoterminal refused the token request (HTTP ${err.status})`);
      }
      throw err;
    }
  }

  /**
   * USD candles of `token` in one pool, newest first, at most `limit` (≤ {@link OHLCV_MAX_LIMIT}). Intervals
   * without swaps are absent (GeckoTerminal skips them). Not cached.
   * @throws AppError NOT_FOUND when GeckoTerminal does not know the pool.
   */
  async poolOhlcv(chain: DexChain, poolAddress: string, token: string, tf: OhlcvTimeframe, limit: number): Promise<PoolCandle[]> {
    const n = Math.min(OHLCV_MAX_LIMIT, Math.max(1, Math.floor(limit)));
    const path = `/networks/${DEX_CHAINS[chain].geckoterminal}/pools/${encodeURIComponent(poolAddress)}/ohlcv/${tf.timeframe}`;
    try {
      const raw = await this.http.getJson(path, { aggregate: tf.aggregate, limit: n, currency: "usd", token });
      return parseOhlcv(raw).slice(0, n);
    } catch (err) {
      if (err instanceof VenueHttpError) {
        if (err.status === 404) throw new AppError("NOT_FOUND", `geckoterminal knows no pool ${poolAddress} on ${chain}`);
        throw new AppError("UPSTREAM_ERROR", `geckoterminal refused the OHLCV request (HTTP ${err.status})`);
      }
      throw err;
    }
  }
}
