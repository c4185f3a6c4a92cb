import type { PaymentRequired, ResourceInfo, SettleResponse } from "@x402/core/types";
import type { SignedReceipt } from "@x402/extensions/offer-receipt";
import { AppError, toAppError } from "../errors.js";
import { logger } from "../lib/log.js";
import type { CreditGate, CreditProof } from "../payments/credits/gate.js";
import { microToUsd } from "../payments/credits/ledger.js";
import { isSiwxRefusal, withSiwxChallenge } from "../payments/credits/siwx.js";
import { TEMPO_NETWORK, type MppGate } from "../payments/mpp.js";
import type { CreditCheck, PaymentCheck, PaymentRequest, PaymentRequiredOutcome, SettleOutcome, VerifiedPayment } from "../payments/outcomes.js";
import { handlerFailure, type PaymentProcessor } from "../payments/processor.js";
import type { ReceiptCarrier } from "../payments/receipts/content-signature.js";
import type { ReceiptFacts, ReceiptIssuer, Sealed } from "../payments/receipts/issuer.js";
import { isFree, priceFor, type AnyTool, type CallerCredentials, type InterimAnswer } from "../registry/tool.js";
import type { Metrics } from "./metrics.js";
import { DataSourceLabels, type DataSource } from "./request-scope.js";
import type { CacheHit, ToolRunner } from "./runner.js";

/*
 * One paid call, whatever the transport: validate → cache hit → rate limit → check before payment →
 * interim answer → free / sign-in / credits / x402 / MPP → execute → abandon or handler failure → settle →
 * metrics → commit. The transports (http/tool-routes.ts, mcp/catalog.ts) read the call's input and proofs
 * from their wire format, run {@link CallPipeline.run} and encode its {@link CallOutcome}; nothing here
 * knows HTTP or MCP. Payment outcomes are named in src/payments/outcomes.ts.
 */

/** The transports, as metrics label them. */
export type Transport = "http" | "mcp";

/** What a call presents to pay or sign in with, as its transport read it; every field optional. */
export interface PaymentProofs {
  /**
   * The x402 payment payload (any shape: the processor checks it), or `{ refusal }` with an `invalid_payload`
   * reason when the transport could not read it. A function of the call's payment request, because a v1
   * proof is matched to the call's requirements. Undefined when the call carries no x402 payment.
   */
  x402?: (r: PaymentRequest) => Promise<unknown>;
  /** An MPP credential (HTTP `Authorization: Payment`), when the call carries one and MPP is on. */
  mpp?: string;
  /** A Sign-In-With-X proof (header value, or the decoded payload). */
  siwx?: unknown;
  /** A credits session token minted for an earlier proof. */
  session?: unknown;
}

/** Where a call's 402s point and what its sign-in proofs are bound to. */
export interface CallSite {
  /** The resource a 402 names (HTTP: the request's absolute URL; MCP: the service's public `/mcp` URL). */
  resource: ResourceInfo;
  /** The origin SIWX proofs and session tokens must be bound to (configuration, never a request's Host). */
  origin: string;
  /** The URL whose path a 402's SIWX challenge names (HTTP: the resource URL; MCP: `<origin>/mcp`). */
  challengeUrl: string;
  /** The refusal of a `siwx` tool call without a proof: `sign_in_required: ` and where the transport takes one. */
  signInHint: string;
  /** The request method a paid answer's content signature covers (`@method`): HTTP the request's; default POST (MCP). */
  method?: string;
  /** The header a paid answer carries its signed receipt in (HTTP: its settlement header, see http/payment-gate.ts); default `X402-Receipt`. */
  receiptCarrier?: (paid: Paid, receipt: SignedReceipt) => ReceiptCarrier;
}

/** One call as a transport hands it to {@link CallPipeline.run}. */
export interface Call {
  tool: AnyTool;
  /** Reads and validates the call's input. @throws AppError BAD_REQUEST / UNKNOWN_SYMBOL. */
  parse(): unknown;
  /** Learns the call's cache key once known (the transport's cache-hit fast path remembers it). */
  onKey?(key: string): void;
  /** Consumes one point of the miss rate limit (@throws AppError RATE_LIMITED); undefined: not limited (stdio). */
  limit?(): Promise<void>;
  /** The client's address as the rate limiters key it; undefined over stdio. Budgets free work before payment. */
  client?: string;
  /** Credentials of a tool with `acceptsCredentials`; empty otherwise. */
  credentials: CallerCredentials;
  proofs: PaymentProofs;
  /** Where the call's 402s point; built only when one is needed. */
  site(): CallSite;
  /**
   * Answer a paid tool's cache miss with the unpaid 402 and leave every proof untouched (HTTP `HEAD`: it
   * releases no data, so verifying, settling or debiting for it would charge for nothing).
   */
  unpaid?: boolean;
}

