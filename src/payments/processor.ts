import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import type { Address } from "viem";
import { discoveryExtensions, resourceMetadata } from "./bazaar.js";
import { AppError, toAppError } from "../errors.js";
import { logger } from "../lib/log.js";
import type { AnyTool } from "../registry/tool.js";
import type { AuthorizationReader } from "./chain.js";
import {
  bindingOf,
  isBoundTo,
  type AuthorizationState,
  type IdempotentRecord,
  type KeptAnswer,
  type PaymentLedger,
  type PendingState,
  type PrepaidState,
  type RequestBinding,
} from "./ledger.js";
import { checkPaymentPayload, isPayerOf, isRefusal, type Authorization, type CheckedPayload } from "./payload.js";
import type { PaymentCheck, PaymentRequest, SettleOutcome, VerifiedPayment } from "./outcomes.js";
import type { PaymentCatalog } from "./x402.js";

/**
 * Extensions every 402 declares: clients may send an idempotency key (`payment-identifier`, optional). Each
 * paid tool's 402 also declares x402 Bazaar discovery (`bazaar`, see src/payments/bazaar.ts). The identifier's
 * `schema` is the one of the extension's spec (an `id` of 16 to 128 characters), not the library's longer
 * one: the declaration travels in every 402's header block (http/header-budget.ts), clients read only
 * `info.required`, and the server checks the `id` itself (see {@link paymentIdentifierOf}).
 */
const DECLARED_EXTENSIONS = {
  [PAYMENT_IDENTIFIER]: {
    info: declarePaymentIdentifierExtension(false).info,
    schema: { type: "object", properties: { id: { type: "string", minLength: 16, maxLength: 128 } } },
  },
};

/** Options of {@link PaymentProcessor}. */
export interface ProcessorOptions {
  /** Reads EIP-3009 state on chain to reconcile unknown settlement outcomes; without it, reconciliation re-asks the facilitator. */
  chain?: AuthorizationReader;
  /** How long to poll the chain for an unknown settlement before answering "unknown". Default 15 s. */
  reconcileWindowMs?: number;
  /** Poll interval while reconciling. Default 500 ms. */
  reconcilePollMs?: number;
}

/**
 * How long past its reconciliation window a retry holds a pending settlement before another retry may
 * take it over (the holder crashed). A slower holder is harmless: it then loses its compare-and-set.
 */
const RECONCILE_LEASE_MARGIN_MS = 30_000;

/** What reading the chain (or asking the facilitator again) says about a settlement of unknown outcome. */
type Reconciled =
  | { kind: "settled"; receipt: SettleResponse }
  /** The authorization expired unused: it can no longer move funds. */
  | { kind: "expired" }
  | { kind: "unknown"; retryAfterSec: number };

