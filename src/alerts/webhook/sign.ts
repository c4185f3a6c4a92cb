/**
 * Webhook signatures. Every delivery carries `X-Marketgate-Timestamp` (Unix seconds) and
 * `X-Marketgate-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. Signing the
 * timestamp with the body lets receivers refuse replays of old deliveries.
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

/** Default accepted clock difference between sender and receiver, in seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

/**
 * Signs one delivery.
 *
 * @param secret the webhook's shared secret (as returned by {@link newWebhookSecret}; used as UTF-8 bytes).
 * @param timestampSec Unix time in whole seconds, sent as {@link TIMESTAMP_HEADER}.
 * @param body the exact request body, byte for byte (UTF-8).
 * @returns `"sha256=" + hex(HMAC-SHA256(secret, `${timestampSec}.${body}`))`, the {@link SIGNATURE_HEADER} value.
 */
export function signWebhook(secret: string, timestampSec: number, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestampSec}.${body}`).digest("hex");
}

/**
 * What a receiver runs: checks `header` (the {@link SIGNATURE_HEADER} value) against the raw body and
 * the {@link TIMESTAMP_HEADER} value, in constant time. With `opts.nowSec` (Unix seconds), also
 * refuses timestamps more than `opts.toleranceSec` (default 300) away from it, in either direction.
 *
 * @param timestampSec the timestamp header as received (a string of digits) or as a number.
 * @returns true when the signature matches (and the timestamp is fresh, when checked). Never throws.
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
  if (opts.nowSec !== undefined && Math.abs(opts.nowSec - ts) > (opts.toleranceSec ?? DEFAULT_TOLERANCE_SEC)) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const given = Buffer.from(header.trim());
  // timingSafeEqual throws on different lengths; the length of a valid signature is public anyway.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A fresh webhook secret: `whsec_` followed by 32 random bytes in base64url (43 characters). */
export function newWebhookSecret(): string {
  return "whsec_" + randomBytes(32).toString("base64url");
}
