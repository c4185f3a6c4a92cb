import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isAddress, isHex, verifyMessage } from "viem";
import type { CallerCredentials } from "../registry/tool.js";
import type { AlertRecord } from "./types.js";

/** How far `signed_at` may be from the server clock, seconds (limits replay of a leaked signature). */
export const SIGNATURE_WINDOW_SEC = 300;

/** Actions an owner signature can authorise; the action is part of the signed message. */
export type ManageAction = "read" | "cancel";

/** A new manage token: `mgt_` + 32 random bytes, base64url. Shown once, at creation. */
export function newManageToken(): string {
  return `mgt_${randomBytes(32).toString("base64url")}`;
}

/** SHA-256 hex of a manage token (only the hash is stored). */
export function hashManageToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The message an owner wallet signs (EIP-191 `personal_sign`): `marketgate:<action>:<alert_id>:<signed_at>`. */
export function ownerMessage(action: ManageAction, alertId: string, signedAtSec: number | string): string {
  return `marketgate:${action}:${alertId}:${signedAtSec}`;
}

/**
 * Who the credentials prove the caller to be for `alert` and `action`: `manage_token` when the bearer
 * token hashes to the stored hash (constant-time compare); `owner_wallet` when `walletSignature` is an
 * EIP-191 signature of {@link ownerMessage} by the alert's owner and `signedAt` is within
 * {@link SIGNATURE_WINDOW_SEC} of `nowMs`; else null. Signatures are checked for EOAs (ecrecover);
 * smart-contract wallets use the manage token. Never throws.
 */
export async function authorize(alert: AlertRecord, creds: CallerCredentials, action: ManageAction, nowMs: number): Promise<"manage_token" | "owner_wallet" | null> {
  if (creds.bearerToken) {
    const a = Buffer.from(hashManageToken(creds.bearerToken), "hex");
    const b = Buffer.from(alert.manageTokenHash, "hex");
    if (a.length === b.length && timingSafeEqual(a, b)) return "manage_token";
  }
  const { walletSignature: sig, signedAt } = creds;
  if (!sig || !signedAt || !alert.owner || !isAddress(alert.owner) || !isHex(sig) || !/^\d{1,12}$/.test(signedAt)) return null;
  if (Math.abs(nowMs / 1000 - Number(signedAt)) > SIGNATURE_WINDOW_SEC) return null;
  try {
    return (await verifyMessage({ address: alert.owner, message: ownerMessage(action, alert.id, signedAt), signature: sig })) ? "owner_wallet" : null;
  } catch {
    return null;
  }
}
