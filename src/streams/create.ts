import type { Config } from "../config.js";
import type { Metrics } from "../core/metrics.js";
import type { PerpVenue, PerpVenueClient } from "../venues/perp/types.js";
import { BinanceTradeBackfill } from "./backfill/binance.js";
import { BybitTradeBackfill } from "./backfill/bybit.js";
import { HyperliquidTradeBackfill } from "./backfill/hyperliquid.js";
import { OkxTradeBackfill } from "./backfill/okx.js";
import { BinanceFeed } from "./feeds/binance.js";
import { BybitFeed } from "./feeds/bybit.js";
import { HyperliquidFeed } from "./feeds/hyperliquid.js";
import { FeedMetrics } from "./feeds/metrics.js";
import { OkxFeed } from "./feeds/okx.js";
import { StreamManager } from "./manager.js";
import { CvdStore } from "./store/cvd-store.js";
import { openStreamDb, streamDbPath } from "./store/db.js";
import { LiquidationStore } from "./store/liquidation-store.js";

/**
 * Builds the stream manager from the configuration: the four venue feeds (websocket bases from config),
 * their REST backfills (REST bases from config), and the CVD and liquidation stores in one SQLite file
 * under `DATA_DIR` (`:memory:` when DATA_DIR is `:memory:`). Nothing connects until `start()`.
 */
export function createStreamManager(config: Config & { streams: NonNullable<Config["streams"]> }, perps: Record<PerpVenue, PerpVenueClient>, metrics: Metrics): StreamManager {
  const s = config.streams;
  const feedMetrics = new FeedMetrics(metrics.registry);
  const v = config.venues;
  const db = openStreamDb(s.dataDir === ":memory:" ? ":memory:" : streamDbPath(s.dataDir));
  const common = { metrics: feedMetrics };
  const rest = { timeoutMs: config.upstreamTimeoutMs, metrics };
  return new StreamManager(
    {
      binance: new BinanceFeed({ ...common, instruments: perps.binance, baseUrl: s.wsUrls.binance }),
      bybit: new BybitFeed({ ...common, instruments: perps.bybit, baseUrl: s.wsUrls.bybit }),
      okx: new OkxFeed({ ...common, instruments: perps.okx, baseUrl: s.wsUrls.okx }),
      hyperliquid: new HyperliquidFeed({ ...common, instruments: perps.hyperliquid, baseUrl: s.wsUrls.hyperliquid }),
    },
    {
      binance: new BinanceTradeBackfill({ ...rest, instruments: perps.binance, baseUrl: v.binanceFapi }),
      bybit: new BybitTradeBackfill({ ...rest, instruments: perps.bybit, baseUrl: v.bybit }),
      okx: new OkxTradeBackfill({ ...rest, instruments: perps.okx, baseUrl: v.okx }),
      hyperliquid: new HyperliquidTradeBackfill({ ...rest, instruments: perps.hyperliquid, baseUrl: v.hyperliquid }),
    },
    new CvdStore(db),
    new LiquidationStore(db),
    { maxOnDemand: s.maxOnDemand, idleMs: s.idleMs, warmupMs: s.warmupMs },
  );
}
