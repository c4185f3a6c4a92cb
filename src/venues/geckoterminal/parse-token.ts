import { z } from "zod";
import type { DexChain, DexPool } from "../dex/types.js";
import { OptNum, parseShape } from "../wire.js";
import { parsePools, splitGeckoId } from "./parse.js";

/*
 * Pure parser of GeckoTerminal token resources: `GET /networks/{network}/tokens/{address}` (`data` is one
 * token) and `GET /networks/{network}/tokens/multi/{a,b,…}` (`data` is a list; unknown addresses are left out),
 * both with `include=top_pools` (the token's top pools as `included[]` pool resources). Wire rules as in
 * parse.ts: decimals are strings (`total_reserve_in_usd` may carry 100+ digits), ids `<network>_<address>`.
 * Fixture: fixtures/token_bsc_ETH_2026-09.json (README there).
 */

const VENUE = "geckoterminal";

const Token = z.object({
  id: z.string(),
  type: z.literal("token"),
  attributes: z.object({
    address: z.string(),
    name: z.string().nullable().optional(),
    symbol: z.string().nullable().optional(),
    decimals: z.number().int().nullable().optional(),
    coingecko_coin_id: z.string().nullable().optional(),
    price_usd: OptNum,
    fdv_usd: OptNum,
    market_cap_usd: OptNum,
    total_reserve_in_usd: OptNum,
    volume_usd: z.object({ h24: OptNum }).nullable().optional(),
  }),
  relationships: z
    .object({ top_pools: z.object({ data: z.array(z.object({ id: z.string(), type: z.string() })).nullable() }).optional() })
    .nullable()
    .optional(),
});

const Included = z.object({ id: z.string(), type: z.string() }).loose();

const Body = z.object({ data: z.union([Token, z.array(Token)]), included: z.array(Included).optional() });

/** One token as GeckoTerminal describes it, USD figures as numbers (null when not sent). */
export interface GtToken {
  chain: DexChain;
  /** As GeckoTerminal spells it (EVM: checksum case on the token endpoint). */
  address: string;
  name: string;
  symbol: string;
  decimals: number | null;
  /** CoinGecko coin id when CoinGecko lists the token, else null (a weak listing signal). */
  coingeckoCoinId: string | null;
  priceUsd: number | null;
  fdvUsd: number | null;
  marketCapUsd: number | null;
  /** USD liquidity of all its pools, per GeckoTerminal. */
  totalReserveUsd: number | null;
  volume24hUsd: number | null;
  /** Its top pools (from `included[]`, in GeckoTerminal's order), normalised; pools without token relationships are left out. */
  topPools: DexPool[];
}

/** Whether an included resource is a pool that names both its tokens (the only ones {@link parsePools} takes). */
function isPricedPool(inc: z.infer<typeof Included>): boolean {
  const rel = (inc as { relationships?: { base_token?: { data?: unknown }; quote_token?: { data?: unknown } } }).relationships;
  return inc.type === "pool" && !!rel?.base_token?.data && !!rel?.quote_token?.data;
}

/**
 * Parses a token or multi-token body into {@link GtToken}s (tokens on networks we do not aggregate are dropped).
 * A top pool is attached to each token whose `top_pools` lists it.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseTokens(raw: unknown, endpoint = "/networks/{network}/tokens/multi/{addresses}"): GtToken[] {
  const body = parseShape(VENUE, Body, raw, endpoint);
  const list = Array.isArray(body.data) ? body.data : [body.data];
  const poolResources = (body.included ?? []).filter(isPricedPool);
  const pools = poolResources.length ? parsePools({ data: poolResources }, endpoint) : [];
  const poolById = new Map<string, DexPool>();
  for (const p of pools) poolById.set(`${p.chain}:${p.pairAddress.toLowerCase()}`, p);
  const out: GtToken[] = [];
  for (const t of list) {
    const id = splitGeckoId(t.id);
    if (!id) continue;
    const a = t.attributes;
    const topPools: DexPool[] = [];
    for (const rel of t.relationships?.top_pools?.data ?? []) {
      const pid = splitGeckoId(rel.id);
      const pool = pid ? poolById.get(`${pid.chain}:${pid.address.toLowerCase()}`) : undefined;
      if (pool) topPools.push(pool);
    }
    out.push({
      chain: id.chain,
      address: a.address,
      name: a.name ?? "",
      symbol: a.symbol ?? "",
      decimals: a.decimals ?? null,
      coingeckoCoinId: a.coingecko_coin_id || null,
      priceUsd: a.price_usd,
      fdvUsd: a.fdv_usd,
      marketCapUsd: a.market_cap_usd,
      totalReserveUsd: a.total_reserve_in_usd,
      volume24hUsd: a.volume_usd?.h24 ?? null,
      topPools,
    });
  }
  return out;
}
