/**
 * Prepaid credits: the balances of wallets that topped up with one x402 payment and then spend without a
 * chain transaction per call. Amounts are integers in micro-USD (1 USDC = 1 USD = 1,000,000), so sums
 * are exact. Wallets are lower-case 0x addresses.
 *
 * Exactly once: a call reserves its price (a hold) before its handler runs, atomically with the balance
 * and cap checks; the hold becomes a debit when the answer is released (`commit`), or goes back to the
 * balance when the handler fails or the answer is not charged (`release`). Every hold expires
 * `holdTtlMs` after it was taken (the request deadline plus a margin, see {@link CreditLedgerOptions}):
 * a hold whose process died is returned by the next `account`, `reserve` or `startRefund` of its wallet
 * once expired, and by the periodic `sweep`. A refund takes the balance into a pending refund that ends
 * confirmed (paid on chain) or restored (the transfer was never sent, or was dropped or reverted):
 * `startRefund`, `recordRefundTx`, `finishRefund` (see refunds.ts for the chain side). Two
 * implementations share this contract: {@link SqliteCreditLedger} (embedded, survives `kill -9`) and
 * {@link RedisCreditLedger} (replicas; every step is one Lua script).
 */
export interface CreditLedger {
  /**
   * Credits `amountMicro` to `wallet`, once per `reference` (the settled authorization's ledger key): a
   * second call with the same reference changes nothing and answers `credited: false`.
   */
  credit(wallet: string, amountMicro: number, reference: string): Promise<{ credited: boolean; account: CreditAccount }>;
  /**
   * The wallet's account (all zero, no caps, for a wallet never seen), after returning its holds expired
   * at `nowMs` (default: now) to its balance.
   */
  account(wallet: string, nowMs?: number): Promise<CreditAccount>;
  /**
   * Atomically checks the caps (the wallet's own, then `globalCaps`; hour and day windows count committed
   * debits and open holds of the last 3,600 s / 86,400 s before `nowMs`) and the balance, and reserves
   * `amountMicro` as a hold that no concurrent call can spend again, expiring `holdTtlMs` after `nowMs`.
   * The wallet's holds expired at `nowMs` go back to its balance first.
   */
  reserve(wallet: string, amountMicro: number, opts: { globalCaps: SpendCaps; nowMs?: number }): Promise<ReserveOutcome>;
  /**
   * Makes a hold a debit (adds it to `spentMicro` and the debit log with `tool`); true when it did. Unknown,
   * released and already committed ids change nothing and answer false (a hold that expired and was
   * returned before its call ended: the call is not charged).
   */
  commit(holdId: string, meta: { tool: string }): Promise<boolean>;
  /** Returns a hold to the balance (nothing was served). Idempotent; unknown or committed ids are ignored. */
  release(holdId: string): Promise<void>;
  /** Returns every hold expired at `nowMs` (default: now; its request died) to its balance; resolves how many. */
  sweep(nowMs?: number): Promise<number>;
  /** Replaces the wallet's own caps (a field left undefined removes that cap). */
  setCaps(wallet: string, caps: SpendCaps): Promise<CreditAccount>;
  /**
   * Starts a refund of the wallet's whole balance, atomically: when the wallet already has an open refund
   * (`preparing` or `pending`) it is returned with `created: false` and nothing is taken; otherwise the
   * balance (after returning expired holds) moves into a new `preparing` refund with id `id`, or
   * undefined is returned when the balance is 0. Open holds are not refunded.
   */
  startRefund(wallet: string, id: string, nowMs?: number): Promise<{ refund: CreditRefund; created: boolean } | undefined>;
  /**
   * Records the signed transfer of refund `id` before it is broadcast, as a compare-and-set: only when the
   * refund is `preparing` and `expectTxHash` is null, or `pending` with `expectTxHash` as its transaction
   * (a new nonce after the previous transaction was refused). Makes it `pending`; false when it was not.
   */
  recordRefundTx(id: string, expectTxHash: string | null, tx: RefundTx, nowMs?: number): Promise<boolean>;
  /**
   * Ends an open refund once: `confirmed` (the transfer was mined: the amount stays refunded) or `restored`
   * (never sent, refused, dropped or reverted: the amount goes back to the balance) with `reason`. False
   * when the refund was not open (already ended, or unknown).
   */
  finishRefund(id: string, outcome: RefundEnd, reason: RefundReason | null, nowMs?: number): Promise<boolean>;
  /** The open refunds of `wallet` (at most one), or of every wallet (at most `limit`, oldest first). */
  openRefunds(opts: { wallet?: string; limit?: number }): Promise<CreditRefund[]>;
  /** The wallet's latest refund, open or ended (ended ones are kept at least 30 days), or undefined. */
  latestRefund(wallet: string): Promise<CreditRefund | undefined>;
  /** Claims a SIWX nonce once for `ttlMs` (true the first time, false for a replay), atomically across replicas. */
  claimNonce(nonce: string, ttlMs: number, nowMs?: number): Promise<boolean>;
  /** Service-wide sums for `/metrics`: everything credited, spent (committed) and outstanding (balances + holds + pending refunds). */
  totals(): Promise<{ creditedMicro: number; spentMicro: number; outstandingMicro: number }>;
  close(): Promise<void>;
}

