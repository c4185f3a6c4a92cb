import type { PaymentRequirements } from "@x402/core/types";
import { isFree, type AnyTool } from "../registry/tool.js";
import { staticRequirements } from "../payments/x402.js";

/** Where payments go, for documents: `payTo` may be unknown when a manifest is generated offline. */
export interface PaymentDocSettings {
  network: `${string}:${string}`;
  payTo?: string;
  timeoutSec: number;
  /** The Solana network and recipient (`PAY_TO_SOLANA`), when Solana is offered. */
  solana?: { network: `${string}:${string}`; payTo: string };
}

/** One advertised x402 requirement (without `payTo` when unknown). */
export type AdvertisedRequirements = Omit<PaymentRequirements, "payTo"> & { payTo?: string };

/**
 * Per paid tool, the x402 requirements it advertises: the Base one, and under `also` the other networks'
 * (Solana when offered; its `extra.feePayer` is the facilitator's and only in the live 402).
 */
export type PriceBook = Map<string, AdvertisedRequirements & { also?: AdvertisedRequirements[] }>;

/** Every network's requirements of a price book entry, Base first (what a 402's `accepts` lists). */
export function allAccepts(price: AdvertisedRequirements & { also?: AdvertisedRequirements[] }): AdvertisedRequirements[] {
  const { also, ...first } = price;
  return [first, ...(also ?? [])];
}

/** Computes the advertised requirements of every paid tool (no facilitator needed). */
export async function priceBook(tools: readonly AnyTool[], s: PaymentDocSettings): Promise<PriceBook> {
  const book: PriceBook = new Map();
  const advertised = async (t: AnyTool, network: `${string}:${string}`, payTo: string | undefined): Promise<AdvertisedRequirements> => {
    const { payTo: to, ...rest } = await staticRequirements(t, { network, payTo: payTo ?? "", timeoutSec: s.timeoutSec });
    return payTo ? { ...rest, payTo: to } : rest;
  };
  for (const t of tools) {
    if (isFree(t)) continue;
    const base = await advertised(t, s.network, s.payTo);
    book.set(t.name, s.solana ? { ...base, also: [await advertised(t, s.solana.network, s.solana.payTo)] } : base);
  }
  return book;
}

/** Express path `/a/:id` as an OpenAPI/URI template `/a/{id}`. */
export function routeTemplate(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

/** The offers documents describe beside x402: MPP methods and prepaid credits (each absent when off). */
export interface PaymentOffers {
  /** MPP (`WWW-Authenticate: Payment` / `Authorization: Payment`), `charge` intent. */
  mpp?: { methods: ReadonlyArray<"evm" | "tempo">; tempo: { currency: string; chainId: number } };
  /** Prepaid credits: one top-up (x402 or MPP), then a SIWX proof (or a session token) per call. */
  credits?: { minTopUpUsd: string; maxTopUpUsd: string };
}

/** The {@link PaymentOffers} of a configuration. */
export function paymentOffers(config: { mpp?: PaymentOffers["mpp"]; credits?: PaymentOffers["credits"] }): PaymentOffers {
  return {
    ...(config.mpp ? { mpp: { methods: config.mpp.methods, tempo: { currency: config.mpp.tempo.currency, chainId: config.mpp.tempo.chainId } } } : {}),
    ...(config.credits ? { credits: { minTopUpUsd: config.credits.minTopUpUsd, maxTopUpUsd: config.credits.maxTopUpUsd } } : {}),
  };
}

/** One MPP `charge` offer of a paid tool: the method, its network and token (the live challenge is authoritative). */
export interface MppOffer {
  method: "evm" | "tempo";
  intent: "charge";
  network: string;
  asset: string;
}

/** The MPP offers of a paid tool priced at `price` (none when MPP is off). */
export function mppOffers(price: { network: string; asset: string }, offers: PaymentOffers): MppOffer[] {
  const mpp = offers.mpp;
  if (!mpp) return [];
  return mpp.methods.map((method) =>
    method === "evm"
      ? { method, intent: "charge", network: price.network, asset: price.asset }
      : { method, intent: "charge", network: `tempo:${mpp.tempo.chainId}`, asset: mpp.tempo.currency },
  );
}
