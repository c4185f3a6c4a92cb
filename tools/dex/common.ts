import { z } from "zod";
import { canonicalTokens, acceptPool, poolPriceOf } from "../../src/assets/tokens.js";
import type { ToolContext } from "../../src/core/context.js";
import { fanOut } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import type { DexPool } from "../../src/venues/dex/types.js";
import { UNKNOWN_SYMBOL_ISSUE } from "../common.js";

/** A supported symbol with canonical DEX tokens (`ETH` -> WETH contracts...). Others are 404 before payment. */
export const DexSymbol = z
  .string()
  .min(1)
  .max(20)
  .describe("token symbol, e.g. ETH (resolved to its canonical token contracts, never to look-alikes)")
  .transform((raw, ctx) => {
    const symbol = raw.trim().toUpperCase();
    if (canonicalTokens(symbol).length === 0) {
      ctx.addIssue({ code: "custom", message: `'${raw}' has no canonical DEX token in the registry`, params: UNKNOWN_SYMBOL_ISSUE });
      return z.NEVER;
    }
    return symbol;
  });

/** A pool that passed the canonical-token and liquidity filters, with the symbol's USD price in it. */
export interface AcceptedPool {
  pool: DexPool;
  side: "base" | "quote";
  priceUsd: number;
}

/** `missing_sources` items: a chain/token lookup that failed. */
export const MissingSources = z.array(z.object({ source: z.string(), reason: z.string() })).describe("lookups that failed; the answer uses the rest");

/**
 * All pools of `symbol`'s canonical tokens (DexScreener `token-pairs/v1/{chain}/{address}`, one call per
 * canonical contract), keeping only pools where the other side is a known quote asset and liquidity is at
 * least the registry minimum. Look-alike tokens never pass (they are not canonical contracts).
 * @throws AppError UPSTREAM_UNAVAILABLE when no lookup answered, UPSTREAM_ERROR when no pool passed.
 */
export async function acceptedPools(
  symbol: string,
  ctx: ToolContext,
): Promise<{ pools: AcceptedPool[]; rejected: number; missing_sources: Array<{ source: string; reason: string }> }> {
  const tokens = canonicalTokens(symbol);
  const keys = tokens.map((t) => `${t.chain}:${t.address}`);
  const { results, answered, missing_exchanges } = await fanOut(keys, (k) => {
    const t = tokens[keys.indexOf(k)]!;
    return ctx.venues.dexscreener.tokenPairs(t.chain, t.address);
  });
  const seen = new Set<string>();
  const pools: AcceptedPool[] = [];
  let rejected = 0;
  for (const k of answered) {
    for (const pool of results[k]!) {
      const id = `${pool.chain}:${pool.pairAddress.toLowerCase()}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const ok = acceptPool(symbol, pool);
      const price = ok ? poolPriceOf(pool, ok.side) : null;
      if (!ok || price === null) {
        rejected++;
        continue;
      }
      pools.push({ pool, side: ok.side, priceUsd: price });
    }
  }
  if (pools.length === 0) throw new AppError("UPSTREAM_ERROR", `no ${symbol} pool passed the canonical-token and liquidity filters`, { details: { rejected } });
  pools.sort((a, b) => (b.pool.liquidityUsd ?? 0) - (a.pool.liquidityUsd ?? 0));
  return { pools, rejected, missing_sources: missing_exchanges.map((m) => ({ source: `dexscreener:${m.exchange}`, reason: m.reason })) };
}
