import { join } from "node:path";
import { openSqlite, type Database } from "../../lib/sqlite.js";

/*
 * The stream store's single SQLite file. CVD buckets, the de-duplication ids of recent trades and the
 * liquidation ring live in one database so one WAL and one writer cover them; each store prepares its
 * own statements against the handle returned here. Schema changes are numbered migrations keyed on
 * `PRAGMA user_version`, so an older file is upgraded in place and a newer one is refused.
 */

export type { Database };

/** File name of the stream database inside `DATA_DIR`. */
export const STREAM_DB_FILE = "marketgate.sqlite";

/** `<dataDir>/marketgate.sqlite`. */
export function streamDbPath(dataDir: string): string {
  return join(dataDir, STREAM_DB_FILE);
}

/**
 * Migrations in order; migration `i` brings `user_version` from `i` to `i + 1`. Append only: never edit
 * one that has shipped. Units: times are epoch ms (INTEGER), volumes REAL (IEEE doubles, so values read
 * back are bit-identical to those written).
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE cvd_symbol (
    base          TEXT PRIMARY KEY,
    tracked_since INTEGER NOT NULL            -- epoch ms; start of the tracked range
  ) WITHOUT ROWID;

  CREATE TABLE cvd_bucket (
    base      TEXT    NOT NULL,
    venue     TEXT    NOT NULL,
    start     INTEGER NOT NULL,               -- epoch ms, aligned to 5 min UTC
    buy_base  REAL    NOT NULL,
    sell_base REAL    NOT NULL,
    buy_usd   REAL    NOT NULL,
    sell_usd  REAL    NOT NULL,
    trades    INTEGER NOT NULL,
    gap       TEXT    NOT NULL CHECK (gap IN ('none', 'filled', 'unfilled')),
    PRIMARY KEY (base, venue, start)
  ) WITHOUT ROWID;
  CREATE INDEX cvd_bucket_start ON cvd_bucket (start);

  -- Ids of recently counted trades, so a backfill overlapping a restart is not counted twice.
  CREATE TABLE cvd_seen (
    venue TEXT    NOT NULL,
    base  TEXT    NOT NULL,
    id    TEXT    NOT NULL,
    time  INTEGER NOT NULL,
    PRIMARY KEY (venue, base, id)
  ) WITHOUT ROWID;
  CREATE INDEX cvd_seen_time ON cvd_seen (venue, base, time);

  CREATE TABLE liq_event (
    id           TEXT    PRIMARY KEY,         -- liq_<unix_seconds>_<sequence>
    second       INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    venue        TEXT    NOT NULL,
    base         TEXT    NOT NULL,
    venue_symbol TEXT    NOT NULL,
    time         INTEGER NOT NULL,
    side         TEXT    NOT NULL CHECK (side IN ('long', 'short')),
    price        REAL    NOT NULL,
    size         REAL    NOT NULL,
    value_usd    REAL    NOT NULL,
    UNIQUE (venue, venue_symbol, time, side, size, price)
  );
  CREATE INDEX liq_event_time ON liq_event (time, seq);

  -- Last sequence handed out per unix second, so ids stay unique across restarts.
  CREATE TABLE liq_seq (
    second INTEGER PRIMARY KEY,
    seq    INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE stream_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
];

/** Schema version this build writes. */
export const STREAM_DB_VERSION = MIGRATIONS.length;

/**
 * Opens and migrates the stream database (see {@link openSqlite}); `path` is {@link streamDbPath}`(DATA_DIR)`
 * or `":memory:"` for tests. `synchronous = NORMAL`: a power cut loses at most the last transactions, which
 * the streams re-deliver or backfill.
 * @throws Error when the file cannot be opened, is not SQLite, or has a schema newer than {@link STREAM_DB_VERSION}.
 */
export function openStreamDb(path: string): Database {
  return openSqlite(path, MIGRATIONS, "stream");
}
