import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isAddress, isHex, verifyMessage } from "viem";
import type { CallerCredentials } from "../core/types.js";
import type { AlertRecord, ManageAction } from "./types.js";

/** How far `signed_at` may be from the server clock, seconds (limits replay of a leaked signature). */
export const SIGNATURE_WINDOW_SEC = 300;

/** A new manage token: `mgt_` + 32 random bytes, base64url. Shown once, at creation. */
export function newManageToken(): string {
  return `mgt_${randomBytes(32).toString("base64url")}`;
}

/** SHA-256 hex of a manage token (only the hash is stored). */
export function hashManageToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The message an owner wallet signs (EIP-191 `personal_sign`): `marketgate:<action>:<subject>:<signed_at>`.
 * The subject is the alert id for `read` and `cancel`, and the wallet address in lowercase for `list`
 * (listing every alert of that wallet).
 */
export function ownerMessage(action: ManageAction, subject: string, signedAtSec: number | string): string {
  return `marketgate:${action}:${subject}:${signedAtSec}`;
}

/**
 * True when `creds` carry an EIP-191 signature by `wallet` of {@link ownerMessage}(`action`, `subject`,
 * `signedAt`) and `signedAt` (unix seconds) is within {@link SIGNATURE_WINDOW_SEC} of `nowMs` on either
 * side. Signatures are checked for EOAs (ecrecover); smart-contract wallets use the manage token.
 * Never throws: malformed input is simply not a proof.
 */
export async function verifyOwnerSignature(wallet: string, action: ManageAction, subject: string, creds: CallerCredentials, nowMs: number): Promise<boolean> {
  const { walletSignature: sig, signedAt } = creds;
  if (!sig || !signedAt || !isAddress(wallet) || !isHex(sig) || !/^\d{1,12}$/.test(signedAt)) return false;
  if (Math.abs(nowMs / 1000 - Number(signedAt)) > SIGNATURE_WINDOW_SEC) return false;
  try {
    return await verifyMessage({ address: wallet, message: ownerMessage(action, subject, signedAt), signature: sig });
  } catch {
    return false;
  }
}

/** True when `token` is the alert's manage token (its SHA-256 matches the stored hash; constant-time compare). */
function isManageToken(alert: AlertRecord, token: string): boolean {
  const a = Buffer.from(hashManageToken(token), "hex");
  const b = Buffer.from(alert.manageTokenHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Who the credentials prove the caller to be for `alert` and `action`: `manage_token` when the bearer
 * token is the alert's manage token; `owner_wallet` when {@link verifyOwnerSignature} accepts a
 * signature by the alert's owner with the alert id as subject; else null. Never throws.
 */
export async function authorize(alert: AlertRecord, creds: CallerCredentials, action: ManageAction, nowMs: number): Promise<"manage_token" | "owner_wallet" | null> {
  if (creds.bearerToken && isManageToken(alert, creds.bearerToken)) return "manage_token";
  if (alert.owner && (await verifyOwnerSignature(alert.owner, action, alert.id, creds, nowMs))) return "owner_wallet";
  return null;
}
