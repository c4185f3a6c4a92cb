import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, SupportedResponse } from "@x402/core/types";
import { SOLANA_MAINNET_CAIP2, toFacilitatorSvmSigner, type FacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { registerSecretUrl } from "../../lib/redact.js";
import { signerFromSecretKey } from "../solana-keys.js";

/**
 * An in-process x402 facilitator for Solana: the official `@x402/svm` `exact` facilitator scheme over
 * `signer` (which holds the fee payer's key and reaches the chain), for `network` only. Its `/supported`
 * kind carries `extra.feePayer`, which the resource server copies into the requirements.
 */
export function createSvmFacilitator(signer: FacilitatorSvmSigner, network: Network = SOLANA_MAINNET_CAIP2): FacilitatorClient {
  const facilitator = new x402Facilitator().register(network, new ExactSvmScheme(signer));
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    // x402Facilitator.getSupported() is synchronous and types networks as plain strings.
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/** Options of {@link createSolanaSelfFacilitator}. */
export interface SolanaSelfFacilitatorOptions {
  /** Solana JSON-RPC URL (`SOLANA_RPC_URL`): simulates, sends and confirms. */
  rpcUrl: string;
  /** Fee payer's secret key, base58 of 64 bytes (`SOLANA_FEE_PAYER_PRIVATE_KEY`); it needs SOL for fees. */
  feePayerPrivateKey: string;
  network?: Network;
}

/**
 * `FACILITATOR=self` on Solana: {@link createSvmFacilitator} over the official `toFacilitatorSvmSigner`,
 * with the fee payer's key and our RPC (its default is a public RPC: never used). The key is decoded on
 * first use (decoding is asynchronous); a bad key rejects every call with the decoding error.
 */
export function createSolanaSelfFacilitator(opts: SolanaSelfFacilitatorOptions): FacilitatorClient {
  // Solana RPC errors may carry the URL (and a key in its path or query).
  registerSecretUrl(opts.rpcUrl);
  let inner: Promise<FacilitatorClient> | undefined;
  const ready = () =>
    (inner ??= signerFromSecretKey(opts.feePayerPrivateKey).then((kp) => createSvmFacilitator(toFacilitatorSvmSigner(kp, { defaultRpcUrl: opts.rpcUrl }), opts.network)));
  return {
    verify: async (p, r) => (await ready()).verify(p, r),
    settle: async (p, r) => (await ready()).settle(p, r),
    getSupported: async () => (await ready()).getSupported(),
  };
}
