import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { findDefaultAsset as evmAsset } from "@x402/evm";
import { findDefaultAsset as svmAsset } from "@x402/svm";

/** A payment the wallet can make, priced: the PaymentRequired narrowed to that one requirement, and its USD price. */
export interface Priced {
  /** The PaymentRequired with `accepts` = the one requirement to sign (so the x402 client pays exactly it). */
  required: PaymentRequired;
  requirements: PaymentRequirements;
  /** Its price in micro-USD. */
  priceMicro: number;
}

/**
 * The micro-USD value of `r`'s amount, when its asset is a USD stablecoin the official packages know on its
 * network (USDC on Base, Base Sepolia, Solana, …); undefined for any other asset, which the bridge cannot price.
 */
export function usdMicroOf(r: PaymentRequirements): number | undefined {
  const asset = r.network.startsWith("solana:") ? svmAsset(r.asset, r.network) : evmAsset(r.asset, r.network);
  if (!asset || !/^\d+$/.test(r.amount)) return undefined;
  const amount = BigInt(r.amount);
  const micro = asset.decimals >= 6 ? amount / 10n ** BigInt(asset.decimals - 6) : amount * 10n ** BigInt(6 - asset.decimals);
  // A remainder below a micro-dollar (18-decimal stablecoins) rounds up: the budget never counts less than is paid.
  const exact = asset.decimals > 6 && amount % 10n ** BigInt(asset.decimals - 6) !== 0n ? micro + 1n : micro;
  return exact <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(exact) : undefined;
}

/**
 * The cheapest requirement of `required` that `pays` accepts and that can be priced in USD, or a sentence
 * saying why none can be paid.
 */
export function cheapestPayable(required: PaymentRequired, pays: (r: PaymentRequirements) => boolean): Priced | string {
  let best: Priced | undefined;
  for (const r of required.accepts) {
    if (!pays(r)) continue;
    const priceMicro = usdMicroOf(r);
    if (priceMicro === undefined) continue;
    if (!best || priceMicro < best.priceMicro) best = { required: { ...required, accepts: [r] }, requirements: r, priceMicro };
  }
  if (best) return best;
  const offered = required.accepts.map((r) => `${r.amount} of ${r.asset} on ${r.network}`).join(", ");
  return `this wallet cannot pay what the tool asks (${offered || "nothing"}): a USD stablecoin on its own chain is needed. Nothing was charged.`;
}
