import { CANONICAL_TOKENS, MIN_LIQUIDITY_USD, QUOTE_ASSETS, poolPriceOf, quoteAsset } from "../assets/tokens.js";
import { NETWORK_SLUG } from "../venues/dex/token-address.js";
import { poolHasToken, type TokenSnapshot } from "../venues/dex/token-source.js";
import type { DexChain, DexPool } from "../venues/dex/types.js";
import { weightedAverage } from "./dex.js";

/*
 * The market-data logic of the token-by-address tools (docs/methods/dex-tokens.md): pools of both sources merged
 * by pool address, the token's USD price per pool, a liquidity-weighted price, and the look-alike guard fields.
 * Pure: a snapshot and a time in, numbers out.
 */

/** Below these the answer is still given, but marked (docs/methods/dex-tokens.md "Floors"). */
export const GUARD_FLOORS = {
  /** USD liquidity of the token's best pool; below → `low_liquidity` (the registry's aggregate floor). */
  liquidityUsd: MIN_LIQUIDITY_USD,
  /** Swaps in 24 h over all its pools; below → `unverified`. */
  trades24h: 100,
  /** Age of its oldest pool, days; below → `unverified`. */
  poolAgeDays: 7,
} as const;

/** The two sources' prices agree when they differ by at most this, pct of the lower. */
export const SOURCE_AGREEMENT_TOLERANCE_PCT = 2;

/** Each chain's wrapped native token symbol as QUOTE_ASSETS spells it. */
const WRAPPED_NATIVE: Readonly<Record<DexChain, string>> = {
  ethereum: "WETH",
  base: "WETH",
  arbitrum: "WETH",
  optimism: "WETH",
  polygon: "WPOL",
  bsc: "WBNB",
  avalanche: "WAVAX",
  solana: "SOL",
};

/** What the quote side of a pool is: a USD stablecoin, the chain's wrapped native token, another registry quote asset, or unknown. */
export type QuoteKind = "stablecoin" | "wrapped_native" | "major" | "other";

/** One pool of the token, both sources merged. */
export interface TokenPool {
  dex: string;
  poolAddress: string;
  side: "base" | "quote";
  /** The other token of the pool. */
  quote: { symbol: string; address: string; kind: QuoteKind };
  priceUsd: number | null;
  liquidityUsd: number | null;
  volume24hUsd: number | null;
  trades24h: number | null;
  createdAt: number | null;
  sources: Array<"geckoterminal" | "dexscreener">;
}

/** The guard and price fields of one token (see docs/methods/dex-tokens.md). */
export interface TokenView {
  name: string;
  symbol: string;
  decimals: number | null;
  priceUsd: number | null;
  priceBySource: { geckoterminal: number | null; dexscreener: number | null };
  sourceGapPct: number | null;
  sourcesAgree: boolean | null;
  bestLiquidityUsd: number | null;
  totalLiquidityUsd: number;
  poolCount: number;
  poolAgeDays: number | null;
  trades24h: number | null;
  volume24hUsd: number | null;
  bestPool: TokenPool | null;
  listedOn: string[];
  symbolCollision: { symbol: string; canonical: Array<{ network: string; address: string }> } | null;
  lowLiquidity: boolean;
  unverified: boolean;
  flags: string[];
  pools: TokenPool[];
}

const addrKey = (chain: DexChain, a: string) => (chain === "solana" ? a : a.toLowerCase());

/** The kind of the token at `address` as a quote asset on `chain`. */
export function quoteKind(chain: DexChain, address: string): QuoteKind {
  const q = quoteAsset(chain, address);
  if (!q) return "other";
  if (q.stable) return "stablecoin";
  return q.symbol === WRAPPED_NATIVE[chain] ? "wrapped_native" : "major";
}

function txns(p: DexPool): number | null {
  return p.txns24h ? p.txns24h.buys + p.txns24h.sells : null;
}