/** Options shared by the ledgers. */
export interface CreditLedgerOptions {
  /** Lifetime of a hold, ms: REQUEST_DEADLINE_MS plus a margin in the service; default {@link DEFAULT_HOLD_TTL_MS}. */
  holdTtlMs?: number;
}

/** Default lifetime of a hold, ms: the default request deadline (10 s) plus a 60 s margin. */
export const DEFAULT_HOLD_TTL_MS = 70_000;

/** States of a refund: `preparing` (balance taken, nothing signed), `pending` (a transfer may be on its way), then one end. */
export type RefundStatus = "preparing" | "pending" | RefundEnd;

/** How a refund ends: its transfer confirmed, or the amount restored to the balance. */
export type RefundEnd = "confirmed" | "restored";

/**
 * Why a refund was restored: `not_sent` (nothing was broadcast), `rejected` (the node refused the
 * transaction), `dropped` (the relayer's nonce was used by another transaction), `reverted` (mined, failed).
 */
export type RefundReason = "not_sent" | "rejected" | "dropped" | "reverted";

/** The transfer of a refund, recorded before it is broadcast. */
export interface RefundTx {
  /** The relayer's account nonce chosen for it. */
  nonce: number;
  /** 0x hash of the signed transaction. */
  txHash: string;
  /** The signed transaction (0x hex), to broadcast it again if the chain forgot it. */
  rawTx: string;
}

/** One refund of a wallet's balance (micro-USD; times in epoch ms). */
export interface CreditRefund {
  id: string;
  wallet: string;
  amountMicro: number;
  status: RefundStatus;
  /** Set once `pending`. */
  tx?: RefundTx;
  /** Set when `restored`. */
  reason?: RefundReason;
  createdAtMs: number;
  updatedAtMs: number;
}

/** Spending caps in micro-USD; undefined = no cap. */
export interface SpendCaps {
  perCallMaxMicro?: number;
  perHourMaxMicro?: number;
  perDayMaxMicro?: number;
}

/** One wallet's credits. */
export interface CreditAccount {
  wallet: string;
  /** Spendable now (credited − spent − open holds − refunded, pending refunds included). */
  balanceMicro: number;
  /** Held by calls in flight (open holds): debited when they are answered, returned otherwise or when they expire. */
  heldMicro: number;
  /** Taken into a refund whose transfer is not confirmed yet (see {@link CreditRefund}). */
  refundPendingMicro: number;
  /** Everything ever credited. */
  creditedMicro: number;
  /** Everything ever debited (committed holds). */
  spentMicro: number;
  /** The wallet's own caps. */
  caps: SpendCaps;
}

/** Why a reservation was refused. */
export type ReserveRefusal = "insufficient_balance" | "cap_per_call" | "cap_per_hour" | "cap_per_day";

/** The result of {@link CreditLedger.reserve}. */
export type ReserveOutcome =
  | { ok: true; holdId: string; balanceMicro: number }
  | { ok: false; reason: ReserveRefusal; balanceMicro: number; /** The cap that refused it (micro-USD), for cap refusals. */ limitMicro?: number };

/** USD decimal string ("0.005") to micro-USD. @throws RangeError for more than 6 decimals or a non-decimal. */
export function usdToMicro(usd: string): number {
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  if (!m) throw new RangeError(`not a USD amount with at most 6 decimals: ${usd}`);
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(6, "0"));
}

/** Micro-USD to a USD decimal string without trailing zeros ("0.005", "5"). */
export function microToUsd(micro: number): string {
  const sign = micro < 0 ? "-" : "";
  const a = Math.abs(micro);
  const frac = String(a % 1_000_000)
    .padStart(6, "0")
    .replace(/0+$/, "");
  return `${sign}${Math.floor(a / 1_000_000)}${frac ? `.${frac}` : ""}`;
}
