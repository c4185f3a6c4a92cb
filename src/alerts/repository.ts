import type { SymbolReading } from "./last-evaluation.js";
import type { AlertKind, AlertRecord, AttemptRecord, DeliveryRecord, DeliveryStatus } from "./types.js";

export type { ReadingPart, SymbolReading } from "./last-evaluation.js";

/** A value, or a promise of it: the SQLite store answers synchronously, the Redis store asynchronously. */
export type MaybePromise<T> = T | Promise<T>;

/** A new alert, before its id is assigned. */
export type NewAlert = Omit<AlertRecord, "id" | "status" | "endedAt" | "lastEvaluatedAt" | "lastEvaluation" | "lastTriggeredAt" | "triggerCount">;

/** An active alert as an evaluation round needs it (see {@link AlertRepository.activeForEvaluation}). */
export interface EvaluationTarget extends Pick<AlertRecord, "id" | "kind" | "symbol" | "params" | "lastTriggeredAt"> {
  /** Whether a round has evaluated it before. */
  evaluated: boolean;
  /** `condition_met` of its last stored evaluation; null after an error, before any, or when not stored apart. */
  conditionMet: boolean | null;
}

/** The outcome of one evaluation of one alert, written by {@link AlertRepository.recordEvaluations}. */
export interface Evaluation {
  alertId: string;
  evaluation: NonNullable<AlertRecord["lastEvaluation"]>;
  /** When set, the alert fired: a delivery with this id, event and body is queued in the same transaction. */
  trigger?: {
    deliveryId: string;
    event: string;
    body: string;
    /**
     * The alert's `lastTriggeredAt` the decision was based on. A store shared by several writers (Redis)
     * queues the trigger only while it is unchanged, so two overlapping rounds never fire one alert twice.
     */
    previousTriggeredAt?: number | null;
  };
}

/**
 * Alert and delivery storage as the service, the engine, the dispatcher and the scheduler use it:
 * {@link AlertStore} (SQLite, synchronous, one process) or `RedisAlertStore` (shared by replicas).
 * Callers always `await` the results. Every state change is atomic: an alert and its deliveries are
 * seen before or after a change, never in between. Implementations backed by a remote store reject
 * with AppError UPSTREAM_UNAVAILABLE (503) when it cannot be reached.
 */
export interface AlertRepository {
  /**
   * Inserts an active alert, its id built as `<prefix>_<unix_seconds>_<sequence>` (sequence per prefix
   * and second, starting at 1, unique across restarts and writers). Returns the stored record.
   */
  insert(prefix: string, a: NewAlert): MaybePromise<AlertRecord>;
  /** The alert, or undefined. */
  get(id: string): MaybePromise<AlertRecord | undefined>;
  /** Active alerts of a kind (optionally of one owner), oldest first (created_at, then id); every kind when `kind` is omitted. */
  active(kind?: AlertKind, owner?: string): MaybePromise<AlertRecord[]>;
  /** Every active alert, in no particular order, with only what a round reads (a narrow read: rounds run every 30 s over all alerts). */
  activeForEvaluation(): MaybePromise<EvaluationTarget[]>;
  /** Number of active alerts of every kind. */
  countActive(): MaybePromise<number>;
  /** Cancels an active alert and its pending deliveries. Resolves false when it was not active. */
  cancel(id: string, now: number): MaybePromise<boolean>;
  /** Sets a new expiry of an active alert. Resolves false when it was not active. */
  setExpiry(id: string, expiresAt: number): MaybePromise<boolean>;
  /** Moves every active alert whose expiry is at or before `now` to `expired` (ended at its expiry). Resolves how many. */
  expireDue(now: number): MaybePromise<number>;
  /**
   * Writes a round: each symbol's reading (stamped `now`; it replaces the previous one), each alert's last
   * evaluation and, for those that fired, the trigger count and a pending delivery (the outbox row)
   * atomically with it. Alerts no longer active are skipped. An active alert evaluated before and left
   * out of `evaluations` takes its last evaluation from its symbol's reading (see `last-evaluation.ts`),
   * so a round passes only the alerts whose own state changed.
   */
  recordEvaluations(now: number, evaluations: readonly Evaluation[], readings?: readonly SymbolReading[]): MaybePromise<void>;
  /** Pending deliveries due at `now`, oldest due first, at most `limit`. */
  due(now: number, limit: number): MaybePromise<DeliveryRecord[]>;
  /** Records an attempt on a delivery that is still pending: `delivered`, `failed` (gave up) or still `pending` with its next attempt time. */
  recordAttempt(id: string, attempts: readonly AttemptRecord[], outcome: { status: DeliveryStatus; nextAttemptAt: number; deliveredAt: number | null }): MaybePromise<void>;
  /** The latest `limit` deliveries of an alert, newest first. */
  deliveries(alertId: string, limit: number): MaybePromise<DeliveryRecord[]>;
  /** One delivery, or undefined. */
  delivery(id: string): MaybePromise<DeliveryRecord | undefined>;
  /** Releases what the store holds (a Redis store leaves the shared connection to its owner). */
  close(): MaybePromise<void>;
}
