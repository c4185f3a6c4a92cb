import type { Config } from "../config.js";
import type { Venues } from "../core/context.js";
import type { Metrics } from "../core/metrics.js";
import { acceptSimReplayMarks } from "../core/request-scope.js";
import { VenueHealth } from "../core/venue-health.js";
import { ClientRateLimiter } from "../lib/rate-limit.js";
import type { RedisHandle } from "../state/redis.js";
import { AsterPerpClient } from "./aster/client.js";
import { BinancePerpClient } from "./binance/client.js";
import { BitgetPerpClient } from "./bitget/client.js";
import { BybitPerpClient } from "./bybit/client.js";
import { CoinGeckoClient } from "./coingecko/client.js";
import { DeribitPerpClient } from "./deribit/client.js";
import { DexScreenerClient } from "./dexscreener/client.js";
import { GatePerpClient } from "./gate/client.js";
import { GeckoTerminalClient } from "./geckoterminal/client.js";
import { GeckoTerminalTokenClient } from "./geckoterminal/token-client.js";
import { DexTokenSource } from "./dex/token-source.js";
import { HyperliquidPerpClient } from "./hyperliquid/client.js";
import { OkxPerpClient } from "./okx/client.js";
import { PERP_VENUES } from "./perp/types.js";

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
  const binance = new BinancePerpClient(v.binanceFapi, { ...common, spotBaseUrl: v.binanceSpot });
  const hyperliquid = new HyperliquidPerpClient(v.hyperliquid, common);
  const perps = {
    binance,
    bybit: new BybitPerpClient(v.bybit, common),
    okx: new OkxPerpClient(v.okx, common),
    gate: new GatePerpClient(v.gate, common),
    hyperliquid,
    bitget: new BitgetPerpClient(v.bitget, common),
    aster: new AsterPerpClient(v.aster, common),
    deribit: new DeribitPerpClient(v.deribit, common),
  };
  const dexscreener = new DexScreenerClient(v.dexscreener, { ...common, callsPerMin: config.dexscreenerCallsPerMin });
  const geckoterminal = new GeckoTerminalClient(v.geckoterminal, { ...common, callsPerMin: config.geckoterminalCallsPerMin });
  const venues: Venues = {
    coingecko: new CoinGeckoClient(config.coingecko, common),
    perps,
    spot: binance,
    predictions: hyperliquid,
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
