import type { CvdStore } from "./store/cvd-store.js";
import type { LiquidationStore } from "./store/liquidation-store.js";
import type { FeedState } from "./types.js";

/** Who asks for a stream before paying anything (see {@link IngestionService.ensure}). */
export interface WarmupCaller {
  /** The client's address as the rate limiters key it (`req.ip`); undefined: not budgeted (MCP over stdio). */
  client?: string;
}

/** Whether a symbol's CVD can be answered now. */
export type StreamReadiness = "ready" | "warming_up";

/**
 * What the tools and the service use of the venue ingestion, whichever way it is run: one process owning
 * the venue feeds ({@link IngestionManager}, embedded mode) or replicas sharing one Redis where one of them
 * ingests and all serve (`ReplicatedIngestion`, `REDIS_URL`). Reads go to the local stores in both cases.
 */
export interface IngestionService {
  /** Starts ingesting (or following the replica that does). */
  start(): Promise<void>;
  /** Stops, flushes and closes the stores. */
  stop(): Promise<void>;
  /**
   * Makes sure `base` is streamed: pre-subscribed symbols are always ready; another symbol is subscribed on
   * its first request and answers `warming_up` until it has been streamed for the warm-up time. A request
   * from a `caller` with a `client` that would subscribe a new symbol spends one of that client's warm-ups
   * (`STREAM_WARMUPS_PER_MIN`; see `GuardedIngestion`, which the tools get; the services underneath ignore
   * `caller`).
   * @throws AppError UNKNOWN_SYMBOL when no venue's feed could subscribe it; RATE_LIMITED (429) over the
   *   client's warm-up budget; UPSTREAM_UNAVAILABLE (503) when every on-demand stream is in paid use.
   */
  ensure(base: string, caller?: WarmupCaller): Promise<StreamReadiness>;
  /**
   * Records a paid use of `base` now (a paid CVD answer, a debited CVD stream-minute): an on-demand symbol
   * paid for within `STREAM_IDLE_MIN` is never evicted for another. Present on the service the tools get
   * (`createIngestion`); optional because the ways of running the ingestion underneath receive it from
   * there. Never throws.
   */
  markPaid?(base: string): void;
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
