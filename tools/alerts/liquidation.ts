import { z } from "zod";
import type { LiquidationParams } from "../../src/alerts/types.js";
import { ALERT_DEFAULT_THRESHOLD_PCT } from "../../src/analytics/cascade-risk.js";
import { defineTool } from "../../src/registry/tool.js";
import { PerpSymbol } from "../perp/common.js";
import { ExpiresInHours, WebhookUrl, type AlertKindSpec } from "./common.js";
import { createAlert, CreatedShape, checkCreateBeforePayment } from "./create.js";
import { lifecycleTools } from "./lifecycle.js";

const Condition = {
  condition: z.literal("cascade_risk"),
  threshold_pct: z.number(),
  min_value_usd: z.number(),
};

/** `POST /liquidation/alert` (docs/alerts.md): a paid webhook alert on the heatmap's OI at risk. */
export const liquidationAlertCreate = defineTool({
  name: "liquidation_alert_create",
  title: "Create a liquidation alert",
  method: "POST",
  path: "/liquidation/alert",
  priceUsd: "0.06",
  cacheTtlSec: 0,
  tags: ["alerts", "liquidations"],
  summary: "Webhook when estimated liquidation cascade risk crosses a threshold",
  mcpNote: "Keep the answer's manage_token (to read or cancel the alert) and webhook_secret (to check the webhooks' signatures): both are shown once",
  description:
    "Every evaluation round (default 30 s) the liquidation heatmap of the symbol is computed once for all its alerts; the alert fires when risk_summary.oi_at_risk_pct >= threshold_pct and total_oi_at_risk_usd >= min_value_usd, then at most once per cooldown (15 min) while that holds, until it expires or is cancelled. Deliveries: HTTPS POST of the payload documented in docs/alerts.md (event liquidation_alert, alert_id, symbol, severity, data, timestamp), signed with X-Marketgate-Signature (HMAC-SHA256 of '<timestamp>.<body>' with webhook_secret) and X-Marketgate-Timestamp, and per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature; webhook_secret is a whsec_ secret); 5 s timeout, 2xx = delivered, redirects not followed, 6 attempts with backoff 10 s x 3^n. Checked before payment: symbol listed (404), webhook_url HTTPS on an allowed port (443 unless the operator allows more) and resolving only to public addresses (400). The payment settles before the alert is stored; the paying wallet becomes its owner.",
  example: { symbol: "BTC", threshold_pct: 5, webhook_url: "https://hooks.example.com/marketgate", expires_in_hours: 24 },
  input: z.object({
    symbol: PerpSymbol,
    condition: z.literal("cascade_risk").default("cascade_risk").describe("alert condition; only cascade_risk"),
    threshold_pct: z
      .number()
      .gt(0)
      .max(100)
      .default(ALERT_DEFAULT_THRESHOLD_PCT)
      .describe(
        `forecast share of open interest liquidated over the next 24 h (risk_summary.oi_at_risk_pct), percent, that triggers the alert; default ${ALERT_DEFAULT_THRESHOLD_PCT}: the heatmap's 'high' threshold (docs/methods/liquidation-heatmap.md)`,
      ),
    min_value_usd: z.number().min(0).default(0).describe("minimum USD open interest at risk to trigger"),
    webhook_url: WebhookUrl,
    expires_in_hours: ExpiresInHours,
  }),
  output: z.object({ ...CreatedShape, ...Condition }),
  paymentFlow: "upfront",
  stateful: true,
  // Creates an alert and destroys nothing: MCP clients need not warn as for a destructive call.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  checkBeforePayment: (i, ctx) => checkCreateBeforePayment(ctx, i.symbol, i.webhook_url),
  async handler(i, ctx, caller) {
    const params: LiquidationParams = { condition: i.condition, threshold_pct: i.threshold_pct, min_value_usd: i.min_value_usd };
    const describe = `Liquidation alert for ${i.symbol}: fires when at least ${i.threshold_pct}% of open interest (and at least $${i.min_value_usd}) is at risk.`;
    return createAlert(ctx, "liquidation", i, params, caller, describe);
  },
});

/** What the liquidation-alert lifecycle tools share. */
export const LIQUIDATION_ALERTS: AlertKindSpec = {
  kind: "liquidation",
  label: "liquidation alert",
  name: "liquidation_alert",
  itemPath: "/liquidation/alert/:id",
  listPath: "/liquidation/alerts",
  extendPriceUsd: "0.03",
  conditionShape: Condition,
  exampleId: "alert_liq_btc_1763700000_1",
};

/** Create, get, cancel, list and extend for liquidation alerts (docs/alerts.md). */
export const liquidationAlertTools = [liquidationAlertCreate, ...lifecycleTools(LIQUIDATION_ALERTS)];
