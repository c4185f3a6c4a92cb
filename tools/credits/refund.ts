import { z } from "zod";
import { AppError } from "../../src/errors.js";
import { microToUsd } from "../../src/payments/credits/ledger.js";
import { isSolanaWallet } from "../../src/payments/credits/shared.js";
import { defineTool } from "../../src/registry/tool.js";
import { creditsOf, walletOf } from "./common.js";

/** `POST /api/v1/credits/refund` (free, SIWX, `CREDITS_REFUND=on`): pays the unspent balance back on chain, once. */
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
    "Free; signed with SIGN-IN-WITH-X by the wallet. Only when the operator runs CREDITS_REFUND=on (403 otherwise). The whole balance (credits held by calls in flight excepted) is taken atomically and transferred in USDC to the wallet by the operator's relayer. " +
    "200 status=confirmed: the transfer is mined. 202 status=pending: the transfer was sent (tx_hash) but is not confirmed yet; the amount stays out of the balance until the chain decides, and GET /api/v1/credits shows it (refund_pending_usd, refund). A refund asked for while one is pending answers that one and pays nothing more. " +
    "A transfer that was never sent, was refused, dropped (its nonce used by another transaction) or reverted is restored to the balance exactly once (503 when it happens during the request). 200 status=none: the balance was 0.",
  example: {},
  auth: "siwx",
  stateful: true,
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  input: z.object({}),
  output: z.object({
    wallet: z.string(),
    status: z.enum(["none", "pending", "confirmed"]).describe("none: nothing to refund; pending: sent, not confirmed yet (HTTP 202); confirmed: paid on chain"),
    amount_usd: z.string().describe("the amount of this refund (or of the one already pending); 0 when there was nothing to refund"),
    tx_hash: z.string().nullable().describe("the USDC transfer (null when there was nothing to refund, or while it is being signed)"),
    refund_id: z.string().nullable(),
  }),
  statusOf: (out) => (out.status === "pending" ? 202 : 200),
  handler: async (_input, ctx, caller) => {
    const svc = creditsOf(ctx);
    const wallet = walletOf(caller);
    if (!svc.settings.refund || !svc.refunds) throw new AppError("FORBIDDEN", "refunds are off on this service (CREDITS_REFUND=off): credits are spent by calls only");
    // Refunds are sent by the Base relayer: a Solana wallet's credits are spent by calls only.
    if (isSolanaWallet(wallet)) throw new AppError("FORBIDDEN", "refunds are paid in USDC on Base only: credits topped up from a Solana wallet are spent by calls only");
    const r = await svc.refunds.refund(wallet);
    if (r.status === "none") return { wallet, status: "none" as const, amount_usd: "0", tx_hash: null, refund_id: null };
    return { wallet, status: r.status, amount_usd: microToUsd(r.refund.amountMicro), tx_hash: r.refund.tx?.txHash ?? null, refund_id: r.refund.id };
  },
});
