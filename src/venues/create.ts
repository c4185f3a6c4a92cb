import type { Config } from "../config.js";
import type { Venues } from "../core/context.js";
import type { Metrics } from "../core/metrics.js";
import { acceptSimReplayMarks } from "../core/request-scope.js";
import { VenueHealth } from "../core/venue-health.js";
import { ClientRateLimiter } from "../lib/rate-limit.js";
import type { RedisHandle } from "../state/redis.js";
import type { BinancePerpClient } from "./binance/client.js";
import type { HyperliquidPerpClient } from "./hyperliquid/client.js";
import { CoinGeckoClient } from "./coingecko/client.js";
import { DexScreenerClient } from "./dexscreener/client.js";
import { GeckoTerminalClient } from "./geckoterminal/client.js";
import { GeckoTerminalTokenClient } from "./geckoterminal/token-client.js";
import { DexTokenSource } from "./dex/token-source.js";
import { VENUES } from "./index.js";
import { PERP_VENUES, type PerpVenue, type PerpVenueClient } from "./perp/types.js";
import { validateClients } from "./validate.js";

/**
 * The per-client budget of token checks before payment that need an upstream call (`TOKEN_CHECKS_PER_MIN`),
 * keyed like the other rate limits (client address, or IPv6 /64); counted in Redis across replicas when there
 * is one (`<prefix>rl-token-check:<client>`). Its memory is bounded: a client's count expires a minute after it began.
 */
function tokenCheckBudget(config: Config, redis?: RedisHandle): ClientRateLimiter {
  return new ClientRateLimiter({
    perMin: config.tokenChecks.perClientPerMin,
    keyName: "rl-token-check",
    what: "token existence checks before payment (lookups of addresses not cached)",
    policy: "token-checks",
    redis,
  });
}

/**
 * Every venue client of the configuration (base URLs, budgets, timeouts) and the health (circuit breakers,
 * last success and failure) they share, as the service and `marketgate doctor` both use them. The circuits
 * start with the default policy; the caller applies `config.circuit` (`health.configureCircuits`).
 */
export function createVenues(config: Config, deps: { metrics: Metrics; redis?: RedisHandle }): { venues: Venues; health: VenueHealth } {
  const health = new VenueHealth(["coingecko", ...PERP_VENUES, "dexscreener", "geckoterminal"]);
  if (config.simReplay) acceptSimReplayMarks(health);
  const common = { timeoutMs: config.upstreamTimeoutMs, metrics: deps.metrics, health };
  const v = config.venues;
  const perps = Object.fromEntries(VENUES.map((d) => [d.id, d.createClient(config, common)])) as Record<PerpVenue, PerpVenueClient>;
  validateClients(VENUES, perps);
  const dexscreener = new DexScreenerClient(v.dexscreener, { ...common, callsPerMin: config.dexscreenerCallsPerMin });
  const geckoterminal = new GeckoTerminalClient(v.geckoterminal, { ...common, callsPerMin: config.geckoterminalCallsPerMin });
  const venues: Venues = {
    coingecko: new CoinGeckoClient(config.coingecko, common),
    perps,
    spot: perps.binance as BinancePerpClient,
    predictions: perps.hyperliquid as HyperliquidPerpClient,
    dexscreener,
    geckoterminal,
    dexTokens: new DexTokenSource({
      gt: new GeckoTerminalTokenClient(geckoterminal.http),
      ds: dexscreener,
      gtCallsPerMin: config.geckoterminalCallsPerMin,
      dsCallsPerMin: config.dexscreenerCallsPerMin,
      unpaidSharePct: config.tokenChecks.sharePct,
      checkBudget: tokenCheckBudget(config, deps.redis),
    }),
  };
  return { venues, health };
}
