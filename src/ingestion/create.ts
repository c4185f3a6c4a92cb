import type { Config } from "../config.js";
import type { Metrics } from "../core/metrics.js";
import { logger } from "../lib/log.js";
import { ClientRateLimiter } from "../lib/rate-limit.js";
import type { RedisHandle } from "../state/redis.js";
import type { PerpVenue, PerpVenueClient } from "../venues/perp/types.js";
import type { TradeBackfill } from "./backfill/common.js";
import { AsterTradeBackfill } from "../venues/aster/backfill.js";
import { BinanceTradeBackfill } from "../venues/binance/backfill.js";
import { BitgetTradeBackfill } from "../venues/bitget/backfill.js";
import { BybitTradeBackfill } from "../venues/bybit/backfill.js";
import { DeribitTradeBackfill } from "../venues/deribit/backfill.js";
import { GateTradeBackfill } from "../venues/gate/backfill.js";
import { HyperliquidTradeBackfill } from "../venues/hyperliquid/backfill.js";
import { LatestTradesBackfill } from "./backfill/latest-trades.js";
import { OkxTradeBackfill } from "../venues/okx/backfill.js";
import { AsterFeed } from "../venues/aster/feed.js";
import { BinanceFeed } from "../venues/binance/feed.js";
import { BitgetFeed } from "../venues/bitget/feed.js";
import { BybitFeed } from "../venues/bybit/feed.js";
import { DeribitFeed } from "../venues/deribit/feed.js";
import { GateFeed } from "../venues/gate/feed.js";
import { HyperliquidFeed } from "../venues/hyperliquid/feed.js";
import { FeedMetrics } from "./feeds/metrics.js";
import { OkxFeed } from "../venues/okx/feed.js";
import type { VenueFeed } from "./feeds/feed-base.js";
import { GuardedIngestion } from "./guarded-ingestion.js";
import { IngestionManager, type IngestionManagerOptions } from "./manager.js";
import { PaidUseRelay } from "./paid-relay.js";
import { ReplicatedIngestion } from "./replication/replicated-ingestion.js";
import { StandbyFeeds } from "./replication/standby.js";
import type { IngestionService } from "./service.js";
import { CvdStore } from "./store/cvd-store.js";
import { openStreamDb, streamDbPath } from "./store/db.js";
import { LiquidationStore } from "./store/liquidation-store.js";
import { STREAM_VENUES, type StreamVenue } from "./types.js";

type IngestionConfig = Config & { streams: NonNullable<Config["streams"]> };

/** A new feed of `venue` (websocket base from config); `feedMetrics` counts its traffic when given. */
function createFeed(venue: StreamVenue, config: IngestionConfig, perps: Record<PerpVenue, PerpVenueClient>, feedMetrics?: FeedMetrics): VenueFeed {
  const opts = { metrics: feedMetrics, instruments: perps[venue], baseUrl: config.streams.wsUrls[venue] };
  switch (venue) {
    case "binance":
      return new BinanceFeed(opts);
    case "bybit":
      return new BybitFeed(opts);
    case "okx":
      return new OkxFeed(opts);
    case "gate":
      return new GateFeed(opts);
    case "hyperliquid":
      return new HyperliquidFeed(opts);
    case "bitget":
      return new BitgetFeed(opts);
    case "deribit":
      return new DeribitFeed(opts);
    case "aster":
      return new AsterFeed(opts);
  }
}

/** The four venue feeds (websocket bases from config); new instances on every call. */
function createFeeds(config: IngestionConfig, perps: Record<PerpVenue, PerpVenueClient>, feedMetrics: FeedMetrics): Record<StreamVenue, VenueFeed> {
  return Object.fromEntries(STREAM_VENUES.map((v) => [v, createFeed(v, config, perps, feedMetrics)])) as Record<StreamVenue, VenueFeed>;
}

/** The REST trade backfills of the four venues (REST bases from config). */
function createBackfills(config: IngestionConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): Record<StreamVenue, TradeBackfill> {
  const v = config.venues;
  const rest = { timeoutMs: config.upstreamTimeoutMs, metrics };
  return {
    binance: new BinanceTradeBackfill({ ...rest, instruments: perps.binance, baseUrl: v.binanceFapi }),
    bybit: new BybitTradeBackfill({ ...rest, instruments: perps.bybit, baseUrl: v.bybit }),
    okx: new OkxTradeBackfill({ ...rest, instruments: perps.okx, baseUrl: v.okx }),
    gate: new GateTradeBackfill({ ...rest, instruments: perps.gate, baseUrl: v.gate }),
    hyperliquid: new HyperliquidTradeBackfill({ ...rest, instruments: perps.hyperliquid, baseUrl: v.hyperliquid }),
    bitget: new BitgetTradeBackfill({ ...rest, instruments: perps.bitget, baseUrl: v.bitget }),
    deribit: new DeribitTradeBackfill({ ...rest, instruments: perps.deribit, baseUrl: v.deribit }),
    aster: new AsterTradeBackfill({ ...rest, instruments: perps.aster, baseUrl: v.aster }),
  };
}

