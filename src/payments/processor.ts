import type { PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse } from "@x402/core/types";
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import type { Address, Hex } from "viem";
import { AppError, toAppError } from "../errors.js";
import { logger } from "../lib/log.js";
import type { AnyTool } from "../registry/tool.js";
import type { AuthorizationReader } from "./chain.js";
import type { AuthorizationState, PaymentLedger, PrepaidState } from "./ledger.js";
import type { PaymentCatalog } from "./x402.js";

/** Extensions every 402 declares: clients may send an idempotency key (`payment-identifier`, optional). */
const DECLARED_EXTENSIONS = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };

/** The outcome of checking a request's payment before the handler runs. */
export type PaymentCheck =
  /** No payment, or a payment that cannot be accepted: answer 402 with this object. */
  | { kind: "required"; required: PaymentRequired }
  /** The payment identifier was already used for this very request: answer with the stored result, no new charge. */
  | { kind: "replay"; value: unknown; receipt: SettleResponse }
  /** A pending settlement of this authorization turned out confirmed: answer with its stored result, once. */
  | { kind: "confirmed"; value: unknown; receipt: SettleResponse }
  /** Payment verified (and, for upfront tools, already settled): run the handler, then `settle`. */
  | { kind: "verified"; payment: VerifiedPayment };

/** The outcome of settling after the handler succeeded. */
export type SettleResult =
  | { kind: "settled"; receipt: SettleResponse }
  /** Settlement refused: withhold the data and answer 402. */
  | { kind: "failed"; required: PaymentRequired }
  /** Outcome unknown after reconciliation: withhold the data, keep it for a retry with the same authorization. */
  | { kind: "unknown"; retryAfterSec: number };

/** A verified payment, owned by one request. */
export interface VerifiedPayment {
  payer?: string;
  /** Settles (or, for upfront tools, confirms the earlier settlement) and records `value` as the paid answer. */
  settle(value: unknown): Promise<SettleResult>;
  /** The handler failed: free the authorization and the payment identifier (nothing was charged). */
  abandon(): void;
}

/** Options of {@link PaymentProcessor}. */
export interface ProcessorOptions {
  /** Reads EIP-3009 state on chain to reconcile unknown settlement outcomes; without it, reconciliation re-asks the facilitator. */
  chain?: AuthorizationReader;
  /** How long to poll the chain for an unknown settlement before answering "unknown". Default 15 s. */
  reconcileWindowMs?: number;
  /** Poll interval while reconciling. Default 500 ms. */
  reconcilePollMs?: number;
}

/** The EIP-3009 authorization inside an `exact` EVM payload. */
interface Authorization {
  from: Address;
  nonce: Hex;
  validBefore: string;
}

/** One settlement of one authorization: what settling, reconciling and releasing it need. */
interface SettleAttempt {
  tool: AnyTool;
  resource: ResourceInfo;
  /** Ledger key of the authorization (network, asset, payer, nonce). */
  key: string;
  /** Ledger key of the request's payment identifier, when it sent one. */
  idKey?: string;
  payload: PaymentPayload;
  match: PaymentRequirements;
  auth: Authorization;
}

