import { z } from "zod";
import { usdToMicro } from "../../src/payments/credits/ledger.js";
import { defineTool } from "../../src/registry/tool.js";
import { AccountOut, creditsOf, readAccount, UsdString, walletOf, withRefund } from "./common.js";

/** `GET /api/v1/credits` (free, SIWX): the signed-in wallet's balance, holds, refund, spending and caps. */
export const creditsGet = defineTool({
  name: "credits_get",
  title: "Credit balance",
  method: "GET",
  path: "/api/v1/credits",
  priceUsd: "free",
  cacheTtlSec: 0,
  tags: ["credits"],
  summary: "The signed-in wallet's credit balance, credits held by calls in flight, refund, spending and caps (SIWX)",
  description:
    "Free. Needs a SIGN-IN-WITH-X proof (header, or MCP _meta['x402/sign-in-with-x']); without one the answer is a 402 carrying the SIWX challenge, which the official wrapFetchWithSIWx client answers by itself. A pending refund is checked on chain first: refund_pending_usd and refund show where it stands.",
  example: {},
  auth: "siwx",
  stateful: true,
  input: z.object({}),
  output: AccountOut,
  handler: async (_input, ctx, caller) => {
    return readAccount(creditsOf(ctx), walletOf(caller));
  },
});

const Cap = UsdString.nullable().optional();

/** `POST /api/v1/credits/caps` (free, SIWX): the signed-in wallet sets its own spending caps. */
export const creditsSetCaps = defineTool({
  name: "credits_set_caps",
  title: "Set credit spending caps",
  method: "POST",
  path: "/api/v1/credits/caps",
  priceUsd: "free",
  cacheTtlSec: 0,
  tags: ["credits"],
  summary: "Set the signed-in wallet's own per-call, per-hour and per-day spending caps (SIWX)",
  description:
    "Free; signed with SIGN-IN-WITH-X by the wallet. Replaces the wallet's caps (omitted or null = no cap of that kind). A credit-paid call above a cap (the wallet's or the operator's) is refused with 402 and the cap named; it can still be paid per call with x402.",
  example: { per_call_max_usd: "0.05", per_day_max_usd: "5" },
  auth: "siwx",
  stateful: true,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  input: z.object({ per_call_max_usd: Cap, per_hour_max_usd: Cap, per_day_max_usd: Cap }),
  output: AccountOut,
  handler: async (input, ctx, caller) => {
    const svc = creditsOf(ctx);
    const micro = (v?: string | null) => (v ? usdToMicro(v) : undefined);
    const account = await svc.ledger.setCaps(walletOf(caller), {
      perCallMaxMicro: micro(input.per_call_max_usd),
      perHourMaxMicro: micro(input.per_hour_max_usd),
      perDayMaxMicro: micro(input.per_day_max_usd),
    });
    return withRefund(svc, account);
  },
});