/** Pools of the snapshot holding the token, one per pool address (DexScreener's record first, GeckoTerminal's fills its gaps), by liquidity. */
export function mergedPools(snap: TokenSnapshot): TokenPool[] {
  const by = new Map<string, TokenPool>();
  const add = (p: DexPool) => {
    if (!poolHasToken(p, snap.address)) return;
    const side: "base" | "quote" = addrKey(p.chain, p.baseToken.address) === addrKey(snap.chain, snap.address) ? "base" : "quote";
    const other = side === "base" ? p.quoteToken : p.baseToken;
    const view: TokenPool = {
      dex: p.dex,
      poolAddress: p.pairAddress,
      side,
      quote: { symbol: other.symbol, address: other.address, kind: quoteKind(p.chain, other.address) },
      priceUsd: poolPriceOf(p, side),
      liquidityUsd: p.liquidityUsd,
      volume24hUsd: p.volume24hUsd,
      trades24h: txns(p),
      createdAt: p.createdAt,
      sources: [p.source],
    };
    const k = addrKey(p.chain, p.pairAddress);
    const seen = by.get(k);
    if (!seen) return void by.set(k, view);
    seen.sources.push(p.source);
    seen.priceUsd ??= view.priceUsd;
    seen.liquidityUsd ??= view.liquidityUsd;
    seen.volume24hUsd ??= view.volume24hUsd;
    seen.trades24h ??= view.trades24h;
    seen.createdAt ??= view.createdAt;
  };
  for (const p of snap.dsPools) add(p);
  for (const p of snap.gt?.topPools ?? []) add(p);
  return [...by.values()].sort((a, b) => (b.liquidityUsd ?? -1) - (a.liquidityUsd ?? -1));
}

/** Liquidity-weighted USD price over pools with a price and a positive liquidity; null when none. */
export function liquidityWeightedPrice(pools: readonly TokenPool[]): number | null {
  return weightedAverage(pools.flatMap((p) => (p.priceUsd !== null && p.priceUsd > 0 && (p.liquidityUsd ?? 0) > 0 ? [{ value: p.priceUsd, weight: p.liquidityUsd! }] : [])));
}

/** Canonical tokens and quote assets whose symbol (or catalogue symbol) equals `symbol`, on every chain. */
function sameSymbol(symbol: string): Array<{ chain: DexChain; address: string }> {
  const s = symbol.trim().toUpperCase();
  if (!s) return [];
  const out: Array<{ chain: DexChain; address: string }> = [];
  for (const [catalogue, list] of Object.entries(CANONICAL_TOKENS)) {
    for (const t of list) if (catalogue === s || t.symbol.toUpperCase() === s) out.push({ chain: t.chain, address: t.address });
  }
  for (const [chain, list] of Object.entries(QUOTE_ASSETS) as Array<[DexChain, (typeof QUOTE_ASSETS)[DexChain]]>) {
    for (const q of list) if (q.symbol.toUpperCase() === s) out.push({ chain, address: q.address });
  }
  return out;
}

/** True when the token is in the canonical registry (a catalogue asset's contract or a quote asset). */
export function isRegistered(chain: DexChain, address: string): boolean {
  const k = addrKey(chain, address);
  const all = [...Object.values(CANONICAL_TOKENS).flat(), ...(QUOTE_ASSETS[chain] ?? []).map((q) => ({ chain, address: q.address }))];
  return all.some((t) => t.chain === chain && addrKey(chain, t.address) === k);
}

/**
 * `symbol_collision`: the registry's tokens sharing `symbol` (case-insensitive, catalogue or contract symbol) at
 * other addresses, at most 8; null when there is none or the token is itself one of them.
 */
export function symbolCollision(chain: DexChain, address: string, symbol: string): TokenView["symbolCollision"] {
  const matches = sameSymbol(symbol);
  if (matches.length === 0 || matches.some((m) => m.chain === chain && addrKey(chain, m.address) === addrKey(chain, address))) return null;
  const seen = new Set<string>();
  const canonical: Array<{ network: string; address: string }> = [];
  for (const m of matches) {
    const k = `${m.chain}:${addrKey(m.chain, m.address)}`;
    if (seen.has(k) || canonical.length >= 8) continue;
    seen.add(k);
    canonical.push({ network: NETWORK_SLUG[m.chain], address: m.address });
  }
  return { symbol: symbol.trim().toUpperCase(), canonical };
}

