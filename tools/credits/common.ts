import { z } from "zod";
import type { ToolContext } from "../../src/core/context.js";
import type { CreditAccountsPort } from "../../src/core/types.js";
import { AppError } from "../../src/errors.js";
import { logger } from "../../src/lib/log.js";
import { microToUsd, type CreditAccount, type CreditRefund, type SpendCaps } from "../../src/payments/credits/ledger.js";

/** A USD amount as a decimal string (at most 6 decimals, USDC's precision). */
export const UsdString = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, "a USD amount such as 5 or 0.25 (at most 6 decimals)");

const CapsOut = z.object({
  per_call_max_usd: z.string().nullable(),
  per_hour_max_usd: z.string().nullable(),
  per_day_max_usd: z.string().nullable(),
});

/** A refund as the credits tools answer it (see docs/credits.md "Refunds"). */
export const RefundOut = z.object({
  id: z.string(),
  status: z
    .enum(["pending", "confirmed", "restored"])
    .describe(
      "pending: the transfer is on its way (or being signed) and not confirmed; confirmed: paid on chain; restored: not paid (never sent, refused, dropped or reverted) and back in the balance",
    ),
  amount_usd: z.string(),
  tx_hash: z.string().nullable().describe("the USDC transfer from the operator's relayer (null while it is being signed)"),
  reason: z.enum(["not_sent", "rejected", "dropped", "reverted"]).nullable().describe("why it was restored (null otherwise)"),
  updated_at: z.string().describe("ISO 8601 time of its last change"),
});

/** The answer shape of a refund. */
export function refundOut(r: CreditRefund): z.infer<typeof RefundOut> {
  return {
    id: r.id,
    status: r.status === "preparing" ? "pending" : r.status,
    amount_usd: microToUsd(r.amountMicro),
    tx_hash: r.tx?.txHash ?? null,
    reason: r.reason ?? null,
    updated_at: new Date(r.updatedAtMs).toISOString(),
  };
}

/** A wallet's credits as every credits tool answers them (USD decimal strings). */
export const AccountOut = z.object({
  wallet: z.string().describe("the wallet (lower case) that proved itself with SIWX or paid the top-up"),
  balance_usd: z.string().describe("spendable now"),
  held_usd: z.string().describe("held by calls in flight: debited when they are answered, back in the balance otherwise (at the latest about a minute after the request deadline)"),
  refund_pending_usd: z.string().describe("taken into a refund whose transfer is not confirmed yet (refund.tx_hash)"),
  refund: RefundOut.nullable().describe("the wallet's latest refund (null: none in the last 30 days)"),
  credited_usd: z.string().describe("all top-ups so far"),
  spent_usd: z.string().describe("all debits so far"),
  caps: CapsOut.describe("the wallet's own spending caps (null = none)"),
  operator_caps: CapsOut.describe("caps the operator applies to every wallet (null = none)"),
  refunds: z.enum(["on", "off"]).describe("on: POST /api/v1/credits/refund pays the unspent balance back"),
  custodial: z.literal(true).describe("credits are held by the operator of this service until spent or refunded"),
});

function capsOut(c: SpendCaps): z.infer<typeof CapsOut> {
  const f = (v?: number) => (v === undefined ? null : microToUsd(v));
  return { per_call_max_usd: f(c.perCallMaxMicro), per_hour_max_usd: f(c.perHourMaxMicro), per_day_max_usd: f(c.perDayMaxMicro) };
}

/** The answer shape of an account, with the wallet's latest refund. */
export function accountOut(a: CreditAccount, svc: CreditAccountsPort, refund: CreditRefund | undefined): z.infer<typeof AccountOut> {
  return {
    wallet: a.wallet,
    balance_usd: microToUsd(a.balanceMicro),
    held_usd: microToUsd(a.heldMicro),
    refund_pending_usd: microToUsd(a.refundPendingMicro),
    refund: refund ? refundOut(refund) : null,
    credited_usd: microToUsd(a.creditedMicro),
    spent_usd: microToUsd(a.spentMicro),
    caps: capsOut(a.caps),
    operator_caps: capsOut(svc.settings.globalCaps),
    refunds: svc.settings.refund ? "on" : "off",
    custodial: true,
  };
}

/**
 * The wallet's account as the credits tools answer it: its open refund reconciled with the chain first
 * (a failed reconciliation is logged: the refund then shows as it stood), then its account (expired holds
 * returned) and latest refund. @throws the ledger's errors.
 */
export async function readAccount(svc: CreditAccountsPort, wallet: string): Promise<z.infer<typeof AccountOut>> {
  await svc.refunds?.reconcileWallet(wallet).catch((err: unknown) => logger.warn({ err, wallet }, "credit refund reconciliation failed"));
  return withRefund(svc, await svc.ledger.account(wallet));
}

/** {@link accountOut} of `account` with the wallet's latest refund read from the ledger. */
export async function withRefund(svc: CreditAccountsPort, account: CreditAccount): Promise<z.infer<typeof AccountOut>> {
  return accountOut(account, svc, await svc.ledger.latestRefund(account.wallet));
}

/** The credits of this service. @throws AppError NOT_FOUND when credits (or payments) are off. */
export function creditsOf(ctx: ToolContext): CreditAccountsPort {
  if (!ctx.credits) throw new AppError("NOT_FOUND", "credits are off on this service (CREDITS=off, or payments are off)");
  return ctx.credits;
}

/** The SIWX wallet of a call (the mounts verified it). @throws AppError FORBIDDEN when absent. */
export function walletOf(caller: { wallet?: string }): string {
  if (!caller.wallet) throw new AppError("FORBIDDEN", "sign in with SIGN-IN-WITH-X");
  return caller.wallet;
}
