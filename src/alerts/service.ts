import { AppError } from "../errors.js";
import { HOUR_MS } from "../lib/time.js";
import type { CallerCredentials } from "../core/types.js";
import { authorize, hashManageToken, newManageToken, verifyOwnerSignature } from "./auth.js";
import type { AlertRepository } from "./repository.js";
import type { AlertKind, AlertRecord, CreateAlert, CreatedAlert, ManageAction } from "./types.js";
import { parseWebhookUrl, resolveWebhookTarget, type WebhookTargetPolicy } from "./webhook/target.js";
import { newWebhookSecret } from "./webhook/sign.js";

/** Longest remaining lifetime of an alert, hours (1 to 168; docs/alerts.md). */
export const MAX_LIFETIME_HOURS = 168;

/** Id prefix per kind: `alert_liq_<symbol>` and `alert_price_<symbol>` (docs/alerts.md). */
const ID_PREFIX: Record<AlertKind, string> = { liquidation: "alert_liq", price: "alert_price" };

/** Options of {@link AlertService}. */
export interface AlertServiceOptions {
  now: () => number;
  /** Which webhook targets are allowed (SSRF policy). */
  target: WebhookTargetPolicy;
  /** Most active alerts (all kinds) the service keeps; creation beyond is refused before payment. */
  maxActive: number;
}

/**
 * Alert lifecycle over an {@link AlertRepository} (SQLite, or Redis shared by replicas): create (after payment), read, authorise, cancel, extend.
 * Rules (docs/alerts.md): only the manage token or an owner-wallet signature may cancel an alert or read
 * its private fields (webhook URL, owner, evaluations, deliveries); listing one wallet's alerts needs that
 * wallet's signature; anyone may pay to extend; remaining lifetime is capped at {@link MAX_LIFETIME_HOURS}.
 * Every method that touches the store is async; with Redis storage they reject with AppError
 * UPSTREAM_UNAVAILABLE (503) while Redis is unreachable, and nothing is stored.
 */
export class AlertService {
  constructor(
    readonly store: AlertRepository,
    private readonly opts: AlertServiceOptions,
  ) {}

  now(): number {
    return this.opts.now();
  }

  /**
   * Checks a webhook URL before any payment: HTTPS, no credentials, and a host resolving only to public
   * addresses (SSRF guard; deliveries check again).
   * @throws AppError BAD_REQUEST with `details.field = "webhook_url"` and the reason.
   */
  async checkWebhook(raw: string): Promise<void> {
    await resolveWebhookTarget(parseWebhookUrl(raw), this.opts.target);
  }

  /** @throws AppError UPSTREAM_UNAVAILABLE (503) when the service holds its maximum of active alerts. */
  async checkCapacity(): Promise<void> {
    if ((await this.store.countActive()) >= this.opts.maxActive) {
      throw new AppError("UPSTREAM_UNAVAILABLE", `this service holds its maximum of ${this.opts.maxActive} active alerts; try again later`, { retryAfterSec: 300 });
    }
  }

  /** Stores a new active alert owned by `owner` (the payer). Secrets are returned once; only the token's hash is kept. */
  async create(kind: AlertKind, req: CreateAlert, owner: string | undefined): Promise<CreatedAlert> {
    const now = this.now();
    const manageToken = newManageToken();
    const webhookSecret = newWebhookSecret();
    const alert = await this.store.insert(`${ID_PREFIX[kind]}_${req.symbol.toLowerCase()}`, {
      kind,
      symbol: req.symbol,
      params: req.params,
      webhookUrl: req.webhookUrl,
      webhookSecret,
      manageTokenHash: hashManageToken(manageToken),
      owner: owner?.toLowerCase() ?? null,
      createdAt: now,
      expiresAt: now + req.expiresInHours * HOUR_MS,
    });
    return { alert, webhookSecret, manageToken };
  }

  /**
   * The alert `id` of `kind`, with overdue expiry applied first (so a read never shows an alert active
   * past its expiry, whatever the scheduler's timing).
   * @throws AppError NOT_FOUND for an unknown id or an id of the other kind.
   */
  async require(kind: AlertKind, id: string): Promise<AlertRecord> {
    await this.store.expireDue(this.now());
    const a = await this.store.get(id);
    if (!a || a.kind !== kind) throw new AppError("NOT_FOUND", `no ${kind} alert '${id}'`);
    return a;
  }

