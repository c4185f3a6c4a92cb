/**
 * Coalesces concurrent calls with the same key into one execution: while a call for `key` is in
 * flight, later callers get the same promise. Nothing is kept after it settles (no caching here).
 */
export class SingleFlight<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  /** Runs `fn` unless a call for `key` is already running, in which case its promise is shared. */
  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = fn().finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /** Number of distinct calls in flight. */
  get size(): number {
    return this.inflight.size;
  }
}
