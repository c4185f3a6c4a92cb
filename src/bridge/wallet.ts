import { readFile } from "node:fs/promises";
import { getBase58Decoder } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { SOLANA_MAINNET_CAIP2 } from "@x402/svm";
import { privateKeyToAccount } from "viem/accounts";
import { solanaScheme } from "../cli/solana-payer.js";
import { siwxHeader, solanaSiwxHeader } from "../payments/credits/client.js";
import { microToUsd } from "../payments/credits/ledger.js";
import { registerSecret } from "../lib/redact.js";
import { signerFromSecretKey } from "../payments/solana-keys.js";

/**
 * The bridge's paying wallet: which chain it pays on, its address, the official x402 client that signs its
 * payments and its Sign-In-With-X proofs. The key stays in closures: nothing here prints, returns or
 * serializes it (an error says which setting is wrong, never its value).
 */
export interface Wallet {
  chain: "base" | "solana";
  /** Public address (0x… on Base, base58 on Solana). */
  address: string;
  /** The official x402 client, with the one scheme this wallet pays with. */
  x402: x402Client;
  /** Whether this wallet can pay `r` (its network is this wallet's chain). */
  pays(r: PaymentRequirements): boolean;
  /** A `SIGN-IN-WITH-X` proof (base64) for `url`, signed now with a fresh nonce. */
  siwx(url: string): Promise<string>;
}

/** A key that could not be used: the message names the setting, never the value. */
export class WalletError extends Error {}

const EVM_KEY = /^0x[0-9a-fA-F]{64}$/;

/** Where the key comes from, for messages. */
type KeySource = { kind: "evm" | "solana"; value: string; from: string };

/** A key file's content: a 0x hex EVM key, a base58 Solana secret key, or the Solana CLI's JSON array of 64 bytes. */
function keyOfFile(text: string, path: string): KeySource {
  const t = text.trim();
  if (EVM_KEY.test(t)) return { kind: "evm", value: t, from: `--key-file ${path}` };
  if (t.startsWith("[")) {
    let bytes: unknown;
    try {
      bytes = JSON.parse(t);
    } catch {
      bytes = undefined;
    }
    if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) {
      throw new WalletError(`--key-file ${path}: a JSON key file must hold the 64 bytes of a Solana secret key`);
    }
    return { kind: "solana", value: getBase58Decoder().decode(Uint8Array.from(bytes as number[])), from: `--key-file ${path}` };
  }
  return { kind: "solana", value: t, from: `--key-file ${path}` };
}

/** Picks the key: `--key-file`, else X402_PRIVATE_KEY (Base) or SOLANA_PRIVATE_KEY (Solana), `network` choosing when both are set. */
async function keySource(env: Readonly<Record<string, string | undefined>>, keyFile: string | undefined, network: "base" | "solana" | undefined): Promise<KeySource> {
  if (keyFile) {
    let text: string;
    try {
      text = await readFile(keyFile, "utf8");
    } catch (err) {
      throw new WalletError(`--key-file ${keyFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const k = keyOfFile(text, keyFile);
    if (network && (network === "base") !== (k.kind === "evm"))
      throw new WalletError(`--key-file ${keyFile} holds a ${k.kind === "evm" ? "Base" : "Solana"} key, not a ${network} one`);
    return k;
  }
  const evm = env.X402_PRIVATE_KEY?.trim();
  const sol = env.SOLANA_PRIVATE_KEY?.trim();
  if (network === "solana" || (!evm && sol && network !== "base")) {
    if (!sol) throw new WalletError("--network solana pays with SOLANA_PRIVATE_KEY (or --key-file): set it");
    return { kind: "solana", value: sol, from: "SOLANA_PRIVATE_KEY" };
  }
  if (!evm) throw new WalletError("no wallet: set X402_PRIVATE_KEY (Base) or SOLANA_PRIVATE_KEY (Solana), or pass --key-file FILE");
  return { kind: "evm", value: evm, from: "X402_PRIVATE_KEY" };
}

/**
 * The wallet of `marketgate connect`. Its x402 client refuses any single payment above `maxPaymentMicro`
 * (the official spend control, a second guard behind the bridge's own budget).
 * @throws WalletError when no key is set or the key is malformed (the message never contains the key).
 */
export async function loadWallet(
  env: Readonly<Record<string, string | undefined>>,
  opts: { keyFile?: string; network?: "base" | "solana"; maxPaymentMicro: number },
): Promise<Wallet> {
  const key = await keySource(env, opts.keyFile, opts.network);
  // Any text the bridge prints goes through scrubUrls/scrubSecrets: a library quoting the key is redacted.
  registerSecret(key.value);
  registerSecret(key.value.replace(/^0x/, ""));
  const controls = { maxAmountPerPayment: `$${microToUsd(opts.maxPaymentMicro)}` };
  if (key.kind === "evm") {
    if (!EVM_KEY.test(key.value)) throw new WalletError(`${key.from} must be a 0x-prefixed 32-byte hex private key`);
    const privateKey = key.value as `0x${string}`;
    const account = privateKeyToAccount(privateKey);
    return {
      chain: "base",
      address: account.address,
      x402: new x402Client().register("eip155:*", new ExactEvmScheme(account)).setSpendControls(controls),
      pays: (r) => r.network.startsWith("eip155:"),
      siwx: (url) => siwxHeader(privateKey, url),
    };
  }
  let signer: Awaited<ReturnType<typeof signerFromSecretKey>>;
  try {
    signer = await signerFromSecretKey(key.value);
  } catch {
    throw new WalletError(`${key.from} must be a Solana secret key (base58 of 64 bytes, or the CLI's JSON array)`);
  }
  return {
    chain: "solana",
    address: signer.address,
    x402: new x402Client().register(SOLANA_MAINNET_CAIP2, solanaScheme(signer, env)).setSpendControls(controls),
    pays: (r) => r.network === SOLANA_MAINNET_CAIP2,
    siwx: (url) => solanaSiwxHeader(signer, url),
  };
}
