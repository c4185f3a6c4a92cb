import { z } from "zod";
import { describeToken, GUARD_FLOORS, SOURCE_AGREEMENT_TOLERANCE_PCT, type TokenPool, type TokenView } from "../../src/analytics/dex-token.js";
import type { ToolContext } from "../../src/core/context.js";
import type { UnpaidCaller } from "../../src/registry/tool.js";
import { AppError } from "../../src/errors.js";
import { CAIP2, checkTokenAddress, NETWORK_NAMES, NETWORK_SLUG, parseNetwork } from "../../src/venues/dex/token-address.js";
import type { TokenSnapshot } from "../../src/venues/dex/token-source.js";
import type { DexChain } from "../../src/venues/dex/types.js";
import { sourceLabel } from "../common.js";

/*
 * Inputs, outputs and the pre-payment check shared by the token-by-address tools (dex_token, dex_token_ohlcv,
 * dex_tokens; docs/methods/dex-tokens.md).
 */

/** `:network`: a slug or a CAIP-2 id; resolves to our chain key. Unknown → 400. */
export const NetworkParam = z
  .string()
  .min(1)
  .max(64)
  .describe("network: eth, base, solana, arbitrum, bsc, polygon, optimism, avalanche, or a CAIP-2 id such as eip155:8453")
  .transform((raw, ctx): DexChain => {
    const chain = parseNetwork(raw);
    if (!chain) {
      ctx.addIssue({ code: "custom", message: `unknown network '${raw.slice(0, 64)}'; use one of ${NETWORK_NAMES.join(", ")}` });
      return z.NEVER;
    }
    return chain;
  });

/** `:address`: checked against the network by {@link refineAddress}. */
export const AddressParam = z.string().min(1).max(64).describe("token contract address: EVM 0x + 40 hex (EIP-55 checksum when mixed case), or a Solana mint (base58 of 32 bytes)");

/** Object-level check of `address` against `network` (400 with the reason). */
export function refineAddress(v: { network: DexChain; address: string }, ctx: z.RefinementCtx): void {
  const r = checkTokenAddress(v.network, v.address);
  if (!r.ok) ctx.addIssue({ code: "custom", path: ["address"], message: `${v.address.slice(0, 64)} is no ${NETWORK_SLUG[v.network]} token address: ${r.reason}` });
}

/** The canonical spelling of an address already validated by {@link refineAddress}. */
export function canonicalAddress(chain: DexChain, address: string): string {
  const r = checkTokenAddress(chain, address);
  if (!r.ok) throw new AppError("BAD_REQUEST", r.reason);
  return r.address;
}

/** How a check before payment treats a token it could not ask about. */
export interface KnownTokenCheck {
  /**
   * The tool settles before it runs (alerts): a token must be known before payment, so one left unchecked (the
   * unpaid share of a source's budget spent) is a 503 with Retry-After rather than a payment for nothing. Other
   * tools let an unchecked token through to the 402: their paid run answers 404 uncharged when no source knows it.
   */
  upfront?: boolean;
}

/**
 * Pre-payment check of one token (see {@link requireAnyKnownToken}).
 * @throws AppError NOT_FOUND, RATE_LIMITED or UPSTREAM_UNAVAILABLE, never charged.
 */
export async function requireKnownToken(chain: DexChain, address: string, ctx: ToolContext, caller: UnpaidCaller = {}, opts: KnownTokenCheck = {}): Promise<void> {
  await requireAnyKnownToken(chain, [canonicalAddress(chain, address)], ctx, caller, opts);
}

/**
 * Pre-payment check of tokens of one chain (canonical addresses; docs/methods/dex-tokens.md "Checks before
 * payment"): passes when a source knows a pool of any of them, or when the ones not known could not be asked
 * (the unpaid share of a source's budget spent, or a caller that pays anyway: `caller.paying`); answered from
 * the caches when it can. A caller that needs an upstream call spends a point of its per-client budget.
 * @throws AppError NOT_FOUND when both sources say they know none of them; RATE_LIMITED (429, Retry-After)
 *   beyond the client's budget; UPSTREAM_UNAVAILABLE when a source failed and none is known (or, `upfront`,
 *   when one could not be asked). Never charged.
 */
