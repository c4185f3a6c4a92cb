import { z } from "zod";
import { DEX_CHAINS, type DexChain, type DexPool, type DexToken, type PoolCandle } from "../dex/types.js";
import { Num, OptNum, parseShape, perCoin } from "../wire.js";

/*
 * Pure parsers for GeckoTerminal API v2 payloads (JSON:API; https://apiguide.geckoterminal.com).
 * Wire rules: pool prices, reserves and volumes are decimal strings (`"151752296.378"`); ids are
 * `<network>_<address>` (`eth_0xc02a…`, `polygon_pos_0x…`); `pool_created_at` is ISO 8601; OHLCV rows are
 * `[ts_seconds, open, high, low, close, volume_usd]` numbers (exponents such as `1.61e-05` occur), newest first.
 */

const VENUE = "geckoterminal";

/** GeckoTerminal network id → our chain key. */
const CHAIN_BY_NETWORK: ReadonlyMap<string, DexChain> = new Map((Object.keys(DEX_CHAINS) as DexChain[]).map((c) => [DEX_CHAINS[c].geckoterminal, c]));

/** Network ids, longest first, so that `polygon_pos_…` is never read as network `polygon`. */
const NETWORKS = [...CHAIN_BY_NETWORK.keys()].sort((a, b) => b.length - a.length);

/** Our chain key of a GeckoTerminal network id (`eth`, `polygon_pos`), or undefined for networks we do not aggregate. */
export function chainFromNetwork(network: string): DexChain | undefined {
  return CHAIN_BY_NETWORK.get(network);
}

/**
 * Splits a JSON:API id `<network>_<address>` (`eth_0xc02a…`) into our chain and the address.
 * Undefined when the network is not one we aggregate or the id has no address part.
 */
export function splitGeckoId(id: string): { chain: DexChain; address: string } | undefined {
  for (const n of NETWORKS) {
    if (id.startsWith(`${n}_`) && id.length > n.length + 1) return { chain: CHAIN_BY_NETWORK.get(n)!, address: id.slice(n.length + 1) };
  }
  return undefined;
}

/** The swap fee stated at the end of a pool name (`"WETH / USDC 0.05%"` → 5 bps), or null when there is none. */
export function feeBpsFromName(name: string): number | null {
  const m = /\s(\d+(?:\.\d+)?)%\s*$/.exec(name);
  if (!m) return null;
  return Number((Number(m[1]) * 100).toPrecision(12));
}

/**
 * Base and quote symbols from a pool name: the fee suffix is dropped and the rest split on `" / "`; the first
 * two parts are base and quote (multi-asset pools such as `"USDT / WBTC / WETH"` list base and quote first).
 * Empty strings when the name does not say.
 */
export function symbolsFromName(name: string): { base: string; quote: string } {
  const parts = name
    .replace(/\s\d+(?:\.\d+)?%\s*$/, "")
    .split(" / ")
    .map((s) => s.trim());
  return parts.length >= 2 ? { base: parts[0]!, quote: parts[1]! } : { base: "", quote: "" };
}

const Relationship = z.object({ data: z.object({ id: z.string(), type: z.string() }).nullable() });

const Pool = z.object({
  id: z.string(),
  type: z.literal("pool"),
  attributes: z.object({
    address: z.string(),
    name: z.string(),
    base_token_price_usd: OptNum,
    quote_token_price_usd: OptNum,
    base_token_price_quote_token: OptNum,
    reserve_in_usd: OptNum,
    pool_created_at: z.string().nullable().optional(),
    volume_usd: z.object({ h24: OptNum }).nullable().optional(),
    price_change_percentage: z.object({ h24: OptNum }).nullable().optional(),
    transactions: z
      .object({ h24: z.object({ buys: z.number(), sells: z.number() }).nullable().optional() })
      .nullable()
      .optional(),
  }),
  relationships: z.object({ base_token: Relationship, quote_token: Relationship, dex: Relationship.optional() }),
});

/** An `included[]` resource: tokens (`include=base_token,quote_token`) and DEXes; other types are ignored. */
const Included = z.object({ id: z.string(), type: z.string(), attributes: z.record(z.string(), z.unknown()).optional() });
const IncludedToken = z.object({ address: z.string(), name: z.string(), symbol: z.string() });

const PoolsBody = z.object({ data: z.array(Pool), included: z.array(Included).optional() });

type WirePool = z.infer<typeof Pool>;

