import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, Timestamp } from "../common.js";
import { MissingSources } from "./common.js";
import {
  AddressParam,
  canonicalAddress,
  GuardFields,
  guardFields,
  loadToken,
  missingSources,
  NetworkParam,
  networkFields,
  PoolOut,
  poolOut,
  refineAddress,
  requireKnownToken,
  sourceLabels,
} from "./token-common.js";

/** Pools listed in a token answer (by liquidity); keeps MCP results small. */
const MAX_POOLS = 10;

/** `GET /dex/tokens/:network/:address`: any token by chain and contract address, with look-alike guards (docs/methods/dex-tokens.md). */
export const dexToken = defineTool({
  name: "dex_token",
  title: "DEX token by address",
  method: "GET",
  path: "/dex/tokens/:network/:address",
  priceUsd: "0.01",
  cacheTtlSec: 30,
  tags: ["tokens", "dex"],
  summary: "Any token by network and contract address: USD price, its top pools, and look-alike guards",
  mcpNote: "The address is the identity, never the symbol: check flags (low_liquidity, unverified, symbol_collision) before trusting the price.",
  description:
    "Price and pools of any token with a pool on eth, base, solana, arbitrum, bsc, polygon, optimism or avalanche, from GeckoTerminal and DexScreener (merged by pool address). price_usd is liquidity-weighted over the pools; the guard fields say how much to trust it: best-pool and total liquidity, pool count and age, 24 h trades, whether the best pool's quote is a stablecoin or wrapped native token, whether both sources agree within 2%, where it is listed, and symbol_collision when a registry token has the same symbol at another address. Below the floors (liquidity $50k, 100 trades, 7 days) the answer is marked low_liquidity / unverified. A token no source knows is a 404 before payment.",
  example: { network: "base", address: "0x4200000000000000000000000000000000000006" },
  input: z.object({ network: NetworkParam, address: AddressParam }).superRefine(refineAddress),
  output: z.object({
    network: z.string(),
    caip2: z.string(),
    address: z.string().describe("checksummed (EVM) or as given (Solana)"),
    decimals: z.number().int().nullable(),
    ...GuardFields,
    pools: z.array(PoolOut).describe(`its most liquid pools, at most ${MAX_POOLS}`),
    sources: z.array(z.string()),
    missing_sources: MissingSources,
    timestamp: Timestamp,
  }),
  checkBeforePayment: ({ network, address }, ctx, caller) => requireKnownToken(network, address, ctx, caller),
  async handler({ network, address }, ctx) {
    const addr = canonicalAddress(network, address);
    const { snap, view } = await loadToken(network, addr, ctx);
    const now = ctx.now();
    return {
      ...networkFields(network),
      address: addr,
      decimals: view.decimals,
      ...guardFields(view),
      pools: view.pools.slice(0, MAX_POOLS).map((p) => poolOut(p, now)),
      sources: sourceLabels(ctx, snap),
      missing_sources: missingSources(snap),
      timestamp: isoNow(ctx),
    };
  },
});
