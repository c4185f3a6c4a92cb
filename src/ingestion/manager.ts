import { AppError } from "../errors.js";
import { logger } from "../lib/log.js";
import type { TradeBackfill } from "./backfill/common.js";
import type { VenueFeed } from "./feeds/feed-base.js";
import type { CvdStore } from "./store/cvd-store.js";
import type { LiquidationStore } from "./store/liquidation-store.js";
import type { StreamReadiness, IngestionService } from "./service.js";
import { TopicSilence } from "./topic-silence.js";
import { STREAM_VENUES, type FeedState, type StreamGap, type StreamVenue, type Trade } from "./types.js";

/** Symbols subscribed at start-up and always ready (docs/methods/streams.md, "Symbols"). */
export const PRE_SUBSCRIBED = ["BTC", "ETH", "SOL", "XRP", "BNB", "DOGE", "LINK", "ARB"] as const;

/** Options of {@link IngestionManager}. */
export interface IngestionManagerOptions {
  /** Symbols subscribed at start and never dropped (default {@link PRE_SUBSCRIBED}). */
  preSubscribed?: readonly string[];
  /**
   * Most symbols subscribed on demand at once (default 20). A new one makes room by evicting the least
   * recently requested on-demand symbol that was not paid for within `idleMs`; when every one was, the new
   * symbol is refused (see {@link IngestionManager.ensure}).
   */
  maxOnDemand?: number;
  /**
   * An on-demand symbol nobody requested for this long is unsubscribed and its data dropped; one paid for
   * within this long is never evicted to make room for another (default 30 min).
   */
  idleMs?: number;
  /** An on-demand symbol answers `warming_up` until it has been subscribed this long (default 10 s). */
  warmupMs?: number;
  /** How often idle symbols are swept, silent topics checked and bucket heartbeats written (default 60 s). */
  sweepMs?: number;
  /**
   * A subscribed symbol whose trades stop on a connected venue for this long has the silent interval checked
   * against the venue's REST trades, and marked unfilled when REST cannot cover it (default 5 min; see
   * `topic-silence.ts`): completeness per topic, not per connection.
   */
  topicSilenceMs?: number;
  now?: () => number;
}

export type { StreamReadiness } from "./service.js";

/** An on-demand symbol: when it was subscribed, last requested and last paid for, epoch ms. */
export interface OnDemandSymbol {
  base: string;
  subscribedAt: number;
  lastRequested: number;
  /** Last paid use (a paid CVD answer, a debited stream-minute); null when never paid for. */
  lastPaid: number | null;
}

/** What the manager keeps of an on-demand symbol (epoch ms; `lastPaid` null when never paid for). */
interface OnDemandState {
  subscribedAt: number;
  lastRequested: number;
  lastPaid: number | null;
}

/**
 * Owns the venue feeds and the stores: routes trades to CVD buckets and liquidations to their buffer,
 * backfills every reported gap from REST (marking what could not be filled), keeps the pre-subscribed
 * symbols, subscribes others on first request under a bound, and drops idle ones.
 */
export class IngestionManager implements IngestionService {
  private readonly pre: Set<string>;
  private readonly onDemand = new Map<string, OnDemandState>();
  private readonly maxOnDemand: number;
  private readonly idleMs: number;
  private readonly warmupMs: number;
  private readonly now: () => number;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly sweepMs: number;
  private backfills = 0;
  private readonly silence: TopicSilence;

  constructor(
    private readonly feeds: Record<StreamVenue, VenueFeed>,
    private readonly backfill: Record<StreamVenue, TradeBackfill>,
    readonly cvd: CvdStore,
    readonly liquidations: LiquidationStore,
    opts: IngestionManagerOptions = {},
  ) {
    this.pre = new Set((opts.preSubscribed ?? PRE_SUBSCRIBED).map((s) => s.toUpperCase()));
    this.maxOnDemand = opts.maxOnDemand ?? 20;
    this.idleMs = opts.idleMs ?? 30 * 60_000;
    this.warmupMs = opts.warmupMs ?? 10_000;
    this.sweepMs = opts.sweepMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.silence = new TopicSilence(opts.topicSilenceMs);
    for (const venue of STREAM_VENUES) {
      const feed = feeds[venue];
      feed.on("trades", (trades) => {
        this.silence.seen(trades, this.now());
        this.cvd.add(trades, "live");
      });
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
   * its first request and answers `warming_up` until it has been subscribed for the warm-up time. At the
   * bound, the least recently requested on-demand symbol without paid use within `idleMs` is evicted to make
   * room: a symbol someone pays for is never pushed out by requests that pay nothing (every first request
   * is a free warm-up).
   * @throws AppError UNKNOWN_SYMBOL when no venue's feed could subscribe it; UPSTREAM_UNAVAILABLE (503, with
   *   `retryAfterSec` until the first paid symbol can leave) when every on-demand symbol was paid for
   *   within `idleMs`: nothing is subscribed or evicted.
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
    if (this.maxOnDemand === 0) {
      throw new AppError("UPSTREAM_UNAVAILABLE", `${b} is not streamed here: this instance streams only its always-on symbols (STREAM_MAX_ON_DEMAND=0)`, {
        details: { reason: "on_demand_streams_off" },
      });
    }
    let dropping: Promise<void> | undefined;
    if (this.onDemand.size >= this.maxOnDemand) {
      const victim = this.evictable(now);
      if (victim === undefined) throw this.full(b, now);
      dropping = this.drop(victim);
    }
    // Taken before any await, so concurrent first requests neither exceed the bound nor evict twice.
    this.onDemand.set(b, { subscribedAt: now, lastRequested: now, lastPaid: null });
    await dropping;
    const venues = await this.subscribeEverywhere([b]);
    if (venues.length === 0) {
      this.onDemand.delete(b);
      throw new AppError("UNKNOWN_SYMBOL", `no venue stream lists ${b}`);
    }
    this.cvd.track(b);
    return "warming_up";
  }