/** The balance of the wallet that paid a call from credits (what `marketgate/credits` and `X-Credits-*` carry). */
export interface CreditsInfo {
  wallet: string;
  /** Decimal USD left after this call. */
  remaining_usd: string;
  /** A fresh session token to send instead of the next proof, when this call's SIWX proof verified. */
  session?: string;
}

/** How an answered call was paid: what its receipt carries. */
export type Paid =
  { method: "x402"; receipt: SettleResponse } | { method: "mpp"; mppMethod: "evm" | "tempo"; receipt: SettleResponse } | { method: "credits"; credits: CreditsInfo };

/**
 * What a call comes to; `source` is the data-source label of the answer (live, simulated or replay).
 * - `hit`: the response cache's answer (free, not rate-limited).
 * - `interim`: a free, uncached answer instead of the paid one (e.g. CVD warm-up), with its status and Retry-After.
 * - `payment_required`: answer 402 with `required` (the SIWX challenge added when credits are on); `request`
 *   is the call's payment request (tool and price, for the transport's own 402 parts).
 * - `sign_in_required`: a `siwx` tool without a valid proof: 402 with the SIWX challenge beside the smallest top-up.
 * - `answer`: the handler's value; `status` for HTTP (202 for accepted-only answers of free tools); `private`:
 *   it depends on the caller (no shared caching); `paid` when it was paid for (the receipt); `sealed` beside
 *   `paid` when receipts are on: the signed receipt, the body to send as is, and its content signature.
 * - `error`: the error to send (status, code, Retry-After); nothing was charged unless its message says so.
 */
export type CallOutcome = Outcome & { source: DataSource };

/** A {@link CallOutcome} before its data-source label is known. */
export type Outcome =
  | { kind: "hit"; hit: CacheHit }
  | { kind: "interim"; interim: InterimAnswer<unknown> }
  | { kind: "payment_required"; required: PaymentRequired; request: PaymentRequest }
  | { kind: "sign_in_required"; required: PaymentRequired; request: PaymentRequest }
  | Answer
  | { kind: "error"; error: AppError };

/** The `answer` outcome. */
type Answer = { kind: "answer"; value: unknown; status: number; private: boolean; paid?: Paid; sealed?: Sealed };

/** What the pipeline needs; `payments` undefined: payments are off and every tool is free. */
export interface CallPipelineDeps {
  runner: ToolRunner;
  metrics: Metrics;
  /** `DATA_MODE`: the data-source labels' default. */
  dataMode: "live" | "sim";
  transport: Transport;
  payments?: PaymentProcessor;
  /** Prepaid credits (SIWX), when payments and credits are on. */
  credits?: CreditGate;
  /** MPP beside x402 (HTTP only). */
  mpp?: MppGate;
  /** Signed offers on 402s and a signed receipt with a content signature on paid answers (docs/receipts.md). */
  receipts?: ReceiptIssuer;
}

/**
 * The request line of a call (HTTP: its method and public URL, query included; MCP: POST to `/mcp`): what
 * its receipt and content signature name, and, as `PaymentRequest.target`, what its held answers are bound to.
 */
function requestLine(site: Pick<CallSite, "method" | "resource">): { method: string; targetUri: string } {
  return { method: site.method ?? "POST", targetUri: site.resource.url };
}

/** `PaymentRequest.target` of a call at `site`. */
function targetOf(site: Pick<CallSite, "method" | "resource">): string {
  const { method, targetUri } = requestLine(site);
  return `${method} ${targetUri}`;
}

/** True when the call presents something to pay with (x402, MPP, or a credits proof), checked or not. */
function carriesProof(p: PaymentProofs): boolean {
  return p.x402 !== undefined || p.mpp !== undefined || p.siwx !== undefined || p.session !== undefined;
}

/** Retry-After of a settlement whose outcome is unknown, s. */
const UNKNOWN_RETRY_AFTER_SEC = 5;

