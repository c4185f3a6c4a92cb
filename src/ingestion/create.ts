import type { Config } from "../config.js";
import type { Metrics } from "../core/metrics.js";
import { logger, type Logger } from "../lib/log.js";
import { ClientRateLimiter } from "../lib/rate-limit.js";
import type { RedisHandle } from "../state/redis.js";
import type { PerpVenue, PerpVenueClient } from "../venues/perp/types.js";
import type { TradeBackfill } from "./backfill/common.js";
import { LatestTradesBackfill } from "./backfill/latest-trades.js";
import { FeedMetrics } from "./feeds/metrics.js";
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
import type { IdOrder } from "./store/trade-ledger.js";
import type { StreamVenue } from "./types.js";
import type { InstrumentSource } from "./feeds/normalise.js";

type IngestionConfig = Config & { streams: NonNullable<Config["streams"]> };

/**
 * What ingestion needs of one venue: its id, the factories of its feed and REST trade backfill (base URLs from
 * `config`), how it numbers its trades, and whether its liquidation feed is the cascade-risk history. The venue
 * definitions (src/venues/index.ts `VENUES`) are these; ingestion never imports a venue by name.
 */
export interface IngestionVenue {
  readonly id: StreamVenue;
  readonly tradeIds: IdOrder;
  readonly liquidationFeed: { readonly history?: boolean };
  createFeed(input: { config: Config; instruments: InstrumentSource; metrics?: FeedMetrics }): VenueFeed;
  createBackfill(input: { config: Config; instruments: PerpVenueClient; metrics: Metrics; logger?: Logger }): TradeBackfill;
}

/** A new feed of every venue (websocket bases from config), in `venues` order; `feedMetrics` counts their traffic when given. */
function createFeeds(
  config: IngestionConfig,
  venues: readonly IngestionVenue[],
  perps: Record<PerpVenue, PerpVenueClient>,
  feedMetrics?: FeedMetrics,
): Record<StreamVenue, VenueFeed> {
  return Object.fromEntries(venues.map((v) => [v.id, v.createFeed({ config, instruments: perps[v.id], metrics: feedMetrics })])) as Record<StreamVenue, VenueFeed>;
}

/** The REST trade backfills of every venue (REST bases from config). */
function createBackfills(
  config: IngestionConfig,
  venues: readonly IngestionVenue[],
  perps: Record<PerpVenue, PerpVenueClient>,
  metrics: Metrics,
): Record<StreamVenue, TradeBackfill> {
  return Object.fromEntries(venues.map((v) => [v.id, v.createBackfill({ config, instruments: perps[v.id], metrics })])) as Record<StreamVenue, TradeBackfill>;
}

/**
 * The CVD and liquidation stores in one SQLite file under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`), with
 * the venues' trade-id orders and liquidation-history venues. `flushMs` (default the stores' 1 s) is also the
 * replication period in replicated mode.
 */
function createStores(config: IngestionConfig, venues: readonly IngestionVenue[], flushMs?: number): { cvd: CvdStore; liquidations: LiquidationStore } {
  const dir = config.streams.dataDir;
  const db = openStreamDb(dir === ":memory:" ? ":memory:" : streamDbPath(dir));
  const idOrders = Object.fromEntries(venues.map((v) => [v.id, v.tradeIds]));
  const historyVenues = venues.filter((v) => v.liquidationFeed.history).map((v) => v.id);
  return { cvd: new CvdStore(db, { flushMs, idOrders }), liquidations: new LiquidationStore(db, { flushMs, historyVenues }) };
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
 * Builds the ingestion manager from the configuration: the feeds of `venues` (websocket bases from config),
 * their REST backfills (REST bases from config), and the CVD and liquidation stores in one SQLite file
 * under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`). Nothing connects until `start()`.
 */
export function createIngestionManager(config: IngestionConfig, venues: readonly IngestionVenue[], perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): IngestionManager {
  const { cvd, liquidations } = createStores(config, venues);
  const feeds = createFeeds(config, venues, perps, new FeedMetrics(metrics.registry));
  return new IngestionManager(feeds, createBackfills(config, venues, perps, metrics), cvd, liquidations, managerOptions(config));
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
export function createIngestion(
  config: IngestionConfig,
  venues: readonly IngestionVenue[],
  perps: Record<PerpVenue, PerpVenueClient>,
  metrics: Metrics,
  redis?: RedisHandle,
): IngestionService {
  const budget = warmupBudget(config, redis);
  const r = config.redis;
  if (!r || !redis) {
    const manager = createIngestionManager(config, venues, perps, metrics);
    return new GuardedIngestion(manager, { budget, markPaid: (base) => manager.markPaid(base) });
  }
  const { cvd, liquidations } = createStores(config, venues, REPLICATED_FLUSH_MS);
  const feedMetrics = new FeedMetrics(metrics.registry);
  const backfills = createBackfills(config, venues, perps, metrics);
  const opts = managerOptions(config);
  const standbyVenues = venues.filter((v) => backfills[v.id] instanceof LatestTradesBackfill);
  /** The manager this replica made when it last started leading (the one that ingests while it leads). */
  let latest: IngestionManager | null = null;
  const replicated = new ReplicatedIngestion({
    redis,
    cvd,
    liquidations,
    createManager: () => (latest = new IngestionManager(createFeeds(config, venues, perps, feedMetrics), backfills, cvd, liquidations, opts)),
    createStandby: () =>
      new StandbyFeeds({
        feeds: createFeeds(config, standbyVenues, perps),
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
