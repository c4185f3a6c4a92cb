import type { PaymentRequired } from "@x402/core/types";
import { paymentRequiredOf, type ToolCallParams, type ToolResult, type X402McpClient } from "../client/mcp.js";
import { COST_META, CREDITS_META } from "../client/mcp-meta.js";
import { microToUsd } from "../payments/credits/ledger.js";
import type { PayMode } from "./args.js";
import type { Budget } from "./budget.js";
import { cheapestPayable, type Priced } from "./pricing.js";
import type { Wallet } from "./wallet.js";

/** What a call cost, in the result's `_meta["marketgate/cost"]`. Amounts are decimal USD strings. */
export interface CallCost {
  price_usd: string;
  method: "free" | "x402" | "credits" | "refused" | "not_charged";
  /** x402: the chain (CAIP-2) and the settlement transaction. */
  network?: string;
  transaction?: string;
  /** credits: the balance left after this call. */
  remaining_credits_usd?: string;
  /** A credits top-up this call made first: its amount and settlement transaction. */
  top_up?: { amount_usd: string; transaction?: string };
  /** Why nothing was charged (refused by the budget, the payment failed). */
  reason?: string;
  /** The bridge's spend for the UTC day after this call, and its limit. */
  spent_today_usd: string;
  max_usd_per_day: string;
}

/** What {@link CallPayer} needs. */
export interface CallPayerDeps {
  upstream: X402McpClient;
  wallet: Wallet;
  budget: Budget;
  pay: PayMode;
  topUpMicro: number;
  /** Whether the remote lists `credits_top_up` (without it the bridge never tops up). */
  canTopUp: () => Promise<boolean>;
  /** One line to stderr (never a key: the wallet never hands it out). */
  log: (line: string) => void;
}

/** In `auto` mode, a top-up must cover at least this many calls at the asked price: one chain transaction for many calls. */
export const AUTO_TOP_UP_MIN_CALLS = 10;

/** Name of the remote's top-up tool (marketgate's; others have none, and the bridge pays per call). */
export const TOP_UP_TOOL = "credits_top_up";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The SIWX challenge of a PaymentRequired: the URI to sign for, when the service offers credits on this wallet's chain. */
function siwxUri(required: PaymentRequired, chain: Wallet["chain"]): string | undefined {
  const ext = required.extensions?.["sign-in-with-x"];
  if (!isObject(ext) || !isObject(ext.info) || typeof ext.info.uri !== "string") return undefined;
  const chains = Array.isArray(ext.supportedChains) ? ext.supportedChains : [];
  const ok = chains.some((c) => isObject(c) && typeof c.chainId === "string" && c.chainId.startsWith(chain === "base" ? "eip155:" : "solana:"));
  return ok ? ext.info.uri : undefined;
}

/** `_meta["marketgate/credits"]` of a credit-paid result. */
function creditsMetaOf(result: ToolResult): { remaining_usd?: string; session?: string } | undefined {
  const m = result._meta?.[CREDITS_META];
  return isObject(m)
    ? { remaining_usd: typeof m.remaining_usd === "string" ? m.remaining_usd : undefined, session: typeof m.session === "string" ? m.session : undefined }
    : undefined;
}

