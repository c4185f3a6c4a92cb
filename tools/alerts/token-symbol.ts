import { NETWORK_SLUG, parseNetwork } from "../../src/venues/dex/token-address.js";
import type { DexChain } from "../../src/venues/dex/types.js";

/*
 * How an alert on a token by address is stored: as a price alert whose `symbol` is `token:<network>:<address>`
 * (e.g. `token:base:0x4200…0006`), so that the store, the engine and the price-alert lifecycle tools serve it
 * unchanged; the engine's price signal reads such symbols from the token sources (signals.ts).
 */

const PREFIX = "token:";

/** The alert symbol of a token (address in its canonical spelling). */
export function tokenAlertSymbol(chain: DexChain, address: string): string {
  return `${PREFIX}${NETWORK_SLUG[chain]}:${address}`;
}

/** The token of an alert symbol made by {@link tokenAlertSymbol}, or undefined for a catalogue symbol. */
export function parseTokenAlertSymbol(symbol: string): { chain: DexChain; address: string } | undefined {
  if (!symbol.startsWith(PREFIX)) return undefined;
  const [net, address] = symbol.slice(PREFIX.length).split(":");
  const chain = net ? parseNetwork(net) : undefined;
  return chain && address ? { chain, address } : undefined;
}
