import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STREAM_DB_VERSION, openStreamDb, streamDbPath } from "../../src/ingestion/store/db.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("openStreamDb", () => {
  it("creates <DATA_DIR>/marketgate.sqlite in WAL mode with the current schema, and reopens it", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-db-"));
    dirs.push(dir);
    const path = streamDbPath(join(dir, "nested"));
    expect(path.endsWith(join("nested", "marketgate.sqlite"))).toBe(true);
    let db = openStreamDb(path);
    expect(existsSync(path)).toBe(true);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(STREAM_DB_VERSION);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    expect(tables).toEqual(["cvd_bucket", "cvd_bucket_ids", "cvd_ledger", "cvd_symbol", "liq_event", "liq_hour", "liq_seq", "stream_meta"]);
    db.close();
    db = openStreamDb(path); // migrations already applied: a no-op
    expect(db.pragma("user_version", { simple: true })).toBe(STREAM_DB_VERSION);
    db.pragma(`user_version = ${STREAM_DB_VERSION + 1}`);
    db.close();
    expect(() => openStreamDb(path)).toThrow(/newer than this build/);
  });

  it("opens an in-memory database for tests", () => {
    const db = openStreamDb(":memory:");
    expect(db.pragma("user_version", { simple: true })).toBe(STREAM_DB_VERSION);
    db.close();
  });
});
