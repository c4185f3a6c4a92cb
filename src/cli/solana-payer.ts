import type { KeyPairSigner } from "@solana/kit";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { signerFromSecretKey } from "../payments/solana-keys.js";

/**
 * The Solana payer of `marketgate call --network solana`: the key in `SOLANA_PRIVATE_KEY` (base58 of the
 * 64-byte secret key, the Solana CLI and wallet export format), or undefined when unset.
 * @throws Error when the key is not such a value.
 */
export async function solanaSigner(env: Readonly<Record<string, string | undefined>>): Promise<KeyPairSigner | undefined> {
  const key = env.SOLANA_PRIVATE_KEY?.trim();
  if (!key) return undefined;
  try {
    return await signerFromSecretKey(key);
  } catch (err) {
    throw new Error(`SOLANA_PRIVATE_KEY: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * The official `@x402/svm` `exact` client scheme for `signer`. It reads the USDC mint and a recent
 * blockhash over `SOLANA_RPC_URL` (the sandbox prints its local one); unset, the scheme's default public RPC.
 */
export function solanaScheme(signer: KeyPairSigner, env: Readonly<Record<string, string | undefined>>): ExactSvmScheme {
  const rpcUrl = env.SOLANA_RPC_URL?.trim();
  return new ExactSvmScheme(signer, rpcUrl ? { rpcUrl } : undefined);
}
