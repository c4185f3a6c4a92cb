import { randomUUID } from "node:crypto";
import { openSqlite, type Database } from "../../lib/sqlite.js";
import type { CreditAccount, CreditLedger, CreditLedgerOptions, CreditRefund, RefundEnd, RefundReason, RefundStatus, RefundTx, ReserveOutcome, SpendCaps } from "./ledger.js";
import {
  DAY_MS,
  HOUR_MS,
  capsFromJson,
  capsToJson,
  checkId,
  checkInt,
  checkRefundEnd,
  checkRefundTx,
  checkReserve,
  effectiveCaps,
  emptyAccount,
  hasWindowCap,
  holdTtlOf,
  nowOr,
  normWallet,
  refusal,
} from "./shared.js";

/** Append-only migrations (see openSqlite). Amounts in micro-USD, times in epoch ms. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    wallet    TEXT PRIMARY KEY,                 -- lower-case 0x address
    balance   INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
    credited  INTEGER NOT NULL DEFAULT 0,
    spent     INTEGER NOT NULL DEFAULT 0,
    refunded  INTEGER NOT NULL DEFAULT 0,       -- taken for refunds (credited = balance + spent + holds + refunded)
    caps_json TEXT NOT NULL DEFAULT '{}'        -- SpendCaps, set fields only
  ) WITHOUT ROWID;

  -- One row per credited reference: a second credit with the same reference changes nothing.
  CREATE TABLE credit_refs (
    reference TEXT PRIMARY KEY,
    wallet    TEXT NOT NULL,
    amount    INTEGER NOT NULL,
    at        INTEGER NOT NULL
  ) WITHOUT ROWID;

  -- Open reservations; their amount is already out of the balance.
  CREATE TABLE holds (
    id     TEXT PRIMARY KEY,
    wallet TEXT NOT NULL,
    amount INTEGER NOT NULL,
    at     INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX holds_wallet_at ON holds (wallet, at);
  CREATE INDEX holds_at ON holds (at);

  -- Committed holds of the last 24 h (at = the time of the reservation), for the hour/day cap windows.
  CREATE TABLE debits (
    id     TEXT PRIMARY KEY,
    wallet TEXT NOT NULL,
    amount INTEGER NOT NULL,
    tool   TEXT NOT NULL,
    at     INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX debits_wallet_at ON debits (wallet, at);
  CREATE INDEX debits_at ON debits (at);

  CREATE TABLE nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX nonces_expires_at ON nonces (expires_at);
  `,
  `
  -- A hold expires (returns to the balance) at expires_at; holds of an older build expire at once.
  ALTER TABLE holds ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX holds_wallet_expires_at ON holds (wallet, expires_at);
  CREATE INDEX holds_expires_at ON holds (expires_at);

  -- Refunds: the amount left the balance (accounts.refunded) when the refund started; restored puts it back.
  CREATE TABLE refunds (
    id         TEXT PRIMARY KEY,
    wallet     TEXT NOT NULL,
    amount     INTEGER NOT NULL CHECK (amount > 0),
    status     TEXT NOT NULL CHECK (status IN ('preparing', 'pending', 'confirmed', 'restored')),
    nonce      INTEGER,                        -- the relayer's nonce of the recorded transfer
    tx_hash    TEXT,
    raw_tx     TEXT,                           -- the signed transfer while open (to broadcast it again)
    reason     TEXT,                           -- why restored
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX refunds_wallet ON refunds (wallet);
  -- At most one open refund per wallet.
  CREATE UNIQUE INDEX refunds_open_wallet ON refunds (wallet) WHERE status IN ('preparing', 'pending');
  CREATE INDEX refunds_open ON refunds (created_at) WHERE status IN ('preparing', 'pending');
  `,
];

interface AccountRow {
  wallet: string;
  balance: number;
  credited: number;
  spent: number;
  caps_json: string;
}

interface HoldRow {
  id: string;
  wallet: string;
  amount: number;
  at: number;
}

interface RefundRow {
  id: string;
  wallet: string;
  amount: number;
  status: RefundStatus;
  nonce: number | null;
  tx_hash: string | null;
  raw_tx: string | null;
  reason: RefundReason | null;
  created_at: number;
  updated_at: number;
}

/** SQL condition of an open refund. */
const OPEN = "status IN ('preparing', 'pending')";
const REFUND_COLS = "id, wallet, amount, status, nonce, tx_hash, raw_tx, reason, created_at, updated_at";

