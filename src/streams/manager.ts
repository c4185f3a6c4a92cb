import { AppError } from "../errors.js";
import { logger } from "../lib/log.js";
import type { TradeBackfill } from "./backfill/common.js";
import type { VenueFeed } from "./feeds/feed-base.js";
import type { CvdStore } from "./store/cvd-store.js";
import type { LiquidationStore } from "./store/liquidation-store.js";
import type { StreamReadiness, StreamService } from "./service.js";
import { STREAM_VENUES, type FeedState, type StreamGap, type StreamVenue, type Trade } from "./types.js";

/** Symbols subscribed at start-up and always ready (spec 4.5). */
export const PRE_SUBSCRIBED = ["BTC", "ETH", "SOL", "XRP", "BNB", "DOGE", "LINK", "ARB"] as const;

/** Options of {@link StreamManager}. */
export interface StreamManagerOptions {
  /** Symbols subscribed at start and never dropped (default {@link PRE_SUBSCRIBED}). */
  preSubscribed?: readonly string[];
  /** Most symbols subscribed on demand at once; the least recently requested one makes room (default 20). */
  maxOnDemand?: number;
  /** An on-demand symbol nobody requested for this long is unsubscribed and its data dropped (default 30 min). */
  idleMs?: number;
  /** An on-demand symbol answers `warming_up` until it has been subscribed this long (default 10 s). */
  warmupMs?: number;
  /** How often idle symbols are swept and bucket heartbeats written (default 60 s). */
  sweepMs?: number;
  now?: () => number;
}

export type { StreamReadiness } from "./service.js";

/** An on-demand symbol: when it was subscribed and last requested, epoch ms. */
export interface OnDemandSymbol {
  base: string;
  subscribedAt: number;
  lastRequested: number;
}

/**
 * Owns the venue feeds and the stores: routes trades to CVD buckets and liquidations to their buffer,
 * backfills every reported gap from REST (marking what could not be filled), keeps the pre-subscribed
 * symbols, subscribes others on first request under a bound, and drops idle ones.
 */
export class StreamManager implements StreamService {
  private readonly pre: Set<string>;
  private readonly onDemand = new Map<string, { subscribedAt: number; lastRequested: number }>();
  private readonly maxOnDemand: number;
  private readonly idleMs: number;
  private readonly warmupMs: number;
  private readonly now: () => number;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly sweepMs: number;
  private backfills = 0;

  constructor(
    private readonly feeds: Record<StreamVenue, VenueFeed>,
    private readonly backfill: Record<StreamVenue, TradeBackfill>,
    readonly cvd: CvdStore,
    readonly liquidations: LiquidationStore,
    opts: StreamManagerOptions = {},
  ) {
    this.pre = new Set((opts.preSubscribed ?? PRE_SUBSCRIBED).map((s) => s.toUpperCase()));
    this.maxOnDemand = opts.maxOnDemand ?? 20;
    this.idleMs = opts.idleMs ?? 30 * 60_000;
    this.warmupMs = opts.warmupMs ?? 10_000;
    this.sweepMs = opts.sweepMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    for (const venue of STREAM_VENUES) {
      const feed = feeds[venue];
      feed.on("trades", (trades) => this.cvd.add(trades, "live"));
      feed.on("liquidations", (events) => this.liquidations.add(events));
      feed.on("gap", (gap) => {
        // Before the first trades after the gap: they do not follow the last ones counted.
        this.cvd.streamBreak(gap.venue, gap);
        void this.fillGap(gap);
      });
    }
  }

  /** Connects every feed and subscribes the pre-subscribed symbols. */
  async start(): Promise<void> {
    for (const venue of STREAM_VENUES) {
      // New connections: whatever was counted before (another process, an earlier run) is not followed.
      this.cvd.streamBreak(venue);
      this.feeds[venue].start();
    }
    await this.subscribeEverywhere([...this.pre]);
    for (const base of this.pre) this.cvd.track(base);
    this.sweepTimer = setInterval(() => this.sweep(), this.sweepMs);
    this.sweepTimer.unref();
  }

  /** Disconnects, flushes and closes the stores. */
  async stop(): Promise<void> {
    await this.stopFeeds();
    this.cvd.close();
    this.liquidations.close();
  }

  /**
   * Disconnects every feed and stops the sweep, leaving the stores open (a replica that stops leading keeps
   * serving them). A gap backfill already under way still completes into the stores.
   */
  async stopFeeds(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await Promise.all(STREAM_VENUES.map((v) => this.feeds[v].stop()));
  }

  private async subscribeEverywhere(bases: string[]): Promise<string[]> {
    const results = await Promise.all(STREAM_VENUES.map((v) => this.feeds[v].subscribe(bases)));
    return STREAM_VENUES.filter((_, i) => results[i]!.subscribed.length > 0);
  }

