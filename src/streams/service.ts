import type { CvdStore } from "./store/cvd-store.js";
import type { LiquidationStore } from "./store/liquidation-store.js";
import type { FeedState } from "./types.js";

/** Whether a symbol's CVD can be answered now. */
export type StreamReadiness = "ready" | "warming_up";

/**
 * What the tools and the service use of the live streams, whichever way they are run: one process owning
 * the venue feeds ({@link StreamManager}, embedded mode) or replicas sharing one Redis where one of them
 * ingests and all serve (`ReplicatedStreams`, `REDIS_URL`). Reads go to the local stores in both cases.
 */
export interface StreamService {
  /** Starts ingesting (or following the replica that does). */
  start(): Promise<void>;
  /** Stops, flushes and closes the stores. */
  stop(): Promise<void>;
  /**
   * Makes sure `base` is streamed: pre-subscribed symbols are always ready; another symbol is subscribed on
   * its first request and answers `warming_up` until it has been streamed for the warm-up time.
   * @throws AppError UNKNOWN_SYMBOL when no venue's feed could subscribe it.
   */
  ensure(base: string): Promise<StreamReadiness>;
  /** CVD buckets (read side). */
  readonly cvd: CvdStore;
  /** The recent-liquidations buffer (read side). */
  readonly liquidations: LiquidationStore;
  /** Per-venue connection state of the feeds, for status and metrics. */
  states(): FeedState[];
  /** Open websocket connections (one per connected venue). */
  activeConnections(): number;
  /** Pre-subscribed plus on-demand symbols. */
  subscribedBases(): string[];
  /** Number of on-demand symbols. */
  readonly onDemandCount: number;
  /** Gaps backfilled from REST since start (for metrics and tests). */
  readonly backfillCount: number;
}