/** One settlement of one authorization: what settling, reconciling and releasing it need. */
interface SettleAttempt {
  r: PaymentRequest;
  /** Ledger key of the authorization (network, asset, payer, nonce). */
  key: string;
  /** Ledger key of the request's payment identifier, when it sent one. */
  idKey?: string;
  /** Digest of the signed payload (see `checkPaymentPayload`). */
  digest: string;
  payload: PaymentPayload;
  match: PaymentRequirements;
  /** The EIP-3009 authorization (EVM only; undefined for a Solana transaction). */
  auth?: Authorization;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What the caller gets when the handler of a request settled upfront failed (see `owe`): the same code,
 * and how to get the run it paid for. Other tools' failures are not charged and pass through unchanged.
 */
export function handlerFailure(tool: AnyTool, err: unknown): unknown {
  if (tool.paymentFlow !== "upfront") return err;
  const e = toAppError(err);
  return new AppError(e.code, `${e.message} Your payment was settled before this failure: send the same request with the same payment again to complete it without a new charge.`, {
    details: e.details,
    retryAfterSec: e.retryAfterSec,
    cause: e,
  });
}

/** Marks a pending settlement of an upfront request: the value is the fingerprint of the run it owes. */
const OWED_RUN = "marketgate/owed-run";

/**
 * The request a pending settlement holds an answer (or owes a run) for. States written before answers were
 * bound carry no binding: an owed run's fingerprint is then in its value, and a held answer has none.
 */
function pendingBinding(p: PendingState): Partial<RequestBinding> {
  const owedFor = (p.value as Record<string, unknown> | null)?.[OWED_RUN];
  return { fingerprint: p.fingerprint ?? (typeof owedFor === "string" ? owedFor : undefined), target: p.target };
}

/**
 * The 409 of a retry that sends a payment (or payment identifier) already bound to another request. Nothing
 * is charged and the other request's answer stays held for it. The caller proved it holds the payer's
 * signature, so naming that request tells the payer only about its own purchase.
 */
function boundToAnother(what: string, target: string | undefined): AppError {
  const other = target ? `another request (${target})` : "another request";
  return new AppError(
    "CONFLICT",
    `${what} ${other}; nothing was charged for this one. Send that request again with it to receive its answer, or pay this request with a new payment`,
  );
}

/** The 402 reason when a stored answer is asked for with a payment that does not prove the payer. */
const NOT_THE_PAYER = "invalid_payload: this payment is already recorded with another signature; only the payer's own signed payment retrieves it";

/** Digest of a stored (already checked) payload. */
function digestOf(payload: PaymentPayload): string | undefined {
  const c = checkPaymentPayload(payload);
  return isRefusal(c) ? undefined : c.digest;
}

/**
 * The payment identifier of a payload (x402 `payment-identifier`), or the 402 reason when it is malformed.
 * The extension's `schema` is the client's echo of the one our 402 declares, so it is dropped before the
 * official validation: with it, the library compiles that caller-chosen schema with a new Ajv on every
 * request (about 18 ms of CPU per paid call). Without it, the library still checks all that our declared
 * schema says (`required` a boolean, `id` 16 to 128 characters of `[A-Za-z0-9_-]`).
 */
export function paymentIdentifierOf(payload: PaymentPayload): { id?: string } | { error: string } {
  try {
    const { id, validation } = extractAndValidatePaymentIdentifier(withoutEchoedSchema(payload));
    if (!validation.valid) return { error: `invalid_payment_identifier: ${(validation.errors ?? []).join("; ")}` };
    return { id: id ?? undefined };
  } catch {
    return { error: "invalid_payment_identifier: unreadable extension" };
  }
}

/** `payload` with the `schema` of its payment-identifier extension removed (see {@link paymentIdentifierOf}). */
function withoutEchoedSchema(payload: PaymentPayload): PaymentPayload {
  const ext = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (!ext || typeof ext !== "object" || !("schema" in ext)) return payload;
  const { schema: _echoed, ...declared } = ext as Record<string, unknown>;
  return { ...payload, extensions: { ...payload.extensions, [PAYMENT_IDENTIFIER]: declared } };
}

/** The 409 of a payment identifier whose request is still running. */
const IN_PROGRESS = () => new AppError("CONFLICT", "a request with this payment identifier is still in progress; retry shortly", { retryAfterSec: 2 });

/** The 402 reason when an authorization of unknown settlement expired unused (nothing was charged). */
const EXPIRED_UNUSED = "settlement_failed_authorization_expired";

/** Facilitator reasons meaning the authorization is already used on chain. */
const NONCE_USED = /nonce_already_used|authorization_used|already used/i;

/**
 * The 402 reason for a payment already settled here: the official scheme's own reason on each network
 * (EVM: the EIP-3009 nonce is used; Solana: the transaction was settled, `duplicate_settlement`).
 */
function alreadyUsed(network: string): string {
  return network.startsWith("solana:") ? "duplicate_settlement" : "invalid_exact_evm_nonce_already_used";
}

/**
 * x402 payments, exactly once, for every transport (HTTP, MCP, MPP's EVM method), on the official
 * `x402ResourceServer`:
 * - one authorization (payer + nonce) runs the handler at most once, even when sent on many concurrent
 *   requests: it is claimed before verification, and concurrent or later uses are refused locally;
 * - a settlement whose outcome is unknown (timeout, lost answer) is reconciled on chain before answering;
 *   the answer is held and released once, to the first request that finds the transfer confirmed;
 * - every change of state that decides who runs the handler or gets a stored answer is atomic in the
 *   ledger (claim, or compare-and-set from the state the request observed), so concurrent retries never
 *   both win; plain writes come only from the request that holds the state;
 * - a client's `payment-identifier` makes retries idempotent: the same identifier with the same request
 *   returns the stored answer without a second charge (409 if reused for another request);
 * - without one, the very same signed payment sent again for the same request gets its answer again for
 *   a while (`PaymentLedger.keepAnswer`), so an answer lost after the settlement (a proxy's 502, a dropped
 *   connection) is not paid twice;
 * - tools that create state settle before the handler runs (x402 `upfront`), so a failed settlement
 *   leaves nothing behind.
 */
export class PaymentProcessor {
  private readonly reconcileWindowMs: number;
  private readonly reconcilePollMs: number;

