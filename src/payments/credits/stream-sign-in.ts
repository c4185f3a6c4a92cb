import { AppError } from "../../errors.js";
import type { CreditGate } from "./gate.js";

/** What a stream opener presents, as its transport read it (SSE and `/ws`: headers or query; `/mcp/live`: `_meta`). */
export interface StreamProofs {
  /** A Sign-In-With-X proof (header value, or the decoded payload). */
  siwx?: unknown;
  /** A credits session token (`X-Credits-Session`, `?session=`, `_meta["marketgate/credits-session"]`, or `Authorization: Bearer`). */
  session?: unknown;
}

/**
 * Who opens a stream:
 * - `{}`: payments are off, every stream is free and anonymous;
 * - `{ wallet, session, renew }`: the signed-in wallet that pays each minute from credits, a session token to
 *   reconnect with (minted when the proof was a SIWX one), and `renew` minting a fresh one for long streams;
 * - `{ refusal }`: no proof, or a refused one: the transport answers its sign-in 402 with this reason.
 */
export type StreamSignIn = { wallet?: undefined } | { wallet: string; session?: string; renew: () => string | undefined } | { refusal: string };

/**
 * Signs in the opener of a live stream, the same for every transport (SSE, `/ws`, `/mcp/live`), as
 * src/core/call-pipeline.ts does calls: streams are paid per minute from prepaid credits, so a SIWX proof or a
 * credits session token bound to `origin` (configuration, never a request's Host) names the wallet. `paymentsOn`
 * false: free and anonymous. `hint` says where this transport takes a proof (for the refusal of a call without one);
 * `pricePerMinuteUsd` is the stream's price, which the refusal names.
 * @throws AppError NOT_FOUND when payments are on but credits are off (streams are paid only from credits).
 */
export async function signInToStream(
  credits: CreditGate | undefined,
  paymentsOn: boolean,
  proofs: StreamProofs,
  origin: string,
  price: { pricePerMinuteUsd: string; hint: string },
): Promise<StreamSignIn> {
  if (!paymentsOn) return {};
  if (!credits) throw new AppError("NOT_FOUND", "live streams are paid from prepaid credits, which this instance does not offer (CREDITS=off)");
  if (!proofs.siwx && !proofs.session) {
    return { refusal: `sign_in_required: streams are paid from prepaid credits (${price.pricePerMinuteUsd} USD per minute); ${price.hint}` };
  }
  const id = await credits.signIn({ siwx: proofs.siwx || undefined, session: proofs.session || undefined }, origin);
  if ("refusal" in id) return { refusal: id.refusal };
  const renew = () => credits.sessions?.mint(id.wallet, origin);
  return { wallet: id.wallet, session: id.session ?? renew(), renew };
}
