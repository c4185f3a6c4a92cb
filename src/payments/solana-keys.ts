import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from "@solana/kit";

/**
 * A signer from a wallet-format secret key (base58 of 64 bytes: seed + public key), as `SOLANA_PRIVATE_KEY`
 * and `SOLANA_FEE_PAYER_PRIVATE_KEY` hold it (the Solana CLI and wallets export this format).
 * @throws Error when the value is not base58 of 64 bytes or its public half does not match its seed.
 */
export async function signerFromSecretKey(secretKey: string): Promise<KeyPairSigner> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(secretKey.trim()));
  } catch (err) {
    throw new Error("a Solana secret key must be base58 (the 64-byte wallet format)", { cause: err });
  }
  if (bytes.length !== 64) throw new Error(`a Solana secret key must be 64 bytes in base58, got ${bytes.length} bytes`);
  return createKeyPairSignerFromBytes(bytes);
}