  constructor(
    readonly catalog: PaymentCatalog,
    /** Authorizations and payment identifiers (shared with the credits' `requestId`s). */
    readonly ledger: PaymentLedger,
    private readonly opts: ProcessorOptions = {},
  ) {
    this.reconcileWindowMs = opts.reconcileWindowMs ?? 15_000;
    this.reconcilePollMs = opts.reconcilePollMs ?? 500;
  }

  /** The PaymentRequired a request for `tool` gets (what a 402 carries). */
  async paymentRequired(r: PaymentRequest, error?: string, payload?: PaymentPayload): Promise<PaymentRequired> {
    const accepts = await this.catalog.requirements(r.tool, r.priceUsd);
    const rs = this.catalog.resourceServer;
    // Bazaar: enriched for this request (method, route template, path parameters) as the official
    // resource-server extension does; `resource` names the service, with its tags and icon.
    const extensions = { ...rs.enrichExtensions(DECLARED_EXTENSIONS, undefined), ...discoveryExtensions(r.tool, r.resource.url) };
    const resource = { ...r.resource, ...resourceMetadata(r.tool, r.resource.url) };
    return rs.createPaymentRequiredResponse(accepts, resource, error, extensions, undefined, payload);
  }

  /**
   * Ledger key of a payment: network, asset, payer and what makes it single-use (EVM: the EIP-3009 nonce;
   * Solana: the payer's transaction signature), so one payment is claimed once across every replica.
   */
  private authKey(r: PaymentRequirements, c: CheckedPayload): string {
    return `${r.network}:${r.asset.toLowerCase()}:${c.payer}:${c.nonce}`;
  }

