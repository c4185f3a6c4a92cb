import { base58 } from "@scure/base";
import { getAddress, isAddress } from "viem";
import { DEX_CHAINS, type DexChain } from "./types.js";

/*
 * Pure input rules of the token-by-address tools: which network names we accept and what a well-formed token
 * address is on each. The address is the token's identity (never its symbol), so it is checked strictly and
 * returned in one canonical spelling: EIP-55 checksum case for EVM chains, the base58 text for Solana.
 */

/** Our public slug of each chain (the `:network` path segment in answers). */
export const NETWORK_SLUG: Readonly<Record<DexChain, string>> = {
  ethereum: "eth",
  base: "base",
  arbitrum: "arbitrum",
  optimism: "optimism",
  polygon: "polygon",
  bsc: "bsc",
  avalanche: "avalanche",
  solana: "solana",
};

/**
 * CAIP-2 id of each chain: `eip155:<chain id>` (chain ids per chainlist / each chain's docs: 1, 8453, 42161, 10,
 * 137, 56, 43114) and Solana mainnet's `solana:<first 32 chars of the genesis hash>` (CAIP-30 / namespaces
 * solana/caip2.md: `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`).
 */
export const CAIP2: Readonly<Record<DexChain, string>> = {
  ethereum: "eip155:1",
  base: "eip155:8453",
  arbitrum: "eip155:42161",
  optimism: "eip155:10",
  polygon: "eip155:137",
  bsc: "eip155:56",
  avalanche: "eip155:43114",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
};

const BY_NAME: ReadonlyMap<string, DexChain> = new Map([
  ...(Object.entries(NETWORK_SLUG) as Array<[DexChain, string]>).map(([chain, slug]) => [slug, chain] as const),
  ...(Object.entries(CAIP2) as Array<[DexChain, string]>).map(([chain, id]) => [id.toLowerCase(), chain] as const),
  ...(Object.keys(DEX_CHAINS) as DexChain[]).map((chain) => [chain, chain] as const),
]);

/** Every network name {@link parseNetwork} accepts (slugs, then CAIP-2 ids), for messages and docs. */
export const NETWORK_NAMES: readonly string[] = [...Object.values(NETWORK_SLUG), ...Object.values(CAIP2)];

/**
 * Our chain of a network name: a slug (`eth`, `base`, `solana`, `arbitrum`, `bsc`, `polygon`, `optimism`,
 * `avalanche`, also the long `ethereum`), case-insensitive, or a CAIP-2 id (`eip155:8453`). Undefined otherwise.
 */
export function parseNetwork(raw: string): DexChain | undefined {
  const key = raw.trim().toLowerCase();
  // CAIP-2 Solana references are case-sensitive base58; compare the canonical id exactly.
  if (key.startsWith("solana:")) return raw.trim() === CAIP2.solana ? "solana" : undefined;
  return BY_NAME.get(key);
}

/** Result of {@link checkTokenAddress}: the canonical spelling, or why the text is no address on that chain. */
export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

const HEX40 = /^0x[0-9a-fA-F]{40}$/;

/**
 * Checks a token address for `chain` and returns its canonical spelling.
 * - EVM: `0x` + 40 hex digits; all-lowercase or all-uppercase is accepted as is, mixed case must be a valid EIP-55
 *   checksum (viem `isAddress(…, { strict: true })`); returned checksummed (viem `getAddress`).
 * - Solana: base58 (Bitcoin alphabet) that decodes to exactly 32 bytes (@scure/base); returned unchanged.
 * Pure: no I/O, so it may run in input parsing.
 */
export function checkTokenAddress(chain: DexChain, raw: string): AddressCheck {
  const text = raw.trim();
  if (chain === "solana") {
    if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(text)) return { ok: false, reason: "a Solana address is base58 (no 0, O, I or l)" };
    if (text.length < 32 || text.length > 44) return { ok: false, reason: `a Solana address has 32 to 44 base58 characters, got ${text.length}` };
    let bytes: Uint8Array;
    try {
      bytes = base58.decode(text);
    } catch {
      return { ok: false, reason: "not valid base58" };
    }
    if (bytes.length !== 32) return { ok: false, reason: `a Solana address decodes to 32 bytes, this one to ${bytes.length}` };
    return { ok: true, address: text };
  }
  if (!text.startsWith("0x") && !text.startsWith("0X")) return { ok: false, reason: "an EVM address starts with 0x" };
  if (text.length !== 42) return { ok: false, reason: `an EVM address is 0x and 40 hex digits, got ${text.length - 2} characters after 0x` };
  const normal = `0x${text.slice(2)}`;
  if (!HEX40.test(normal)) return { ok: false, reason: "an EVM address holds only hex digits after 0x" };
  const body = normal.slice(2);
  const singleCase = body === body.toLowerCase() || body === body.toUpperCase();
  if (!singleCase && !isAddress(normal, { strict: true })) return { ok: false, reason: "mixed-case EVM address with a wrong EIP-55 checksum (a typo?)" };
  return { ok: true, address: getAddress(normal.toLowerCase()) };
}
