import { z } from "zod";
import { AppError } from "../../src/errors.js";
import { microToUsd } from "../../src/payments/credits/ledger.js";
import { defineTool } from "../../src/registry/tool.js";
import { creditsOf, walletOf } from "./common.js";

/** `POST /api/v1/credits/refund` (free, SIWX, `CREDITS_REFUND=on`): pays the unspent balance back on chain. */
export const creditsRefund = defineTool({
  name: "credits_refund",
  title: "Refund unspent credits",
  method: "POST",
  path: "/api/v1/credits/refund",
  priceUsd: "free",
  cacheTtlSec: 0,
  tags: ["credits"],
  summary: "Pay the signed-in wallet's unspent credits back in USDC (when the operator allows refunds)",
  description:
    "Free; signed with SIGN-IN-WITH-X by the wallet. Only when the operator runs CREDITS_REFUND=on (403 otherwise): the whole balance is taken atomically and transferred in USDC to the wallet by the operator's relayer; if the transfer fails the balance is restored.",
  example: {},
  auth: "siwx",
  stateful: true,
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  input: z.object({}),
  output: z.object({
    wallet: z.string(),
    refunded_usd: z.string(),
    transaction: z.string().nullable().describe("the USDC transfer (null when there was nothing to refund)"),
  }),
  handler: async (_input, ctx, caller) => {
    const svc = creditsOf(ctx);
    const wallet = walletOf(caller);
    if (!svc.gate.settings.refund || !svc.refund) throw new AppError("FORBIDDEN", "refunds are off on this service (CREDITS_REFUND=off): credits are spent by calls only");
    const taken = await svc.gate.ledger.takeForRefund(wallet);
    if (taken === 0) return { wallet, refunded_usd: "0", transaction: null };
    let transaction: string;
    try {
      transaction = await svc.refund(wallet, taken);
    } catch (err) {
      await svc.gate.ledger.restoreRefund(wallet, taken);
      throw new AppError("UPSTREAM_UNAVAILABLE", "the refund transfer failed; your balance is unchanged", { retryAfterSec: 30, cause: err });
    }
    return { wallet, refunded_usd: microToUsd(taken), transaction };
  },
});