  /**
   * Checks a request's payment before the handler runs. Nothing stored (an idempotent answer, a pending
   * settlement's answer, an owed run) is handed out before the request proves it holds the payer's
   * signature: the very same signed payload (compared by digest) or a new one that the facilitator verifies.
   * Every stored answer is bound to its request (`r.fingerprint` and `r.target`, see `PaymentRequest`).
   * @param raw the decoded payment payload as the client sent it (any shape; undefined when none was sent).
   * @returns the check's outcome (vocabulary: src/payments/outcomes.ts).
   * @throws AppError CONFLICT (nothing charged) when a payment identifier is reused for a different request
   *   or is still in flight, or when the payment's held answer or owed run belongs to another request;
   *   facilitator errors propagate (the caller answers 503, nothing was charged).
   */
  async check(r: PaymentRequest, raw: unknown): Promise<PaymentCheck> {
    const { tool } = r;
    const binding = bindingOf(r);
    const rs = this.catalog.resourceServer;
    const required = async (error: string, payload?: PaymentPayload) => ({ kind: "payment_required" as const, required: await this.paymentRequired(r, error, payload) });
    if (raw === undefined || raw === null) return required("Payment required");
    const checked = checkPaymentPayload(raw);
    if (isRefusal(checked)) return required(checked.reason);
    const { payload, auth, digest } = checked;

    const accepts = await this.catalog.requirements(tool, r.priceUsd);
    const match = rs.findMatchingRequirements(accepts, payload);
    if (!match) return required("No matching payment requirements", payload);

    const id = paymentIdentifierOf(payload);
    if ("error" in id) return required(id.error, payload);
    const idKey = id.id ? `${checked.payer}:${id.id}` : undefined;
    // What a request gets when its payment identifier is already recorded (the payer's answer, or 409).
    const recorded = async (rec: IdempotentRecord): Promise<PaymentCheck> => {
      if (!(await this.provenBy(rec.digest, checked, match))) return required(NOT_THE_PAYER, payload);
      if (!isBoundTo(rec, r)) throw boundToAnother("this payment identifier was already used for", rec.target);
      if (rec.result) return { kind: "replay", value: rec.result.value, receipt: rec.result.receipt };
      throw IN_PROGRESS();
    };
    // The same signed payload for the same request, not answered yet: its authorization's state decides
    // (a settlement left unknown is resumed below; one still running is in progress).
    let unanswered = false;
    if (idKey) {
      const rec = await this.ledger.idempotent(idKey);
      unanswered = rec !== undefined && !rec.result && rec.digest === digest && isBoundTo(rec, r);
      if (rec && !unanswered) return recorded(rec);
    }

    const key = this.authKey(match, checked);
    const blocked = await this.ledger.claim(key);
    if (blocked?.state === "pending") {
      // The stored answer goes only to the same signed payload (a used authorization cannot be re-verified).
      if (digestOf(blocked.payload) !== digest) return required(NOT_THE_PAYER, payload);
      // Held for its own request only: checked before reconciling, so another request changes nothing.
      if (!isBoundTo(pendingBinding(blocked), r)) throw boundToAnother("this payment's settlement is held for", blocked.target);
      return this.resumePending(key, idKey, blocked, r);
    }
    // Running (upfront tools are `settled` before their handler ends): the identifier's request is in progress.
    if (unanswered && (blocked?.state === "in_flight" || blocked?.state === "settled")) throw IN_PROGRESS();
    if (blocked?.state === "prepaid") {
      if (blocked.digest !== digest) return required(NOT_THE_PAYER, payload);
      if (!isBoundTo(blocked, r)) throw boundToAnother("this payment owes a run of", blocked.target);
      // Of concurrent retries, the one that swaps the observed state takes the owed run.
      if (await this.ledger.compareAndSet(key, blocked, { state: "in_flight" })) {
        return { kind: "verified", payment: this.prepaidRun(key, idKey, r, checked.from, blocked) };
      }
      return required("authorization_in_use", payload);
    }
    if (blocked?.state === "settled") {
      // The retry of a request whose answer was lost: its kept answer, to the very same signed payload for the
      // very same request only (another request gets the 402 of a used payment, as it always did).
      const kept = await this.ledger.keptAnswer(key);
      if (kept?.digest === digest && isBoundTo(kept, r)) return { kind: "replay", value: kept.value, receipt: kept.receipt };
    }
    if (blocked) return required(blocked.state === "settled" ? alreadyUsed(match.network) : "authorization_in_use", payload);
    if (idKey) {
      // Another authorization with the same identifier may have started meanwhile: exactly one runs.
      const raced = await this.ledger.claimIdempotent(idKey, { ...binding, digest });
      if (raced) {
        await this.ledger.release(key);
        return recorded(raced);
      }
    }

    const attempt: SettleAttempt = { r, key, idKey, digest, payload, match, auth };
    const release = () => this.release(attempt);
    let verified;
    try {
      verified = await rs.verifyPayment(payload, match);
    } catch (err) {
      await release();
      throw err;
    }
    if (!verified.isValid) {
      await release();
      return required(verified.invalidReason ?? "invalid_payment");
    }

    const settleNow = () => this.settle(attempt);
    // Held by this request (in_flight, then settled): plain writes below cannot race another request.
    if (tool.paymentFlow === "upfront") {
      // State-creating tools: the charge must be final before anything is created.
      const pre = await settleNow();
      if (pre.kind === "payment_required") return pre;
      if (pre.kind === "unknown") {
        // Reconciled on the retry with the same payment: once the transfer is confirmed, the run is owed.
        await this.ledger.set(key, { state: "pending", ...binding, value: { [OWED_RUN]: r.fingerprint }, payload, requirements: match });
        throw new AppError(
          "UPSTREAM_ERROR",
          "payment settlement could not be confirmed; nothing was created. Retry with the same payment: it runs once the transfer is confirmed, without a new charge",
          {
            retryAfterSec: pre.retryAfterSec,
          },
        );
      }
      return {
        kind: "verified",
        payment: {
          payer: verified.payer,
          reference: key,
          settle: async (value) => {
            if (idKey) await this.ledger.setIdempotent(idKey, { ...binding, digest, result: { value, receipt: pre.receipt } });
            await this.keep(key, { ...binding, digest, value, receipt: pre.receipt });
            return pre;
          },
          abandon: () => this.owe(key, idKey, { state: "prepaid", ...binding, digest, receipt: pre.receipt }),
        },
      };
    }
    return {
      kind: "verified",
      payment: {
        payer: verified.payer,
        settle: async (value) => {
          const outcome = await settleNow();
          if (outcome.kind === "settled" && idKey) await this.ledger.setIdempotent(idKey, { ...binding, digest, result: { value, receipt: outcome.receipt } });
          if (outcome.kind === "settled") await this.keep(key, { ...binding, digest, value, receipt: outcome.receipt });
          if (outcome.kind === "unknown") await this.ledger.set(key, { state: "pending", ...binding, value, payload, requirements: match });
          return outcome;
        },
        abandon: () => release(),
      },
    };
  }

