import { Counter, type Registry } from "prom-client";

/**
 * Prometheus counters of the venue feeds, registered on a given registry (usually `Metrics.registry`).
 * Create ONE per registry and share it between the four feeds (prom-client refuses duplicate names).
 */
export class FeedMetrics {
  /** Raw messages received per venue. */
  readonly messages: Counter<"venue">;
  /** Normalised trades emitted per venue. */
  readonly trades: Counter<"venue">;
  /** Normalised liquidations emitted per venue. */
  readonly liquidations: Counter<"venue">;
  /** Reconnects per venue (after a drop or a stale connection; rotations are counted separately). */
  readonly reconnects: Counter<"venue">;
  /** Proactive make-before-break rotations per venue. */
  readonly rotations: Counter<"venue">;
  /** Gaps emitted per venue. */
  readonly gaps: Counter<"venue">;
  /** Problems per venue and kind: `malformed` | `venue_error` | `socket` | `stale` | `listener`. */
  readonly errors: Counter<"venue" | "kind">;

  constructor(registry: Registry) {
    const c = <L extends string>(name: string, help: string, labelNames: L[]) => new Counter<L>({ name: `marketgate_stream_${name}`, help, labelNames, registers: [registry] });
    this.messages = c("messages_total", "Venue websocket messages received", ["venue"]);
    this.trades = c("trades_total", "Normalised trades emitted", ["venue"]);
    this.liquidations = c("liquidations_total", "Normalised liquidations emitted", ["venue"]);
    this.reconnects = c("reconnects_total", "Venue websocket reconnects", ["venue"]);
    this.rotations = c("rotations_total", "Proactive venue websocket rotations", ["venue"]);
    this.gaps = c("gaps_total", "Stream gaps emitted", ["venue"]);
    this.errors = c("errors_total", "Venue feed problems by kind", ["venue", "kind"]);
  }
}
