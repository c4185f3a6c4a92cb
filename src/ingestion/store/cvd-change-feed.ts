/**
 * The change feed of the CVD store: who listens to its writes, and the copies they are told about (replication
 * publishes them; live feeds follow the counted trades).
 */
import { logger } from "../../lib/log.js";
import type { StreamGap, StreamVenue, Trade } from "../types.js";
import type { CvdBucketRow, CvdChanges, CvdLedgerRow } from "./cvd-types.js";
import type { SequenceLedger } from "./trade-ledger.js";

/** Observer of a store's writes. Called synchronously; must not throw. */
export interface CvdObserver {
  /** After each flush has committed: what it wrote. */
  flushed?(changes: CvdChanges): void;
  /** A symbol was dropped. */
  dropped?(base: string): void;
  /** `CvdStore.add` counted these trades (not called for replicated rows). */
  counted?(trades: readonly Trade[]): void;
  /** `CvdStore.streamBreak` was called: the venue's stream was interrupted (over `gap`, when known). */
  broke?(venue: StreamVenue, gap?: StreamGap): void;
}

/** The public copy of a bucket: its row fields only (no id set), `unfilled` copied. */
export function bucketRowOf(b: CvdBucketRow): CvdBucketRow {
  const { base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, idCount } = b;
  return { base, venue, start, buyBase, sellBase, buyUsd, sellUsd, trades, gap, unfilled: b.unfilled.map(([f, t]) => [f, t]), idCount };
}

/** The public copy of a (venue, base) ledger: newest trade time, and the sequence ledger's state when it has one. */
export function ledgerRowOf(t: { venue: StreamVenue; base: string; newest: number; seq: SequenceLedger | null }): CvdLedgerRow {
  const row: CvdLedgerRow = { venue: t.venue, base: t.base, newest: t.newest };
  if (t.seq) row.sequence = t.seq.state();
  return row;
}

/**
 * The observers of one store. Each notification calls every observer in registration order; an observer that
 * throws is logged and the others are still called.
 */
export class CvdChangeFeed {
  private readonly observers = new Set<CvdObserver>();
  /** Observers with a `counted` hook: without any, the store builds no list of counted trades. */
  private countedObservers = 0;

  /** Whether anyone listens (else a flush builds no {@link CvdChanges}). */
  get observed(): boolean {
    return this.observers.size > 0;
  }

  /** Whether an observer has a `counted` hook. */
  get wantsCounted(): boolean {
    return this.countedObservers > 0;
  }

  /** Registers `observer` (once, however often it is passed); returns the function that removes it. */
  observe(observer: CvdObserver): () => void {
    if (this.observers.has(observer)) return () => this.unobserve(observer);
    this.observers.add(observer);
    if (observer.counted) this.countedObservers++;
    return () => this.unobserve(observer);
  }

  private unobserve(observer: CvdObserver): boolean {
    if (!this.observers.delete(observer)) return false;
    if (observer.counted) this.countedObservers--;
    return true;
  }

  /** A flush committed `changes`. */
  flushed(changes: CvdChanges): void {
    this.notify((o) => o.flushed?.(changes));
  }

  /** `base` was dropped. */
  dropped(base: string): void {
    this.notify((o) => o.dropped?.(base));
  }

  /** `trades` were counted. */
  counted(trades: readonly Trade[]): void {
    this.notify((o) => o.counted?.(trades));
  }

  /** The stream of `venue` broke (over `gap`, when known). */
  broke(venue: StreamVenue, gap?: StreamGap): void {
    this.notify((o) => o.broke?.(venue, gap));
  }

  private notify(fn: (o: CvdObserver) => void): void {
    for (const o of this.observers) {
      try {
        fn(o);
      } catch (err) {
        logger.error({ err }, "cvd store observer threw");
      }
    }
  }
}
