/*
 * The context a tool handler runs with: type declarations only. Its members are built by the composition
 * root (src/service.ts `createService`, venues by src/venues/create.ts), which also hands in the concrete
 * alert and credit services through the small ports of ./types.ts, so that nothing here names a service
 * that itself depends on the registry (docs/architecture.md "Layering").
 */
import type { DataMode } from "../config.js";
import type { Logger } from "../lib/log.js";
import type { RedisHandle } from "../state/redis.js";
import type { IngestionService } from "../ingestion/service.js";
import type { CoinGeckoClient } from "../venues/coingecko/client.js";
import type { DexScreenerClient } from "../venues/dexscreener/client.js";
import type { GeckoTerminalClient } from "../venues/geckoterminal/client.js";
import type { DexTokenSource } from "../venues/dex/token-source.js";
import type { PerpVenue, PerpVenueClient, PredictedFunding } from "../venues/perp/types.js";
import type { AlertPort, CreditAccountsPort } from "./types.js";
import type { VenueHealth } from "./venue-health.js";

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
  /** Any token by chain and address (GeckoTerminal + DexScreener, batched, paced, cached). */
  dexTokens: DexTokenSource;
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
  /** Venue ingestion (the CVD and liquidation stores it fills); undefined when `STREAMS=off`. */
  ingestion?: IngestionService;
  /** Liquidation and price alerts (lifecycle and the reads of their store); undefined when `ALERTS=off`. */
  alerts?: AlertPort;
  /** Prepaid credit accounts (SIWX); undefined when payments or `CREDITS` are off. Set by the service once payments exist. */
  credits?: CreditAccountsPort;
  /** Shared state of several replicas (`REDIS_URL`); undefined with embedded state. */
  redis?: RedisHandle;
  /** This replica's name in leases (`REPLICA_ID`), with Redis only. */
  replicaId?: string;
  /** `PUBLIC_URL`: where clients reach this service (absolute stream URLs in the MCP stream tool). */
  publicUrl?: string;
}
