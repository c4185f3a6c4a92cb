import { logger } from "../../lib/log.js";

/**
 * Coalesces write-through to SQLite: `schedule()` after an in-memory change arms one timer; when it
 * fires, `write` runs once for everything changed since (one transaction in the stores). So a burst of
 * trades costs one commit per `flushMs` rather than one per trade.
 *
 * `flushMs` > 0: at most one write per `flushMs` (timer unref'd so it never holds the process open);
 * `flushMs` = 0: `schedule()` writes synchronously (unbatched write-through, for tests and tools).
 * A failing write is logged and left pending; the store keeps its dirty set, so the next run retries.
 */
export class Flusher {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly flushMs: number,
    private readonly write: () => void,
  ) {}

  /** Requests a write: immediate when `flushMs` is 0, else within `flushMs`. No-op after {@link stop}. */
  schedule(): void {
    if (this.stopped) return;
    if (this.flushMs <= 0) {
      this.run();
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, this.flushMs);
    this.timer.unref();
  }

  /** Writes now (cancelling a pending timer). Throws what `write` throws, so `close()` surfaces it. */
  flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.write();
  }

  /** Cancels the pending timer; later `schedule()` calls do nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): void {
    try {
      this.write();
    } catch (err) {
      // Timer context: nobody to throw to. Data stays dirty in memory and is retried on the next flush.
      logger.error({ err, store: this.name }, "stream store flush failed");
    }
  }
}