  /** Who the credentials prove the caller to be (see `authorize`), or null. */
  authorize(alert: AlertRecord, creds: CallerCredentials, action: ManageAction): Promise<"manage_token" | "owner_wallet" | null> {
    return authorize(alert, creds, action, this.now());
  }

  /**
   * Cancels an active alert and its pending deliveries. Cancelling a cancelled alert answers its record
   * again (DELETE is idempotent).
   * @throws AppError NOT_FOUND; FORBIDDEN without the manage token or an owner signature of
   *   `marketgate:cancel:<id>:<signed_at>`; CONFLICT when the alert already expired.
   */
  async cancel(kind: AlertKind, id: string, creds: CallerCredentials): Promise<AlertRecord> {
    const alert = await this.require(kind, id);
    if (!(await this.authorize(alert, creds, "cancel"))) {
      throw new AppError(
        "FORBIDDEN",
        "cancelling an alert needs its manage token (Authorization: Bearer <manage_token>) or a signature by the owner wallet (X-Wallet-Signature, X-Signed-At)",
      );
    }
    if (alert.status === "expired") throw new AppError("CONFLICT", `alert '${id}' already expired`);
    await this.store.cancel(id, this.now());
    return (await this.store.get(id))!;
  }

  /**
   * New expiry after adding `addHours`, capped so that the remaining lifetime is at most 168 h.
   * @throws AppError NOT_FOUND; CONFLICT when the alert is not active; BAD_REQUEST when it already has
   *   the full 168 h remaining (nothing to add).
   */
  async extension(kind: AlertKind, id: string, addHours: number): Promise<{ alert: AlertRecord; expiresAt: number; addedMs: number }> {
    const alert = await this.require(kind, id);
    if (alert.status !== "active") throw new AppError("CONFLICT", `alert '${id}' is ${alert.status}; only active alerts can be extended`);
    const cap = this.now() + MAX_LIFETIME_HOURS * HOUR_MS;
    const expiresAt = Math.min(alert.expiresAt + addHours * HOUR_MS, cap);
    if (expiresAt <= alert.expiresAt)
      throw new AppError("BAD_REQUEST", `alert '${id}' already has the maximum ${MAX_LIFETIME_HOURS} h of remaining lifetime`, {
        details: [{ field: "add_hours", message: "nothing to add" }],
      });
    return { alert, expiresAt, addedMs: expiresAt - alert.expiresAt };
  }

  /**
   * Extends an active alert (after payment): re-checks {@link extension} against the current state and
   * writes the new expiry. @throws AppError as {@link extension}.
   */
  async extend(kind: AlertKind, id: string, addHours: number): Promise<{ alert: AlertRecord; addedMs: number }> {
    const { expiresAt, addedMs } = await this.extension(kind, id, addHours);
    if (!(await this.store.setExpiry(id, expiresAt))) throw new AppError("CONFLICT", `alert '${id}' is no longer active`);
    return { alert: (await this.store.get(id))!, addedMs };
  }

  /**
   * Checks that `creds` prove control of `wallet`, which lets the caller list that wallet's alerts with
   * their private fields: an EIP-191 signature by `wallet` of `marketgate:list:<wallet in lowercase>:<signed_at>`
   * (X-Wallet-Signature / X-Signed-At, or the MCP arguments), within 5 minutes of the server clock.
   * Manage tokens do not count: each belongs to one alert. Filtering by wallet without this proof would
   * tell anyone which alerts a wallet owns, so it is refused rather than answered publicly.
   * @throws AppError FORBIDDEN without a valid signature.
   */
  async requireWallet(wallet: string, creds: CallerCredentials): Promise<void> {
    const w = wallet.toLowerCase();
    if (!(await verifyOwnerSignature(w, "list", w, creds, this.now()))) {
      throw new AppError(
        "FORBIDDEN",
        `listing the alerts of a wallet needs a signature by that wallet: an EIP-191 signature of 'marketgate:list:${w}:<unix_seconds>' as X-Wallet-Signature (MCP: wallet_signature) and those seconds, within 5 minutes of now, as X-Signed-At (MCP: signed_at)`,
      );
    }
  }

  /** Active alerts of a kind, optionally of one owner wallet, oldest first. Does not check who asks (see {@link requireWallet}). */
  async listActive(kind: AlertKind, wallet?: string): Promise<AlertRecord[]> {
    await this.store.expireDue(this.now());
    return this.store.active(kind, wallet);
  }
}