/**
 * The 402 of a sign-in: the SIWX challenge beside the requirements of the smallest top-up (a client without
 * credits can top up with them; `wrapFetchWithSIWx` signs for `accepts[0].network`), `reason` as its error;
 * with `receipts`, the top-up's signed offers.
 */
export async function signInRequired(
  payments: PaymentProcessor,
  credits: CreditGate,
  site: Omit<CallSite, "signInHint">,
  reason: string,
  receipts?: ReceiptIssuer,
): Promise<{ request: PaymentRequest; required: PaymentRequired }> {
  const request: PaymentRequest = { tool: credits.topUpTool, resource: site.resource, fingerprint: "", target: targetOf(site), priceUsd: credits.settings.minTopUpUsd };
  const required = await payments.paymentRequired(request, reason);
  return { request, required: offerCredits(receipts ? await receipts.offers(required) : required, credits, site) };
}

/** `required` with the SIWX challenge when credits are on: the one place a 402 offers credits. */
function offerCredits(required: PaymentRequired, credits: CreditGate | undefined, site: Pick<CallSite, "origin" | "challengeUrl">): PaymentRequired {
  return credits ? withSiwxChallenge(required, site.origin, site.challengeUrl) : required;
}

/** A verified payment, with how the call will have been paid once it settles. */
type Verified = { kind: "verified"; payment: VerifiedPayment; paid: (receipt: SettleResponse) => Paid };

/**
 * Runs calls for one transport (see the file comment). Never throws: every failure is an `error` outcome.
 * The data-source labels are the transport's too (its cache-hit fast path reads {@link labels}).
 */
export class CallPipeline {
  /** Which answers were recorded venue data (`X-Data-Source`, `_meta["marketgate/data-source"]`). */
  readonly labels: DataSourceLabels;

  constructor(private readonly deps: CallPipelineDeps) {
    this.labels = new DataSourceLabels(deps.dataMode);
  }

  /** Runs one call to its outcome. */
  async run(call: Call): Promise<CallOutcome> {
    let source: DataSource = "live";
    const outcome = await this.labels.track(
      (label) => (source = label),
      (tracker) =>
        this.steps(call, (key) => {
          tracker.key(key);
          call.onKey?.(key);
        }).catch((err: unknown): Outcome => ({ kind: "error", error: toAppError(err) })),
    );
    if (outcome.kind === "answer" && outcome.paid && this.deps.receipts) return { ...outcome, sealed: await this.seal(call, outcome.paid, outcome.value), source };
    return { ...outcome, source };
  }

  /**
   * The receipt and content signature of a paid answer (every payment method and transport comes here).
   * Undefined when signing fails (logged): the answer is paid for, so it is sent without them.
   */
  private async seal(call: Call, paid: Paid, value: unknown): Promise<Sealed | undefined> {
    const site = call.site();
    try {
      const carrier = site.receiptCarrier;
      return await this.deps.receipts!.seal(requestLine(site), this.receiptFacts(paid), JSON.stringify(value), carrier && ((r) => carrier(paid, r)));
    } catch (err) {
      logger.error({ err, tool: call.tool.name }, "receipt signing failed; the paid answer is sent without a receipt");
      return undefined;
    }
  }

  /** What the receipt of an answer paid with `paid` states. */
  private receiptFacts(paid: Paid): ReceiptFacts {
    if (paid.method === "credits") return { payer: paid.credits.wallet, network: this.deps.payments!.catalog.settings.network };
    // MPP tempo names no payer address in its settlement: the receipt's payer is then empty.
    return { payer: paid.receipt.payer ?? "", network: paid.receipt.network, transaction: paid.receipt.transaction };
  }

