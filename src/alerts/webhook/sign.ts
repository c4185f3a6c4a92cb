/**
 * Webhook signatures. Every delivery is signed twice with the alert's `webhook_secret` (`whsec_<base64>`):
 *
 * - **Standard Webhooks** (https://www.standardwebhooks.com): `webhook-id` (the delivery id, the same across
 *   retries), `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key,
 *   "<webhook-id>.<webhook-timestamp>.<raw body>")>`, where `key` is the base64-decoded part of the secret
 *   after `whsec_` (the spec's rule). Any Standard Webhooks library verifies it, e.g. the `standardwebhooks`
 *   npm package: `new Webhook(webhook_secret).verify(rawBody, headers)`.
 * - **marketgate's own header** (docs/alerts.md, "Webhooks and delivery"): `X-Marketgate-Timestamp` (Unix seconds) and
 *   `X-Marketgate-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`, where the key is the
 *   whole secret string as UTF-8 bytes, `whsec_` prefix included (as before Standard Webhooks were added, so
 *   existing receivers keep verifying unchanged); {@link verifyWebhookSignature} checks it.
 *
 * Both sign the timestamp with the body so that receivers can refuse replays of old deliveries. Secrets made
 * before the standard encoding were base64url (`-`, `_`): the same key bytes, so Standard Webhooks libraries
 * accept them once `-` is replaced by `+`, `_` by `/` and `=` padding added; the marketgate header is unchanged.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Header carrying `sha256=<hex>`, see {@link signWebhook}. */
export const SIGNATURE_HEADER = "X-Marketgate-Signature";
/** Header carrying the signed timestamp, Unix seconds as a decimal integer. */
export const TIMESTAMP_HEADER = "X-Marketgate-Timestamp";
/** Header carrying the delivery id, identical across retries of one event (receivers dedupe on it). */
export const DELIVERY_HEADER = "X-Marketgate-Delivery";
/** Header carrying the event type (e.g. `liquidation`, `price_alert`). */
export const EVENT_HEADER = "X-Marketgate-Event";

/** Standard Webhooks: the message id header (our delivery id, identical across retries of one event). */
export const STANDARD_ID_HEADER = "webhook-id";
/** Standard Webhooks: Unix seconds of this attempt, signed. */
export const STANDARD_TIMESTAMP_HEADER = "webhook-timestamp";
/** Standard Webhooks: space-separated `v1,<base64>` signatures (we send one). */
export const STANDARD_SIGNATURE_HEADER = "webhook-signature";
/** Prefix of webhook secrets (Standard Webhooks). */
export const SECRET_PREFIX = "whsec_";

/** Default accepted clock difference between sender and receiver, in seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

/**
 * Signs one delivery.
 *
 * @param secret the webhook's shared secret (as returned by {@link newWebhookSecret}; the whole string, prefix
 *   included, as UTF-8 bytes).
 * @param timestampSec Unix time in whole seconds, sent as {@link TIMESTAMP_HEADER}.
 * @param body the exact request body, byte for byte (UTF-8).
 * @returns `"sha256=" + hex(HMAC-SHA256(secret, `${timestampSec}.${body}`))`, the {@link SIGNATURE_HEADER} value.
 */
export function signWebhook(secret: string, timestampSec: number, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestampSec}.${body}`).digest("hex");
}

/**
 * The HMAC key of Standard Webhooks signatures: the secret without its `whsec_` prefix, base64-decoded (Node's
 * decoder also reads the base64url secrets issued before, giving the same bytes).
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/**
 * Signs one delivery the Standard Webhooks way.
 *
 * @param secret the webhook secret, `whsec_<base64>` (see {@link standardWebhookKey}).
 * @param id the {@link STANDARD_ID_HEADER} value (the delivery id).
 * @param timestampSec Unix seconds, sent as {@link STANDARD_TIMESTAMP_HEADER}.
 * @param body the exact request body (UTF-8).
 * @returns `"v1," + base64(HMAC-SHA256(key, `${id}.${timestampSec}.${body}`))`, the {@link STANDARD_SIGNATURE_HEADER} value.
 */
export function signStandardWebhook(secret: string, id: string, timestampSec: number, body: string): string {
  return "v1," + createHmac("sha256", standardWebhookKey(secret)).update(`${id}.${timestampSec}.${body}`).digest("base64");
}

/**
 * What a receiver of the marketgate header runs: checks `header` (the {@link SIGNATURE_HEADER} value) against
 * the raw body and the {@link TIMESTAMP_HEADER} value with the whole `webhook_secret` string (prefix included)
 * as the key, in constant time, and refuses timestamps more than
 * `opts.toleranceSec` (default {@link DEFAULT_TOLERANCE_SEC}, 300) away from now in either direction, so
 * a captured delivery cannot be replayed later. Freshness is always checked: "now" is `opts.nowSec`
 * when given (Unix seconds; tests and receivers with their own clock), else the system clock.
 *
 * Receivers may instead verify the Standard Webhooks headers sent with the same delivery (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) with any Standard Webhooks library, e.g. the `standardwebhooks`
 * npm package: `new Webhook(webhook_secret).verify(rawBody, headers)` (it decodes the secret after `whsec_`).
 *
 * @param timestampSec the timestamp header as received (a string of digits) or as a number.
 * @returns true when the signature matches and the timestamp is fresh. Never throws.
 */
export function verifyWebhookSignature(
  secret: string,
  timestampSec: string | number,
  body: string,
  header: string,
  opts: { nowSec?: number; toleranceSec?: number } = {},
): boolean {
  const ts = typeof timestampSec === "number" ? timestampSec : /^\d{1,15}$/.test(timestampSec) ? Number(timestampSec) : NaN;
  if (!Number.isSafeInteger(ts) || ts < 0 || typeof header !== "string") return false;
  const nowSec = opts.nowSec ?? Date.now() / 1000;
  // Negated "<=" so that a NaN clock or tolerance refuses instead of skipping the check.
  if (!(Math.abs(nowSec - ts) <= (opts.toleranceSec ?? DEFAULT_TOLERANCE_SEC))) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const given = Buffer.from(header.trim());
  // timingSafeEqual throws on different lengths; the length of a valid signature is public anyway.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A fresh webhook secret as Standard Webhooks define them: `whsec_` followed by 32 random bytes in standard
 * base64 (44 characters, one `=` of padding). The same string keys the marketgate header (as UTF-8 text).
 */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}
