import { join } from "node:path";
import { openSqlite, type Database } from "../../lib/sqlite.js";

/*
 * The stream store's single SQLite file. CVD buckets, the trade ledgers that count each trade once and the
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
 * back are bit-identical to those written). Exported for tests of upgrades.
 */
export const STREAM_DB_MIGRATIONS: readonly string[] = [
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
  // v2: each trade counted once whatever its age (docs/methods/cvd.md), and gaps kept per interval.
  `
  -- JSON [[from, to], …] (epoch ms): the parts of the bucket in a stream gap that no backfill filled.
  ALTER TABLE cvd_bucket ADD COLUMN unfilled TEXT NOT NULL DEFAULT '[]';
  UPDATE cvd_bucket SET unfilled = '[[' || start || ',' || (start + 300000) || ']]' WHERE gap = 'unfilled';
  -- Ids of the trades counted by id (unordered venues) into the bucket: rows of cvd_bucket_ids.
  ALTER TABLE cvd_bucket ADD COLUMN id_count INTEGER NOT NULL DEFAULT 0;
  -- Trades counted before ids were kept cannot be told apart: such buckets accept no more by id.
  UPDATE cvd_bucket SET id_count = trades WHERE venue NOT IN ('binance', 'okx');

  -- Newline-separated trade ids of a bucket, one row per flush that added some.
  CREATE TABLE cvd_bucket_ids (
    base  TEXT    NOT NULL,
    venue TEXT    NOT NULL,
    start INTEGER NOT NULL,
    ids   TEXT    NOT NULL
  );
  CREATE INDEX cvd_bucket_ids_bucket ON cvd_bucket_ids (base, venue, start);

  -- Per (venue, base): newest trade counted (epoch ms) and, for sequence ids, the mark and holes.
  CREATE TABLE cvd_ledger (
    venue     TEXT    NOT NULL,
    base      TEXT    NOT NULL,
    newest    INTEGER NOT NULL,
    mark      INTEGER,                        -- highest sequence id counted
    mark_time INTEGER,
    floor     INTEGER,                        -- no trade older than this is counted (history without ids)
    holes     TEXT    NOT NULL DEFAULT '[]',  -- JSON [[lo, loTime, hi, hiTime, [ids]], …]
    PRIMARY KEY (venue, base)
  ) WITHOUT ROWID;
  INSERT INTO cvd_ledger (venue, base, newest, mark, mark_time, floor, holes)
    SELECT b.venue, b.base, MAX(COALESCE(s.newest, 0), b.last_start + 300000),
           CASE WHEN b.venue IN ('binance', 'okx') THEN s.mark END, NULL, b.last_start + 300000, '[]'
    FROM (SELECT venue, base, MAX(start) AS last_start FROM cvd_bucket GROUP BY venue, base) AS b
    LEFT JOIN (
      SELECT venue, base, MAX(time) AS newest,
             MAX(CASE WHEN id <> '' AND id NOT GLOB '*[^0-9]*' THEN CAST(id AS INTEGER) END) AS mark
      FROM cvd_seen GROUP BY venue, base
    ) AS s ON s.venue = b.venue AND s.base = b.base;
  DROP TABLE cvd_seen;
  `,
  // v3: hourly liquidation totals per venue and base, 8 days (the cascade-risk forecast's 7-day liquidation history).
  `
  CREATE TABLE liq_hour (
    hour  INTEGER NOT NULL,                   -- epoch ms, start of the UTC hour
    venue TEXT    NOT NULL,
    base  TEXT    NOT NULL,
    usd   REAL    NOT NULL,                   -- sum of the hour's liquidations' value_usd, both sides
    PRIMARY KEY (hour, venue, base)
  ) WITHOUT ROWID;
  `,
];

/** Schema version this build writes. */
export const STREAM_DB_VERSION = STREAM_DB_MIGRATIONS.length;

/**
 * Opens and migrates the stream database (see {@link openSqlite}); `path` is {@link streamDbPath}`(DATA_DIR)`
 * or `":memory:"` for tests. `synchronous = NORMAL`: a power cut loses at most the last transactions, which
 * the streams re-deliver or backfill.
 * @throws Error when the file cannot be opened, is not SQLite, or has a schema newer than {@link STREAM_DB_VERSION}.
 */
export function openStreamDb(path: string): Database {
  return openSqlite(path, STREAM_DB_MIGRATIONS, "stream");
}
