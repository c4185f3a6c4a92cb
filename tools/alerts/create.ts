import { z } from "zod";
import type { AlertKind, LiquidationParams, PriceParams } from "../../src/alerts/types.js";
import type { ToolContext } from "../../src/core/context.js";
import type { CallerInfo } from "../../src/registry/tool.js";
import { requireListed } from "../perp/common.js";
import { alertService, beforePayment } from "./common.js";

/** Response fields every create answer has (docs/alerts.md, plus the two secrets). */
export const CreatedShape = {
  alert_id: z.string(),
  symbol: z.string(),
  status: z.literal("active"),
  webhook_url: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  owner: z.string().nullable().describe("paying wallet, which may cancel by signature"),
  webhook_secret: z
    .string()
    .describe(
      "Signing secret of this alert's deliveries, a Standard Webhooks secret (whsec_<base64>): webhook-signature = v1,base64(HMAC-SHA256(base64-decoded part after whsec_, '<webhook-id>.<webhook-timestamp>.<body>')), verifiable with any Standard Webhooks library; X-Marketgate-Signature = sha256=hex(HMAC-SHA256(the whole secret string, '<X-Marketgate-Timestamp>.<body>')). Shown once.",
    ),
  manage_token: z.string().describe("send as Authorization: Bearer <manage_token> to cancel or to read the full record. Shown once; only its hash is stored."),
  message: z.string(),
};

/** The check before payment of a create request: symbol listed on a perp venue, capacity, webhook URL safe. */
export async function checkCreateBeforePayment(ctx: ToolContext, symbol: string, webhookUrl: string): Promise<void> {
  const svc = alertService(ctx);
  await beforePayment(() => svc.checkCapacity());
  await Promise.all([requireListed(symbol, ctx), svc.checkWebhook(webhookUrl)]);
}

/** The fields every create request has (validated). */
interface CreateInput {
  symbol: string;
  webhook_url: string;
  expires_in_hours: number;
}

/** Stores the alert (after the upfront settlement) owned by the payer; returns the create answer: `params` (the kind's condition fields) and the common fields. */
export async function createAlert<P extends LiquidationParams | PriceParams>(
  ctx: ToolContext,
  kind: AlertKind,
  input: CreateInput,
  params: P,
  caller: CallerInfo,
  describe: string,
) {
  const req = { symbol: input.symbol, params, webhookUrl: input.webhook_url, expiresInHours: input.expires_in_hours };
  const { alert, webhookSecret, manageToken } = await alertService(ctx).create(kind, req, caller.payer);
  return {
    ...params,
    alert_id: alert.id,
    symbol: alert.symbol,
    status: "active" as const,
    webhook_url: alert.webhookUrl,
    created_at: new Date(alert.createdAt).toISOString(),
    expires_at: new Date(alert.expiresAt).toISOString(),
    owner: alert.owner,
    webhook_secret: webhookSecret,
    manage_token: manageToken,
    message: `${describe} Evaluated every round until ${new Date(alert.expiresAt).toISOString()}; keep webhook_secret and manage_token, they are not shown again.`,
  };
}