  /**
   * Exactly-once for a payment this processor cannot verify itself (an MPP `tempo` credential, already
   * validated by mppx): the credential (`key`, a digest of it) is claimed in the same shared ledger as
   * x402 authorizations, so concurrent or later uses are refused (402) and it runs the handler once.
   * `settle` broadcasts it after the handler succeeded; a broadcast that throws leaves the outcome unknown
   * and frees the key, so that a retry with the same credential re-broadcasts the same transaction.
   */
  async checkExternal(r: PaymentRequest, key: string, settle: () => Promise<SettleResponse>): Promise<PaymentCheck> {
    const { tool } = r;
    const blocked = await this.ledger.claim(key);
    if (blocked) {
      const reason = blocked.state === "settled" ? "credential_already_used" : "authorization_in_use";
      return { kind: "payment_required", required: await this.paymentRequired(r, reason) };
    }
    const release = () => this.ledger.release(key).catch((err: unknown) => logger.error({ err }, "payment ledger release failed"));
    return {
      kind: "verified",
      payment: {
        settle: async (): Promise<SettleOutcome> => {
          try {
            const receipt = await settle();
            await this.setSettled(key, receipt);
            return { kind: "settled", receipt };
          } catch (err) {
            logger.warn({ err, tool: tool.name }, "external settlement failed; outcome unknown");
            await release();
            return { kind: "unknown", retryAfterSec: 5 };
          }
        },
        abandon: () => release(),
      },
    };
  }

  /**
   * Whether a request holds the signature behind a stored idempotent record: the same signed payload as
   * the one recorded (`digest`), or a new payload by the same payer that the facilitator verifies.
   */
  private async provenBy(digest: string | undefined, checked: CheckedPayload, match: PaymentRequirements): Promise<boolean> {
    if (digest !== undefined && digest === checked.digest) return true;
    const v = await this.catalog.resourceServer.verifyPayment(checked.payload, match);
    return v.isValid && isPayerOf(v.payer, checked);
  }

  /**
   * The handler of an upfront-settled request failed: the service owes one run of that request, which
   * the same authorization gets on a retry without a new charge (see `prepaidRun`).
   */
  private async owe(key: string, idKey: string | undefined, owed: PrepaidState): Promise<void> {
    logger.warn({ key }, "handler failed after an upfront settlement; a retry with the same payment runs it without a new charge");
    await this.ledger.set(key, owed).catch((err: unknown) => logger.error({ err, key }, "payment ledger could not record a prepaid run"));
    if (idKey) await this.ledger.releaseIdempotent(idKey).catch((err: unknown) => logger.error({ err }, "payment ledger release failed"));
  }

  /**
   * The owed run of a prepaid authorization, for request `r` (the one it is owed to): no settlement (it is
   * settled), owed again if it fails again.
   */
  private prepaidRun(key: string, idKey: string | undefined, r: PaymentRequest, payer: string, owed: PrepaidState): VerifiedPayment {
    return {
      payer,
      reference: key,
      settle: async (value) => {
        await this.setSettled(key, owed.receipt);
        if (idKey) await this.ledger.setIdempotent(idKey, { ...bindingOf(r), digest: owed.digest, result: { value, receipt: owed.receipt } });
        await this.keep(key, { ...bindingOf(r), digest: owed.digest, value, receipt: owed.receipt });
        return { kind: "settled", receipt: owed.receipt };
      },
      abandon: () => this.owe(key, idKey, owed),
    };
  }