function toAccount(row: AccountRow | undefined, wallet: string, heldMicro: number, refundPendingMicro: number): CreditAccount {
  if (!row) return emptyAccount(wallet);
  return { wallet: row.wallet, balanceMicro: row.balance, heldMicro, refundPendingMicro, creditedMicro: row.credited, spentMicro: row.spent, caps: capsFromJson(row.caps_json) };
}

function toRefund(r: RefundRow): CreditRefund {
  return {
    id: r.id,
    wallet: r.wallet,
    amountMicro: r.amount,
    status: r.status,
    ...(r.tx_hash !== null && r.nonce !== null ? { tx: { nonce: r.nonce, txHash: r.tx_hash, rawTx: r.raw_tx ?? "" } } : {}),
    ...(r.reason !== null ? { reason: r.reason } : {}),
    createdAtMs: r.created_at,
    updatedAtMs: r.updated_at,
  };
}

/**
 * The {@link CreditLedger} of a single-process deployment (no `REDIS_URL`): SQLite via better-sqlite3
 * (WAL, `synchronous = NORMAL`), so every committed step survives `kill -9`. Every method is one
 * transaction (immediate: the write lock is taken first), so a balance is never spent twice and a killed
 * process leaves each step either done or not. Tables: `accounts`, `credit_refs` (credited references),
 * `holds` (open reservations with their expiry), `debits` (committed holds of the last 24 h, by wallet and
 * time, for the cap windows), `refunds` (every refund, at most one open per wallet), `nonces`.
 *
 * One process owns the file: opening it releases every hold left open (their requests died with the
 * previous process). `sweep` also prunes expired nonces and debits older than 24 h (the `spent` totals
 * are kept). Methods reject with RangeError for invalid arguments, and with better-sqlite3's errors when
 * the file cannot be written.
 */
export class SqliteCreditLedger implements CreditLedger {
  private readonly db: Database;
  private readonly stmts;
  private readonly tx;

  private readonly holdTtlMs: number;

