import { z } from "zod";
import { describeToken } from "../../src/analytics/dex-token.js";
import type { PriceParams } from "../../src/alerts/types.js";
import type { ToolContext } from "../../src/core/context.js";
import { AppError } from "../../src/errors.js";
import { defineTool, type UnpaidCaller } from "../../src/registry/tool.js";
import { NETWORK_SLUG } from "../../src/venues/dex/token-address.js";
import type { DexChain } from "../../src/venues/dex/types.js";
import { AddressParam, canonicalAddress, NetworkParam, refineAddress, requireKnownToken } from "../dex/token-common.js";
import { alertService, beforePayment, ExpiresInHours, WebhookUrl } from "./common.js";
import { createAlert, CreatedShape } from "./create.js";
import { tokenAlertSymbol } from "./token-symbol.js";

const Side = z.enum(["above", "below"]);

/**
 * Before payment: alert capacity, webhook URL, the token known to a source, and the guards: a token marked
 * low_liquidity or unverified is refused (400) unless `allow_unverified` is true.
 */
async function checkTokenAlert(ctx: ToolContext, caller: UnpaidCaller, i: { network: DexChain; address: string; webhook_url: string; allow_unverified: boolean }): Promise<void> {
  const svc = alertService(ctx);
  await beforePayment(() => svc.checkCapacity());
  // Settled before it runs: the token must be known before payment, never left to the paid run.
  await Promise.all([requireKnownToken(i.network, i.address, ctx, caller, { upfront: true }), svc.checkWebhook(i.webhook_url)]);
  const snap = await ctx.venues.dexTokens.snapshot(i.network, canonicalAddress(i.network, i.address), "unpaid");
  const v = describeToken(snap, ctx.now());
  if (v.priceUsd === null) throw new AppError("NOT_FOUND", `no source prices ${i.address.slice(0, 64)} on ${NETWORK_SLUG[i.network]} now`);
  const reasons = [...(v.lowLiquidity ? ["low_liquidity"] : []), ...(v.unverified ? ["unverified"] : [])];
  if (reasons.length && !i.allow_unverified) {
    throw new AppError("BAD_REQUEST", `token is ${reasons.join(" and ")} (docs/methods/dex-tokens.md floors); set allow_unverified=true to watch it anyway`, {
      details: { flags: v.flags, liquidity_usd: v.bestLiquidityUsd, trades_24h: v.trades24h, pool_age_days: v.poolAgeDays },
    });
  }
}

/** `POST /dex/token-alert` (network and address in the body, like `/price-alert`): a price alert on any token by address (managed with the price_alert_* tools). */
export const tokenPriceAlertCreate = defineTool({
  name: "dex_token_alert_create",
  title: "Create a price alert on a token by address",
  method: "POST",
  path: "/dex/token-alert",
  priceUsd: "0.04",
  cacheTtlSec: 0,
  tags: ["alerts"],
  summary: "Webhook when a token's price (by network and address) crosses a target",
  mcpNote: "Refused for low_liquidity/unverified tokens unless allow_unverified=true. Manage it with the price_alert_* tools; keep manage_token and webhook_secret.",
  description:
    "A price alert whose price is dex_token's liquidity-weighted price of the token (GeckoTerminal + DexScreener), read every evaluation round. It is stored as a price alert with symbol token:<network>:<address>, so price_alert_get, _cancel, _list and _extend manage it, and its webhooks are price_alert events. Tokens below the floors (low_liquidity or unverified, docs/methods/dex-tokens.md) are refused before payment unless allow_unverified is true. Checked before payment: address (400), token known (404), guards (400), webhook_url (400).",
  example: {
    network: "base",
    address: "0x4200000000000000000000000000000000000006",
    condition: "above",
    target_price: 5000,
    webhook_url: "https://hooks.example.com/marketgate",
    expires_in_hours: 24,
  },
  input: z
    .object({
      network: NetworkParam,
      address: AddressParam,
      condition: Side.describe("above: fire when price >= target_price; below: when price <= target_price"),
      target_price: z.number().positive().describe("target price, USD"),
      allow_unverified: z.boolean().default(false).describe("watch a token marked low_liquidity or unverified anyway (default false: refused)"),
      webhook_url: WebhookUrl,
      expires_in_hours: ExpiresInHours,
    })
    .superRefine(refineAddress),
  output: z.object({ ...CreatedShape, condition: Side, direction: Side, target_price: z.number(), network: z.string(), address: z.string() }),
  paymentFlow: "upfront",
  stateful: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  checkBeforePayment: (i, ctx, caller) => checkTokenAlert(ctx, caller, i),
  async handler(i, ctx, caller) {
    const address = canonicalAddress(i.network, i.address);
    const params: PriceParams = { direction: i.condition, target_price: i.target_price };
    const symbol = tokenAlertSymbol(i.network, address);
    const created = await createAlert(
      ctx,
      "price",
      { ...i, symbol },
      params,
      caller,
      `Price alert for ${address} on ${NETWORK_SLUG[i.network]}: fires when its price is ${i.condition} ${i.target_price} USD.`,
    );
    return { condition: i.condition, network: NETWORK_SLUG[i.network], address, ...created };
  },
});
