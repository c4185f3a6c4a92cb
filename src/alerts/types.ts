/**
 * Alert records shared by the store, the service, the engine and the tools. Times are epoch ms.
 */

/** Kinds of alert: liquidation cascade risk and price crossing (docs/alerts.md). */
export type AlertKind = "liquidation" | "price";

/** Lifecycle (docs/alerts.md): `active` → `cancelled` (DELETE) or `expired` (expires_at reached). */
export type AlertStatus = "active" | "cancelled" | "expired";

/** Condition parameters of a liquidation alert. */
export interface LiquidationParams {
  condition: "cascade_risk";
  /** Triggers when the heatmap's `oi_at_risk_pct` ≥ this, percent. */
  threshold_pct: number;
  /** …and `total_oi_at_risk_usd` ≥ this, USD. */
  min_value_usd: number;
}

/** Condition parameters of a price alert. */
export interface PriceParams {
  /** `above`: price ≥ target; `below`: price ≤ target. */
  direction: "above" | "below";
  target_price: number;
}

/** One alert as stored. `webhookSecret` signs deliveries; only the hash of the manage token is kept. */
export interface AlertRecord {
  id: string;
  kind: AlertKind;
  symbol: string;
  params: LiquidationParams | PriceParams;
  webhookUrl: string;
  webhookSecret: string;
  manageTokenHash: string;
  /** Paying wallet (lowercase 0x address), when the payment named one. */
  owner: string | null;
  status: AlertStatus;
  createdAt: number;
  expiresAt: number;
  /** When it left `active` (cancellation or expiry time), else null. */
  endedAt: number | null;
  lastEvaluatedAt: number | null;
  /** What the last evaluation measured (oi_at_risk_pct or price), or its error. */
  lastEvaluation: { value?: number; condition_met?: boolean; cascade_risk?: string; error?: string } | null;
  lastTriggeredAt: number | null;
  triggerCount: number;
}

/** Delivery states: `pending` (waiting for an attempt), `delivered` (2xx), `failed` (attempts exhausted), `cancelled` (alert cancelled first). */
export type DeliveryStatus = "pending" | "delivered" | "failed" | "cancelled";

/** One attempt of a delivery. */
export interface AttemptRecord {
  at: number;
  status: number | null;
  error?: string;
  duration_ms: number;
}

/** One webhook delivery (outbox row): the signed payload is fixed at trigger time. */
export interface DeliveryRecord {
  id: string;
  alertId: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  createdAt: number;
  nextAttemptAt: number;
  attempts: AttemptRecord[];
  deliveredAt: number | null;
}

/**
 * Actions an owner signature can authorise; the action is part of the signed message, so a signature
 * for one action (or one alert) never authorises another.
 */
export type ManageAction = "read" | "cancel" | "list";

/** What a caller asks for when creating an alert (already validated by the tool's schema). */
export interface CreateAlert {
  symbol: string;
  params: LiquidationParams | PriceParams;
  webhookUrl: string;
  expiresInHours: number;
}

/** A created alert and the two secrets shown only once. */
export interface CreatedAlert {
  alert: AlertRecord;
  webhookSecret: string;
  manageToken: string;
}