/** Index of included tokens by JSON:API id. Malformed token entries are skipped (the pool name still gives symbols). */
function includedTokens(included: ReadonlyArray<z.infer<typeof Included>>): Map<string, z.infer<typeof IncludedToken>> {
  const out = new Map<string, z.infer<typeof IncludedToken>>();
  for (const inc of included) {
    if (inc.type !== "token") continue;
    const t = IncludedToken.safeParse(inc.attributes);
    if (t.success) out.set(inc.id, t.data);
  }
  return out;
}

function parseIsoMs(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/** Normalises one pool; undefined when its network is not ours or a token relationship is missing. */
function toPool(p: WirePool, tokens: ReadonlyMap<string, z.infer<typeof IncludedToken>>): DexPool | undefined {
  const net = splitGeckoId(p.id);
  const baseRel = p.relationships.base_token.data;
  const quoteRel = p.relationships.quote_token.data;
  if (!net || !baseRel || !quoteRel) return undefined;
  const baseId = splitGeckoId(baseRel.id);
  const quoteId = splitGeckoId(quoteRel.id);
  if (!baseId || !quoteId) return undefined;
  const a = p.attributes;
  const fromName = symbolsFromName(a.name);
  const tok = (relId: string, address: string, nameSymbol: string): DexToken => {
    const inc = tokens.get(relId);
    return inc ? { address, symbol: inc.symbol, name: inc.name } : { address, symbol: nameSymbol, name: nameSymbol };
  };
  const baseUsd = a.base_token_price_usd;
  const quoteUsd = a.quote_token_price_usd;
  const h24 = a.transactions?.h24;
  return {
    source: "geckoterminal",
    chain: net.chain,
    dex: p.relationships.dex?.data?.id ?? "",
    pairAddress: a.address,
    baseToken: tok(baseRel.id, baseId.address, fromName.base),
    quoteToken: tok(quoteRel.id, quoteId.address, fromName.quote),
    priceUsd: baseUsd,
    // Base in quote tokens. The ratio of the two USD prices is preferred: `base_token_price_quote_token`
    // is rounded to about 4 significant digits ("21.24"), the USD prices are not.
    priceNative: baseUsd !== null && quoteUsd !== null && quoteUsd > 0 ? perCoin(baseUsd, quoteUsd) : a.base_token_price_quote_token,
    liquidityUsd: a.reserve_in_usd,
    volume24hUsd: a.volume_usd?.h24 ?? null,
    priceChange24hPct: a.price_change_percentage?.h24 ?? null,
    txns24h: h24 ? { buys: h24.buys, sells: h24.sells } : null,
    feeBps: feeBpsFromName(a.name),
    createdAt: parseIsoMs(a.pool_created_at),
  };
}

/**
 * Parses a JSON:API pool list: `GET /networks/{network}/tokens/{address}/pools` (also `/networks/{network}/pools`).
 * Token addresses come from the relationship ids (`eth_0x…`); symbols and names from `included[]` when the
 * request asked for `include=base_token,quote_token`, else from the pool name (`"WETH / USDC 0.05%"`), whose
 * trailing pct is the fee. Pools on networks we do not aggregate are dropped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parsePools(raw: unknown, endpoint = "/networks/{network}/tokens/{address}/pools"): DexPool[] {
  const body = parseShape(VENUE, PoolsBody, raw, endpoint);
  const tokens = includedTokens(body.included ?? []);
  const out: DexPool[] = [];
  for (const p of body.data) {
    const pool = toPool(p, tokens);
    if (pool) out.push(pool);
  }
  return out;
}

const Row = z.tuple([Num, Num, Num, Num, Num, Num]);
const OhlcvBody = z.object({
  data: z.object({ type: z.literal("ohlcv_request_response"), attributes: z.object({ ohlcv_list: z.array(Row) }) }),
});

/**
 * Parses `GET /networks/{network}/pools/{pool}/ohlcv/{timeframe}` into candles: time in epoch ms (the wire
 * sends seconds), USD prices (with `currency=usd`), newest first. Intervals without swaps are absent.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOhlcv(raw: unknown): PoolCandle[] {
  const rows = parseShape(VENUE, OhlcvBody, raw, "/networks/{network}/pools/{pool}/ohlcv/{timeframe}").data.attributes.ohlcv_list;
  return rows.map(([ts, open, high, low, close, volumeUsd]) => ({ time: ts * 1000, open, high, low, close, volumeUsd })).sort((a, b) => b.time - a.time);
}