  /**
   * Makes sure `base` is streamed: pre-subscribed symbols are always ready; another symbol is subscribed on
   * its first request (evicting the least recently requested on-demand symbol when at the bound) and
   * answers `warming_up` until it has been subscribed for the warm-up time.
   * @throws AppError UNKNOWN_SYMBOL when no venue's feed could subscribe it.
   */
  async ensure(base: string): Promise<StreamReadiness> {
    const b = base.toUpperCase();
    if (this.pre.has(b)) return "ready";
    const now = this.now();
    const known = this.onDemand.get(b);
    if (known) {
      known.lastRequested = now;
      return now - known.subscribedAt >= this.warmupMs ? "ready" : "warming_up";
    }
    if (this.onDemand.size >= this.maxOnDemand) {
      const [lru] = [...this.onDemand.entries()].sort((a, b2) => a[1].lastRequested - b2[1].lastRequested);
      if (lru) await this.drop(lru[0]);
    }
    this.onDemand.set(b, { subscribedAt: now, lastRequested: now });
    const venues = await this.subscribeEverywhere([b]);
    if (venues.length === 0) {
      this.onDemand.delete(b);
      throw new AppError("UNKNOWN_SYMBOL", `no venue stream lists ${b}`);
    }
    this.cvd.track(b);
    return "warming_up";
  }

  private async drop(base: string): Promise<void> {
    this.onDemand.delete(base);
    await Promise.all(STREAM_VENUES.map((v) => this.feeds[v].unsubscribe([base])));
    this.cvd.drop(base);
  }

  /** Drops idle on-demand symbols and writes bucket heartbeats for the venues that are connected. */
  private sweep(): void {
    const now = this.now();
    for (const [base, s] of this.onDemand) if (now - s.lastRequested > this.idleMs) void this.drop(base);
    const connected = STREAM_VENUES.filter((v) => this.feeds[v].state().connected);
    for (const base of this.subscribedBases()) this.cvd.heartbeat(base, connected.filter((v) => this.feeds[v].subscriptions().includes(base)), now);
  }

  /** Pre-subscribed plus on-demand symbols. */
  subscribedBases(): string[] {
    return [...this.pre, ...this.onDemand.keys()];
  }

  /** Number of on-demand symbols (bounded by `maxOnDemand`). */
  get onDemandCount(): number {
    return this.onDemand.size;
  }

  /** The on-demand symbols with their subscription and last request times. */
  onDemandSymbols(): OnDemandSymbol[] {
    return [...this.onDemand].map(([base, s]) => ({ base, subscribedAt: s.subscribedAt, lastRequested: s.lastRequested }));
  }

  /** Canonical bases the feed of `venue` has subscribed. */
  venueSubscriptions(venue: StreamVenue): string[] {
    return this.feeds[venue].subscriptions();
  }

  /** Backfills a gap from REST for every symbol the venue streams, marking what could not be filled. */
  private async fillGap(gap: StreamGap): Promise<void> {
    const feed = this.feeds[gap.venue];
    this.backfills++;
    await Promise.all(feed.subscriptions().map((base) => this.fillRange(gap, base)));
  }

  /**
   * Backfills the trades of `base` on `gap.venue` in `[gap.from, gap.to)` from REST into the CVD store and
   * marks the interval filled, or unfilled when neither REST nor `extra` covered it. `extra` adds trades
   * from elsewhere (a standby feed's buffer) with whether they cover the whole interval. Trades already
   * counted are skipped by id (see {@link CvdStore.add}), so the interval may overlap the live stream.
   * Used by a replica taking over ingestion to close the interval nobody streamed. Returns whether the
   * interval was covered. Never throws.
   */
  async backfillSince(gap: StreamGap & { base: string }, extra?: { trades: Trade[]; complete: boolean }): Promise<boolean> {
    if (!(gap.to > gap.from)) return true;
    this.backfills++;
    return this.fillRange(gap, gap.base, extra);
  }

  private async fillRange(gap: StreamGap, base: string, extra?: { trades: Trade[]; complete: boolean }): Promise<boolean> {
    let complete = false;
    if (extra) {
      this.cvd.add(extra.trades, "loose");
      complete = extra.complete;
    }
    try {
      const res = await this.backfill[gap.venue].fetchTrades(base, gap.from, gap.to);
      // A complete answer is the venue's whole tape over the interval: on sequence ids it closes holes.
      this.cvd.add(res.trades, res.complete ? "run" : "loose");
      complete ||= res.complete;
    } catch (err) {
      logger.warn({ err, venue: gap.venue, base }, "gap backfill failed");
    }
    this.cvd.markGap({ venue: gap.venue, from: gap.from, to: gap.to, base, filled: complete });
    return complete;
  }

  /** Open websocket connections (one per connected venue). */
  activeConnections(): number {
    return STREAM_VENUES.filter((v) => this.feeds[v].state().connected).length;
  }

  /** Per-venue connection state, for status and metrics. */
  states(): FeedState[] {
    return STREAM_VENUES.map((v) => this.feeds[v].state());
  }

  /** Gaps backfilled since start (for metrics and tests). */
  get backfillCount(): number {
    return this.backfills;
  }
}
