import { AppError } from "../../errors.js";
import { logger } from "../../lib/log.js";
import type { Metrics } from "../../core/metrics.js";
import type { AnyTool } from "../../registry/tool.js";
import { bindingOf, isBoundTo, type PaymentLedger } from "../ledger.js";
import type { CreditCheck, DebitOutcome, PaymentRequest } from "../outcomes.js";
import { microToUsd, usdToMicro, type CreditLedger, type ReserveOutcome, type ReserveRefusal } from "./ledger.js";
import type { CreditSessions } from "./session.js";
import { isSiwxRefusal, type SiwxIdentity, type SiwxRefusal, type SiwxVerifier } from "./siwx.js";
import type { CreditSettings } from "./types.js";

/** What a request presents to pay from credits: a SIWX proof, or a session token minted from an earlier one. */
export interface CreditProof {
  /** `SIGN-IN-WITH-X` header value or decoded payload. */
  siwx?: unknown;
  /** `X-Credits-Session` token. */
  session?: unknown;
}

/** A wallet that proved itself (see {@link CreditGate.signIn}). */
export interface SignedIn extends SiwxIdentity {
  /** A fresh session token, minted when a SIWX proof verified (not for a session token; sessions off: none). */
  session?: string;
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

  /**
   * The wallet a request proves, for `origin`: a credits session token when it carries one and sessions
   * are on, else its SIWX proof (verified, its nonce spent; a fresh session token is minted for it). Every
   * sign-in (credit-paid calls, `siwx` tools, SSE and WebSocket streams, `/mcp/live`) goes through here.
   * @returns the wallet, or the refusal (the 402's reason). Rejects only when the nonce store is
   *   unreachable (see {@link SiwxVerifier.verify}).
   */
  async signIn(proof: CreditProof, origin: string): Promise<SignedIn | SiwxRefusal> {
    if (proof.session !== undefined && this.sessions) return this.sessions.verify(proof.session, origin);
    const id = await this.siwx.verify(proof.siwx, origin);
    if (isSiwxRefusal(id)) return id;
    const session = this.sessions?.mint(id.wallet, origin);
    return session ? { ...id, session } : id;
  }

  /**
   * Debits `priceUsd` from `wallet` now, for a metered service (a stream-minute): reserved atomically with
   * the caps and the balance, then committed with `label` (the debit log's and the metric's tool name).
   * A refusal is `payment_required` with the 402's reason; nothing is debited then.
   * @throws when the ledger is unreachable (nothing debited; a hold left by a failed commit is swept back).
   */
  async debit(wallet: string, priceUsd: string, label: string): Promise<DebitOutcome> {
    const priceMicro = usdToMicro(priceUsd);
    const hold = await this.ledger.reserve(wallet, priceMicro, { globalCaps: this.settings.globalCaps });
    if (!hold.ok) return { kind: "payment_required", reason: refusalReason(hold, priceUsd, "top up with POST /api/v1/credits") };
    if (await this.commit(hold.holdId, wallet, label)) this.metrics?.creditsSpentUsd.inc({ tool: label }, priceMicro / 1e6);
    return { kind: "settled", remainingMicro: hold.balanceMicro };
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
    if (r.tool.priceOf) return { kind: "payment_required", reason: "credits_not_accepted: top-ups are paid with x402 or MPP" };
    const id = await this.signIn(proof, origin);
    if (isSiwxRefusal(id)) return { kind: "payment_required", reason: id.refusal };
    const { wallet, session } = id;
    // Credit-paid calls are limited per wallet as well as per client address (429 before any debit).
    await this.walletLimiter?.consume(`wallet:${wallet}`);
    const idKey = id.requestId ? `credits:${wallet}:${id.requestId}` : undefined;
    if (idKey) {
      // Claimed atomically: of concurrent calls with one requestId, exactly one reserves and runs.
      const rec = await this.idempotency.claimIdempotent(idKey, bindingOf(r));
      if (rec && !isBoundTo(rec, r)) throw new AppError("CONFLICT", "this SIWX requestId was already used for a different request");
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
      return { kind: "payment_required", reason: refusalReason(hold, r.priceUsd, "top up with POST /api/v1/credits or pay this call with x402") };
    }
    const receipt = { success: true, transaction: "", network: "credits" as `${string}:${string}`, payer: wallet, amount: String(priceMicro) };
    const release = async () => {
      await this.ledger.release(hold.holdId).catch((err: unknown) => logger.error({ err }, "credit hold release failed; the sweep returns it"));
      if (idKey) await this.idempotency.releaseIdempotent(idKey).catch(() => undefined);
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
          if (idKey) await this.idempotency.setIdempotent(idKey, { ...bindingOf(r), result: { value, receipt } }).catch(() => undefined);
          return { kind: "settled", receipt };
        },
        abandon: release,
      },
    };
  }
}
