import { join } from "node:path";
import type { RedisHandle } from "../../state/redis.js";
import type { CreditLedger, CreditLedgerOptions } from "./ledger.js";
import { RedisCreditLedger } from "./redis-ledger.js";
import { SqliteCreditLedger } from "./sqlite-ledger.js";

export * from "./ledger.js";
export { RedisCreditLedger } from "./redis-ledger.js";
export { SqliteCreditLedger } from "./sqlite-ledger.js";

/** File name of the credits database inside `DATA_DIR` (embedded mode). */
export const CREDIT_DB_FILE = "credits.sqlite";

/** `<dataDir>/credits.sqlite`, or `:memory:` when `DATA_DIR=:memory:` (tests, the sandbox). */
export function creditDbPath(dataDir: string): string {
  return dataDir === ":memory:" ? ":memory:" : join(dataDir, CREDIT_DB_FILE);
}

/**
 * The prepaid-credits ledger of this deployment: {@link RedisCreditLedger} on `redis` when one is given
 * (multi-replica mode, `REDIS_URL`; the handle stays the caller's), else {@link SqliteCreditLedger} at
 * `<dataDir>/credits.sqlite` (created with its directory when absent; its holds left open by a previous
 * process are released). Holds expire `holdTtlMs` after they were taken (see {@link CreditLedgerOptions}).
 * @throws Error when the SQLite file cannot be opened or migrated (see openSqlite); RangeError for a bad `holdTtlMs`.
 */
export function createCreditLedger(opts: { dataDir: string; redis?: RedisHandle } & CreditLedgerOptions): CreditLedger {
  const o = { holdTtlMs: opts.holdTtlMs };
  return opts.redis ? new RedisCreditLedger(opts.redis, o) : new SqliteCreditLedger(creditDbPath(opts.dataDir), o);
}