export async function requireAnyKnownToken(chain: DexChain, addresses: readonly string[], ctx: ToolContext, caller: UnpaidCaller, opts: KnownTokenCheck = {}): Promise<void> {
  const check = await ctx.venues.dexTokens.existence(chain, addresses, { client: caller.client, cachedOnly: caller.paying === true && !opts.upfront });
  const e = check.existence;
  if (e.includes("known")) return;
  const on = NETWORK_SLUG[chain];
  const what = addresses.length === 1 ? addresses[0]!.slice(0, 64) : `any of the ${addresses.length} addresses`;
  if (e.every((x) => x === "unknown")) throw new AppError("NOT_FOUND", `neither GeckoTerminal nor DexScreener knows a pool of ${what} on ${on}`);
  if (e.includes("unchecked") && !opts.upfront) return;
  if (e.includes("unchecked")) {
    throw new AppError("UPSTREAM_UNAVAILABLE", `could not check ${what} on ${on} before payment now (the budget for such checks is spent); nothing was charged`, {
      retryAfterSec: check.retryAfterSec ?? 5,
    });
  }
  throw new AppError("UPSTREAM_UNAVAILABLE", `could not tell whether ${what} exists on ${on}: ${check.failure ?? "a source failed"}`, { retryAfterSec: check.retryAfterSec ?? 5 });
}

/** Network fields of every answer. */
export function networkFields(chain: DexChain): { network: string; caip2: string } {
  return { network: NETWORK_SLUG[chain], caip2: CAIP2[chain] };
}

export const Floors = z
  .object({ liquidity_usd: z.number(), trades_24h: z.number(), pool_age_days: z.number() })
  .describe("the floors below which a token is marked low_liquidity (liquidity) or unverified (trades, age)");

/** Floors as sent in answers. */
export const FLOORS = { liquidity_usd: GUARD_FLOORS.liquidityUsd, trades_24h: GUARD_FLOORS.trades24h, pool_age_days: GUARD_FLOORS.poolAgeDays };

export const QuoteKindField = z
  .enum(["stablecoin", "wrapped_native", "major", "other"])
  .describe("the pool's other token: a USD stablecoin, the chain's wrapped native token, another registry quote asset (major), or unknown (other)");

/** The guard fields every answer about a token carries (issue 23 "look-alike guards"). */
export const GuardFields = {
  symbol: z.string().describe("the token's own symbol (never used as identity)"),
  name: z.string(),
  price_usd: z.number().nullable().describe("liquidity-weighted USD price over its pools (GeckoTerminal's token price when no pool has both)"),
  liquidity_usd: z.object({ best_pool: z.number().nullable(), total: z.number() }).describe("USD liquidity of its most liquid pool and of all pools seen"),
  pool_count: z.number().int().describe("pools seen (both sources, merged by pool address)"),
  pool_age_days: z.number().nullable().describe("age of its oldest pool, days"),
  trades_24h: z.number().int().nullable().describe("swaps in 24 h over its pools"),
  volume_24h_usd: z.number().nullable(),
  best_pool_quote: z.object({ symbol: z.string(), address: z.string(), kind: QuoteKindField }).nullable(),
  quote_is_stable_or_wrapped_native: z.boolean().describe("the best pool's other token is a known stablecoin or the chain's wrapped native token"),
  price_usd_by_source: z.object({ geckoterminal: z.number().nullable(), dexscreener: z.number().nullable() }),
  source_gap_pct: z.number().nullable().describe("gap between the two sources' prices, pct of the lower"),
  sources_agree: z.boolean().nullable().describe(`true when the gap is at most ${SOURCE_AGREEMENT_TOLERANCE_PCT}% (agreement_tolerance_pct); null when one source has no price`),
  agreement_tolerance_pct: z.number(),
  listed_on: z.array(z.string()).describe("canonical (our registry), coingecko (has a CoinGecko id), geckoterminal, dexscreener"),
  symbol_collision: z
    .object({ symbol: z.string(), canonical: z.array(z.object({ network: z.string(), address: z.string() })) })
    .nullable()
    .describe("set when the symbol equals a registry token's at another address: a possible look-alike"),
  low_liquidity: z.boolean(),
  unverified: z.boolean(),
  flags: z.array(z.string()).describe("low_liquidity, unverified, symbol_collision, sources_disagree"),
  floors: Floors,
};

