import type { FeedState, StreamGap, StreamVenue, Trade } from "../types.js";
import { type Interval, addInterval, subtractInterval } from "../store/intervals.js";

/** Options of {@link IngestJournal}. */
export interface IngestJournalOptions {
  /** Most trades held; the oldest go first (coverage then starts after them). */
  maxTrades: number;
  /** Coverage ends this long before the last message of a feed, and gaps are widened by it, ms (venue latency). */
  marginMs: number;
  now: () => number;
}

/** What a replica ingested and could not publish: the trades, and per venue the intervals its feeds covered. */
export interface JournalHandoff {
  trades: Trade[];
  coverage: Array<{ venue: StreamVenue; bases: string[]; intervals: Interval[] }>;
}

/**
 * The trades an ingesting replica counted since its last successful publication, so that when it was cut
 * off from Redis (and another replica led meanwhile) it can hand them over to be merged by trade id,
 * with the intervals over which its feeds missed nothing: every trade of such an interval was counted by
 * this replica, so it is either in Redis (published) or in the handoff. Recording runs while this replica
 * ingests; each publication tags what it includes ({@link seq}) and {@link published} forgets it.
 */
export class IngestJournal {
  private batches: Array<{ seq: number; trades: readonly Trade[] }> = [];
  private held = 0;
  private counter = 0;
  private recording = false;
  /** Start of coverage: when recording began, or after the last trade dropped for room, epoch ms. */
  private from = 0;
  /** Per venue: the gaps its feed reported. */
  private gaps = new Map<StreamVenue, Interval[]>();

  constructor(private readonly opts: IngestJournalOptions) {}

  /** Trades held. */
  get size(): number {
    return this.held;
  }

  /** Starts recording (this replica starts ingesting): coverage from now. */
  begin(): void {
    this.clear();
    this.recording = true;
    this.from = this.opts.now();
  }

  /** Stops recording and forgets everything. */
  stop(): void {
    this.clear();
    this.recording = false;
  }

  /** Trades the store counted (while recording). */
  record(trades: readonly Trade[]): void {
    if (!this.recording || trades.length === 0) return;
    this.batches.push({ seq: ++this.counter, trades });
    this.held += trades.length;
    while (this.held > this.opts.maxTrades && this.batches.length > 1) {
      const gone = this.batches.shift()!;
      this.held -= gone.trades.length;
      // What is no longer held is not covered.
      for (const t of gone.trades) this.from = Math.max(this.from, t.time + this.opts.marginMs);
    }
  }

  /** A stream gap of `venue` (a break without one, a feed starting, is judged by its connection time). */
  gap(venue: StreamVenue, gap?: StreamGap): void {
    if (!this.recording || !gap) return;
    const m = this.opts.marginMs;
    this.gaps.set(venue, addInterval(this.gaps.get(venue) ?? [], gap.from - m, gap.to + m));
  }

  /** A tag for what has been recorded so far (taken when a flush hands changes to the publisher). */
  seq(): number {
    return this.counter;
  }

  /** A publication including everything up to tag `seq` succeeded: those trades are in Redis. */
  published(seq: number): void {
    let drop = 0;
    while (drop < this.batches.length && this.batches[drop]!.seq <= seq) this.held -= this.batches[drop++]!.trades.length;
    if (drop > 0) this.batches.splice(0, drop);
  }

  /**
   * Everything held, and per venue the intervals over which its feed delivered every trade of `bases`:
   * from the start of coverage (and shortly after its connection opened) to shortly before its last
   * message, minus the gaps it reported (whether or not they were backfilled: that is counted here, not proven).
   */
  handoff(states: readonly FeedState[], bases: ReadonlyMap<StreamVenue, readonly string[]>): JournalHandoff {
    const trades = this.batches.flatMap((b) => b.trades);
    const now = this.opts.now();
    const coverage: JournalHandoff["coverage"] = [];
    for (const s of states) {
      if (!s.connected || s.connectedSince === null) continue;
      const from = Math.max(this.from, s.connectedSince + this.opts.marginMs);
      const to = Math.min(now, s.lastMessageAt ?? -Infinity) - this.opts.marginMs;
      const subs = bases.get(s.venue) ?? [];
      if (!(to > from) || subs.length === 0) continue;
      let intervals: Interval[] = [[from, to]];
      for (const [a, b] of this.gaps.get(s.venue) ?? []) intervals = subtractInterval(intervals, a, b);
      if (intervals.length) coverage.push({ venue: s.venue, bases: [...subs], intervals });
    }
    return { trades, coverage };
  }

  private clear(): void {
    this.batches = [];
    this.held = 0;
    this.gaps = new Map();
  }
}