  /**
   * Opens (creating and migrating) the ledger at `path` (`<DATA_DIR>/credits.sqlite`, or `":memory:"` in
   * tests) and releases every hold found open. @throws Error as openSqlite; RangeError for a bad `holdTtlMs`.
   */
  constructor(path: string, opts: CreditLedgerOptions = {}) {
    this.holdTtlMs = holdTtlOf(opts);
    this.db = openSqlite(path, MIGRATIONS, "credits");
    const db = this.db;
    const s = {
      account: db.prepare<[string], AccountRow>("SELECT wallet, balance, credited, spent, caps_json FROM accounts WHERE wallet = ?"),
      heldOf: db.prepare<[string], { s: number }>("SELECT COALESCE(SUM(amount), 0) AS s FROM holds WHERE wallet = ?"),
      pendingOf: db.prepare<[string], { s: number }>(`SELECT COALESCE(SUM(amount), 0) AS s FROM refunds WHERE wallet = ? AND ${OPEN}`),
      ensure: db.prepare<[string]>("INSERT INTO accounts (wallet) VALUES (?) ON CONFLICT (wallet) DO NOTHING"),
      addRef: db.prepare<[string, string, number, number]>("INSERT INTO credit_refs (reference, wallet, amount, at) VALUES (?, ?, ?, ?) ON CONFLICT (reference) DO NOTHING"),
      credit: db.prepare<[number, number, string]>("UPDATE accounts SET balance = balance + ?, credited = credited + ? WHERE wallet = ?"),
      windowDebits: db.prepare<[string, number], { s: number }>("SELECT COALESCE(SUM(amount), 0) AS s FROM debits WHERE wallet = ? AND at > ?"),
      windowHolds: db.prepare<[string, number], { s: number }>("SELECT COALESCE(SUM(amount), 0) AS s FROM holds WHERE wallet = ? AND at > ?"),
      addBalance: db.prepare<[number, string]>("UPDATE accounts SET balance = balance + ? WHERE wallet = ?"),
      addHold: db.prepare<[string, string, number, number, number]>("INSERT INTO holds (id, wallet, amount, at, expires_at) VALUES (?, ?, ?, ?, ?)"),
      hold: db.prepare<[string], HoldRow>("SELECT id, wallet, amount, at FROM holds WHERE id = ?"),
      dropHold: db.prepare<[string]>("DELETE FROM holds WHERE id = ?"),
      addDebit: db.prepare<[string, string, number, string, number]>("INSERT INTO debits (id, wallet, amount, tool, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"),
      spend: db.prepare<[number, string]>("UPDATE accounts SET spent = spent + ? WHERE wallet = ?"),
      expiredHolds: db.prepare<[number], HoldRow>("SELECT id, wallet, amount, at FROM holds WHERE expires_at <= ?"),
      expiredHoldsOf: db.prepare<[string, number], HoldRow>("SELECT id, wallet, amount, at FROM holds WHERE wallet = ? AND expires_at <= ?"),
      allHolds: db.prepare<[], HoldRow>("SELECT id, wallet, amount, at FROM holds"),
      pruneDebits: db.prepare<[number]>("DELETE FROM debits WHERE at < ?"),
      pruneNonces: db.prepare<[number]>("DELETE FROM nonces WHERE expires_at <= ?"),
      setCaps: db.prepare<[string, string]>("INSERT INTO accounts (wallet, caps_json) VALUES (?, ?) ON CONFLICT (wallet) DO UPDATE SET caps_json = excluded.caps_json"),
      takeBalance: db.prepare<[string], { balance: number }>("SELECT balance FROM accounts WHERE wallet = ?"),
      zeroBalance: db.prepare<[number, string]>("UPDATE accounts SET refunded = refunded + ?, balance = 0 WHERE wallet = ?"),
      restore: db.prepare<[number, number, string]>("UPDATE accounts SET balance = balance + ?, refunded = refunded - ? WHERE wallet = ?"),
      refund: db.prepare<[string], RefundRow>(`SELECT ${REFUND_COLS} FROM refunds WHERE id = ?`),
      openRefundOf: db.prepare<[string], RefundRow>(`SELECT ${REFUND_COLS} FROM refunds WHERE wallet = ? AND ${OPEN}`),
      openRefunds: db.prepare<[number], RefundRow>(`SELECT ${REFUND_COLS} FROM refunds WHERE ${OPEN} ORDER BY created_at LIMIT ?`),
      latestRefund: db.prepare<[string], RefundRow>(`SELECT ${REFUND_COLS} FROM refunds WHERE wallet = ? ORDER BY rowid DESC LIMIT 1`),
      addRefund: db.prepare<[string, string, number, number, number]>(
        "INSERT INTO refunds (id, wallet, amount, status, created_at, updated_at) VALUES (?, ?, ?, 'preparing', ?, ?)",
      ),
      recordTx: db.prepare<[{ nonce: number; tx: string; raw: string; now: number; id: string; expect: string | null }]>(
        "UPDATE refunds SET status = 'pending', nonce = @nonce, tx_hash = @tx, raw_tx = @raw, updated_at = @now " +
          "WHERE id = @id AND ((status = 'preparing' AND @expect IS NULL) OR (status = 'pending' AND tx_hash = @expect))",
      ),
      endRefund: db.prepare<[string, string | null, number, string]>("UPDATE refunds SET status = ?, reason = ?, raw_tx = NULL, updated_at = ? WHERE id = ?"),
      pendingTotal: db.prepare<[], { s: number }>(`SELECT COALESCE(SUM(amount), 0) AS s FROM refunds WHERE ${OPEN}`),
      claimNonce: db.prepare<[string, number, number]>(
        "INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO UPDATE SET expires_at = excluded.expires_at WHERE nonces.expires_at <= ?",
      ),
      totals: db.prepare<[], { credited: number; spent: number; balances: number }>(
        "SELECT COALESCE(SUM(credited), 0) AS credited, COALESCE(SUM(spent), 0) AS spent, COALESCE(SUM(balance), 0) AS balances FROM accounts",
      ),
      heldTotal: db.prepare<[], { s: number }>("SELECT COALESCE(SUM(amount), 0) AS s FROM holds"),
    };
    this.stmts = s;

    /** Returns a hold's amount to its wallet and deletes it. */
    const releaseHold = (h: HoldRow): void => {
      s.addBalance.run(h.amount, h.wallet);
      s.dropHold.run(h.id);
    };
    /** Returns the wallet's holds expired at `now` (their calls died) to its balance. */
    const expire = (wallet: string, now: number): void => {
      for (const h of s.expiredHoldsOf.all(wallet, now)) releaseHold(h);
    };
    const accountOf = (wallet: string): CreditAccount => toAccount(s.account.get(wallet), wallet, s.heldOf.get(wallet)!.s, s.pendingOf.get(wallet)!.s);

    this.tx = {
      credit: db.transaction((wallet: string, amount: number, reference: string, now: number) => {
        const credited = s.addRef.run(reference, wallet, amount, now).changes === 1;
        if (credited) {
          s.ensure.run(wallet);
          s.credit.run(amount, amount, wallet);
        }
        return { credited, account: accountOf(wallet) };
      }),
      account: db.transaction((wallet: string, now: number) => {
        expire(wallet, now);
        return accountOf(wallet);
      }),
      reserve: db.transaction((wallet: string, amount: number, global: SpendCaps, now: number, expiresAt: number): ReserveOutcome => {
        expire(wallet, now);
        const row = s.account.get(wallet);
        const balance = row?.balance ?? 0;
        const caps = effectiveCaps(capsFromJson(row?.caps_json), global);
        const window = (since: number) => s.windowDebits.get(wallet, since)!.s + s.windowHolds.get(wallet, since)!.s;
        const windows = hasWindowCap(caps);
        const refused = refusal(amount, caps, windows ? window(now - HOUR_MS) : 0, windows ? window(now - DAY_MS) : 0, balance);
        if (refused) return refused;
        const holdId = randomUUID();
        s.addBalance.run(-amount, wallet);
        s.addHold.run(holdId, wallet, amount, now, expiresAt);
        return { ok: true, holdId, balanceMicro: balance - amount };
      }),
      commit: db.transaction((holdId: string, tool: string) => {
        const h = s.hold.get(holdId);
        if (!h) return false;
        s.dropHold.run(h.id);
        s.addDebit.run(h.id, h.wallet, h.amount, tool, h.at);
        s.spend.run(h.amount, h.wallet);
        return true;
      }),
      release: db.transaction((holdId: string) => {
        const h = s.hold.get(holdId);
        if (h) releaseHold(h);
      }),
      sweep: db.transaction((now: number) => {
        const old = s.expiredHolds.all(now);
        for (const h of old) releaseHold(h);
        s.pruneDebits.run(now - DAY_MS);
        s.pruneNonces.run(now);
        return old.length;
      }),
      releaseAll: db.transaction(() => {
        for (const h of s.allHolds.all()) releaseHold(h);
      }),
      setCaps: db.transaction((wallet: string, capsJson: string) => {
        s.setCaps.run(wallet, capsJson);
        return accountOf(wallet);
      }),
      startRefund: db.transaction((wallet: string, id: string, now: number) => {
        expire(wallet, now);
        const open = s.openRefundOf.get(wallet);
        if (open) return { refund: toRefund(open), created: false };
        const balance = s.takeBalance.get(wallet)?.balance ?? 0;
        if (balance <= 0) return undefined;
        s.zeroBalance.run(balance, wallet);
        s.addRefund.run(id, wallet, balance, now, now);
        return { refund: toRefund(s.refund.get(id)!), created: true };
      }),
      finishRefund: db.transaction((id: string, outcome: RefundEnd, reason: RefundReason | null, now: number) => {
        const r = s.refund.get(id);
        if (!r || (r.status !== "preparing" && r.status !== "pending")) return false;
        if (outcome === "restored") s.restore.run(r.amount, r.amount, r.wallet);
        s.endRefund.run(outcome, reason, now, id);
        return true;
      }),
      claimNonce: db.transaction((nonce: string, expiresAt: number, now: number) => s.claimNonce.run(nonce, expiresAt, now).changes === 1),
      totals: db.transaction(() => {
        const t = s.totals.get()!;
        return { creditedMicro: t.credited, spentMicro: t.spent, outstandingMicro: t.balances + s.heldTotal.get()!.s + s.pendingTotal.get()!.s };
      }),
    };
    // The process that held them is gone (one embedded process owns the file).
    this.tx.releaseAll.immediate();
  }

