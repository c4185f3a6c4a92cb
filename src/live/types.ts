/** One event of a live stream: the SSE `event:` name, optional `id:` (resumable events only) and JSON `data`. */
export interface LiveEvent {
  event: string;
  id?: string;
  data: unknown;
}

/** Receives the events of a topic feed, synchronously and in order. Must not throw. */
export type LiveListener = (e: LiveEvent) => void;

/**
 * The source of one topic key (`liquidations:BTC`, `cvd:ETH`, …). Replay and subscription are meant to be
 * called in the same tick, so nothing falls between them.
 */
export interface TopicFeed {
  /**
   * What a new subscriber gets first: the events after `lastEventId` (resume), or the current state for
   * topics without history. Oldest first; bounded by the stores' retention.
   */
  backlog(lastEventId: string | undefined): LiveEvent[];
  /** Registers a live listener; returns the function that removes it. */
  subscribe(fn: LiveListener): () => void;
}

/** A feed with a life cycle: started with its first subscriber, stopped after its last. */
export interface ManagedFeed extends TopicFeed {
  readonly listeners: number;
  stop(): void;
}
