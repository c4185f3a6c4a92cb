/**
 * Completeness per topic, not per connection: a venue connection can stay alive while one of its symbols stops
 * delivering trades (a venue-side fault, a dropped subscription). The connection's heartbeats would then make the
 * silent symbol's empty buckets look complete. This tracker notes, per (venue, base), when the topic last delivered
 * a trade; a topic silent for `silenceMs` or more yields the silent interval, which the ingestion manager checks
 * against the venue's REST trades: filled when REST covers it (a truly quiet market, or trades REST still has),
 * unfilled otherwise, so that `/cvd` says `data_complete: false` for a symbol that went silent.
 */
import type { StreamGap, StreamVenue, Trade } from "./types.js";

/** A silent interval of one topic: `[from, to)` epoch ms (local clock) without a trade of `base` on `venue`. */
export type TopicGap = StreamGap & { base: string };

/**
 * Per (venue, base) time of the latest trade received, or of the latest check. Bounded by the subscribed topics:
 * {@link silent} forgets the bases no longer subscribed.
 */
export class TopicSilence {
  readonly #last: Record<string, Map<string, number>> = {};

  /** @param silenceMs a topic without a trade for this long is reported (default one 5-minute CVD bucket). */
  constructor(readonly silenceMs: number = 5 * 60_000) {}

  #venue(venue: StreamVenue): Map<string, number> {
    return (this.#last[venue] ??= new Map());
  }

  /** Notes a batch of trades received at `nowMs` (local clock). */
  seen(trades: readonly Trade[], nowMs: number): void {
    for (const t of trades) this.#venue(t.venue).set(t.base, nowMs);
  }

  /** The venue's connection is down: its own gap covers the topics, which are watched afresh from `nowMs`. */
  reset(venue: StreamVenue, nowMs: number): void {
    const m = this.#venue(venue);
    for (const base of m.keys()) m.set(base, nowMs);
  }

  /**
   * The topics of `venue` (its subscribed `bases`, connection up) silent for at least {@link silenceMs} at `nowMs`,
   * each as the interval since its last trade (or last check). A reported interval is checked once: the topic is
   * watched again from `nowMs`. A base seen for the first time is watched from `nowMs`.
   */
  silent(venue: StreamVenue, bases: readonly string[], nowMs: number): TopicGap[] {
    const m = this.#venue(venue);
    const wanted = new Set(bases);
    for (const base of m.keys()) if (!wanted.has(base)) m.delete(base);
    const out: TopicGap[] = [];
    for (const base of wanted) {
      const last = m.get(base);
      if (last === undefined) m.set(base, nowMs);
      else if (nowMs - last >= this.silenceMs) {
        out.push({ venue, base, from: last, to: nowMs });
        m.set(base, nowMs);
      }
    }
    return out;
  }
}
