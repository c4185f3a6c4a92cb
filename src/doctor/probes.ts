/**
 * Venue probes: cheap calls through the service's own clients (so the real request, budget, circuit breaker and
 * parser run) that show a venue answers. `marketgate doctor` (`checks.ts`) and `GET /ready` (`readiness.ts`) both
 * call them, so the two ask a venue the same question.
 */
import type { Venues } from "../core/context.js";
import type { PerpVenue } from "../venues/perp/types.js";

/** The perpetual the probes ask about (base asset). */
export const PROBE_PERP = "BTC";
/** The token the DEX probes ask about: WETH on Ethereum. */
export const PROBE_WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";

/** A probe: resolves with what the client's parser returned, rejects with what the client threw. */
export type VenueProbe = (v: Venues) => Promise<unknown>;

/** The current funding of {@link PROBE_PERP} on a perp venue, as the funding tools read it. */
export const perpFunding =
  (venue: PerpVenue): VenueProbe =>
  (v) =>
    v.perps[venue].funding(PROBE_PERP);

/** Binance spot `GET /api/v3/ticker/price` for {@link PROBE_PERP}. */
export const binanceSpotPrice: VenueProbe = (v) => v.spot.spotPrice(PROBE_PERP);

/** CoinGecko `GET /simple/price` for bitcoin. */
export const coingeckoSimplePrice: VenueProbe = (v) => v.coingecko.simplePrice(["bitcoin"]);

/** DexScreener `GET /tokens/v1/ethereum/{WETH}`. */
export const dexscreenerTokens: VenueProbe = (v) => v.dexscreener.tokens("ethereum", [PROBE_WETH]);

/** GeckoTerminal `GET /networks/ethereum/tokens/{WETH}/pools`. */
export const geckoterminalTokenPools: VenueProbe = (v) => v.geckoterminal.tokenPools("ethereum", PROBE_WETH);

/**
 * GeckoTerminal hourly OHLCV (`limit` candles) of WETH's first pool. The pool list is kept by the client for 10
 * minutes, so the OHLCV call is usually the only one that reaches GeckoTerminal. Throws when no pool is listed.
 */
export const geckoterminalOhlcv =
  (limit: number): VenueProbe =>
  async (v) => {
    const [pool] = await v.geckoterminal.tokenPools("ethereum", PROBE_WETH);
    if (!pool) throw new Error("geckoterminal listed no WETH pool");
    return v.geckoterminal.ohlcv("ethereum", pool.pairAddress, { timeframe: "hour", aggregate: 1 }, { limit });
  };
