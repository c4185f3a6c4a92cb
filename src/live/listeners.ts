import { logger } from "../lib/log.js";
import type { LiveEvent, LiveListener } from "./types.js";

/** A set of live listeners: emit to all (one that throws is logged, the others still get the event). */
export class Listeners {
  private readonly set = new Set<LiveListener>();

  get size(): number {
    return this.set.size;
  }

  add(fn: LiveListener): () => void {
    this.set.add(fn);
    return () => this.set.delete(fn);
  }

  emit(e: LiveEvent): void {
    for (const fn of this.set) {
      try {
        fn(e);
      } catch (err) {
        logger.error({ err, event: e.event }, "live listener threw");
      }
    }
  }
}
