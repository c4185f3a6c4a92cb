import type { Config, DataMode } from "../config.js";
import type { CreditService } from "../payments/credits/service.js";
import type { Logger } from "../lib/log.js";
import { CoinGeckoClient } from "../venues/coingecko/client.js";
import { DexScreenerClient } from "../venues/dexscreener/client.js";
import { GeckoTerminalClient } from "../venues/geckoterminal/client.js";
import { BinancePerpClient } from "../venues/binance/client.js";
import { BybitPerpClient } from "../venues/bybit/client.js";
import { HyperliquidPerpClient } from "../venues/hyperliquid/client.js";
import { OkxPerpClient } from "../venues/okx/client.js";
import { createAlertService } from "../alerts/create.js";
import type { AlertService } from "../alerts/service.js";
import type { RedisHandle } from "../state/redis.js";
import { createStreamService } from "../streams/create.js";
import type { StreamService } from "../streams/service.js";
import { PERP_VENUES, type PerpVenue, type PerpVenueClient, type PredictedFunding } from "../venues/perp/types.js";
import type { Metrics } from "./metrics.js";
import { acceptSimReplayMarks } from "./request-scope.js";
import { VenueHealth } from "./venue-health.js";

/** Venue clients available to tool handlers. */
export interface Venues {
  coingecko: CoinGeckoClient;
  /** Perpetual-futures venues. */
  perps: Record<PerpVenue, PerpVenueClient>;
  /** Spot reference prices (Binance spot `GET /api/v3/ticker/price`). */
  spot: { spotPrice(base: string): Promise<number> };
  /** Hyperliquid `predictedFundings` (predictions for Binance, Bybit and Hyperliquid). */
  predictions: { predictedFundings(): Promise<PredictedFunding[]> };
  /** DEX pools (DexScreener). */
  dexscreener: DexScreenerClient;
  /** DEX pool lists and OHLCV (GeckoTerminal). */
  geckoterminal: GeckoTerminalClient;
}

/** What a tool handler may use. Handlers never see HTTP or MCP details. */
export interface ToolContext {
  venues: Venues;
  health: VenueHealth;
  dataMode: DataMode;
  /** `SIM_REPLAY=on`: the simulator replays recordings on some endpoints (status shows which answered so). */
  simReplay: boolean;
  /** `DATA_DIR` (`:memory:` for none): status reads the last `marketgate doctor` summary there. */
  dataDir: string;
  /** Service version (package.json). */
  version: string;
  /** Process start, epoch ms. */
  startedAt: number;
  /** Current time in epoch ms (injectable for tests). */
  now(): number;
  log: Logger;
  /** Live streams (CVD, liquidations); undefined when `STREAMS=off`. */
  streams?: StreamService;
  /** Liquidation and price alerts (store and lifecycle); undefined when `ALERTS=off`. */
  alerts?: AlertService;
  /** Prepaid credits (SIWX); undefined when payments or `CREDITS` are off. Set by the service once payments exist. */
  credits?: CreditService;
  /** Shared state of several replicas (`REDIS_URL`); undefined with embedded state. */
  redis?: RedisHandle;
  /** This replica's name in leases (`REPLICA_ID`), with Redis only. */
  replicaId?: string;
  /** `PUBLIC_URL`: where clients reach this service (absolute stream URLs in the MCP stream tool). */
  publicUrl?: string;
}

/** Builds the venue clients and the handler context from the configuration. */
export function createToolContext(config: Config, deps: { metrics: Metrics; log: Logger; version: string; now?: () => number; redis?: RedisHandle }): ToolContext {
  const health = new VenueHealth(["coingecko", ...PERP_VENUES, "dexscreener", "geckoterminal"]);
  if (config.simReplay) acceptSimReplayMarks(health);
  const common = { timeoutMs: config.upstreamTimeoutMs, metrics: deps.metrics, health };
  const v = config.venues;
  const binance = new BinancePerpClient(v.binanceFapi, { ...common, spotBaseUrl: v.binanceSpot });
  const hyperliquid = new HyperliquidPerpClient(v.hyperliquid, common);
  const perps = { binance, bybit: new BybitPerpClient(v.bybit, common), okx: new OkxPerpClient(v.okx, common), hyperliquid };
  const now = deps.now ?? Date.now;
  return {
    venues: {
      coingecko: new CoinGeckoClient(config.coingecko, common),
      perps,
      spot: binance,
      predictions: hyperliquid,
      dexscreener: new DexScreenerClient(v.dexscreener, { ...common, callsPerMin: config.dexscreenerCallsPerMin }),
      geckoterminal: new GeckoTerminalClient(v.geckoterminal, { ...common, callsPerMin: config.geckoterminalCallsPerMin }),
    },
    health,
    dataMode: config.dataMode,
    simReplay: config.simReplay,
    dataDir: config.dataDir,
    version: deps.version,
    startedAt: Date.now(),
    now,
    log: deps.log,
    streams: config.streams ? createStreamService({ ...config, streams: config.streams }, perps, deps.metrics, deps.redis) : undefined,
    alerts: config.alerts ? createAlertService(config.alerts, now, deps.redis) : undefined,
    redis: deps.redis,
    replicaId: config.redis?.replicaId,
    publicUrl: config.publicUrl,
  };
}
