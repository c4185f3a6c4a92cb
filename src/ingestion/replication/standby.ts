import { logger as rootLogger, type Logger } from "../../lib/log.js";
import type { VenueFeed } from "../feeds/feed-base.js";
import type { StreamVenue, Trade } from "../types.js";
import { sleep } from "./sleep.js";

/** Options of {@link StandbyFeeds}. Times are milliseconds. */
export interface StandbyOptions {
  /** Fresh feeds of the venues to keep on standby (not the leader's): those whose REST serves only their latest trades. */
  feeds: Partial<Record<StreamVenue, VenueFeed>>;
  /** Trades are kept this long (by venue time): at least what a takeover can take (the lease TTL and then some). */
  keepMs: number;
  now?: () => number;
  log?: Logger;
}

/** Buffered trades of one (venue, base), oldest first, and since when its stream has been unbroken. */
interface Buffer {
  trades: Trade[];
  /** Venue time of the first trade received since the feed started or last reported a gap; null: none yet. */
  since: number | null;
}

/**
 * Standby feeds of a follower: the venues whose REST cannot reach back over a takeover (Hyperliquid serves
 * its last few trades, Bybit its last 1000) are streamed by every follower too, into a buffer of the last
 * `keepMs`. When the follower takes over, the new leader ingests the buffer for the interval nobody else
 * counted (de-duplicated by trade id like any backfill) and stops the standby feeds: no hole on a takeover.
 * The buffer covers an interval completely when the feed was unbroken since before it and has delivered
 * past its end. Never throws to its caller.
 */
export class StandbyFeeds {
  private readonly buffers = new Map<string, Buffer>();
  private readonly offs: Array<() => void> = [];
  private readonly now: () => number;
  private readonly log: Logger;
  private running = false;

  constructor(private readonly opts: StandbyOptions) {
    this.now = opts.now ?? Date.now;
    this.log = (opts.log ?? rootLogger).child({ component: "standby-feeds" });
  }

  /** Venues on standby. */
  venues(): StreamVenue[] {
    return Object.keys(this.opts.feeds) as StreamVenue[];
  }

  /** True between {@link start} and {@link stop}. */
  get active(): boolean {
    return this.running;
  }

  /** Starts the feeds with `bases` subscribed (no-op while running). */
  async start(bases: readonly string[]): Promise<void> {
    if (this.running) return;
    this.running = true;
    for (const [venue, feed] of this.entries()) {
      this.offs.push(
        feed.on("trades", (trades) => this.keep(venue, trades)),
        // Trades may have been lost: coverage restarts with the next trade.
        feed.on("gap", () => {
          for (const [key, b] of this.buffers) if (key.startsWith(`${venue}|`)) b.since = null;
        }),
      );
      feed.start();
    }
    await this.sync(bases);
    this.log.info({ venues: this.venues(), symbols: bases.length }, "standby feeds started");
  }

  /** Subscribes `bases` and unsubscribes the others (the leader's symbols change). */
  async sync(bases: readonly string[]): Promise<void> {
    if (!this.running) return;
    const want = new Set(bases.map((b) => b.toUpperCase()));
    await Promise.all(
      this.entries().map(async ([venue, feed]) => {
        const gone = feed.subscriptions().filter((b) => !want.has(b));
        if (gone.length) {
          feed.unsubscribe(gone);
          for (const b of gone) this.buffers.delete(`${venue}|${b}`);
        }
        const added = [...want].filter((b) => !feed.subscriptions().includes(b));
        if (added.length) await feed.subscribe(added);
      }),
    );
  }

  /** Stops the feeds and forgets the buffers. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const off of this.offs.splice(0)) off();
    await Promise.all(this.entries().map(([, feed]) => feed.stop()));
    this.buffers.clear();
    this.log.info("standby feeds stopped");
  }

  /**
   * The buffered trades of (venue, base) with `from <= time < to` (epoch ms), and whether they are all of
   * them: the feed was unbroken since before `from`, kept trades back to `from`, and delivered a message at
   * or after `to` (a quiet venue is asked for a heartbeat reply; waits up to `waitMs`).
   */
  async take(venue: StreamVenue, base: string, from: number, to: number, waitMs = 3000): Promise<{ trades: Trade[]; complete: boolean }> {
    const feed = this.opts.feeds[venue];
    if (!this.running || !feed) return { trades: [], complete: false };
    const end = this.now() + waitMs;
    const delivered = () => (feed.state().lastMessageAt ?? -Infinity) >= to;
    if (!delivered() && this.now() >= to) feed.probe();
    while (!delivered() && this.now() < end && this.running) await sleep(50);
    const b = this.buffers.get(`${venue}|${base}`);
    if (!b) return { trades: [], complete: false };
    const trades = b.trades.filter((t) => t.time >= from && t.time < to);
    const complete = b.since !== null && b.since < from && from >= this.now() - this.opts.keepMs && (feed.state().lastMessageAt ?? -Infinity) >= to && this.running;
    return { trades, complete };
  }

  private entries(): Array<[StreamVenue, VenueFeed]> {
    return Object.entries(this.opts.feeds) as Array<[StreamVenue, VenueFeed]>;
  }

  private keep(venue: StreamVenue, trades: readonly Trade[]): void {
    const horizon = this.now() - this.opts.keepMs;
    for (const t of trades) {
      const key = `${venue}|${t.base}`;
      let b = this.buffers.get(key);
      if (!b) this.buffers.set(key, (b = { trades: [], since: null }));
      b.since ??= t.time;
      b.trades.push(t);
    }
    for (const b of this.buffers.values()) {
      let drop = 0;
      while (drop < b.trades.length && b.trades[drop]!.time < horizon) drop++;
      if (drop > 0) b.trades.splice(0, drop);
    }
  }
}
