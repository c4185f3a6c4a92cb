import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";

/** An open better-sqlite3 connection (synchronous API). */
export type Database = BetterSqlite3.Database;

/**
 * Opens (creating the parent directory and the file when absent) and migrates a SQLite database.
 * `path` is a file path, or `":memory:"` for tests. `migrations[i]` brings `PRAGMA user_version` from
 * `i` to `i + 1`, each in its own transaction (a failed step leaves the previous version); the list is
 * append-only. Sets WAL journaling (readers never block the writer), `synchronous = NORMAL` (every
 * committed transaction survives a process kill; a power cut may lose the last ones), a 5 s busy timeout
 * and foreign keys.
 * @throws Error when the file cannot be opened, is not SQLite, or has a schema newer than this build
 *   (`<label> database schema vN is newer than this build`); the connection is closed before throwing.
 */
export function openSqlite(path: string, migrations: readonly string[], label: string): Database {
  if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
  const db = new BetterSqlite3(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 5000");
    db.pragma("foreign_keys = ON");
    migrate(db, migrations, label);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function migrate(db: Database, migrations: readonly string[], label: string): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(`${label} database schema v${current} is newer than this build (v${migrations.length})`);
  }
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