  /**
   * The sequence, in order; `onKey` learns the cache key. Throws what a step throws (mapped by {@link run}):
   * AppError BAD_REQUEST / UNKNOWN_SYMBOL (input), RATE_LIMITED, a check before payment's error, payment
   * errors (see {@link check}), the handler's error (uncharged, or owed for upfront tools), UPSTREAM_ERROR
   * for a settlement of unknown outcome.
   */
  private async steps(call: Call, onKey: (key: string) => void): Promise<Outcome> {
    const { runner } = this.deps;
    const { tool } = call;
    const input = call.parse();
    const key = runner.key(tool, input);
    onKey(key);
    const hit = await runner.lookupKey(tool, key);
    // Hits are free and not rate-limited.
    if (hit) return { kind: "hit", hit };
    await call.limit?.();
    await runner.checkBeforePayment(tool, input, { client: call.client, paying: !call.unpaid && carriesProof(call.proofs) });
    const interim = await runner.interimAnswer(tool, input, { client: call.client });
    if (interim) return { kind: "interim", interim };
    const payments = this.deps.payments;
    if (isFree(tool) || !payments) return this.free(call, input);

    const site = call.site();
    const r: PaymentRequest = { tool, resource: site.resource, fingerprint: key, target: targetOf(site), priceUsd: priceFor(tool, input) };
    // A HEAD pays nothing and runs nothing: the 402 of a request without a payment.
    if (call.unpaid) return await this.paymentRequired(r, await payments.paymentRequired(r, "Payment required"), site);
    const checked = await this.check(call, r, site, payments);
    if (checked.kind !== "verified") return checked;
    const { payment } = checked;
    let value: unknown;
    try {
      value = await runner.execute(tool, input, { payer: payment.payer, paymentReference: payment.reference, credentials: call.credentials });
    } catch (err) {
      // Recorded before answering, so that a retry right after finds the authorization free (or its run owed).
      await payment.abandon();
      throw handlerFailure(tool, err);
    }
    const settled = await this.settle(tool, payment, value);
    const m = this.deps.metrics;
    const transport = this.deps.transport;
    switch (settled.kind) {
      case "payment_required":
        m.paymentsFailed.inc({ tool: tool.name, stage: "settle", transport });
        return await this.paymentRequired(r, settled.required, site);
      case "unknown":
        m.paymentsFailed.inc({ tool: tool.name, stage: "settle_unknown", transport });
        throw new AppError(
          "UPSTREAM_ERROR",
          "payment settlement could not be confirmed yet; the data is withheld. Retry with the same payment to receive it once the transfer is confirmed.",
          { retryAfterSec: settled.retryAfterSec },
        );
      case "settled": {
        const paid = checked.paid(settled.receipt);
        m.paymentsSettled.inc({ tool: tool.name, transport, method: paid.method });
        // Credit-paid calls spend revenue already counted at top-up.
        if (paid.method !== "credits") m.revenueUsdc.inc({ tool: tool.name }, Number(r.priceUsd));
        await runner.commit(tool, input, value);
        return { kind: "answer", value, status: 200, private: true, paid };
      }
    }
  }

  /** A free tool (or payments off): signs in a `siwx` tool's caller, runs, commits. */
  private async free(call: Call, input: unknown): Promise<Outcome> {
    const { runner, payments, credits } = this.deps;
    const { tool } = call;
    let wallet: string | undefined;
    if (tool.auth === "siwx") {
      if (!credits || !payments) throw new AppError("NOT_FOUND", "credits are off on this service (CREDITS=off, or payments are off)");
      const site = call.site();
      const proof = call.proofs.siwx;
      // A `siwx` tool acts for the wallet itself: a SIWX proof only, never a session token.
      const id = proof !== undefined ? await credits.signIn({ siwx: proof }, site.origin) : { refusal: site.signInHint };
      if (isSiwxRefusal(id)) return { kind: "sign_in_required", ...(await signInRequired(payments, credits, site, id.refusal, this.deps.receipts)) };
      wallet = id.wallet;
    }
    const value = await runner.execute(tool, input, { credentials: call.credentials, wallet });
    await runner.commit(tool, input, value);
    return { kind: "answer", value, status: tool.statusOf?.(value) ?? 200, private: Boolean(tool.acceptsCredentials || tool.auth) };
  }

  /** The 402 outcome of `r`: signed offers when receipts are on, and credits when they are on. */
  private async paymentRequired(r: PaymentRequest, required: PaymentRequired, site: CallSite): Promise<Outcome> {
    const offered = this.deps.receipts ? await this.deps.receipts.offers(required) : required;
    return { kind: "payment_required", required: offerCredits(offered, this.deps.credits, site), request: r };
  }

