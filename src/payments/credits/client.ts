import { randomBytes } from "node:crypto";
import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";

/**
 * Client side of credits: a `SIGN-IN-WITH-X` header value for one call of `url`, signed by `privateKey`
 * with the official `createSIWxPayload` and a nonce of the client's own, so the call needs one round trip
 * (no 402 challenge first). `over` changes fields of the signed message (a `requestId` for idempotent
 * retries; tests use it to forge other origins or old proofs). Network: Base (`eip155:8453`) unless set.
 */
export async function siwxHeader(privateKey: `0x${string}`, url: string, over: Partial<CompleteSIWxInfo> = {}): Promise<string> {
  const u = new URL(url);
  const info: CompleteSIWxInfo = {
    domain: u.host,
    uri: url,
    version: "1",
    nonce: randomBytes(12).toString("hex"),
    issuedAt: new Date().toISOString(),
    chainId: "eip155:8453",
    type: "eip191",
    ...over,
  };
  // The official client refuses to sign for an origin other than the URL's own: sign for the one in `over`.
  return encodeSIWxHeader(await createSIWxPayload(info, privateKeyToAccount(privateKey), over.uri ?? url));
}
