/*
 * Who calls a tool, and the ports through which a tool handler reaches stateful services (alerts, prepaid
 * credits). Pure type declarations: this file imports only type files that import nothing else
 * (src/alerts/types.ts, src/payments/credits/ledger.ts and types.ts), so the registry, the services and
 * the tools can all name these types without closing an import cycle. The composition root
 * (src/service.ts) hands the concrete services to the context; they satisfy these ports structurally.
 */
import type { AlertKind, AlertRecord, CreateAlert, CreatedAlert, DeliveryRecord, ManageAction } from "../alerts/types.js";
import type { CreditLedger, CreditRefund } from "../payments/credits/ledger.js";
import type { CreditSettings, RefundAnswer } from "../payments/credits/types.js";

/** Credentials a caller presents to manage a resource it owns (an alert); every field optional. */
export interface CallerCredentials {
  /** The resource's manage token (`Authorization: Bearer <token>` / MCP `manage_token`). */
  bearerToken?: string;
  /** EIP-191 signature by the owner wallet (`X-Wallet-Signature` / MCP `wallet_signature`), 0x hex. */
  walletSignature?: string;
  /** Unix seconds covered by the signature (`X-Signed-At` / MCP `signed_at`). */
  signedAt?: string;
}

/** Who is calling, as far as the transport can tell. */
export interface CallerInfo {
  /** Wallet that paid for this call (x402 / MPP payer, or the SIWX wallet of a credit-paid call), lower case. */
  payer?: string;
  /**
   * Unique reference of the settled payment of this call (the x402 authorization's ledger key), for
   * handlers that must act once per payment (credit top-ups).
   */
  paymentReference?: string;
  /** Wallet proven by a Sign-In-With-X proof on this request (tools with `auth: "siwx"`), lower case. */
  wallet?: string;
  credentials: CallerCredentials;
}

/** Who sends a request, as far as is known before any payment (what `checkBeforePayment`, `interimAnswer` and stream symbols see). */
export interface UnpaidCaller {
  /**
   * The client's address as the rate limiters key it (`req.ip`, also for MCP over HTTP): free work a
   * interim answer starts (a CVD warm-up) is budgeted per client. Undefined over MCP stdio (the operator's agent).
   */
  client?: string;
  /**
   * The request carries a payment or a credits proof (not checked yet): a check before payment may leave to the
   * paid run what only an upstream call could tell, when a failure there charges nothing (token lookups).
   */
  paying?: boolean;
}

/**
 * The alert lifecycle as the alert tools use it (implemented by `AlertService`, src/alerts/service.ts).
 * Methods reject with `AppError`: NOT_FOUND, FORBIDDEN, CONFLICT, BAD_REQUEST as documented there, and
 * UPSTREAM_UNAVAILABLE (503) while the alert storage is unreachable or full.
 */
export interface AlertPort {
  /** Checks a webhook URL before payment (HTTPS, public addresses only). */
  checkWebhook(raw: string): Promise<void>;
  /** Refuses creation while the service holds its maximum of active alerts. */
  checkCapacity(): Promise<void>;
  /** Stores a new active alert owned by `owner` (the payer); the secrets are returned once. */
  create(kind: AlertKind, req: CreateAlert, owner: string | undefined): Promise<CreatedAlert>;
  /** The alert `id` of `kind`, overdue expiry applied first. */
  require(kind: AlertKind, id: string): Promise<AlertRecord>;
  /** Who the credentials prove the caller to be for `action` on `alert`, or null. */
  authorize(alert: AlertRecord, creds: CallerCredentials, action: ManageAction): Promise<"manage_token" | "owner_wallet" | null>;
  /** Cancels an alert the credentials may manage. */
  cancel(kind: AlertKind, id: string, creds: CallerCredentials): Promise<AlertRecord>;
  /** The new expiry (epoch ms) after adding `addHours`, checked before payment. */
  extension(kind: AlertKind, id: string, addHours: number): Promise<{ alert: AlertRecord; expiresAt: number; addedMs: number }>;
  /** Writes the extension (after payment). */
  extend(kind: AlertKind, id: string, addHours: number): Promise<{ alert: AlertRecord; addedMs: number }>;
  /** Checks that the credentials carry a signature by `wallet` (listing its alerts). */
  requireWallet(wallet: string, creds: CallerCredentials): Promise<void>;
  /** Active alerts of a kind, optionally of one owner wallet, oldest first. */
  listActive(kind: AlertKind, wallet?: string): Promise<AlertRecord[]>;
  /** The reads of the alert storage the tools make directly. */
  readonly store: {
    /** The latest `limit` deliveries of an alert, newest first. */
    deliveries(alertId: string, limit: number): DeliveryRecord[] | Promise<DeliveryRecord[]>;
    /** Number of active alerts of every kind (the status tool). */
    countActive(): number | Promise<number>;
  };
}

/**
 * Prepaid credit accounts as the credits tools use them (implemented by `CreditService`,
 * src/payments/credits/service.ts). Amounts are micro-USD integers; wallets are lower-case 0x addresses.
 */
export interface CreditAccountsPort {
  /** The operator's settings (top-up bounds, global caps, refunds on or off). */
  readonly settings: CreditSettings;
  /** The account operations the tools call (see `CreditLedger` for each one's contract). */
  readonly ledger: Pick<CreditLedger, "account" | "credit" | "setCaps" | "latestRefund">;
  /**
   * Refunds paid by the `self` facilitator's relayer; present whenever that facilitator is configured
   * (new refunds are accepted only when `settings.refund` is on).
   */
  readonly refunds?: {
    /** Refunds the wallet's whole balance. */
    refund(wallet: string): Promise<RefundAnswer>;
    /** Settles the wallet's open refund with the chain; its refund as it now stands, or undefined. */
    reconcileWallet(wallet: string): Promise<CreditRefund | undefined>;
  };
  /** Counts a top-up of `amountMicro` in `/metrics`. */
  onCredited(amountMicro: number): void;
}
