import type { FacilitatorClient } from "@x402/core/server";
import type { FacilitatorSvmSigner } from "@x402/svm";
import { createSvmFacilitator } from "../../facilitator/self-svm.js";
import { startLocalSolanaRpc, type LocalSolanaRpc } from "./rpc.js";
import { liteSvmFacilitatorSigner } from "./signer.js";
import { provisionLocalSolana, type LocalSolanaChain, type LocalSolanaOptions } from "./vm.js";

export { SOLANA_USDC_MINT } from "./vm.js";
export type { LocalSolanaChain } from "./vm.js";
export type { SolanaDevKey } from "./keys.js";

/** A running local Solana: the provisioned VM, its loopback RPC for clients, and a facilitator settling on it. */
export interface LocalSolana extends LocalSolanaChain {
  rpc: LocalSolanaRpc;
  /** The official `@x402/svm` `exact` facilitator over a signer backed by the VM (fee payer: {@link LocalSolanaChain.feePayer}). */
  facilitator: FacilitatorClient;
  close(): Promise<void>;
}

/**
 * Starts Solana offline, as the sandbox and the tests use it: {@link provisionLocalSolana}, a JSON-RPC
 * endpoint on 127.0.0.1:`rpcPort` (0 picks one) for paying clients, and the in-process facilitator
 * (`wrapSigner` wraps its VM-backed signer: tests inject lost confirmations this way).
 */
export async function startLocalSolana(opts: LocalSolanaOptions & { rpcPort?: number; wrapSigner?: (s: FacilitatorSvmSigner) => FacilitatorSvmSigner } = {}): Promise<LocalSolana> {
  const chain = await provisionLocalSolana(opts);
  const rpc = await startLocalSolanaRpc(chain.svm, opts.rpcPort ?? 0);
  const signer = liteSvmFacilitatorSigner(chain.svm, chain.feePayer.signer);
  return { ...chain, rpc, facilitator: createSvmFacilitator(opts.wrapSigner ? opts.wrapSigner(signer) : signer), close: () => rpc.close() };
}
