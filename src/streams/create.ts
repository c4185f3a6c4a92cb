import type { Config } from "../config.js";
import type { Metrics } from "../core/metrics.js";
import type { RedisHandle } from "../state/redis.js";
import type { PerpVenue, PerpVenueClient } from "../venues/perp/types.js";
import type { TradeBackfill } from "./backfill/common.js";
import { BinanceTradeBackfill } from "./backfill/binance.js";
import { BybitTradeBackfill } from "./backfill/bybit.js";
import { HyperliquidTradeBackfill } from "./backfill/hyperliquid.js";
import { LatestTradesBackfill } from "./backfill/latest-trades.js";
import { OkxTradeBackfill } from "./backfill/okx.js";
import { BinanceFeed } from "./feeds/binance.js";
import { BybitFeed } from "./feeds/bybit.js";
import { HyperliquidFeed } from "./feeds/hyperliquid.js";
import { FeedMetrics } from "./feeds/metrics.js";
import { OkxFeed } from "./feeds/okx.js";
import type { VenueFeed } from "./feeds/feed-base.js";
import { StreamManager, type StreamManagerOptions } from "./manager.js";
import { ReplicatedStreams } from "./replication/replicated-streams.js";
import { StandbyFeeds } from "./replication/standby.js";
import type { StreamService } from "./service.js";
import { CvdStore } from "./store/cvd-store.js";
import { openStreamDb, streamDbPath } from "./store/db.js";
import { LiquidationStore } from "./store/liquidation-store.js";
import { STREAM_VENUES, type StreamVenue } from "./types.js";

type StreamsConfig = Config & { streams: NonNullable<Config["streams"]> };

/** A new feed of `venue` (websocket base from config); `feedMetrics` counts its traffic when given. */
function createFeed(venue: StreamVenue, config: StreamsConfig, perps: Record<PerpVenue, PerpVenueClient>, feedMetrics?: FeedMetrics): VenueFeed {
  const opts = { metrics: feedMetrics, instruments: perps[venue], baseUrl: config.streams.wsUrls[venue] };
  switch (venue) {
    case "binance":
      return new BinanceFeed(opts);
    case "bybit":
      return new BybitFeed(opts);
    case "okx":
      return new OkxFeed(opts);
    case "hyperliquid":
      return new HyperliquidFeed(opts);
  }
}

/** The four venue feeds (websocket bases from config); new instances on every call. */
function createFeeds(config: StreamsConfig, perps: Record<PerpVenue, PerpVenueClient>, feedMetrics: FeedMetrics): Record<StreamVenue, VenueFeed> {
  return Object.fromEntries(STREAM_VENUES.map((v) => [v, createFeed(v, config, perps, feedMetrics)])) as Record<StreamVenue, VenueFeed>;
}

/** The REST trade backfills of the four venues (REST bases from config). */
function createBackfills(config: StreamsConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): Record<StreamVenue, TradeBackfill> {
  const v = config.venues;
  const rest = { timeoutMs: config.upstreamTimeoutMs, metrics };
  return {
    binance: new BinanceTradeBackfill({ ...rest, instruments: perps.binance, baseUrl: v.binanceFapi }),
    bybit: new BybitTradeBackfill({ ...rest, instruments: perps.bybit, baseUrl: v.bybit }),
    okx: new OkxTradeBackfill({ ...rest, instruments: perps.okx, baseUrl: v.okx }),
    hyperliquid: new HyperliquidTradeBackfill({ ...rest, instruments: perps.hyperliquid, baseUrl: v.hyperliquid }),
  };
}

/**
 * The CVD and liquidation stores in one SQLite file under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`).
 * `flushMs` (default the stores' 1 s) is also the replication period in replicated mode.
 */
function createStores(config: StreamsConfig, flushMs?: number): { cvd: CvdStore; liquidations: LiquidationStore } {
  const dir = config.streams.dataDir;
  const db = openStreamDb(dir === ":memory:" ? ":memory:" : streamDbPath(dir));
  return { cvd: new CvdStore(db, { flushMs }), liquidations: new LiquidationStore(db, { flushMs }) };
}

/**
 * Flush (and so publication) period of the stores of replicas, ms: what a leader has counted but not yet
 * published when it dies must be backfilled from REST, and some venues' REST serves only the latest trades.
 */
const REPLICATED_FLUSH_MS = 250;

function managerOptions(config: StreamsConfig): StreamManagerOptions {
  const s = config.streams;
  return { maxOnDemand: s.maxOnDemand, idleMs: s.idleMs, warmupMs: s.warmupMs };
}

/**
 * Builds the stream manager from the configuration: the four venue feeds (websocket bases from config),
 * their REST backfills (REST bases from config), and the CVD and liquidation stores in one SQLite file
 * under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`). Nothing connects until `start()`.
 */
export function createStreamManager(config: StreamsConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): StreamManager {
  const { cvd, liquidations } = createStores(config);
  return new StreamManager(
    createFeeds(config, perps, new FeedMetrics(metrics.registry)),
    createBackfills(config, perps, metrics),
    cvd,
    liquidations,
    managerOptions(config),
  );
}

/**
 * The live streams as configured: with `REDIS_URL` (and its handle) a {@link ReplicatedStreams} (one replica
 * ingests, all serve; local stores as in embedded mode, a fresh manager with fresh feeds each time this
 * replica starts leading; followers keep standby feeds of the venues whose REST serves only their latest
 * trades, buffering 3 lease TTLs and at least a minute), else the embedded {@link StreamManager} of
 * {@link createStreamManager}.
 */
export function createStreamService(config: StreamsConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics, redis?: RedisHandle): StreamService {
  const r = config.redis;
  if (!r || !redis) return createStreamManager(config, perps, metrics);
  const { cvd, liquidations } = createStores(config, REPLICATED_FLUSH_MS);
  const feedMetrics = new FeedMetrics(metrics.registry);
  const backfills = createBackfills(config, perps, metrics);
  const opts = managerOptions(config);
  const standbyVenues = STREAM_VENUES.filter((v) => backfills[v] instanceof LatestTradesBackfill);
  return new ReplicatedStreams({
    redis,
    cvd,
    liquidations,
    createManager: () => new StreamManager(createFeeds(config, perps, feedMetrics), backfills, cvd, liquidations, opts),
    createStandby: () =>
      new StandbyFeeds({
        feeds: Object.fromEntries(standbyVenues.map((v) => [v, createFeed(v, config, perps)])),
        keepMs: Math.max(60_000, 3 * r.leaseTtlMs),
      }),
    replicaId: r.replicaId,
    leaseTtlMs: r.leaseTtlMs,
    warmupMs: opts.warmupMs,
    idleMs: opts.idleMs,
  });
}
