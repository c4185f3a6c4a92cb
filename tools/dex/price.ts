import { z } from "zod";
import { priceSpreadPct, weightedAverage } from "../../src/analytics/dex.js";
import { canonicalTokens } from "../../src/assets/tokens.js";
import { defineTool } from "../../src/registry/tool.js";
import { CAIP2, NETWORK_SLUG } from "../../src/venues/dex/token-address.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { acceptedPools, DexSymbol, MissingSources } from "./common.js";

const Source = z.object({
  dex: z.string(),
  chain: z.string(),
  pair: z.string().describe("base/quote symbols as the pool lists them"),
  pair_address: z.string(),
  price: z.number().describe("USD price of the symbol in this pool"),
  liquidity_usd: z.number().nullable(),
  volume_24h: z.number().nullable().describe("USD"),
});

/** `GET /price/:symbol`: volume-weighted DEX price across the symbol's canonical pools (docs/methods/dex.md). */
export const dexPrice = defineTool({
  name: "dex_price",
  title: "DEX price",
  method: "GET",
  path: "/price/:symbol",
  priceUsd: "0.01",
  cacheTtlSec: 30,
  tags: ["dex"],
  summary: "Volume-weighted price of a token across DEX pools on several chains, with each source",
  description:
    "Aggregates every pool of the token's canonical contracts (e.g. ETH = WETH on Ethereum, Base, Arbitrum...) whose other side is a known quote asset (stablecoins, WETH, WBNB, SOL...) with at least $50k liquidity; look-alike tokens are never included. price_usd is weighted by 24h volume; spread is the pct gap between the highest and lowest pool price; change_24h is the volume-weighted 24h change.",
  example: { symbol: "ETH" },
  input: z.object({
    symbol: DexSymbol,
    include_sources: z.boolean().default(true).describe("list the pools used (default true)"),
    ...RequireField,
  }),
  output: z.object({
    symbol: z.string(),
    price_usd: z.number(),
    change_24h: z.number().nullable().describe("pct"),
    volume_24h_usd: z.number(),
    total_sources: z.number().int(),
    spread: z.number().describe("pct between the highest and lowest DEX price"),
    pools_rejected: z.number().int().describe("pools seen but left out: look-alike tokens, unknown quote assets, low liquidity"),
    timestamp: Timestamp,
    sources: z.array(Source).optional(),
    missing_sources: MissingSources,
    resolved_addresses: z
      .array(z.object({ network: z.string(), caip2: z.string(), address: z.string(), token_symbol: z.string() }))
      .describe("the contracts the symbol resolves to, per network (the canonical registry); any other contract is a look-alike here"),
  }),
  async handler({ symbol, include_sources }, ctx) {
    const { pools, rejected, missing_sources } = await acceptedPools(symbol, ctx);
    const weighted = (f: (p: (typeof pools)[number]) => number | null) =>
      weightedAverage(pools.flatMap((p) => (f(p) === null ? [] : [{ value: f(p)!, weight: p.pool.volume24hUsd ?? 0 }])));
    const price = weighted((p) => p.priceUsd)!;
    // The pool's 24h change is the base token's: it is ours only when we are the base side.
    const change = weighted((p) => (p.side === "base" ? p.pool.priceChange24hPct : null));
    return {
      symbol,
      price_usd: price,
      change_24h: change,
      volume_24h_usd: pools.reduce((s, p) => s + (p.pool.volume24hUsd ?? 0), 0),
      total_sources: pools.length,
      spread: priceSpreadPct(pools.map((p) => p.priceUsd)),
      pools_rejected: rejected,
      timestamp: isoNow(ctx),
      ...(include_sources
        ? {
            sources: pools.map((p) => ({
              dex: p.pool.dex,
              chain: p.pool.chain,
              pair: `${p.pool.baseToken.symbol}/${p.pool.quoteToken.symbol}`,
              pair_address: p.pool.pairAddress,
              price: p.priceUsd,
              liquidity_usd: p.pool.liquidityUsd,
              volume_24h: p.pool.volume24hUsd,
            })),
          }
        : {}),
      missing_sources,
      resolved_addresses: canonicalTokens(symbol).map((t) => ({ network: NETWORK_SLUG[t.chain], caip2: CAIP2[t.chain], address: t.address, token_symbol: t.symbol })),
    };
  },
});
