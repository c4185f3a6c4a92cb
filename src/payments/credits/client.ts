import { randomBytes } from "node:crypto";
import { createSIWxPayload, encodeSIWxHeader, SOLANA_MAINNET, type CompleteSIWxInfo, type SIWxSigner, type SolanaSigner } from "@x402/extensions/sign-in-with-x";
import type { MessagePartialSigner } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";

/** Signs one proof for `url` with the official `createSIWxPayload`: shared by the EVM and Solana helpers below. */
async function signedHeader(signer: SIWxSigner, chain: Pick<CompleteSIWxInfo, "chainId" | "type">, url: string, over: Partial<CompleteSIWxInfo>): Promise<string> {
  const u = new URL(url);
  const info: CompleteSIWxInfo = {
    domain: u.host,
    uri: url,
    version: "1",
    nonce: randomBytes(12).toString("hex"),
    issuedAt: new Date().toISOString(),
    ...chain,
    ...over,
  };
  // The official client refuses to sign for an origin other than the URL's own: sign for the one in `over`.
  return encodeSIWxHeader(await createSIWxPayload(info, signer, over.uri ?? url));
}

/**
 * Client side of credits: a `SIGN-IN-WITH-X` header value for one call of `url`, signed by `privateKey`
 * with the official `createSIWxPayload` and a nonce of the client's own, so the call needs one round trip
 * (no 402 challenge first). `over` changes fields of the signed message (a `requestId` for idempotent
 * retries; tests use it to forge other origins or old proofs). Network: Base (`eip155:8453`) unless set.
 */
export async function siwxHeader(privateKey: `0x${string}`, url: string, over: Partial<CompleteSIWxInfo> = {}): Promise<string> {
  return signedHeader(privateKeyToAccount(privateKey), { chainId: "eip155:8453", type: "eip191" }, url, over);
}

/**
 * {@link siwxHeader} for a Solana wallet (a `@solana/kit` message signer, e.g. a `KeyPairSigner`): a Sign-In-With-Solana message
 * (`solana:5eykt4Us...`, Ed25519), which the official `verifySIWxSignature` checks. Needed because the
 * official `wrapFetchWithSIWx` signs for the 402's first network, which is Base here.
 */
export async function solanaSiwxHeader(signer: MessagePartialSigner, url: string, over: Partial<CompleteSIWxInfo> = {}): Promise<string> {
  // A kit signer is what the extension's `SolanaKitSigner` describes; its declared types differ only in readonly-ness.
  return signedHeader(signer as unknown as SolanaSigner, { chainId: SOLANA_MAINNET, type: "ed25519" }, url, over);
}