  /** Frees an authorization (and its payment identifier) that did not and can no longer move funds. */
  private async release(a: SettleAttempt): Promise<void> {
    await this.ledger.release(a.key).catch((err: unknown) => logger.error({ err }, "payment ledger release failed"));
    if (a.idKey) await this.ledger.releaseIdempotent(a.idKey).catch((err: unknown) => logger.error({ err }, "payment ledger release failed"));
  }

  /**
   * Records a settled authorization. The money has moved, so a ledger outage must not turn the answer
   * into an error: it is logged, and the chain still refuses a replay of the authorization.
   */
  private async setSettled(key: string, receipt: SettleResponse): Promise<void> {
    await this.ledger.set(key, { state: "settled", receipt }).catch((err: unknown) => logger.error({ err, key }, "payment ledger could not record a settlement"));
  }

  /**
   * Keeps a settled payment's answer for a retry with the very same signed payment, whose first answer was
   * lost on its way (a proxy's 502, a dropped connection): see `PaymentLedger.keepAnswer`. The money has
   * moved, so a ledger failure is logged and the answer sent anyway.
   */
  private async keep(key: string, answer: KeptAnswer): Promise<void> {
    await this.ledger.keepAnswer(key, answer).catch((err: unknown) => logger.error({ err, key }, "payment ledger could not keep a paid answer"));
  }

  /** {@link release}, then the 402 a retry needs. */
  private async fail(a: SettleAttempt, reason: string): Promise<SettleOutcome> {
    await this.release(a);
    return { kind: "payment_required", required: await this.paymentRequired(a.r, reason, a.payload) };
  }

  /** Settles once; an exception or a `settlement_pending` answer is an unknown outcome and is reconciled. */
  private async settle(a: SettleAttempt): Promise<SettleOutcome> {
    const { key, payload, match } = a;
    const tool = a.r.tool;
    let receipt: SettleResponse | undefined;
    try {
      receipt = await this.catalog.resourceServer.settlePayment(payload, match);
    } catch (err) {
      logger.warn({ err, tool: tool.name }, "settlement outcome unknown; reconciling");
    }
    if (receipt?.success) {
      await this.setSettled(key, receipt);
      return { kind: "settled", receipt };
    }
    if (receipt && receipt.errorReason !== "settlement_pending") {
      // A definite refusal: the authorization was not used, so it may be retried (e.g. after funding the wallet).
      return this.fail(a, receipt.errorReason ?? "settlement_failed");
    }
    const outcome = await this.reconcile(match, a.auth);
    if (outcome.kind === "settled") await this.setSettled(key, outcome.receipt);
    if (outcome.kind === "expired") return this.fail(a, EXPIRED_UNUSED);
    return outcome;
  }

  /**
   * Decides an unknown settlement, writing nothing (the caller records the outcome): polls
   * `authorizationState` until the transfer shows up (settled), the authorization expires unused
   * (expired, nothing charged), or the window ends (unknown).
   */
  private async reconcile(match: PaymentRequirements, auth: Authorization | undefined): Promise<Reconciled> {
    const chain = this.opts.chain;
    // The chain reader reads EIP-3009 state: a Solana payment (no authorization) is left to `resettle` on its retry.
    if (!chain || !auth) return { kind: "unknown", retryAfterSec: 5 };
    const settledReceipt = async (): Promise<SettleResponse> => {
      const transaction = (await chain.transactionOf(match.asset as Address, auth.from, auth.nonce).catch(() => undefined)) ?? "";
      return { success: true, transaction, network: match.network, payer: auth.from, amount: match.amount };
    };
    const deadline = Date.now() + this.reconcileWindowMs;
    for (;;) {
      try {
        if (await chain.used(match.asset as Address, auth.from, auth.nonce)) return { kind: "settled", receipt: await settledReceipt() };
      } catch (err) {
        logger.warn({ err }, "reconciliation read failed");
      }
      // Expired and never used: it can no longer move funds.
      if (Date.now() / 1000 > Number(auth.validBefore)) return { kind: "expired" };
      if (Date.now() >= deadline) break;
      await sleep(this.reconcilePollMs);
    }
    return { kind: "unknown", retryAfterSec: 5 };
  }