  /**
   * Records a paid use of `base` at `at` (default now): a paid CVD answer or a debited stream-minute. The
   * symbol then counts as requested at that time too (an open paid stream keeps it from idling out), and is
   * not evicted for another symbol until `idleMs` after its last paid use. Pre-subscribed and unknown
   * symbols are ignored. Never throws.
   */
  markPaid(base: string, at = this.now()): void {
    const s = this.onDemand.get(base.toUpperCase());
    if (!s) return;
    s.lastPaid = Math.max(s.lastPaid ?? at, at);
    s.lastRequested = Math.max(s.lastRequested, at);
  }

  /** Whether `s` was paid for within the idle time before `now`. */
  private paidRecently(s: OnDemandState, now: number): boolean {
    return s.lastPaid !== null && now - s.lastPaid < this.idleMs;
  }

  /** The least recently requested on-demand symbol not paid for recently, or undefined when all were. */
  private evictable(now: number): string | undefined {
    let victim: [string, OnDemandState] | undefined;
    for (const entry of this.onDemand) {
      if (this.paidRecently(entry[1], now)) continue;
      if (!victim || entry[1].lastRequested < victim[1].lastRequested) victim = entry;
    }
    return victim?.[0];
  }

  /** The refusal of a new symbol when every on-demand slot is held by a symbol paid for recently. */
  private full(base: string, now: number): AppError {
    let firstFree = Infinity;
    for (const s of this.onDemand.values()) firstFree = Math.min(firstFree, (s.lastPaid ?? now) + this.idleMs);
    const retryAfterSec = Math.max(1, Math.ceil((firstFree - now) / 1000));
    const max = this.maxOnDemand;
    return new AppError("UPSTREAM_UNAVAILABLE", `${base} cannot be streamed now: all ${max} on-demand streams of this instance are in paid use; retry later (not charged)`, {
      retryAfterSec,
      details: { reason: "on_demand_streams_in_paid_use", max_on_demand: max, retry_after_sec: retryAfterSec },
    });
  }

  /** Forgets `base` at once (synchronously), then unsubscribes it everywhere and drops its data. */
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
    for (const v of STREAM_VENUES) {
      if (!connected.includes(v)) this.silence.reset(v, now);
      else for (const gap of this.silence.silent(v, this.feeds[v].subscriptions(), now)) void this.backfillSince(gap);
    }
    for (const base of this.subscribedBases())
      this.cvd.heartbeat(
        base,
        connected.filter((v) => this.feeds[v].subscriptions().includes(base)),
        now,
      );
  }

  /** Pre-subscribed plus on-demand symbols. */
  subscribedBases(): string[] {
    return [...this.pre, ...this.onDemand.keys()];
  }

  /** Number of on-demand symbols (bounded by `maxOnDemand`). */
  get onDemandCount(): number {
    return this.onDemand.size;
  }

  /** The on-demand symbols with their subscription, last request and last paid-use times. */
  onDemandSymbols(): OnDemandSymbol[] {
    return [...this.onDemand].map(([base, s]) => ({ base, subscribedAt: s.subscribedAt, lastRequested: s.lastRequested, lastPaid: s.lastPaid }));
  }

  /** Canonical bases the feed of `venue` has subscribed. */
  venueSubscriptions(venue: StreamVenue): string[] {
    return this.feeds[venue].subscriptions();
  }

  /** Backfills a gap from REST for every symbol the venue streams, marking what could not be filled. */
  private async fillGap(gap: StreamGap): Promise<void> {
    const feed = this.feeds[gap.venue];
    this.backfills++;
    await Promise.all([...feed.subscriptions().map((base) => this.fillRange(gap, base)), this.backfillLiquidationsSince(gap)]);
  }

  /**
   * Backfills the all-market liquidations of `gap.venue` in `[gap.from, gap.to)` into the liquidation store, on
   * venues whose REST publishes them (Gate's `liq_orders`; elsewhere nothing to do). Events already stored are
   * skipped by the store. Returns whether the interval was covered (true where the venue has no such REST).
   * Never throws.
   */
  async backfillLiquidationsSince(gap: StreamGap): Promise<boolean> {
    const backfill = this.backfill[gap.venue];
    if (!backfill.fetchLiquidations || !(gap.to > gap.from)) return true;
    const res = await backfill.fetchLiquidations(gap.from, gap.to);
    if (res.liquidations.length) this.liquidations.add(res.liquidations);
    if (!res.complete) logger.warn({ venue: gap.venue, from: gap.from, to: gap.to }, "liquidation backfill incomplete");
    return res.complete;
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
