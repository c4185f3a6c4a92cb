import { createHash } from "node:crypto";
import { getBase58Decoder, getBase64Encoder, getTransactionDecoder, type Transaction } from "@solana/kit";
import { getTokenPayerFromTransaction } from "@x402/svm";

/**
 * Largest base64 transaction accepted, characters: Solana caps a transaction at 1,232 bytes (1,644 in
 * base64); a little slack, and nothing larger is decoded.
 */
const MAX_TRANSACTION_BASE64 = 1_700;

/** What the exactly-once ledger needs from a Solana `exact` payment. */
export interface SolanaPayment {
  /** The transfer's authority (base58): who pays. */
  payer: string;
  /** The payer's signature of the transaction (base58): one per transaction message, claimed once. */
  signature: string;
  /** SHA-256 (hex) of the transaction as sent. */
  digest: string;
}

/**
 * Reads the inner payload of an x402 `exact` payment on Solana (`{ transaction: <base64> }`, the official
 * `@x402/svm` client's shape) far enough to claim it: bounded size, a decodable transaction, a
 * `TransferChecked` authority (the official `getTokenPayerFromTransaction`) that signed it. Whether the
 * transfer pays the right amount to the right account is the facilitator's verification. Never throws.
 * @returns the payment, or the field and why it was refused.
 */
export function solanaPayment(inner: unknown): SolanaPayment | { field: string; message: string } {
  const transaction = (inner as { transaction?: unknown } | null)?.transaction;
  if (typeof transaction !== "string" || transaction.length === 0 || transaction.length > MAX_TRANSACTION_BASE64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(transaction)) {
    return { field: "transaction", message: `must be a base64 Solana transaction of at most ${MAX_TRANSACTION_BASE64} characters` };
  }
  let tx: Transaction;
  let payer: string;
  try {
    // Kit's decoder, not @x402/svm's `decodeTransactionFromPayload`: that one writes every failure to stderr.
    tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
    payer = getTokenPayerFromTransaction(tx);
  } catch {
    return { field: "transaction", message: "is not a decodable Solana transaction" };
  }
  if (!payer) return { field: "transaction", message: "has no token transfer (TransferChecked)" };
  const signed = (tx.signatures as Record<string, Uint8Array | null>)[payer];
  if (!signed || signed.every((b) => b === 0)) return { field: "transaction", message: "is not signed by the transfer's authority" };
  return { payer, signature: getBase58Decoder().decode(signed), digest: createHash("sha256").update(transaction).digest("hex") };
}