  /**
   * Asks the facilitator again about a settlement left unknown (no chain reader): success, or "nonce
   * already used" (our earlier broadcast landed), means settled.
   */
  private async resettle(pending: PendingState, payer: string): Promise<Reconciled> {
    const res = await this.catalog.resourceServer.settlePayment(pending.payload, pending.requirements).catch(() => undefined);
    if (res?.success) return { kind: "settled", receipt: res };
    if (res && NONCE_USED.test(`${res.errorReason} ${res.errorMessage ?? ""}`)) {
      return { kind: "settled", receipt: { success: true, transaction: "", network: pending.requirements.network, payer } };
    }
    return { kind: "unknown", retryAfterSec: 5 };
  }

  /**
   * A retry of request `r` (the one the pending state is bound to: see `check`) with an authorization whose
   * settlement was left unknown: reconcile again; if the transfer landed, hand out the stored answer, or run
   * the owed upfront request, exactly once. Of concurrent
   * retries one reconciles: it swaps the observed `pending` state for one it holds (a lease, see
   * {@link PendingState.reconcilingUntilMs}) and every later change is a compare-and-set from the state it
   * holds; the others are refused as `authorization_in_use`, like any authorization in use.
   */
  private async resumePending(key: string, idKey: string | undefined, pending: PendingState, r: PaymentRequest): Promise<PaymentCheck> {
    const { auth, from, digest } = checkPaymentPayload(pending.payload) as CheckedPayload;
    const refused = async (reason: string): Promise<PaymentCheck> => ({ kind: "payment_required", required: await this.paymentRequired(r, reason, pending.payload) });
    if ((pending.reconcilingUntilMs ?? 0) > Date.now()) return refused("authorization_in_use");
    const { reconcilingUntilMs: _expired, ...unheld } = pending;
    const held: PendingState = { ...unheld, reconcilingUntilMs: Date.now() + this.reconcileWindowMs + RECONCILE_LEASE_MARGIN_MS };
    if (!(await this.ledger.compareAndSet(key, pending, held))) return refused("authorization_in_use");
    // From here every write is a compare-and-set from `held`: losing one means another retry took over.
    const swap = (next: AuthorizationState | undefined) => this.ledger.compareAndSet(key, held, next);

    const outcome = this.opts.chain && auth ? await this.reconcile(pending.requirements, auth) : await this.resettle(pending, from);
    if (outcome.kind === "unknown") {
      if (!(await swap(unheld))) return refused("authorization_in_use");
      throw new AppError("UPSTREAM_ERROR", "the settlement of this payment is still unconfirmed; retry shortly", { retryAfterSec: outcome.retryAfterSec });
    }
    if (outcome.kind === "expired") {
      if (!(await swap(undefined))) return refused("authorization_in_use");
      // Nothing was charged: the authorization and its payment identifier are forgotten.
      if (idKey) await this.ledger.releaseIdempotent(idKey).catch((err: unknown) => logger.error({ err }, "payment ledger release failed"));
      return refused(EXPIRED_UNUSED);
    }
    const owedFor = (pending.value as Record<string, unknown> | null)?.[OWED_RUN];
    if (typeof owedFor !== "string") {
      if (!(await swap({ state: "settled", receipt: outcome.receipt }))) return refused("authorization_in_use");
      if (idKey) await this.ledger.setIdempotent(idKey, { ...bindingOf(r), digest, result: { value: pending.value, receipt: outcome.receipt } });
      await this.keep(key, { ...bindingOf(r), digest, value: pending.value, receipt: outcome.receipt });
      return { kind: "replay", value: pending.value, receipt: outcome.receipt };
    }
    // An upfront request whose charge is now confirmed: run it once, for the request it paid for (this one).
    const owed: PrepaidState = { state: "prepaid", ...bindingOf(r), digest, receipt: outcome.receipt };
    if (!(await swap({ state: "in_flight" }))) return refused("authorization_in_use");
    return { kind: "verified", payment: this.prepaidRun(key, idKey, r, from, owed) };
  }
}
