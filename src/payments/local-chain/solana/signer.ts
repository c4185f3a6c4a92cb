import type { FacilitatorSvmSigner } from "@x402/svm";
import {
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type KeyPairSigner,
  type Transaction,
} from "@solana/kit";
import { FailedTransactionMetadata, type LiteSVM } from "litesvm";

/** How many sent transaction signatures the signer remembers for `confirmTransaction`. */
const SENT_MEMORY = 10_000;

/** Why LiteSVM refused a transaction, with its program logs (what an RPC node's simulation error carries). */
function failure(what: string, r: FailedTransactionMetadata): Error {
  return new Error(`${what}: ${String(r.err())} ${r.meta().logs().join(" | ")}`.slice(0, 2000));
}

/**
 * The x402 facilitator signer of the official `@x402/svm` `exact` scheme, backed by an in-process LiteSVM
 * instead of a Solana RPC node: it signs the fee-payer slot with `feePayer`, simulates and sends on the VM,
 * and confirms the signatures it sent. The `exact` scheme needs only these five methods; production uses
 * `toFacilitatorSvmSigner` over a real RPC (src/payments/facilitator/self-svm.ts).
 */
export function liteSvmFacilitatorSigner(svm: LiteSVM, feePayer: KeyPairSigner): FacilitatorSvmSigner {
  const decoder = getTransactionDecoder();
  const base64 = getBase64Encoder();
  const decode = (b64: string): Transaction => decoder.decode(base64.encode(b64));
  const signed = (b64: string) => partiallySignTransaction([feePayer.keyPair], decode(b64));
  const sent = new Set<string>();
  return {
    getAddresses: () => [feePayer.address],
    async signTransaction(tx) {
      return getBase64EncodedWireTransaction(await signed(tx));
    },
    async simulateTransaction(tx) {
      // At verify time the fee-payer slot is still empty: sign it, as an RPC simulation with sigVerify off would ignore it.
      const r = svm.simulateTransaction(await signed(tx));
      if (r instanceof FailedTransactionMetadata) throw failure("simulation failed", r);
    },
    async sendTransaction(tx) {
      const transaction = decode(tx);
      const r = svm.sendTransaction(transaction);
      if (r instanceof FailedTransactionMetadata) throw failure("transaction failed", r);
      const signature = getSignatureFromTransaction(transaction);
      if (sent.size >= SENT_MEMORY) sent.delete(sent.values().next().value!);
      sent.add(signature);
      return signature;
    },
    async confirmTransaction(signature) {
      if (!sent.has(signature)) throw new Error(`transaction ${signature} was not sent on this local VM`);
    },
  };
}
