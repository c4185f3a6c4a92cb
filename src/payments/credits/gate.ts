import { AppError } from "../../errors.js";
import { logger } from "../../lib/log.js";
import type { Metrics } from "../../core/metrics.js";
import type { AnyTool } from "../../registry/tool.js";
import type { PaymentLedger } from "../ledger.js";
import type { PaymentRequest, VerifiedPayment } from "../processor.js";
import { microToUsd, usdToMicro, type CreditLedger, type ReserveOutcome, type ReserveRefusal, type SpendCaps } from "./ledger.js";
import type { CreditSessions } from "./session.js";
import { isSiwxRefusal, type SiwxIdentity, type SiwxRefusal, type SiwxVerifier } from "./siwx.js";

/** Operator settings of prepaid credits. */
export interface CreditSettings {
  /** Smallest and largest top-up, decimal USD (defaults 0.10 and 100). */
  minTopUpUsd: string;
  maxTopUpUsd: string;
  /** Per-wallet caps the operator sets for every wallet (on top of each wallet's own). */
  globalCaps: SpendCaps;
  /** `CREDITS_REFUND=on`: a wallet may ask for its unspent balance back (signed request). */
  refund: boolean;
}

/** The outcome of paying one call from credits. */
export type CreditCheck =
  /** The proof or the balance does not pay for this call: answer the normal 402 with this reason. */
  | { kind: "refused"; reason: string }
  /** The same SIWX `requestId` already bought this very request: its stored answer, no new debit. */
  | { kind: "replay"; wallet: string; value: unknown; remainingMicro: number; session?: string }
  /**
   * Reserved: run the handler, then `payment.settle` (debit) or `payment.abandon` (nothing debited).
   * `session`: a fresh session token when a SIWX proof verified (send it back to the client).
   */
  | { kind: "verified"; wallet: string; payment: VerifiedPayment; remainingMicro: number; session?: string };

/** What a request presents to pay from credits: a SIWX proof, or a session token minted from an earlier one. */
export interface CreditProof {
  /** `SIGN-IN-WITH-X` header value or decoded payload. */
  siwx?: unknown;
  /** `X-Credits-Session` token. */
  session?: unknown;
}

const REFUSALS: Record<ReserveRefusal, string> = {
  insufficient_balance: "credits_insufficient_balance",
  cap_per_call: "credits_cap_per_call",
  cap_per_hour: "credits_cap_per_hour",
  cap_per_day: "credits_cap_per_day",
};

/** The 402 reason of a refused reservation: the code, then what to do. */
function refusalReason(hold: Extract<ReserveOutcome, { ok: false }>, priceUsd: string, remedy: string): string {
  const detail =
    hold.reason === "insufficient_balance"
      ? `balance ${microToUsd(hold.balanceMicro)} USD is below the price ${priceUsd} USD; ${remedy}`
      : `the charge would exceed the ${hold.reason.slice(4).replace("_", "-")} cap of ${microToUsd(hold.limitMicro ?? 0)} USD`;
  return `${REFUSALS[hold.reason]}: ${detail}`;
}

/** The outcome of {@link CreditGate.debit}. */
export type DebitOutcome = { ok: true; remainingMicro: number } | { ok: false; reason: string };

/**
 * Prepaid credits as a payment method beside x402 and MPP, for every transport: a request proves its
 * wallet with Sign-In-With-X and its price is reserved from the wallet's balance before the handler
 * runs, atomically with the caps (so N concurrent calls against a balance for K are served K times),
 * debited when the answer is released, and returned when the handler fails or the answer is not
 * charged. No chain transaction. An EIP-4361 `requestId` makes retries idempotent like x402's
 * `payment-identifier`: the same id for the same request returns the stored answer without a second
 * debit (409 for another request).
 */
export class CreditGate {
  /**
   * @param topUpTool the registry's top-up tool: its requirements (at the minimum top-up) go in the 402 of
   *   sign-in-only requests.
   */
  constructor(
    readonly ledger: CreditLedger,
    readonly siwx: SiwxVerifier,
    private readonly idempotency: PaymentLedger,
    readonly settings: CreditSettings,
    readonly topUpTool: AnyTool,
    private readonly metrics?: Metrics,
    private readonly walletLimiter?: { consume(key: string): Promise<unknown> },
    readonly sessions?: CreditSessions,
  ) {}

  /** Verifies a SIWX proof for `origin` (see {@link SiwxVerifier.verify}). */
  authenticate(proof: unknown, origin: string): Promise<SiwxIdentity | SiwxRefusal> {
    return this.siwx.verify(proof, origin);
  }

