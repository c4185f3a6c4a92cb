import type { PaymentRequirements } from "@x402/core/types";
import { isFree, type AnyTool } from "../registry/tool.js";
import { staticRequirements } from "../payments/x402.js";

/** Where payments go, for documents: `payTo` may be unknown when a manifest is generated offline. */
export interface PaymentDocSettings {
  network: `${string}:${string}`;
  payTo?: string;
  timeoutSec: number;
}

/** Per paid tool, the x402 requirements it advertises (without `payTo` when unknown). */
export type PriceBook = Map<string, Omit<PaymentRequirements, "payTo"> & { payTo?: string }>;

/** Computes the advertised requirements of every paid tool (no facilitator needed). */
export async function priceBook(tools: readonly AnyTool[], s: PaymentDocSettings): Promise<PriceBook> {
  const book: PriceBook = new Map();
  for (const t of tools) {
    if (isFree(t)) continue;
    const { payTo, ...rest } = await staticRequirements(t, { network: s.network, payTo: s.payTo ?? "", timeoutSec: s.timeoutSec });
    book.set(t.name, s.payTo ? { ...rest, payTo } : rest);
  }
  return book;
}

/** Express path `/a/:id` as an OpenAPI/URI template `/a/{id}`. */
export function routeTemplate(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}
