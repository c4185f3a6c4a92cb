/**
 * Prepaid credits: the balances of wallets that topped up with one x402 payment and then spend without a
 * chain transaction per call. Amounts are integers in micro-USD (1 USDC = 1 USD = 1,000,000), so sums
 * are exact. Wallets are lower-case 0x addresses.
 *
 * Exactly once: a call reserves its price (a hold) before its handler runs, atomically with the balance
 * and cap checks; the hold becomes a debit when the answer is released (`commit`), or goes back to the
 * balance when the handler fails or the answer is not charged (`release`). A hold whose process died is
 * returned by `sweep`. Two implementations share this contract: {@link SqliteCreditLedger} (embedded,
 * survives `kill -9`) and {@link RedisCreditLedger} (replicas; every step is one Lua script).
 */
export interface CreditLedger {
  /**
   * Credits `amountMicro` to `wallet`, once per `reference` (the settled authorization's ledger key): a
   * second call with the same reference changes nothing and answers `credited: false`.
   */
  credit(wallet: string, amountMicro: number, reference: string): Promise<{ credited: boolean; account: CreditAccount }>;
  /** The wallet's account (all zero, no caps, for a wallet never seen). */
  account(wallet: string): Promise<CreditAccount>;
  /**
   * Atomically checks the caps (the wallet's own, then `globalCaps`; hour and day windows count committed
   * debits and open holds of the last 3,600 s / 86,400 s before `nowMs`) and the balance, and reserves
   * `amountMicro` as a hold that no concurrent call can spend again.
   */
  reserve(wallet: string, amountMicro: number, opts: { globalCaps: SpendCaps; nowMs?: number }): Promise<ReserveOutcome>;
  /** Makes a hold a debit (adds it to `spentMicro` and the debit log with `tool`). Idempotent; unknown ids are ignored. */
  commit(holdId: string, meta: { tool: string }): Promise<void>;
  /** Returns a hold to the balance (nothing was served). Idempotent; unknown or committed ids are ignored. */
  release(holdId: string): Promise<void>;
  /** Releases every hold older than `olderThanMs` (its request died); returns how many. */
  sweep(olderThanMs: number, nowMs?: number): Promise<number>;
  /** Replaces the wallet's own caps (a field left undefined removes that cap). */
  setCaps(wallet: string, caps: SpendCaps): Promise<CreditAccount>;
  /** Atomically takes the whole balance for a refund (0 when empty); `restoreRefund` puts it back if the transfer failed. */
  takeForRefund(wallet: string): Promise<number>;
  /** Puts back an amount taken by `takeForRefund` whose transfer did not happen. */
  restoreRefund(wallet: string, amountMicro: number): Promise<void>;
  /** Claims a SIWX nonce once for `ttlMs` (true the first time, false for a replay), atomically across replicas. */
  claimNonce(nonce: string, ttlMs: number, nowMs?: number): Promise<boolean>;
  /** Service-wide sums for `/metrics`: everything credited, spent (committed) and outstanding (balances + holds). */
  totals(): Promise<{ creditedMicro: number; spentMicro: number; outstandingMicro: number }>;
  close(): Promise<void>;
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
  /** Spendable now (credited − spent − open holds − refunded). */
  balanceMicro: number;
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
  const frac = String(a % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return `${sign}${Math.floor(a / 1_000_000)}${frac ? `.${frac}` : ""}`;
}