/** The guard fields of a {@link TokenView}. */
export function guardFields(v: TokenView) {
  const q = v.bestPool?.quote ?? null;
  return {
    symbol: v.symbol,
    name: v.name,
    price_usd: v.priceUsd,
    liquidity_usd: { best_pool: v.bestLiquidityUsd, total: v.totalLiquidityUsd },
    pool_count: v.poolCount,
    pool_age_days: v.poolAgeDays,
    trades_24h: v.trades24h,
    volume_24h_usd: v.volume24hUsd,
    best_pool_quote: q,
    quote_is_stable_or_wrapped_native: q !== null && (q.kind === "stablecoin" || q.kind === "wrapped_native"),
    price_usd_by_source: v.priceBySource,
    source_gap_pct: v.sourceGapPct,
    sources_agree: v.sourcesAgree,
    agreement_tolerance_pct: SOURCE_AGREEMENT_TOLERANCE_PCT,
    listed_on: v.listedOn,
    symbol_collision: v.symbolCollision,
    low_liquidity: v.lowLiquidity,
    unverified: v.unverified,
    flags: v.flags,
    floors: FLOORS,
  };
}

export const PoolOut = z.object({
  dex: z.string(),
  pool_address: z.string(),
  side: z.enum(["base", "quote"]).describe("the token's side of the pool"),
  quote_symbol: z.string(),
  quote_address: z.string(),
  quote_kind: QuoteKindField,
  price_usd: z.number().nullable().describe("the token's USD price in this pool"),
  liquidity_usd: z.number().nullable(),
  volume_24h_usd: z.number().nullable(),
  trades_24h: z.number().int().nullable(),
  created_at: z.string().nullable().describe("ISO 8601 pool creation time"),
  age_days: z.number().nullable(),
  sources: z.array(z.string()),
});

/** One pool as sent. */
export function poolOut(p: TokenPool, nowMs: number): z.infer<typeof PoolOut> {
  return {
    dex: p.dex,
    pool_address: p.poolAddress,
    side: p.side,
    quote_symbol: p.quote.symbol,
    quote_address: p.quote.address,
    quote_kind: p.quote.kind,
    price_usd: p.priceUsd,
    liquidity_usd: p.liquidityUsd,
    volume_24h_usd: p.volume24hUsd,
    trades_24h: p.trades24h,
    created_at: p.createdAt === null ? null : new Date(p.createdAt).toISOString(),
    age_days: p.createdAt === null ? null : Number((Math.max(0, nowMs - p.createdAt) / 86_400_000).toFixed(2)),
    sources: p.sources,
  };
}

/** `missing_sources` of a snapshot. */
export function missingSources(snap: TokenSnapshot): Array<{ source: string; reason: string }> {
  return snap.failed.map((f) => ({ source: f.source, reason: f.reason }));
}

/** Labels of the sources that answered (flagged when simulated). */
export function sourceLabels(ctx: ToolContext, snap: TokenSnapshot): string[] {
  const out: string[] = [];
  if (snap.gt) out.push(sourceLabel(ctx, "geckoterminal"));
  if (snap.dsPools.length) out.push(sourceLabel(ctx, "dexscreener"));
  return out;
}

/** Loads and describes one token (paid priority). @throws AppError NOT_FOUND when no source knows it. */
export async function loadToken(chain: DexChain, address: string, ctx: ToolContext): Promise<{ snap: TokenSnapshot; view: TokenView }> {
  const snap = await ctx.venues.dexTokens.snapshot(chain, address, "paid");
  if (!snap.gt && snap.dsPools.length === 0) {
    if (snap.failed.length) throw new AppError("UPSTREAM_UNAVAILABLE", `${snap.failed.map((f) => `${f.source}: ${f.reason}`).join("; ")}`, { retryAfterSec: 5 });
    throw new AppError("NOT_FOUND", `neither GeckoTerminal nor DexScreener knows a pool of ${address} on ${NETWORK_SLUG[chain]}`);
  }
  return { snap, view: describeToken(snap, ctx.now()) };
}