/**
 * The CVD and liquidation stores in one SQLite file under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`).
 * `flushMs` (default the stores' 1 s) is also the replication period in replicated mode.
 */
function createStores(config: IngestionConfig, flushMs?: number): { cvd: CvdStore; liquidations: LiquidationStore } {
  const dir = config.streams.dataDir;
  const db = openStreamDb(dir === ":memory:" ? ":memory:" : streamDbPath(dir));
  return { cvd: new CvdStore(db, { flushMs }), liquidations: new LiquidationStore(db, { flushMs }) };
}

/**
 * Flush (and so publication) period of the stores of replicas, ms: what a leader has counted but not yet
 * published when it dies must be backfilled from REST, and some venues' REST serves only the latest trades.
 */
const REPLICATED_FLUSH_MS = 250;

function managerOptions(config: IngestionConfig): IngestionManagerOptions {
  const s = config.streams;
  return { maxOnDemand: s.maxOnDemand, idleMs: s.idleMs, warmupMs: s.warmupMs };
}

/**
 * Builds the ingestion manager from the configuration: the four venue feeds (websocket bases from config),
 * their REST backfills (REST bases from config), and the CVD and liquidation stores in one SQLite file
 * under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`). Nothing connects until `start()`.
 */
export function createIngestionManager(config: IngestionConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): IngestionManager {
  const { cvd, liquidations } = createStores(config);
  return new IngestionManager(createFeeds(config, perps, new FeedMetrics(metrics.registry)), createBackfills(config, perps, metrics), cvd, liquidations, managerOptions(config));
}

/**
 * The per-client budget of new on-demand warm-ups (`STREAM_WARMUPS_PER_MIN`), keyed like the other rate
 * limits (client address or IPv6 /64); counted in Redis across replicas when there is one
 * (`<prefix>rl-warmup:<client>`). Its memory is bounded: a client's count expires a minute after it began.
 */
function warmupBudget(config: IngestionConfig, redis?: RedisHandle): ClientRateLimiter {
  return new ClientRateLimiter({
    perMin: config.streams.warmupsPerMin,
    keyName: "rl-warmup",
    what: "new stream warm-ups (first requests of symbols not streamed yet)",
    policy: "warmups",
    redis: config.redis ? redis : undefined,
  });
}

/**
 * The venue ingestion as configured, as the tools get it ({@link GuardedIngestion}: warm-ups budgeted per
 * client, paid use recorded so it is never evicted by a warm-up): with `REDIS_URL` (and its handle) over a
 * {@link ReplicatedIngestion} (one replica ingests, all serve; local stores as in embedded mode, a fresh
 * manager with fresh feeds each time this replica starts leading; followers keep standby feeds of the
 * venues whose REST serves only their latest trades, buffering 3 lease TTLs and at least a minute; paid
 * use relayed to the leader by {@link PaidUseRelay}), else over the embedded {@link IngestionManager} of
 * {@link createIngestionManager}.
 */
export function createIngestion(config: IngestionConfig, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics, redis?: RedisHandle): IngestionService {
  const budget = warmupBudget(config, redis);
  const r = config.redis;
  if (!r || !redis) {
    const manager = createIngestionManager(config, perps, metrics);
    return new GuardedIngestion(manager, { budget, markPaid: (base) => manager.markPaid(base) });
  }
  const { cvd, liquidations } = createStores(config, REPLICATED_FLUSH_MS);
  const feedMetrics = new FeedMetrics(metrics.registry);
  const backfills = createBackfills(config, perps, metrics);
  const opts = managerOptions(config);
  const standbyVenues = STREAM_VENUES.filter((v) => backfills[v] instanceof LatestTradesBackfill);
  /** The manager this replica made when it last started leading (the one that ingests while it leads). */
  let latest: IngestionManager | null = null;
  const replicated = new ReplicatedIngestion({
    redis,
    cvd,
    liquidations,
    createManager: () => (latest = new IngestionManager(createFeeds(config, perps, feedMetrics), backfills, cvd, liquidations, opts)),
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
  const relay = new PaidUseRelay({
    redis,
    holdMs: config.streams.idleMs,
    leading: () => replicated.isLeader,
    apply: (base, at) => latest?.markPaid(base, at),
    log: logger,
  });
  return new GuardedIngestion(replicated, { budget, markPaid: (base) => relay.record(base), companion: relay });
}