/** The `error.code` of an isError result's JSON text, if any. */
function errorCodeOf(result: ToolResult): string | undefined {
  const first = result.content?.[0];
  if (!isObject(first) || typeof first.text !== "string") return undefined;
  try {
    const body: unknown = JSON.parse(first.text);
    return isObject(body) && isObject(body.error) && typeof body.error.code === "string" ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

/** An isError result whose text is `message`. */
function errorResult(message: string, cost?: CallCost): ToolResult {
  return { isError: true, content: [{ type: "text", text: message }], ...(cost ? { _meta: { [COST_META]: cost } } : {}) };
}

/** What happened when paying from credits. */
type CreditsTry = { kind: "paid"; result: ToolResult; remaining?: string } | { kind: "failed"; result: ToolResult } | { kind: "unusable"; reason: string };

/**
 * Pays the calls of the bridge. Each call goes out unpaid first: a free tool (or a cache hit) answers, and a
 * paid tool answers with its PaymentRequired, whose price the budget checks before anything is signed. Then
 * it pays from prepaid credits (`credits`, or `auto` when the service offers them: a session token, else a
 * fresh SIWX proof; an empty balance is topped up with one x402 payment when the day's budget leaves room,
 * and in `auto` only when the top-up covers {@link AUTO_TOP_UP_MIN_CALLS} calls), else with x402 per call.
 * Every result carries `_meta["marketgate/cost"]` ({@link CallCost}).
 */
export class CallPayer {
  /** The credits session token of the last SIWX sign-in (memory only: a bearer credential for the wallet's credits). */
  private session: string | undefined;
  /** The UTC day the balance was found empty and no top-up made: credits are skipped for the rest of it (auto mode) or until a top-up. */
  private creditsEmptyDay: string | undefined;
  /** The top-up in flight, if any. */
  private toppingUp: Promise<{ ok: true; topUp: NonNullable<CallCost["top_up"]> } | { ok: false; reason: string }> | undefined;

  constructor(private readonly deps: CallPayerDeps) {}

  /** Runs one `tools/call` and returns its result with its cost. @throws transport errors of the remote. */
  async call(params: ToolCallParams): Promise<ToolResult> {
    const { upstream, wallet, budget } = this.deps;
    const first = await upstream.callUnpaid(params);
    if (!first.paymentRequired) return this.withCost(first.result, { price_usd: "0", method: first.result.isError ? "not_charged" : "free" });
    const required = first.paymentRequired;
    const priced = cheapestPayable(required, wallet.pays);
    if (typeof priced === "string") return errorResult(priced, this.cost({ price_usd: "0", method: "refused", reason: priced }));
    const refusal = await budget.reserve(priced.priceMicro);
    if (refusal) {
      this.deps.log(`${params.name}: ${refusal.message}`);
      return errorResult(refusal.message, this.cost({ price_usd: microToUsd(priced.priceMicro), method: "refused", reason: refusal.limit }));
    }
    const sent = { payment: false };
    try {
      return await this.payReserved(params, required, priced, sent);
    } catch (err) {
      // Nothing sent: not charged, the reservation goes back. A payment or proof sent without an answer may have
      // been charged: it stays counted (the budget errs on the side of the wallet).
      if (sent.payment) this.deps.log(`${params.name}: no answer after paying; ${microToUsd(priced.priceMicro)} USD stays counted against today's budget`);
      else await budget.release(priced.priceMicro);
      throw err;
    }
  }

  /** Pays a call whose price is reserved in the budget; gives the reservation back when the call is not charged. */
  private async payReserved(params: ToolCallParams, required: PaymentRequired, priced: Priced, sent: { payment: boolean }): Promise<ToolResult> {
    const { budget, log } = this.deps;
    const price = microToUsd(priced.priceMicro);
    let topUp: CallCost["top_up"];
    const uri = this.deps.pay === "x402" ? undefined : siwxUri(required, this.deps.wallet.chain);
    if (uri) {
      let credits = await this.tryCredits(params, uri, sent);
      if (credits.kind === "unusable" && credits.reason === "empty") {
        // Calls at once that all find the balance empty share one top-up; the call that made it reports it.
        const mine = !this.toppingUp;
        this.toppingUp ??= this.topUp(priced).finally(() => (this.toppingUp = undefined));
        const t = await this.toppingUp;
        if (t.ok) {
          if (mine) topUp = t.topUp;
          credits = await this.tryCredits(params, uri, sent);
        } else if (this.deps.pay === "credits") {
          await budget.release(priced.priceMicro);
          return errorResult(t.reason, this.cost({ price_usd: price, method: "refused", reason: t.reason }));
        }
      }
      if (credits.kind === "paid") {
        log(`${params.name}: paid ${price} USD from credits${credits.remaining ? `, ${credits.remaining} USD left` : ""}`);
        return this.withCost(credits.result, { price_usd: price, method: "credits", remaining_credits_usd: credits.remaining, top_up: topUp });
      }
      if (credits.kind === "failed") {
        await budget.release(priced.priceMicro);
        return this.withCost(credits.result, { price_usd: "0", method: "not_charged", top_up: topUp });
      }
      if (this.deps.pay === "credits") {
        await budget.release(priced.priceMicro);
        const reason = `could not pay from credits (${credits.reason}); nothing was charged. Run with --pay auto or --pay x402 to pay per call.`;
        return errorResult(reason, this.cost({ price_usd: price, method: "refused", reason, top_up: topUp }));
      }
    }
    return this.payX402(params, priced, topUp, sent);
  }

  /** Pays with x402: signs the one priced requirement, sends it, and counts it unless the call was plainly not charged. */
  private async payX402(params: ToolCallParams, priced: Priced, topUp: CallCost["top_up"], sent: { payment: boolean }): Promise<ToolResult> {
    const { upstream, wallet, budget, log } = this.deps;
    const price = microToUsd(priced.priceMicro);
    const payment = await wallet.x402.createPaymentPayload(priced.required);
    sent.payment = true;
    const { result, settlement } = await upstream.pay(params, payment);
    if (settlement?.success) {
      log(`${params.name}: paid ${price} USD with x402 on ${settlement.network} (tx ${settlement.transaction})`);
      return this.withCost(result, { price_usd: price, method: "x402", network: settlement.network, transaction: settlement.transaction, top_up: topUp });
    }
    // Asked to pay again, or an error the service does not charge: nothing settled. An unknown settlement outcome
    // (UPSTREAM_ERROR, "retry with the same payment") stays counted: the budget errs on the side of the wallet.
    const unknown = result.isError && !paymentRequiredOf(result) && errorCodeOf(result) === "UPSTREAM_ERROR";
    if (!result.isError && !settlement) {
      // Answered without a receipt (a cache hit on the paid retry): treat as charged only if the service says so; it did not.
      await budget.release(priced.priceMicro);
      return this.withCost(result, { price_usd: "0", method: "free", top_up: topUp });
    }
    if (unknown) {
      log(`${params.name}: the settlement's outcome is unknown; ${price} USD stays counted against today's budget`);
      return this.withCost(result, { price_usd: price, method: "x402", reason: "settlement outcome unknown; retry the call", top_up: topUp });
    }
    await budget.release(priced.priceMicro);
    return this.withCost(result, { price_usd: "0", method: "not_charged", top_up: topUp });
  }

  /** Pays from credits: the session token, else a new SIWX proof for `uri`. */
  private async tryCredits(params: ToolCallParams, uri: string, sent: { payment: boolean }): Promise<CreditsTry> {
    if (this.deps.pay === "auto" && this.creditsEmptyDay === this.deps.budget.today().day) return { kind: "unusable", reason: "no credits" };
    const { upstream, wallet } = this.deps;
    sent.payment = true;
    let result = this.session ? await upstream.withSession(params, this.session) : undefined;
    let again = result ? paymentRequiredOf(result) : undefined;
    if (!result || again?.error?.startsWith("invalid_credits_session")) {
      this.session = undefined;
      result = await upstream.withSiwx(params, await wallet.siwx(uri));
      again = paymentRequiredOf(result);
    }
    const meta = creditsMetaOf(result);
    if (meta?.session) this.session = meta.session;
    // Asked to pay again: the credits were not debited.
    if (again) sent.payment = false;
    if (!again) return result.isError ? { kind: "failed", result } : { kind: "paid", result, remaining: meta?.remaining_usd };
    const reason = again.error ?? "refused";
    if (reason.startsWith("credits_insufficient_balance")) return { kind: "unusable", reason: "empty" };
    // A cap of the wallet's or the operator's, a proof refused: pay this call with x402 instead (auto).
    return { kind: "unusable", reason };
  }

  /** Tops up credits with one x402 payment of the configured amount, when the mode and the day's budget allow it. */
  private async topUp(priced: Priced): Promise<{ ok: true; topUp: NonNullable<CallCost["top_up"]> } | { ok: false; reason: string }> {
    const { upstream, wallet, budget, topUpMicro, pay, log } = this.deps;
    const amount = microToUsd(topUpMicro);
    if (pay === "auto" && topUpMicro < AUTO_TOP_UP_MIN_CALLS * priced.priceMicro) {
      this.creditsEmptyDay = budget.today().day;
      return { ok: false, reason: `a top-up of ${amount} USD would cover fewer than ${AUTO_TOP_UP_MIN_CALLS} calls` };
    }
    if (!(await this.deps.canTopUp())) {
      this.creditsEmptyDay = budget.today().day;
      return { ok: false, reason: `the service has no ${TOP_UP_TOOL} tool` };
    }
    if (!(await budget.reserveTopUp(topUpMicro))) {
      this.creditsEmptyDay = budget.today().day;
      const day = budget.today();
      return {
        ok: false,
        reason: `the credits are used up and a top-up of ${amount} USD does not fit in today's budget (${microToUsd(day.spentMicro)} of --max-usd-per-day ${microToUsd(budget.limits.maxPerDayMicro)} spent). Nothing was charged. Lower --top-up-usd or raise --max-usd-per-day.`,
      };
    }
    let transaction: string | undefined;
    let ok = false;
    try {
      const call = await upstream.callTool({ name: TOP_UP_TOOL, arguments: { amount_usd: amount } }, (required) => {
        const p = cheapestPayable(required, wallet.pays);
        if (typeof p === "string") return p;
        return p.priceMicro === topUpMicro ? p.required : `the top-up asks ${microToUsd(p.priceMicro)} USD, not ${amount}`;
      });
      ok = !call.result.isError && call.settlement?.success === true;
      transaction = call.settlement?.transaction;
      if (!ok) {
        this.creditsEmptyDay = budget.today().day;
        return { ok: false, reason: `the top-up of ${amount} USD failed: ${call.refused ?? textOf(call.result)}` };
      }
      this.creditsEmptyDay = undefined;
      log(`topped up ${amount} USD of credits (tx ${transaction})`);
      return { ok: true, topUp: { amount_usd: amount, transaction } };
    } finally {
      if (!ok) await budget.releaseTopUp(topUpMicro);
    }
  }

  /** `cost` with today's spend. */
  private cost(c: Omit<CallCost, "spent_today_usd" | "max_usd_per_day">): CallCost {
    const day = this.deps.budget.today();
    return { ...c, spent_today_usd: microToUsd(day.spentMicro), max_usd_per_day: microToUsd(this.deps.budget.limits.maxPerDayMicro) };
  }

  private withCost(result: ToolResult, c: Omit<CallCost, "spent_today_usd" | "max_usd_per_day">): ToolResult {
    const cost = Object.fromEntries(Object.entries(this.cost(c)).filter(([, v]) => v !== undefined));
    return { ...result, _meta: { ...result._meta, [COST_META]: cost } };
  }
}

/** The first text content of a result, shortened for a message. */
function textOf(result: ToolResult): string {
  const first = result.content?.[0];
  const text = isObject(first) && typeof first.text === "string" ? first.text : "no answer";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
