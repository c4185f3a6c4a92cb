import { z } from "zod";
import { ALERT_STORAGE_RETRY_SEC, ALERT_STORAGE_UNREACHABLE, isAlertStorageError } from "../../src/alerts/redis-store.js";
import { MAX_LIFETIME_HOURS } from "../../src/alerts/service.js";
import type { AlertKind, AlertRecord, DeliveryRecord, PriceParams } from "../../src/alerts/types.js";
import type { ToolContext } from "../../src/core/context.js";
import type { AlertPort } from "../../src/core/types.js";
import { AppError } from "../../src/errors.js";

/** Deliveries shown in an alert record, newest first. */
export const SHOWN_DELIVERIES = 10;

/** The alert service. @throws AppError UPSTREAM_UNAVAILABLE (503) when alerts are off (`ALERTS=off`). */
export function alertService(ctx: ToolContext): AlertPort {
  if (!ctx.alerts) throw new AppError("UPSTREAM_UNAVAILABLE", "alerts are disabled on this server (ALERTS=off)");
  return ctx.alerts;
}

/**
 * Runs a check before payment: an alert storage that cannot be reached answers 503 saying that
 * nothing was stored or charged.
 */
export async function beforePayment<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!isAlertStorageError(err)) throw err;
    throw new AppError("UPSTREAM_UNAVAILABLE", `${ALERT_STORAGE_UNREACHABLE}; nothing was stored or charged, try again in a few seconds`, {
      retryAfterSec: ALERT_STORAGE_RETRY_SEC,
      cause: err.cause,
    });
  }
}

/** `:id` of an alert. */
export const AlertId = z.string().min(1).max(120).describe("alert id returned at creation");

/** `webhook_url` of a create request; the SSRF rules are checked before payment (docs/alerts.md). */
export const WebhookUrl = z
  .string()
  .max(2048)
  .refine((u) => u.startsWith("https://"), "webhook_url must be an https:// URL")
  .describe("HTTPS URL receiving signed POSTs; must resolve to public addresses only, on port 443 unless the operator allows more");

/** `expires_in_hours` (1 to 168, default 24; docs/alerts.md). */
export const ExpiresInHours = z.number().int().min(1).max(MAX_LIFETIME_HOURS).default(24).describe("alert lifetime in hours, 1 to 168");