function authorizationOf(payload: PaymentPayload): Authorization | undefined {
  const a = (payload.payload as { authorization?: Partial<Authorization> }).authorization;
  if (!a?.from || !a.nonce || !a.validBefore) return undefined;
  return { from: a.from, nonce: a.nonce, validBefore: a.validBefore };
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

/** Facilitator reasons meaning the authorization is already used on chain. */
const NONCE_USED = /nonce_already_used|authorization_used|already used/i;

/**
 * x402 payments, exactly once, for every transport (HTTP, MCP, MPP's EVM method), on the official
 * `x402ResourceServer`:
 * - one authorization (payer + nonce) runs the handler at most once, even when sent on many concurrent
 *   requests: it is claimed before verification, and concurrent or later uses are refused locally;
 * - a settlement whose outcome is unknown (timeout, lost answer) is reconciled on chain before answering;
 *   the answer is held and released once, to the first request that finds the transfer confirmed;
 * - a client's `payment-identifier` makes retries idempotent: the same identifier with the same request
 *   returns the stored answer without a second charge (409 if reused for another request);
 * - tools that create state settle before the handler runs (x402 `upfront`), so a failed settlement
 *   leaves nothing behind.
 */
export class PaymentProcessor {
  private readonly reconcileWindowMs: number;
  private readonly reconcilePollMs: number;

  constructor(
    readonly catalog: PaymentCatalog,
    private readonly ledger: PaymentLedger,
    private readonly opts: ProcessorOptions = {},
  ) {
    this.reconcileWindowMs = opts.reconcileWindowMs ?? 15_000;
    this.reconcilePollMs = opts.reconcilePollMs ?? 500;
  }

  /** The PaymentRequired a request for `tool` gets (what a 402 carries). */
  async paymentRequired(tool: AnyTool, resource: ResourceInfo, error?: string, payload?: PaymentPayload): Promise<PaymentRequired> {
    const accepts = await this.catalog.requirements(tool);
    const rs = this.catalog.resourceServer;
    const extensions = rs.enrichExtensions(DECLARED_EXTENSIONS, undefined);
    return rs.createPaymentRequiredResponse(accepts, resource, error, extensions, undefined, payload);
  }

  private authKey(r: PaymentRequirements, a: Authorization): string {
    return `${r.network}:${r.asset.toLowerCase()}:${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`;
  }

  /**
   * Checks a request's payment before the handler runs.
   * @param fingerprint tool + canonical input of the request (binds a payment identifier to one request).
   * @throws AppError CONFLICT when a payment identifier is reused for a different request or is still in
   *   flight; facilitator errors propagate (the caller answers 503, nothing was charged).
   */
  async check(tool: AnyTool, payload: PaymentPayload | undefined, resource: ResourceInfo, fingerprint: string): Promise<PaymentCheck> {
    const rs = this.catalog.resourceServer;
    const required = async (error: string) => ({ kind: "required" as const, required: await this.paymentRequired(tool, resource, error, payload) });
    if (!payload) return required("Payment required");

    const accepts = await this.catalog.requirements(tool);
    const match = rs.findMatchingRequirements(accepts, payload);
    const auth = authorizationOf(payload);
    if (!match || !auth) return required("No matching payment requirements");

    const { id, validation } = extractAndValidatePaymentIdentifier(payload);
    if (!validation.valid) return required(`invalid_payment_identifier: ${(validation.errors ?? []).join("; ")}`);
    const idKey = id ? `${auth.from.toLowerCase()}:${id}` : undefined;
    if (idKey) {
      const rec = await this.ledger.idempotent(idKey);
      if (rec && rec.fingerprint !== fingerprint) {
        throw new AppError("CONFLICT", "this payment identifier was already used for a different request");
      }
      if (rec?.result) return { kind: "replay", value: rec.result.value, receipt: rec.result.receipt };
      if (rec) throw new AppError("CONFLICT", "a request with this payment identifier is still in progress; retry shortly", { retryAfterSec: 2 });
    }

    const key = this.authKey(match, auth);
    const blocked = await this.ledger.claim(key);
    if (blocked?.state === "pending") return this.resumePending(key, blocked, tool, resource);
    if (blocked?.state === "prepaid") {
      const owed = await this.ledger.takePrepaid(key, fingerprint);
      if (owed) return { kind: "verified", payment: this.prepaidRun(key, idKey, fingerprint, auth.from, owed) };
      return required(blocked.fingerprint === fingerprint ? "authorization_in_use" : "invalid_exact_evm_nonce_already_used");
    }
    if (blocked) return required(blocked.state === "settled" ? "invalid_exact_evm_nonce_already_used" : "authorization_in_use");
    if (idKey) await this.ledger.setIdempotent(idKey, { fingerprint });

    const attempt: SettleAttempt = { tool, resource, key, idKey, payload, match, auth };
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
    if (tool.paymentFlow === "upfront") {
      // State-creating tools: the charge must be final before anything is created.
      const pre = await settleNow();
      if (pre.kind === "failed") return { kind: "required", required: pre.required };
      if (pre.kind === "unknown") throw new AppError("UPSTREAM_ERROR", "payment settlement could not be confirmed; nothing was created", { retryAfterSec: pre.retryAfterSec });
      return {
        kind: "verified",
        payment: {
          payer: verified.payer,
          settle: async (value) => {
            if (idKey) await this.ledger.setIdempotent(idKey, { fingerprint, result: { value, receipt: pre.receipt } });
            return pre;
          },
          abandon: () => void this.owe(key, idKey, { state: "prepaid", fingerprint, receipt: pre.receipt }),
        },
      };
    }
    return {
      kind: "verified",
      payment: {
        payer: verified.payer,
        settle: async (value) => {
          const r = await settleNow();
          if (r.kind === "settled" && idKey) await this.ledger.setIdempotent(idKey, { fingerprint, result: { value, receipt: r.receipt } });
          if (r.kind === "unknown") await this.ledger.set(key, { state: "pending", value, payload, requirements: match });
          return r;
        },
        abandon: () => void release(),
      },
    };
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

  /** The owed run of a prepaid authorization: no settlement (it is settled), owed again if it fails again. */
  private prepaidRun(key: string, idKey: string | undefined, fingerprint: string, payer: string, owed: PrepaidState): VerifiedPayment {
    return {
      payer,
      settle: async (value) => {
        await this.setSettled(key, owed.receipt);
        if (idKey) await this.ledger.setIdempotent(idKey, { fingerprint, result: { value, receipt: owed.receipt } });
        return { kind: "settled", receipt: owed.receipt };
      },
      abandon: () => void this.owe(key, idKey, owed),
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

  /** {@link release}, then the 402 a retry needs. */
  private async fail(a: SettleAttempt, reason: string): Promise<SettleResult> {
    await this.release(a);
    return { kind: "failed", required: await this.paymentRequired(a.tool, a.resource, reason, a.payload) };
  }

  /** Settles once; an exception or a `settlement_pending` answer is an unknown outcome and is reconciled. */
  private async settle(a: SettleAttempt): Promise<SettleResult> {
    const { tool, key, payload, match } = a;
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
    return this.reconcile(a);
  }

  /**
   * Decides an unknown settlement: polls `authorizationState` until the transfer shows up (settled), the
   * authorization expires unused (failed, nothing charged), or the window ends (unknown).
   */
  private async reconcile(a: SettleAttempt): Promise<SettleResult> {
    const { key, match, auth } = a;
    const chain = this.opts.chain;
    const settledReceipt = async (): Promise<SettleResponse> => {
      const transaction = chain ? ((await chain.transactionOf(match.asset as Address, auth.from, auth.nonce).catch(() => undefined)) ?? "") : "";
      return { success: true, transaction, network: match.network, payer: auth.from, amount: match.amount };
    };
    const deadline = Date.now() + this.reconcileWindowMs;
    while (chain) {
      try {
        if (await chain.used(match.asset as Address, auth.from, auth.nonce)) {
          const receipt = await settledReceipt();
          await this.setSettled(key, receipt);
          return { kind: "settled", receipt };
        }
      } catch (err) {
        logger.warn({ err }, "reconciliation read failed");
      }
      if (Date.now() / 1000 > Number(auth.validBefore)) {
        // Expired and never used: it can no longer move funds.
        return this.fail(a, "settlement_failed_authorization_expired");
      }
      if (Date.now() >= deadline) break;
      await sleep(this.reconcilePollMs);
    }
    return { kind: "unknown", retryAfterSec: 5 };
  }

  /**
   * A retry with an authorization whose settlement was left unknown: reconcile again; if the transfer
   * landed, hand out the stored answer (once). Without a chain reader, settling again tells: success, or
   * "nonce already used" (our earlier broadcast landed).
   */
  private async resumePending(
    key: string,
    pending: Extract<AuthorizationState, { state: "pending" }>,
    tool: AnyTool,
    resource: ResourceInfo,
  ): Promise<PaymentCheck> {
    const auth = authorizationOf(pending.payload)!;
    let outcome: SettleResult;
    if (this.opts.chain) {
      outcome = await this.reconcile({ tool, resource, key, payload: pending.payload, match: pending.requirements, auth });
    } else {
      const r = await this.catalog.resourceServer.settlePayment(pending.payload, pending.requirements).catch(() => undefined);
      if (r?.success || (r && NONCE_USED.test(`${r.errorReason} ${r.errorMessage ?? ""}`))) {
        const receipt: SettleResponse = r.success ? r : { success: true, transaction: "", network: pending.requirements.network, payer: auth.from };
        await this.setSettled(key, receipt);
        outcome = { kind: "settled", receipt };
      } else {
        outcome = { kind: "unknown", retryAfterSec: 5 };
      }
    }
    if (outcome.kind === "settled") return { kind: "confirmed", value: pending.value, receipt: outcome.receipt };
    if (outcome.kind === "failed") return { kind: "required", required: outcome.required };
    await this.ledger.set(key, pending);
    throw new AppError("UPSTREAM_ERROR", "the settlement of this payment is still unconfirmed; retry shortly", { retryAfterSec: outcome.retryAfterSec });
  }
}
