import { z } from "zod";
import type { ToolContext } from "../../src/core/context.js";
import { AppError } from "../../src/errors.js";
import { microToUsd, type CreditAccount, type SpendCaps } from "../../src/payments/credits/ledger.js";
import type { CreditService } from "../../src/payments/credits/service.js";

/** A USD amount as a decimal string (at most 6 decimals, USDC's precision). */
export const UsdString = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, "a USD amount such as 5 or 0.25 (at most 6 decimals)");

const CapsOut = z.object({
  per_call_max_usd: z.string().nullable(),
  per_hour_max_usd: z.string().nullable(),
  per_day_max_usd: z.string().nullable(),
});

/** A wallet's credits as every credits tool answers them (USD decimal strings). */
export const AccountOut = z.object({
  wallet: z.string().describe("the wallet (lower case) that proved itself with SIWX or paid the top-up"),
  balance_usd: z.string().describe("spendable now"),
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

/** The answer shape of an account. */
export function accountOut(a: CreditAccount, svc: CreditService): z.infer<typeof AccountOut> {
  return {
    wallet: a.wallet,
    balance_usd: microToUsd(a.balanceMicro),
    credited_usd: microToUsd(a.creditedMicro),
    spent_usd: microToUsd(a.spentMicro),
    caps: capsOut(a.caps),
    operator_caps: capsOut(svc.gate.settings.globalCaps),
    refunds: svc.gate.settings.refund ? "on" : "off",
    custodial: true,
  };
}

/** The credits of this service. @throws AppError NOT_FOUND when credits (or payments) are off. */
export function creditsOf(ctx: ToolContext): CreditService {
  if (!ctx.credits) throw new AppError("NOT_FOUND", "credits are off on this service (CREDITS=off, or payments are off)");
  return ctx.credits;
}

/** The SIWX wallet of a call (the mounts verified it). @throws AppError FORBIDDEN when absent. */
export function walletOf(caller: { wallet?: string }): string {
  if (!caller.wallet) throw new AppError("FORBIDDEN", "sign in with SIGN-IN-WITH-X");
  return caller.wallet;
}