  async credit(wallet: string, amountMicro: number, reference: string): Promise<{ credited: boolean; account: CreditAccount }> {
    const w = normWallet(wallet);
    return this.tx.credit.immediate(w, checkInt(amountMicro, "amountMicro", 1), checkId(reference, "reference"), Date.now());
  }

  async account(wallet: string, nowMs?: number): Promise<CreditAccount> {
    return this.tx.account.immediate(normWallet(wallet), nowOr(nowMs));
  }

  async reserve(wallet: string, amountMicro: number, opts: { globalCaps: SpendCaps; nowMs?: number }): Promise<ReserveOutcome> {
    const a = checkReserve(wallet, amountMicro, opts);
    return this.tx.reserve.immediate(a.wallet, a.amount, a.global, a.now, a.now + this.holdTtlMs);
  }

  async commit(holdId: string, meta: { tool: string }): Promise<boolean> {
    return this.tx.commit.immediate(checkId(holdId, "holdId"), String(meta.tool));
  }

  async release(holdId: string): Promise<void> {
    this.tx.release.immediate(checkId(holdId, "holdId"));
  }

  /** See {@link CreditLedger.sweep}; also prunes expired nonces and debits older than 24 h before `nowMs`. */
  async sweep(nowMs?: number): Promise<number> {
    return this.tx.sweep.immediate(nowOr(nowMs));
  }