  /**
   * Debits `priceUsd` from `wallet` now, for a metered service (a stream-minute): reserved atomically with
   * the caps and the balance, then committed with `label` (the debit log's and the metric's tool name).
   * A refusal is `{ ok: false, reason }` (the 402 reason); nothing is debited then.
   * @throws when the ledger is unreachable (nothing debited; a hold left by a failed commit is swept back).
   */
  async debit(wallet: string, priceUsd: string, label: string): Promise<DebitOutcome> {
    const priceMicro = usdToMicro(priceUsd);
    const hold = await this.ledger.reserve(wallet, priceMicro, { globalCaps: this.settings.globalCaps });
    if (!hold.ok) return { ok: false, reason: refusalReason(hold, priceUsd, "top up with POST /api/v1/credits") };
    if (await this.commit(hold.holdId, wallet, label)) this.metrics?.creditsSpentUsd.inc({ tool: label }, priceMicro / 1e6);
    return { ok: true, remainingMicro: hold.balanceMicro };
  }

  /**
   * Commits a hold; false (logged) when it had expired and gone back to the balance before the call was
   * answered: the call is then not charged (a hold outlives the request deadline by a minute, see service.ts).
   */
  private async commit(holdId: string, wallet: string, tool: string): Promise<boolean> {
    const committed = await this.ledger.commit(holdId, { tool });
    if (!committed) logger.warn({ wallet, tool }, "credit hold expired before its call was answered; the call is not charged");
    return committed;
  }

  /**
   * Pays request `r` from the credits of the wallet that signed `proof`.
   * @throws AppError RATE_LIMITED over the per-wallet limit; CONFLICT when the proof's `requestId` was
   *   used for another request or is in flight;
   *   UPSTREAM_UNAVAILABLE when the ledger is unreachable (nothing debited).
   */
  async check(r: PaymentRequest, proof: CreditProof, origin: string): Promise<CreditCheck> {
    if (r.tool.priceOf) return { kind: "refused", reason: "credits_not_accepted: top-ups are paid with x402 or MPP" };
    let id: SiwxIdentity | SiwxRefusal;
    let session: string | undefined;
    if (proof.session !== undefined && this.sessions) {
      id = this.sessions.verify(proof.session, origin);
    } else {
      id = await this.siwx.verify(proof.siwx, origin);
      if (!isSiwxRefusal(id)) session = this.sessions?.mint(id.wallet, origin);
    }
    if (isSiwxRefusal(id)) return { kind: "refused", reason: id.refusal };
    const { wallet } = id;
    // Credit-paid calls are limited per wallet as well as per client address (429 before any debit).
    await this.walletLimiter?.consume(`wallet:${wallet}`);
    const idKey = id.requestId ? `credits:${wallet}:${id.requestId}` : undefined;
    if (idKey) {
      // Claimed atomically: of concurrent calls with one requestId, exactly one reserves and runs.
      const rec = await this.idempotency.claimIdempotent(idKey, { fingerprint: r.fingerprint });
      if (rec && rec.fingerprint !== r.fingerprint) throw new AppError("CONFLICT", "this SIWX requestId was already used for a different request");
      if (rec?.result) return { kind: "replay", wallet, value: rec.result.value, remainingMicro: (await this.ledger.account(wallet)).balanceMicro, session };
      if (rec) throw new AppError("CONFLICT", "a request with this SIWX requestId is still in progress; retry shortly", { retryAfterSec: 2 });
    }
    const priceMicro = usdToMicro(r.priceUsd);
    const hold = await this.ledger.reserve(wallet, priceMicro, { globalCaps: this.settings.globalCaps }).catch(async (err: unknown) => {
      if (idKey) await this.idempotency.releaseIdempotent(idKey).catch(() => undefined);
      throw err;
    });
    if (!hold.ok) {
      if (idKey) await this.idempotency.releaseIdempotent(idKey).catch(() => undefined);
      return { kind: "refused", reason: refusalReason(hold, r.priceUsd, "top up with POST /api/v1/credits or pay this call with x402") };
    }
    const receipt = { success: true, transaction: "", network: "credits" as `${string}:${string}`, payer: wallet, amount: String(priceMicro) };
    const release = () => {
      void this.ledger.release(hold.holdId).catch((err: unknown) => logger.error({ err }, "credit hold release failed; the sweep returns it"));
      if (idKey) void this.idempotency.releaseIdempotent(idKey).catch(() => undefined);
    };
    return {
      kind: "verified",
      wallet,
      session,
      remainingMicro: hold.balanceMicro,
      payment: {
        payer: wallet,
        settle: async (value) => {
          if (await this.commit(hold.holdId, wallet, r.tool.name)) this.metrics?.creditsSpentUsd.inc({ tool: r.tool.name }, priceMicro / 1e6);
          if (idKey) await this.idempotency.setIdempotent(idKey, { fingerprint: r.fingerprint, result: { value, receipt } }).catch(() => undefined);
          return { kind: "settled", receipt };
        },
        abandon: release,
      },
    };
  }
}
