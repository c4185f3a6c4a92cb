import { z } from "zod";
import { AppError } from "../../src/errors.js";
import { microToUsd, usdToMicro } from "../../src/payments/credits/ledger.js";
import { defineTool } from "../../src/registry/tool.js";
import { AccountOut, creditsOf, UsdString, withRefund } from "./common.js";

/**
 * `POST /api/v1/credits` `{amount_usd}`: buys prepaid credits with one x402 (or MPP) payment of exactly
 * `amount_usd`, settled before the credit (upfront), credited once per settled authorization.
 */
export const creditsTopUp = defineTool({
  name: "credits_top_up",
  title: "Top up credits",
  method: "POST",
  path: "/api/v1/credits",
  priceUsd: "0.10",
  priceOf: (input: { amount_usd: string }) => microToUsd(usdToMicro(input.amount_usd)),
  cacheTtlSec: 0,
  tags: ["credits"],
  summary: "Buy prepaid credits with one payment; later calls sign in with SIWX and pay from them",
  mcpNote: 'The payment is exactly amount_usd. Then put a SIWX proof in _meta["x402/sign-in-with-x"] on paid calls to pay from the balance',
  description:
    "Paid with x402 or MPP for exactly amount_usd (minimum 0.10 and maximum 100 by default; the operator may change them). On settlement the paying wallet's credit balance grows by that amount. Then send a SIGN-IN-WITH-X proof (x402 sign-in-with-x extension) with any paid call: it is debited from the balance, with no chain transaction. Credits are custodial (held by this service's operator).",
  example: { amount_usd: "5" },
  paymentFlow: "upfront",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  stateful: true,
  input: z.object({ amount_usd: UsdString.describe("USD to credit; the payment is exactly this amount") }),
  output: AccountOut.extend({
    credited_now_usd: z.string().describe("what this top-up added (0 when this payment was already credited)"),
    payment_reference: z.string().describe("the settled authorization this top-up was credited for"),
  }),
  checkBeforePayment: async ({ amount_usd }, ctx) => {
    const { settings } = creditsOf(ctx);
    const v = usdToMicro(amount_usd);
    if (v < usdToMicro(settings.minTopUpUsd) || v > usdToMicro(settings.maxTopUpUsd)) {
      throw new AppError("BAD_REQUEST", `amount_usd must be between ${settings.minTopUpUsd} and ${settings.maxTopUpUsd}`, {
        details: [{ field: "amount_usd", message: `between ${settings.minTopUpUsd} and ${settings.maxTopUpUsd}` }],
      });
    }
  },
  handler: async ({ amount_usd }, ctx, caller) => {
    const svc = creditsOf(ctx);
    if (!caller.payer || !caller.paymentReference) throw new AppError("BAD_REQUEST", "a top-up must be paid with x402 or MPP (payments are off?)");
    const amount = usdToMicro(amount_usd);
    // The ledger keys the wallet (EVM lower case; a Solana payer's base58 address as it is).
    const { credited, account } = await svc.ledger.credit(caller.payer, amount, caller.paymentReference);
    if (credited) svc.onCredited(amount);
    return { ...(await withRefund(svc, account)), credited_now_usd: credited ? microToUsd(amount) : "0", payment_reference: caller.paymentReference };
  },
});