const round = (v: number, digits: number) => Number(v.toFixed(digits));

/** The full {@link TokenView} of a snapshot at `nowMs`. */
export function describeToken(snap: TokenSnapshot, nowMs: number): TokenView {
  const pools = mergedPools(snap);
  const dsPools = pools.filter((p) => p.sources.includes("dexscreener"));
  const gtPrice = snap.gt?.priceUsd ?? null;
  const dsPrice = liquidityWeightedPrice(dsPools);
  const gap = gtPrice !== null && dsPrice !== null && gtPrice > 0 && dsPrice > 0 ? round((Math.abs(gtPrice - dsPrice) / Math.min(gtPrice, dsPrice)) * 100, 4) : null;
  const withLiq = pools.filter((p) => p.liquidityUsd !== null);
  const total = withLiq.reduce((s, p) => s + p.liquidityUsd!, 0);
  const best = pools[0] ?? null;
  const created = pools.flatMap((p) => (p.createdAt === null ? [] : [p.createdAt]));
  const ageDays = created.length ? round(Math.max(0, nowMs - Math.min(...created)) / 86_400_000, 2) : null;
  const tradeCounts = pools.flatMap((p) => (p.trades24h === null ? [] : [p.trades24h]));
  const trades = tradeCounts.length ? tradeCounts.reduce((s, n) => s + n, 0) : null;
  const vols = pools.flatMap((p) => (p.volume24hUsd === null ? [] : [p.volume24hUsd]));
  const self = addrKey(snap.chain, snap.address);
  const dsToken =
    snap.dsPools.find((p) => addrKey(p.chain, p.baseToken.address) === self)?.baseToken ?? snap.dsPools.find((p) => addrKey(p.chain, p.quoteToken.address) === self)?.quoteToken;
  const symbol = snap.gt?.symbol || dsToken?.symbol || "";
  const name = snap.gt?.name || dsToken?.name || "";
  const bestLiq = best?.liquidityUsd ?? null;
  const lowLiquidity = bestLiq === null || bestLiq < GUARD_FLOORS.liquidityUsd;
  const unverified = trades === null || trades < GUARD_FLOORS.trades24h || ageDays === null || ageDays < GUARD_FLOORS.poolAgeDays;
  const collision = symbolCollision(snap.chain, snap.address, symbol);
  const listedOn: string[] = [];
  if (isRegistered(snap.chain, snap.address)) listedOn.push("canonical");
  if (snap.gt?.coingeckoCoinId) listedOn.push("coingecko");
  if (snap.gt) listedOn.push("geckoterminal");
  if (snap.dsPools.length) listedOn.push("dexscreener");
  const sourcesAgree = gap === null ? null : gap <= SOURCE_AGREEMENT_TOLERANCE_PCT;
  const flags = [
    ...(lowLiquidity ? ["low_liquidity"] : []),
    ...(unverified ? ["unverified"] : []),
    ...(collision ? ["symbol_collision"] : []),
    ...(sourcesAgree === false ? ["sources_disagree"] : []),
  ];
  return {
    name,
    symbol,
    decimals: snap.gt?.decimals ?? null,
    priceUsd: liquidityWeightedPrice(pools) ?? gtPrice,
    priceBySource: { geckoterminal: gtPrice, dexscreener: dsPrice },
    sourceGapPct: gap,
    sourcesAgree,
    bestLiquidityUsd: bestLiq,
    totalLiquidityUsd: total,
    poolCount: pools.length,
    poolAgeDays: ageDays,
    trades24h: trades,
    volume24hUsd: vols.length ? vols.reduce((s, v) => s + v, 0) : null,
    bestPool: best,
    listedOn,
    symbolCollision: collision,
    lowLiquidity,
    unverified,
    flags,
    pools,
  };
}
