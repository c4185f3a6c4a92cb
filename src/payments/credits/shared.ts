/**
 * Validation and arithmetic shared by the two `CreditLedger` implementations (SQLite and Redis), so
 * that both accept exactly the same inputs and refuse reservations for the same reasons.
 */
import {
  DEFAULT_HOLD_TTL_MS,
  type CreditAccount,
  type CreditLedgerOptions,
  type RefundEnd,
  type RefundReason,
  type RefundTx,
  type ReserveOutcome,
  type SpendCaps,
} from "./ledger.js";

/** Length of the per-hour cap window, ms. */
export const HOUR_MS = 3_600_000;

/** Length of the per-day cap window, ms; debits older than this are pruned from the logs. */
export const DAY_MS = 86_400_000;

/** The cap fields of {@link SpendCaps}, in the order they are checked. */
const CAP_KEYS = ["perCallMaxMicro", "perHourMaxMicro", "perDayMaxMicro"] as const;

const EVM_WALLET = /^0x[0-9a-f]{40}$/;
/** A Solana address: base58 of 32 bytes. Case-sensitive, so kept as it is. */
const SOLANA_WALLET = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * A wallet as the ledgers key it: an EVM address lower-cased (`0x` + 40 hex digits), or a Solana address
 * (base58, case-sensitive) as it is: credits paid from Solana belong to the Solana wallet that paid.
 * @throws RangeError for anything else (it becomes part of a storage key).
 */
export function normWallet(wallet: string): string {
  if (typeof wallet === "string" && SOLANA_WALLET.test(wallet) && !wallet.startsWith("0x")) return wallet;
  const w = typeof wallet === "string" ? wallet.toLowerCase() : "";
  if (!EVM_WALLET.test(w)) throw new RangeError(`not a wallet address (0x EVM or base58 Solana): ${String(wallet).slice(0, 100)}`);
  return w;
}

/** Whether a ledger wallet ({@link normWallet}) is a Solana one. */
export function isSolanaWallet(wallet: string): boolean {
  return !wallet.startsWith("0x");
}

/**
 * Checks a micro-USD amount (or a cap, or a duration): a safe integer ≥ `min`. Returns it.
 * @throws RangeError otherwise.
 */
