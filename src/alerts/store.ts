import { join } from "node:path";
import { openSqlite, type Database } from "../lib/sqlite.js";
import { lastEvaluation, readingPartJson, storedEvaluation, type SymbolReading } from "./last-evaluation.js";
import type { AlertRepository, Evaluation, EvaluationTarget, NewAlert } from "./repository.js";
import type { AlertKind, AlertRecord, AlertStatus, AttemptRecord, DeliveryRecord, DeliveryStatus } from "./types.js";

export type { Evaluation, NewAlert } from "./repository.js";

/** File name of the alert database inside `DATA_DIR`. */
export const ALERT_DB_FILE = "alerts.sqlite";

/** `<dataDir>/alerts.sqlite`. */
export function alertDbPath(dataDir: string): string {
  return join(dataDir, ALERT_DB_FILE);
}

/** Append-only migrations of the alert database (see openSqlite; exported for the upgrade test). Times are epoch ms. */
export const ALERT_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE alert (
    id                TEXT PRIMARY KEY,
    kind              TEXT NOT NULL CHECK (kind IN ('liquidation', 'price')),
    symbol            TEXT NOT NULL,
    params            TEXT NOT NULL,              -- JSON: LiquidationParams | PriceParams
    webhook_url       TEXT NOT NULL,
    webhook_secret    TEXT NOT NULL,
    manage_token_hash TEXT NOT NULL,              -- sha256 hex of the manage token
    owner             TEXT,                       -- paying wallet, lowercase
    status            TEXT NOT NULL CHECK (status IN ('active', 'cancelled', 'expired')),
    created_at        INTEGER NOT NULL,
    expires_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    last_evaluated_at INTEGER,
    last_evaluation   TEXT,                       -- JSON
    last_triggered_at INTEGER,
    trigger_count     INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX alert_active ON alert (status, kind, symbol);
  CREATE INDEX alert_owner ON alert (owner, status);

  -- Last sequence handed out per id prefix and unix second, so ids stay unique across restarts.
  CREATE TABLE alert_seq (
    prefix TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL
  ) WITHOUT ROWID;

  -- Outbox: a delivery is written in the same transaction as the trigger that caused it.
  CREATE TABLE delivery (
    id              TEXT PRIMARY KEY,
    alert_id        TEXT NOT NULL REFERENCES alert (id),
    event           TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts        TEXT NOT NULL DEFAULT '[]',   -- JSON AttemptRecord[]
    delivered_at    INTEGER
  );
  CREATE INDEX delivery_due ON delivery (status, next_attempt_at);
  CREATE INDEX delivery_alert ON delivery (alert_id, created_at);
  `,
  // Rounds write per alert only what changed (see last-evaluation.ts), into a narrow table: what rounds
  // change of an alert (its own last evaluation, its triggers) moves out of the wide alert rows, which a
  // round then only reads. Each symbol's latest reading is kept once.
  `
  CREATE TABLE alert_state (
    id                TEXT PRIMARY KEY,           -- alert id; a row once a round evaluated it
    evaluated_at      INTEGER NOT NULL,
    evaluation        TEXT NOT NULL,              -- JSON ReadingPart (a whole evaluation in rows from v1)
    condition_met     INTEGER,                    -- 1, 0, NULL (error)
    last_triggered_at INTEGER,
    trigger_count     INTEGER NOT NULL DEFAULT 0
  ) WITHOUT ROWID;
  -- A v1 trigger was always written with its evaluation.
  INSERT INTO alert_state (id, evaluated_at, evaluation, condition_met, last_triggered_at, trigger_count)
    SELECT id, last_evaluated_at, last_evaluation, json_extract(last_evaluation, '$.condition_met'), last_triggered_at, trigger_count FROM alert
    WHERE last_evaluated_at IS NOT NULL AND last_evaluation IS NOT NULL;
  ALTER TABLE alert DROP COLUMN last_evaluated_at;
  ALTER TABLE alert DROP COLUMN last_evaluation;
  ALTER TABLE alert DROP COLUMN last_triggered_at;
  ALTER TABLE alert DROP COLUMN trigger_count;

  CREATE TABLE alert_reading (
    symbol      TEXT PRIMARY KEY,
    at          INTEGER NOT NULL,                 -- the round that read it
    liquidation TEXT,                             -- JSON ReadingPart, NULL when the round had no alert of the kind
    price       TEXT
  ) WITHOUT ROWID;

  -- Covers what a round reads of every active alert, in id order (the order of alert_state).
  CREATE INDEX alert_round ON alert (status, id, kind, symbol, params);
  CREATE INDEX alert_expiry ON alert (status, expires_at);
  `,
];

/** The alert columns with its state and the newest reading of its symbol, for {@link toAlert}. */
const ALERT_WITH_STATE = `SELECT a.*, s.evaluated_at, s.evaluation, s.condition_met, s.last_triggered_at, s.trigger_count,
    r.at AS reading_at, r.liquidation AS reading_liquidation, r.price AS reading_price
  FROM alert a LEFT JOIN alert_state s ON s.id = a.id LEFT JOIN alert_reading r ON r.symbol = a.symbol`;

/**
 * Copies the newer reading of their symbol into the evaluations of active alerts about to end (selected
 * by `where`, on `a`), so that they keep the last evaluation they had while active.
 */
const snapshotReading = (where: string) => `UPDATE alert_state AS s SET evaluated_at = r.at, evaluation = IIF(a.kind = 'liquidation', r.liquidation, r.price)
  FROM alert a, alert_reading r
  WHERE a.id = s.id AND r.symbol = a.symbol AND a.status = 'active' AND ${where}
    AND s.evaluated_at < r.at AND IIF(a.kind = 'liquidation', r.liquidation, r.price) IS NOT NULL`;

interface AlertRow {
  id: string;
  kind: AlertKind;
  symbol: string;
  params: string;
  webhook_url: string;
  webhook_secret: string;
  manage_token_hash: string;
  owner: string | null;
  status: AlertStatus;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  last_triggered_at: number | null;
  trigger_count: number | null;
  evaluated_at: number | null;
  evaluation: string | null;
  condition_met: 0 | 1 | null;
  reading_at: number | null;
  reading_liquidation: string | null;
  reading_price: string | null;
}

/** An alert's params as stored (JSON) and parsed. */
interface ParsedParams {
  text: string;
  value: AlertRecord["params"];
}

interface DeliveryRow {
  id: string;
  alert_id: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  created_at: number;
  next_attempt_at: number;
  attempts: string;
  delivered_at: number | null;
}

function toAlert(r: AlertRow): AlertRecord {
  return {
    id: r.id,
    kind: r.kind,
    symbol: r.symbol,
    params: JSON.parse(r.params) as AlertRecord["params"],
    webhookUrl: r.webhook_url,
    webhookSecret: r.webhook_secret,
    manageTokenHash: r.manage_token_hash,
    owner: r.owner,
    status: r.status,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    endedAt: r.ended_at,
    ...lastEvaluation(
      { status: r.status, kind: r.kind, at: r.evaluated_at, json: r.evaluation, conditionMet: r.condition_met === null ? null : r.condition_met === 1 },
      r.reading_at === null ? undefined : { at: r.reading_at, liquidation: r.reading_liquidation, price: r.reading_price },
    ),
    lastTriggeredAt: r.last_triggered_at,
    triggerCount: r.trigger_count ?? 0,
  };
}

function toDelivery(r: DeliveryRow): DeliveryRecord {
  return {
    id: r.id,
    alertId: r.alert_id,
    event: r.event,
    body: r.body,
    status: r.status,
    createdAt: r.created_at,
    nextAttemptAt: r.next_attempt_at,
    attempts: JSON.parse(r.attempts) as AttemptRecord[],
    deliveredAt: r.delivered_at,
  };
}

/**
 * Durable alert and delivery storage (SQLite under `DATA_DIR`, synchronous better-sqlite3). Every
 * state change is one transaction, so a process killed at any moment leaves each alert and each
 * delivery either before or after the change, never in between; pending deliveries (the outbox) are
 * picked up again after a restart. The {@link AlertRepository} of a single-process deployment (no `REDIS_URL`).
 */
export class AlertStore implements AlertRepository {
  readonly db: Database;
  private readonly stmts;
  /** The params the last round read, parsed, by alert id: params never change, and a round reads every active alert. */
  private roundParams = new Map<string, ParsedParams>();

  /** Opens `path` ({@link alertDbPath}, or `":memory:"` in tests). @throws Error as openSqlite. */
  constructor(path: string) {
    this.db = openSqlite(path, ALERT_MIGRATIONS, "alert");
    const db = this.db;
    this.stmts = {
      nextSeq: db.prepare<[string], { seq: number }>("INSERT INTO alert_seq (prefix, seq) VALUES (?, 1) ON CONFLICT (prefix) DO UPDATE SET seq = seq + 1 RETURNING seq"),
      insert: db.prepare(
        `INSERT INTO alert (id, kind, symbol, params, webhook_url, webhook_secret, manage_token_hash, owner, status, created_at, expires_at)
         VALUES (@id, @kind, @symbol, @params, @webhook_url, @webhook_secret, @manage_token_hash, @owner, 'active', @created_at, @expires_at)`,
      ),
      get: db.prepare<[string], AlertRow>(`${ALERT_WITH_STATE} WHERE a.id = ?`),
      active: db.prepare<[AlertKind], AlertRow>(`${ALERT_WITH_STATE} WHERE a.status = 'active' AND a.kind = ? ORDER BY a.created_at, a.id`),
      activeAll: db.prepare<[], AlertRow>(`${ALERT_WITH_STATE} WHERE a.status = 'active' ORDER BY a.created_at, a.id`),
      activeByOwner: db.prepare<[AlertKind, string], AlertRow>(`${ALERT_WITH_STATE} WHERE a.status = 'active' AND a.kind = ? AND a.owner = ? ORDER BY a.created_at, a.id`),
      // Rows as arrays (no per-row object with named keys), from the covering index alert_round.
      forEvaluation: db
        .prepare<[], [string, AlertKind, string, string, number | null, 0 | 1, 0 | 1 | null]>(
          `SELECT a.id, a.kind, a.symbol, a.params, s.last_triggered_at, s.id IS NOT NULL, s.condition_met
           FROM alert a INDEXED BY alert_round LEFT JOIN alert_state s ON s.id = a.id WHERE a.status = 'active'`,
        )
        .raw(),
      countActive: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM alert WHERE status = 'active'"),
      snapshotOne: db.prepare<[string]>(snapshotReading("a.id = ?")),
      snapshotDue: db.prepare<[number]>(snapshotReading("a.expires_at <= ?")),
      end: db.prepare<[AlertStatus, number, string]>("UPDATE alert SET status = ?, ended_at = ? WHERE id = ? AND status = 'active'"),
      cancelPending: db.prepare<[string]>("UPDATE delivery SET status = 'cancelled' WHERE alert_id = ? AND status = 'pending'"),
      extend: db.prepare<[number, string]>("UPDATE alert SET expires_at = ? WHERE id = ? AND status = 'active'"),
      expire: db.prepare<[number]>("UPDATE alert SET status = 'expired', ended_at = expires_at WHERE status = 'active' AND expires_at <= ?"),
      reading: db.prepare<[string, number, string | null, string | null]>(
        "INSERT INTO alert_reading (symbol, at, liquidation, price) VALUES (?, ?, ?, ?) ON CONFLICT (symbol) DO UPDATE SET at = excluded.at, liquidation = excluded.liquidation, price = excluded.price",
      ),
      evaluated: db.prepare<[number, string, 0 | 1 | null, string]>(
        `INSERT INTO alert_state (id, evaluated_at, evaluation, condition_met) SELECT id, ?, ?, ? FROM alert INDEXED BY alert_round WHERE status = 'active' AND id = ?
         ON CONFLICT (id) DO UPDATE SET evaluated_at = excluded.evaluated_at, evaluation = excluded.evaluation, condition_met = excluded.condition_met`,
      ),
      triggered: db.prepare<[number, string]>("UPDATE alert_state SET last_triggered_at = ?, trigger_count = trigger_count + 1 WHERE id = ?"),
      queue: db.prepare(
        "INSERT INTO delivery (id, alert_id, event, body, status, created_at, next_attempt_at) VALUES (@id, @alert_id, @event, @body, 'pending', @created_at, @created_at)",
      ),
      due: db.prepare<[number, number], DeliveryRow>("SELECT * FROM delivery WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"),
      attempt: db.prepare<[DeliveryStatus, number, string, number | null, string]>(
        "UPDATE delivery SET status = ?, next_attempt_at = ?, attempts = ?, delivered_at = ? WHERE id = ? AND status = 'pending'",
      ),
      deliveries: db.prepare<[string, number], DeliveryRow>("SELECT * FROM delivery WHERE alert_id = ? ORDER BY created_at DESC, id DESC LIMIT ?"),
      delivery: db.prepare<[string], DeliveryRow>("SELECT * FROM delivery WHERE id = ?"),
    };
  }

  /**
   * Inserts an active alert, its id built as `<prefix>_<unix_seconds>_<sequence>` (sequence per prefix
   * and second, starting at 1, unique across restarts). Returns the stored record.
   */
  insert(prefix: string, a: NewAlert): AlertRecord {
    return this.db.transaction(() => {
      const second = Math.floor(a.createdAt / 1000);
      const { seq } = this.stmts.nextSeq.get(`${prefix}_${second}`)!;
      const id = `${prefix}_${second}_${seq}`;
      this.stmts.insert.run({
        id,
        kind: a.kind,
        symbol: a.symbol,
        params: JSON.stringify(a.params),
        webhook_url: a.webhookUrl,
        webhook_secret: a.webhookSecret,
        manage_token_hash: a.manageTokenHash,
        owner: a.owner,
        created_at: a.createdAt,
        expires_at: a.expiresAt,
      });
      return this.get(id)!;
    })();
  }

  /** The alert, or undefined. */
  get(id: string): AlertRecord | undefined {
    const r = this.stmts.get.get(id);
    return r ? toAlert(r) : undefined;
  }

  /** Active alerts of a kind (optionally of one owner), oldest first; every kind when `kind` is omitted. */
  active(kind?: AlertKind, owner?: string): AlertRecord[] {
    const rows = kind === undefined ? this.stmts.activeAll.all() : owner !== undefined ? this.stmts.activeByOwner.all(kind, owner.toLowerCase()) : this.stmts.active.all(kind);
    return rows.map(toAlert);
  }

  /** Every active alert as a round reads it (see {@link AlertRepository.activeForEvaluation}). */
  activeForEvaluation(): EvaluationTarget[] {
    const parsed = new Map<string, ParsedParams>();
    const targets = this.stmts.forEvaluation.all().map(([id, kind, symbol, text, lastTriggeredAt, evaluated, conditionMet]) => {
      let params = this.roundParams.get(id);
      if (params?.text !== text) params = { text, value: JSON.parse(text) as AlertRecord["params"] };
      parsed.set(id, params);
      return { id, kind, symbol, params: params.value, lastTriggeredAt, evaluated: evaluated === 1, conditionMet: conditionMet === null ? null : conditionMet === 1 };
    });
    this.roundParams = parsed;
    return targets;
  }

  /** Number of active alerts of every kind. */
  countActive(): number {
    return this.stmts.countActive.get()!.n;
  }

  /** Cancels an active alert and its pending deliveries. Returns false when it was not active. */
  cancel(id: string, now: number): boolean {
    return this.db.transaction(() => {
      this.stmts.snapshotOne.run(id);
      if (this.stmts.end.run("cancelled", now, id).changes === 0) return false;
      this.stmts.cancelPending.run(id);
      return true;
    })();
  }

  /** Sets a new expiry of an active alert. Returns false when it was not active. */
  setExpiry(id: string, expiresAt: number): boolean {
    return this.stmts.extend.run(expiresAt, id).changes > 0;
  }

  /** Moves every active alert whose expiry is at or before `now` to `expired` (ended at its expiry). Returns how many. */
  expireDue(now: number): number {
    return this.db.transaction(() => {
      this.stmts.snapshotDue.run(now);
      return this.stmts.expire.run(now).changes;
    })();
  }

  /**
   * Writes a round in one transaction: each symbol's reading, each alert's last evaluation and, for those
   * that fired, the trigger count and a pending delivery (the outbox row). Alerts no longer active are
   * skipped (see {@link AlertRepository.recordEvaluations}).
   */
  recordEvaluations(now: number, evaluations: readonly Evaluation[], readings: readonly SymbolReading[] = []): void {
    this.db.transaction(() => {
      for (const r of readings) this.stmts.reading.run(r.symbol, now, readingPartJson(r, "liquidation"), readingPartJson(r, "price"));
      for (const e of evaluations) {
        const { json, conditionMet } = storedEvaluation(e.evaluation);
        if (this.stmts.evaluated.run(now, json, conditionMet === null ? null : conditionMet ? 1 : 0, e.alertId).changes === 0 || !e.trigger) continue;
        this.stmts.triggered.run(now, e.alertId);
        this.stmts.queue.run({ id: e.trigger.deliveryId, alert_id: e.alertId, event: e.trigger.event, body: e.trigger.body, created_at: now });
      }
    })();
  }

  /** Pending deliveries due at `now`, oldest due first, at most `limit`. */
  due(now: number, limit: number): DeliveryRecord[] {
    return this.stmts.due.all(now, limit).map(toDelivery);
  }

  /** Records an attempt: `delivered`, `failed` (gave up) or still `pending` with its next attempt time. */
  recordAttempt(id: string, attempts: readonly AttemptRecord[], outcome: { status: DeliveryStatus; nextAttemptAt: number; deliveredAt: number | null }): void {
    this.stmts.attempt.run(outcome.status, outcome.nextAttemptAt, JSON.stringify(attempts), outcome.deliveredAt, id);
  }

  /** The latest `limit` deliveries of an alert, newest first. */
  deliveries(alertId: string, limit: number): DeliveryRecord[] {
    return this.stmts.deliveries.all(alertId, limit).map(toDelivery);
  }

  /** One delivery, or undefined. */
  delivery(id: string): DeliveryRecord | undefined {
    const r = this.stmts.delivery.get(id);
    return r ? toDelivery(r) : undefined;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