  /**
   * Checks the call's payment: prepaid credits when it carries a SIWX proof or session token and no other
   * payment; else MPP or x402. A refused payment that was presented counts as a `verify` failure.
   * @throws AppError BAD_REQUEST for an MPP credential beside an x402 payment; UPSTREAM_UNAVAILABLE when
   *   the facilitator cannot be reached (logged; nothing charged); the processor's and credits' AppErrors.
   */
  private async check(call: Call, r: PaymentRequest, site: CallSite, payments: PaymentProcessor): Promise<Outcome | Verified> {
    const { proofs } = call;
    const { credits, mpp } = this.deps;
    if (proofs.mpp !== undefined && proofs.x402 !== undefined) {
      throw new AppError("BAD_REQUEST", "send either an MPP credential (Authorization: Payment) or an x402 payment header, not both");
    }
    const paying = proofs.x402 !== undefined || (proofs.mpp !== undefined && mpp !== undefined);
    const signed = proofs.siwx !== undefined || proofs.session !== undefined;
    let checked: PaymentRequiredOutcome | Answer | Verified;
    if (signed && credits && !paying) {
      const c = await credits.check(r, { siwx: proofs.siwx, session: proofs.session } satisfies CreditProof, site.origin);
      checked = c.kind === "payment_required" ? { kind: "payment_required", required: await payments.paymentRequired(r, c.reason) } : this.fromCredits(c);
    } else {
      checked = await this.fromPayment(r, proofs, payments);
    }
    if (checked.kind !== "payment_required") return checked;
    if (paying || signed) this.deps.metrics.paymentsFailed.inc({ tool: r.tool.name, stage: "verify", transport: this.deps.transport });
    return await this.paymentRequired(r, checked.required, site);
  }

  /** A credit payment that pays for the call: its stored answer, or the reservation to settle. */
  private fromCredits(c: Exclude<CreditCheck, { kind: "payment_required" }>): Answer | Verified {
    const credits: CreditsInfo = { wallet: c.wallet, remaining_usd: microToUsd(c.remainingMicro), ...(c.session ? { session: c.session } : {}) };
    const paid: Paid = { method: "credits", credits };
    if (c.kind === "replay") return { kind: "answer", value: c.value, status: 200, private: true, paid };
    return { kind: "verified", payment: c.payment, paid: () => paid };
  }

  /** Checks an x402 or MPP payment (none: the 402 of a request without one). */
  private async fromPayment(r: PaymentRequest, proofs: PaymentProofs, payments: PaymentProcessor): Promise<PaymentRequiredOutcome | Answer | Verified> {
    const mpp = proofs.mpp !== undefined ? this.deps.mpp : undefined;
    let check: PaymentCheck;
    let paid: (receipt: SettleResponse) => Paid = (receipt) => ({ method: "x402", receipt });
    try {
      if (mpp) {
        const accepted = await mpp.accept(r.tool, proofs.mpp!, r.resource.url, r.priceUsd);
        if (accepted.method === "tempo") {
          paid = (receipt) => ({ method: "mpp", mppMethod: "tempo", receipt });
          check = await payments.checkExternal(r, accepted.key, async () => ({ success: true, transaction: await accepted.settle(), network: TEMPO_NETWORK }));
        } else {
          paid = (receipt) => ({ method: "mpp", mppMethod: "evm", receipt });
          check = await payments.check(r, accepted.payload);
        }
      } else {
        const payload = await proofs.x402?.(r);
        const refusal = (payload as { refusal?: unknown } | undefined)?.refusal;
        check = typeof refusal === "string" ? { kind: "payment_required", required: await payments.paymentRequired(r, refusal) } : await payments.check(r, payload);
      }
    } catch (err) {
      if (err instanceof AppError && err.code === "PAYMENT_REQUIRED") return { kind: "payment_required", required: await payments.paymentRequired(r, err.message) };
      if (err instanceof AppError) throw err;
      logger.warn({ err, tool: r.tool.name }, "payment facilitator unavailable");
      throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
    switch (check.kind) {
      case "payment_required":
        return check;
      case "replay":
        return { kind: "answer", value: check.value, status: 200, private: true, paid: paid(check.receipt) };
      case "verified":
        return { kind: "verified", payment: check.payment, paid };
    }
  }

  /**
   * Settles after the handler succeeded. A settle that rejects (the ledger failed after the money may have
   * moved) is an unknown outcome, logged here once: the data is withheld for a retry with the same payment.
   */
  private async settle(tool: AnyTool, payment: VerifiedPayment, value: unknown): Promise<SettleOutcome> {
    try {
      return await payment.settle(value);
    } catch (err) {
      logger.error({ err, tool: tool.name }, "settlement failed unexpectedly; outcome unknown");
      return { kind: "unknown", retryAfterSec: UNKNOWN_RETRY_AFTER_SEC };
    }
  }
}