export function checkInt(value: number, what: string, min = 0): number {
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${what} must be an integer ≥ ${min}, got ${String(value)}`);
  return value;
}

/** `nowMs` when given (checked: a safe integer ≥ 0), else `Date.now()`. @throws RangeError for a bad `nowMs`. */
export function nowOr(nowMs: number | undefined): number {
  return nowMs === undefined ? Date.now() : checkInt(nowMs, "nowMs");
}

/** Checks a non-empty string identifier (reference, nonce, hold id) of at most 1,024 characters. @throws RangeError otherwise. */
export function checkId(value: string, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 1024) throw new RangeError(`${what} must be a non-empty string of at most 1024 characters`);
  return value;
}

/**
 * Caps reduced to the fields that are set, each checked (a safe integer ≥ 0; 0 refuses every paid call).
 * @throws RangeError for a field that is set but not such an integer.
 */
export function normCaps(caps: SpendCaps): SpendCaps {
  const out: SpendCaps = {};
  for (const k of CAP_KEYS) {
    const v = caps[k];
    if (v !== undefined) out[k] = checkInt(v, k);
  }
  return out;
}

/** Caps as stored (JSON with the set fields only, `{}` for none). */
export function capsToJson(caps: SpendCaps): string {
  return JSON.stringify(normCaps(caps));
}

/** Stored caps JSON (absent or empty = no caps) to {@link SpendCaps}. */
export function capsFromJson(json: string | null | undefined): SpendCaps {
  if (!json) return {};
  const raw = JSON.parse(json) as Record<string, unknown>;
  const out: SpendCaps = {};
  for (const k of CAP_KEYS) if (typeof raw[k] === "number") out[k] = raw[k];
  return out;
}

/** The account of a wallet never seen: all zero, no caps. */
export function emptyAccount(wallet: string): CreditAccount {
  return { wallet, balanceMicro: 0, heldMicro: 0, refundPendingMicro: 0, creditedMicro: 0, spentMicro: 0, caps: {} };
}

/** The hold lifetime of {@link CreditLedgerOptions} (checked: a safe integer ≥ 1 ms). @throws RangeError. */
export function holdTtlOf(opts: CreditLedgerOptions | undefined): number {
  return checkInt(opts?.holdTtlMs ?? DEFAULT_HOLD_TTL_MS, "holdTtlMs", 1);
}

/** How long an ended refund's record is kept (the account answer shows the latest one), ms. */
export const REFUND_RECORD_TTL_MS = 30 * DAY_MS;

const HASH = /^0x[0-9a-f]{64}$/;
const RAW_TX = /^0x[0-9a-f]{2,100000}$/;

/** Checks a refund transfer before it is stored (nonce a safe integer ≥ 0, lower-case 0x hashes). @throws RangeError. */
export function checkRefundTx(tx: RefundTx): RefundTx {
  checkInt(tx.nonce, "nonce");
  if (typeof tx.txHash !== "string" || !HASH.test(tx.txHash)) throw new RangeError("txHash must be a lower-case 0x transaction hash");
  if (typeof tx.rawTx !== "string" || !RAW_TX.test(tx.rawTx)) throw new RangeError("rawTx must be a lower-case 0x signed transaction");
  return tx;
}

/** Checks how a refund ends: `restored` needs a reason, `confirmed` has none. @throws RangeError. */
export function checkRefundEnd(outcome: RefundEnd, reason: RefundReason | null): void {
  const ok = outcome === "confirmed" ? reason === null : outcome === "restored" && ["not_sent", "rejected", "dropped", "reverted"].includes(reason ?? "");
  if (!ok) throw new RangeError(`a refund ends confirmed (no reason) or restored with a reason, got ${String(outcome)} / ${String(reason)}`);
}

/**
 * The caps that apply to one reservation: per field, the lower of the wallet's own cap and the global one
 * (either may be absent). The Redis ledger's reserve script does the same in Lua.
 */
export function effectiveCaps(own: SpendCaps, global: SpendCaps): SpendCaps {
  const out: SpendCaps = {};
  for (const k of CAP_KEYS) {
    const a = own[k];
    const b = global[k];
    const v = a === undefined ? b : b === undefined ? a : Math.min(a, b);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * Why a reservation of `amount` must be refused, or undefined when it may go ahead. Checks, in this order,
 * the per-call cap, the per-hour cap (`hourSum` = debits and open holds of the last hour, + `amount`),
 * the per-day cap (likewise with `daySum`) and then the balance. `caps` is {@link effectiveCaps}. All in
 * micro-USD. The Redis ledger's reserve script applies the same rules in Lua.
 */
export function refusal(amount: number, caps: SpendCaps, hourSum: number, daySum: number, balance: number): Extract<ReserveOutcome, { ok: false }> | undefined {
  const cap = (reason: "cap_per_call" | "cap_per_hour" | "cap_per_day", limitMicro: number) => ({ ok: false as const, reason, balanceMicro: balance, limitMicro });
  if (caps.perCallMaxMicro !== undefined && amount > caps.perCallMaxMicro) return cap("cap_per_call", caps.perCallMaxMicro);
  if (caps.perHourMaxMicro !== undefined && hourSum + amount > caps.perHourMaxMicro) return cap("cap_per_hour", caps.perHourMaxMicro);
  if (caps.perDayMaxMicro !== undefined && daySum + amount > caps.perDayMaxMicro) return cap("cap_per_day", caps.perDayMaxMicro);
  if (amount > balance) return { ok: false, reason: "insufficient_balance", balanceMicro: balance };
  return undefined;
}

/** True when `caps` has an hour or a day cap (only then do the windows need summing). */
export function hasWindowCap(caps: SpendCaps): boolean {
  return caps.perHourMaxMicro !== undefined || caps.perDayMaxMicro !== undefined;
}

/** The argument checks of `CreditLedger.reserve`, shared by both ledgers. @throws RangeError. */
export function checkReserve(
  wallet: string,
  amountMicro: number,
  opts: { globalCaps: SpendCaps; nowMs?: number },
): { wallet: string; amount: number; global: SpendCaps; now: number } {
  return { wallet: normWallet(wallet), amount: checkInt(amountMicro, "amountMicro"), global: normCaps(opts.globalCaps ?? {}), now: nowOr(opts.nowMs) };
}
