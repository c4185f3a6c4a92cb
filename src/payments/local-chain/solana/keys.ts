import { createHash } from "node:crypto";
import { createKeyPairSignerFromPrivateKeyBytes, getAddressEncoder, getBase58Decoder, type KeyPairSigner } from "@solana/kit";

/** A local Solana keypair with its secret key in the wallet format (Solana CLI, Phantom): base58 of 64 bytes, seed then public key. */
export interface SolanaDevKey {
  signer: KeyPairSigner;
  /** Base58 address (the Ed25519 public key). */
  address: string;
  /** Base58 of the 64-byte secret key (32-byte seed + 32-byte public key). */
  secretKey: string;
}

/**
 * A keypair derived from a fixed label (SHA-256 of it is the Ed25519 seed), so that the sandbox prints the
 * same addresses and keys on every run, like anvil's dev accounts. Public: never hold real funds with it.
 */
export async function devKeyFromLabel(label: string): Promise<SolanaDevKey> {
  const seed = new Uint8Array(createHash("sha256").update(`marketgate sandbox solana ${label}`).digest());
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed, true);
  const secret = new Uint8Array(64);
  secret.set(seed, 0);
  secret.set(getAddressEncoder().encode(signer.address), 32);
  return { signer, address: signer.address, secretKey: getBase58Decoder().decode(secret) };
}
