import type { Request } from "express";
import { SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x";
import { bearerToken } from "../src/payments/credits/bearer.js";
import { SESSION_HEADER } from "../src/payments/credits/session.js";
import { signInToStream } from "../src/payments/credits/stream-sign-in.js";
import type { StreamDef } from "../src/registry/stream.js";
import type { HttpPaymentGate, HttpReply } from "./payment-gate.js";

/** Who opens a stream: the SIWX wallet (and a session token to reconnect with), or none when payments are off. */
export type StreamCaller = { wallet?: string; session?: string; renew?: () => string | undefined } | { required: HttpReply };

/** A query parameter as one bounded string (browsers' EventSource cannot send headers). */
function queryParam(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === "string" && v.length <= 8192 ? v : undefined;
}

/**
 * Authenticates the opener of an SSE stream or a `/ws` connection with the shared stream sign-in
 * (src/payments/credits/stream-sign-in.ts): a `SIGN-IN-WITH-X` proof (header, or `?siwx=` base64) or a credits
 * session token (`X-Credits-Session`, `?session=`, or `Authorization: Bearer`). Without payments every stream is
 * free and anonymous. A missing or refused proof, or any HEAD, answers the sign-in 402 (SIWX challenge, top-up
 * requirements and how to top up) with the reason.
 * @throws AppError NOT_FOUND when payments are on but credits are off (streams are paid only from credits).
 */
export async function streamCaller(gate: HttpPaymentGate | undefined, req: Request, def: StreamDef): Promise<StreamCaller> {
  // HEAD opens no stream (stream-routes.ts): it gets the 402 of a request without a proof, so the proof's
  // nonce is not spent and no session token is minted for it.
  const head = req.method === "HEAD";
  const proofs = head
    ? {}
    : { siwx: req.header(SIGN_IN_WITH_X) ?? queryParam(req, "siwx"), session: req.header(SESSION_HEADER) ?? queryParam(req, "session") ?? bearerToken(req.headers.authorization) };
  const origin = gate ? gate.origin(req) : "";
  const id = await signInToStream(gate?.credits, gate !== undefined, proofs, origin, { pricePerMinuteUsd: def.pricePerMinuteUsd, hint: "send a SIGN-IN-WITH-X proof" });
  if ("refusal" in id) {
    const about = { summary: `${def.summary} (${def.pricePerMinuteUsd} USD per minute from prepaid credits)` };
    return { required: await gate!.signInRequired(req, about, id.refusal) };
  }
  return id;
}

/** The 402 of a stream whose first minute could not be paid (balance or caps): the sign-in 402 with the reason. */
export async function streamRefused(gate: HttpPaymentGate, req: Request, def: StreamDef, reason: string): Promise<HttpReply> {
  return gate.signInRequired(req, { summary: def.summary }, reason);
}