/** Body of an extend request. */
export const ExtendInput = z.object({
  id: AlertId,
  add_hours: z.number().int().min(1).max(MAX_LIFETIME_HOURS).describe("hours to add, 1 to 168; the remaining lifetime is capped at 168 h"),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const Delivery = z.object({
  delivery_id: z.string().describe("also sent as X-Marketgate-Delivery; the same across retries"),
  event: z.string(),
  status: z.enum(["pending", "delivered", "failed", "cancelled"]),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
  next_attempt_at: z.string().nullable().describe("when a pending delivery is tried next"),
  attempts: z.array(
    z.object({ at: z.string(), status: z.number().nullable().describe("HTTP status, null when none came back"), error: z.string().optional(), duration_ms: z.number() }),
  ),
});

/**
 * How much of an alert a view shows. `public`: what anyone may see (id, type, symbol, status, condition
 * fields, created_at, expires_at). `owner`: everything, for a caller holding the manage token or an
 * owner-wallet signature. Alert ids are listed publicly, so they are no secret; the credentials are.
 */
export type AlertVisibility = "public" | "owner";

/** Prefix of the description of every field only the owner view has. */
const OWNER_ONLY = "owner view only (visibility 'owner'):";

/**
 * Fields of every alert view (the kind adds its condition fields, which are public). Fields marked
 * optional are present only in the owner view, so one schema describes both views for OpenAPI and MCP.
 */
export const AlertViewBase = {
  alert_id: z.string(),
  type: z.enum(["liquidation", "price"]),
  symbol: z.string(),
  status: z.enum(["active", "cancelled", "expired"]),
  created_at: z.string(),
  expires_at: z.string(),
  visibility: z.enum(["public", "owner"]).describe("public: no credentials, only the public fields; owner: manage token or owner-wallet signature, every field"),
  webhook_url: z.string().optional().describe(`${OWNER_ONLY} the full webhook URL`),
  owner: z.string().nullable().optional().describe(`${OWNER_ONLY} paying wallet (lowercase), when the payment named one`),
  ended_at: z.string().nullable().optional().describe(`${OWNER_ONLY} when it was cancelled or expired`),
  last_evaluated_at: z.string().nullable().optional().describe(OWNER_ONLY),
  last_evaluation: z
    .object({ value: z.number().optional(), condition_met: z.boolean().optional(), cascade_risk: z.string().optional(), error: z.string().optional() })
    .nullable()
    .optional()
    .describe(`${OWNER_ONLY} value: oi_at_risk_pct (liquidation) or price (price alert) at the last round`),
  last_triggered_at: z.string().nullable().optional().describe(OWNER_ONLY),
  trigger_count: z.number().int().optional().describe(OWNER_ONLY),
  deliveries: z.array(Delivery).optional().describe(`${OWNER_ONLY} latest 10 webhook deliveries, newest first (single-alert reads only)`),
};

function deliveryView(d: DeliveryRecord): z.infer<typeof Delivery> {
  return {
    delivery_id: d.id,
    event: d.event,
    status: d.status,
    created_at: iso(d.createdAt)!,
    delivered_at: iso(d.deliveredAt),
    next_attempt_at: d.status === "pending" ? iso(d.nextAttemptAt) : null,
    attempts: d.attempts.map((a) => ({ at: iso(a.at)!, status: a.status, ...(a.error ? { error: a.error } : {}), duration_ms: a.duration_ms })),
  };
}

/**
 * The view of an alert: kind-specific condition fields spread at the top level. `visibility: "public"`
 * gives the public fields only (never the webhook URL, owner, evaluations or deliveries, which are not
 * even read); `"owner"` adds every private field, and the latest deliveries when `withDeliveries`
 * (read from the store). The caller decides the visibility from the credentials.
 */
export async function alertView(svc: AlertPort, a: AlertRecord, opts: { visibility: AlertVisibility; withDeliveries: boolean }) {
  const view = {
    alert_id: a.id,
    type: a.kind,
    symbol: a.symbol,
    status: a.status,
    // Price alerts answer their direction as `condition` too, the field name liquidation alerts use.
    ...(a.kind === "price" ? { condition: (a.params as PriceParams).direction } : {}),
    ...a.params,
    created_at: iso(a.createdAt)!,
    expires_at: iso(a.expiresAt)!,
    visibility: opts.visibility,
  };
  if (opts.visibility === "public") return view;
  const deliveries = opts.withDeliveries ? (await svc.store.deliveries(a.id, SHOWN_DELIVERIES)).map(deliveryView) : undefined;
  return {
    ...view,
    webhook_url: a.webhookUrl,
    owner: a.owner,
    ended_at: iso(a.endedAt),
    last_evaluated_at: iso(a.lastEvaluatedAt),
    last_evaluation: a.lastEvaluation,
    last_triggered_at: iso(a.lastTriggeredAt),
    trigger_count: a.triggerCount,
    ...(deliveries ? { deliveries } : {}),
  };
}

/** What the lifecycle tools of one alert kind share. */
export interface AlertKindSpec {
  kind: AlertKind;
  /** Human name: `liquidation alert`, `price alert`. */
  label: string;
  /** Tool name stem: `liquidation_alert`, `price_alert`. */
  name: string;
  /** Path of one alert, with `:id`: `/liquidation/alert/:id`. */
  itemPath: string;
  /** Path of the list: `/liquidation/alerts`. */
  listPath: string;
  /** Price of an extension, USD. */
  extendPriceUsd: string;
  /** Zod shape of the kind's condition fields in views. */
  conditionShape: z.ZodRawShape;
  /** Example id, for docs. */
  exampleId: string;
}
