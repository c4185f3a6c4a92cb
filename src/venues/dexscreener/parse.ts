import { z } from "zod";
import { DEX_CHAINS, type DexChain, type DexPool, type DexToken } from "../dex/types.js";
import { OptNum, parseShape } from "../wire.js";

/*
 * Pure parsers for DexScreener payloads (https://docs.dexscreener.com/api/reference).
 * Wire rules: `priceUsd` and `priceNative` are strings; `volume`, `priceChange`, `liquidity`, `fdv` and
 * `pairCreatedAt` (epoch ms) are numbers, possibly in exponent notation (`3.725857251510287e+42`). Any
 * window key (`m5`, `h1`, `h6`, `h24`) may be missing; `liquidity`, `fdv` and `marketCap` may be absent or
 * null. Older captures (2022) send a `quoteToken` with only `symbol`, and a `dexId` that is a contract address.
 */

const VENUE = "dexscreener";

/** DexScreener chain id → our chain key; chains we do not aggregate are absent. */
const CHAIN_BY_DEXSCREENER_ID: ReadonlyMap<string, DexChain> = new Map((Object.keys(DEX_CHAINS) as DexChain[]).map((c) => [DEX_CHAINS[c].dexscreener, c]));

/** Our chain key of a DexScreener `chainId`, or undefined for chains we do not aggregate (`injective`). */
export function chainFromDexScreener(chainId: string): DexChain | undefined {
  return CHAIN_BY_DEXSCREENER_ID.get(chainId);
}

const Token = z.object({
  /** Absent in some older captures (quote side); becomes "" and can then never match a token registry. */
  address: z.string().optional(),
  name: z.string().optional(),
  symbol: z.string(),
});

const Txns = z.object({ buys: z.number(), sells: z.number() });

/** One window object (`volume`, `priceChange`): only `h24` is used; any key may be missing. */
const Windowed = z.object({ h24: OptNum }).nullable().optional();

/** The DexScreener `Pair` object (fields we use; unknown fields such as `url`, `info`, `labels` are ignored). */
const Pair = z.object({
  chainId: z.string(),
  dexId: z.string(),
  pairAddress: z.string(),
  baseToken: Token,
  quoteToken: Token,
  priceNative: OptNum,
  priceUsd: OptNum,
  txns: z.object({ h24: Txns.nullable().optional() }).nullable().optional(),
  volume: Windowed,
  priceChange: Windowed,
  liquidity: z.object({ usd: OptNum }).nullable().optional(),
  pairCreatedAt: z.number().nullable().optional(),
});

type WirePair = z.infer<typeof Pair>;

const PairList = z.array(Pair);
const SearchBody = z.object({ schemaVersion: z.string(), pairs: z.array(Pair).nullable() });

function token(t: z.infer<typeof Token>): DexToken {
  return { address: t.address ?? "", symbol: t.symbol, name: t.name ?? t.symbol };
}

/** Normalises one pair; undefined when its chain is not one we aggregate. */
function toPool(p: WirePair): DexPool | undefined {
  const chain = chainFromDexScreener(p.chainId);
  if (!chain) return undefined;
  const h24 = p.txns?.h24;
  return {
    source: "dexscreener",
    chain,
    dex: p.dexId,
    pairAddress: p.pairAddress,
    baseToken: token(p.baseToken),
    quoteToken: token(p.quoteToken),
    priceUsd: p.priceUsd,
    priceNative: p.priceNative,
    liquidityUsd: p.liquidity?.usd ?? null,
    volume24hUsd: p.volume?.h24 ?? null,
    priceChange24hPct: p.priceChange?.h24 ?? null,
    txns24h: h24 ? { buys: h24.buys, sells: h24.sells } : null,
    // DexScreener states no swap fee (its `labels`, e.g. ["v3"], name a pool version, not a fee tier).
    feeBps: null,
    createdAt: p.pairCreatedAt ?? null,
  };
}

function toPools(pairs: readonly WirePair[]): DexPool[] {
  const out: DexPool[] = [];
  for (const p of pairs) {
    const pool = toPool(p);
    if (pool) out.push(pool);
  }
  return out;
}

/**
 * Parses a bare `[Pair]` answer: `GET /token-pairs/v1/{chainId}/{tokenAddress}` or
 * `GET /tokens/v1/{chainId}/{addresses}`. Pairs on chains we do not aggregate are dropped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parsePairList(raw: unknown, endpoint = "/token-pairs/v1"): DexPool[] {
  return toPools(parseShape(VENUE, PairList, raw, endpoint));
}

/**
 * Parses `GET /latest/dex/search?q=` (`{"schemaVersion":"1.0.0","pairs":[Pair…]}`; `pairs` may be null
 * when nothing matches). Pairs on chains we do not aggregate are dropped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseSearch(raw: unknown): DexPool[] {
  return toPools(parseShape(VENUE, SearchBody, raw, "/latest/dex/search").pairs ?? []);
}
