import { z } from "zod";
import { venueList } from "../common.js";
import type { PriceParams } from "../../src/alerts/types.js";
import { defineTool } from "../../src/registry/tool.js";
import { PerpSymbol } from "../perp/common.js";
import { ExpiresInHours, WebhookUrl, type AlertKindSpec } from "./common.js";
import { createAlert, CreatedShape, checkCreateBeforePayment } from "./create.js";
import { lifecycleTools } from "./lifecycle.js";

const Side = z.enum(["above", "below"]);

/**
 * Condition fields of price-alert answers: `direction` and `target_price` (docs/alerts.md), plus `condition` (the
 * same value as `direction`), the field name liquidation alerts use for their condition.
 */
const Condition = {
  condition: Side.describe("same as direction (the name liquidation alerts use)"),
  direction: Side,
  target_price: z.number(),
};

/** `POST /price-alert` (docs/alerts.md): a paid webhook alert when the price crosses a target. */
export const priceAlertCreate = defineTool({
  name: "price_alert_create",
  title: "Create a price alert",
  method: "POST",
  path: "/price-alert",
  priceUsd: "0.04",
  cacheTtlSec: 0,
  tags: ["alerts"],
  summary: "Webhook when a perpetual's price goes above or below a target",
  mcpNote: "Keep the answer's manage_token (to read or cancel the alert) and webhook_secret (to check the webhooks' signatures): both are shown once",
  description: `Every evaluation round (default 30 s) the median mark price of the symbol across ${venueList()} is read once for all its alerts; the alert fires when price >= target_price (condition above) or <= target_price (below), then at most once per cooldown (15 min) while that holds, until it expires or is cancelled. Payload: {event: price_alert, alert_id, symbol, data: {triggered, direction, target_price, current_price}, timestamp}; signing, retries and safety as for liquidation alerts. \`direction\` (the spec's name) is accepted as an alias of \`condition\`: give one, or both with the same value (different values: 400); answers carry both. Checked before payment: symbol listed (404), webhook_url (400).`,
  example: { symbol: "ETH", condition: "above", target_price: 5000, webhook_url: "https://hooks.example.com/marketgate", expires_in_hours: 24 },
  input: z
    .object({
      symbol: PerpSymbol,
      condition: Side.optional().describe("above: fire when price >= target_price; below: when price <= target_price. Required unless direction is given"),
      direction: Side.optional().describe("alias of condition (the spec's name); give one of the two, or both with the same value"),
      target_price: z.number().positive().describe("target price, USD"),
      webhook_url: WebhookUrl,
      expires_in_hours: ExpiresInHours,
    })
    .superRefine((i, ctx) => {
      if (i.condition === undefined && i.direction === undefined) {
        ctx.addIssue({ code: "custom", path: ["condition"], message: "condition (above or below) is required; direction is accepted as its alias" });
      } else if (i.condition !== undefined && i.direction !== undefined && i.condition !== i.direction) {
        ctx.addIssue({ code: "custom", path: ["direction"], message: `direction (${i.direction}) contradicts condition (${i.condition}); give one of them` });
      }
    }),
  output: z.object({ ...CreatedShape, ...Condition }),
  paymentFlow: "upfront",
  stateful: true,
  // Creates an alert and destroys nothing: MCP clients need not warn as for a destructive call.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  checkBeforePayment: (i, ctx) => checkCreateBeforePayment(ctx, i.symbol, i.webhook_url),
  async handler(i, ctx, caller) {
    // Checked by the schema: at least one of the two is set, and they agree.
    const direction = (i.condition ?? i.direction)!;
    const params: PriceParams = { direction, target_price: i.target_price };
    const created = await createAlert(ctx, "price", i, params, caller, `Price alert for ${i.symbol}: fires when the price is ${direction} ${i.target_price} USD.`);
    return { condition: direction, ...created };
  },
});

/** What the price-alert lifecycle tools share. */
export const PRICE_ALERTS: AlertKindSpec = {
  kind: "price",
  label: "price alert",
  name: "price_alert",
  itemPath: "/price-alert/:id",
  listPath: "/price-alerts",
  extendPriceUsd: "0.02",
  conditionShape: Condition,
  exampleId: "alert_price_eth_1763700000_1",
};

/** Create, get, cancel, list and extend for price alerts (docs/alerts.md). */
export const priceAlertTools = [priceAlertCreate, ...lifecycleTools(PRICE_ALERTS)];