  async setCaps(wallet: string, caps: SpendCaps): Promise<CreditAccount> {
    return this.tx.setCaps.immediate(normWallet(wallet), capsToJson(caps));
  }

  async startRefund(wallet: string, id: string, nowMs?: number): Promise<{ refund: CreditRefund; created: boolean } | undefined> {
    return this.tx.startRefund.immediate(normWallet(wallet), checkId(id, "id"), nowOr(nowMs));
  }

  async recordRefundTx(id: string, expectTxHash: string | null, tx: RefundTx, nowMs?: number): Promise<boolean> {
    const t = checkRefundTx(tx);
    const expect = expectTxHash === null ? null : checkId(expectTxHash, "expectTxHash");
    return this.stmts.recordTx.run({ nonce: t.nonce, tx: t.txHash, raw: t.rawTx, now: nowOr(nowMs), id: checkId(id, "id"), expect }).changes === 1;
  }

  async finishRefund(id: string, outcome: RefundEnd, reason: RefundReason | null, nowMs?: number): Promise<boolean> {
    checkRefundEnd(outcome, reason);
    return this.tx.finishRefund.immediate(checkId(id, "id"), outcome, reason, nowOr(nowMs));
  }

  async openRefunds(opts: { wallet?: string; limit?: number }): Promise<CreditRefund[]> {
    if (opts.wallet !== undefined) {
      const r = this.stmts.openRefundOf.get(normWallet(opts.wallet));
      return r ? [toRefund(r)] : [];
    }
    return this.stmts.openRefunds.all(checkInt(opts.limit ?? 100, "limit", 1)).map(toRefund);
  }

  async latestRefund(wallet: string): Promise<CreditRefund | undefined> {
    const r = this.stmts.latestRefund.get(normWallet(wallet));
    return r && toRefund(r);
  }

  async claimNonce(nonce: string, ttlMs: number, nowMs?: number): Promise<boolean> {
    const now = nowOr(nowMs);
    return this.tx.claimNonce.immediate(checkId(nonce, "nonce"), now + checkInt(ttlMs, "ttlMs", 1), now);
  }

  async totals(): Promise<{ creditedMicro: number; spentMicro: number; outstandingMicro: number }> {
    return this.tx.totals();
  }

  /** Closes the database (open holds stay in the file and are released by the next open). Idempotent. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
