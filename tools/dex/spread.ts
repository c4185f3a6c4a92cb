import { z } from "zod";
import { ammQuote, poolFeeBps } from "../../src/analytics/dex.js";
import { clean } from "../../src/analytics/funding.js";
import { canonicalTokens, quoteAsset } from "../../src/assets/tokens.js";
import { optionalRead } from "../../src/core/fanout.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp, UNKNOWN_SYMBOL_ISSUE } from "../common.js";
import type { ToolContext } from "../../src/core/context.js";
import type { DexChain } from "../../src/venues/dex/types.js";
import { acceptedPools, MissingSources, type AcceptedPool } from "./common.js";

/** Price-impact band of the depth figures: ±2% around each pool's price. */
const BAND = 0.02;

const Pair = z
  .string()
  .min(3)
  .max(30)
  .describe("BASE/QUOTE (URL-encoded as BASE%2FQUOTE), BASE-QUOTE or BASE_QUOTE, e.g. ETH-USDC")
  .transform((raw, ctx) => {
    const parts = raw.trim().toUpperCase().split(/[/_-]/);
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      ctx.addIssue({ code: "custom", message: `'${raw}' is not a pair; use BASE/QUOTE, BASE-QUOTE or BASE_QUOTE` });
      return z.NEVER;
    }
    const [base, quote] = parts as [string, string];
    if (canonicalTokens(base).length === 0) {
      ctx.addIssue({ code: "custom", message: `'${base}' has no canonical DEX token in the registry`, params: UNKNOWN_SYMBOL_ISSUE });
      return z.NEVER;
    }
    return { base, quote };
  });

/** GeckoTerminal pool lists looked up for stated fees (its budget is about 20 calls/min; lists are cached 10 min). */
const FEE_LOOKUPS = 3;

/**
 * Stated swap fees of the most liquid pools, from GeckoTerminal pool names ("WETH / USDC 0.05%"), keyed by
 * `chain:pairAddress`. DexScreener does not state fees. Lookups that fail leave the default fee (see {@link optionalRead}).
 */
async function statedFees(pools: readonly AcceptedPool[], ctx: ToolContext): Promise<Map<string, number>> {
  const tokens = new Map<string, { chain: DexChain; address: string }>();
  for (const { pool, side } of pools) {
    const t = side === "base" ? pool.baseToken : pool.quoteToken;
    tokens.set(`${pool.chain}:${t.address.toLowerCase()}`, { chain: pool.chain, address: t.address });
  }
  const fees = new Map<string, number>();
  const lists = await Promise.all([...tokens.values()].map((t) => optionalRead(ctx.venues.geckoterminal.tokenPools(t.chain, t.address))));
  for (const p of lists.flatMap((l) => l ?? [])) if (p.feeBps !== null) fees.set(`${p.chain}:${p.pairAddress.toLowerCase()}`, p.feeBps);
  return fees;
}

/** Spread interpretation bands (pct; docs/methods/dex.md). */
function interpret(spreadPct: number): string {
  if (spreadPct < 0) return "crossed (one DEX bids above another's ask: an arbitrage)";
  if (spreadPct < 0.05) return "very tight";
  if (spreadPct <= 0.1) return "normal";
  if (spreadPct <= 0.5) return "wide";
  return "very wide";
}

/** `GET /spread/:pair`: best bid and ask across DEX pools of a pair, with per-pool AMM depth (docs/methods/dex.md). */
export const dexSpread = defineTool({
  name: "dex_spread",
  title: "DEX bid/ask spread",
  method: "GET",
  path: "/spread/:pair",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["dex"],
  summary: "Best bid/ask of a pair across DEX pools, spread, and per-pool bid/ask and depth (AMM model)",
  description:
    "AMMs have no order book: each pool is quoted at bid = price x (1 - fee), ask = price x (1 + fee), with the pool's stated fee (GeckoTerminal pool names, looked up for the most liquid pools), else the DEX's usual fee, else 0.30%. Depth is what moves a constant-product pool's price by 2% (half the liquidity on each side): ask depth Q(sqrt(1.02) - 1), bid depth Q(1 - sqrt(0.98)), Q = liquidity / 2; concentrated-liquidity pools are deeper, so these are lower bounds. Prices are in QUOTE units; spread_usd converts with the quote's USD price. Pair formats: BASE%2FQUOTE, BASE-QUOTE, BASE_QUOTE.",
  example: { pair: "ETH-USDC" },
  input: z.object({ pair: Pair, ...RequireField }),
  output: z.object({
    pair: z.string(),
    best_bid: z.number(),
    best_bid_dex: z.string(),
    best_ask: z.number(),
    best_ask_dex: z.string(),
    spread_pct: z.number(),
    spread_usd: z.number(),
    mid_price: z.number(),
    interpretation: z.string(),
    band_pct: z.number().describe("price-impact band of the depth figures"),
    depth_analysis: z.array(
      z.object({
        dex: z.string(),
        chain: z.string(),
        pair_address: z.string(),
        fee_bps: z.number(),
        bid_price: z.number(),
        ask_price: z.number(),
        spread_pct: z.number(),
        bid_depth_usd: z.number(),
        ask_depth_usd: z.number(),
      }),
    ),
    timestamp: Timestamp,
    missing_sources: MissingSources,
  }),
  async handler({ pair }, ctx) {
    const { base, quote } = pair;
    const { pools, missing_sources } = await acceptedPools(base, ctx);
    const fees = await statedFees(pools.slice(0, FEE_LOOKUPS), ctx);
    const rows = pools.flatMap(({ pool, side, priceUsd }) => {
      const other = side === "base" ? pool.quoteToken : pool.baseToken;
      const q = quoteAsset(pool.chain, other.address);
      if (!q || q.symbol.toUpperCase() !== quote) return [];
      const native = pool.priceNative;
      if (!native || native <= 0) return [];
      const priceInQuote = side === "base" ? native : 1 / native;
      const fee = poolFeeBps(pool.dex, pool.feeBps ?? fees.get(`${pool.chain}:${pool.pairAddress.toLowerCase()}`) ?? null);
      const quoteUsd = priceUsd / priceInQuote;
      return [{ pool, fee, quoteUsd, q: ammQuote(priceInQuote, fee, pool.liquidityUsd ?? 0, BAND) }];
    });
    if (rows.length === 0) throw new AppError("NOT_FOUND", `no liquid ${base}/${quote} pool found on the supported DEXes`);
    const bestBid = rows.reduce((a, b) => (b.q.bid > a.q.bid ? b : a));
    const bestAsk = rows.reduce((a, b) => (b.q.ask < a.q.ask ? b : a));
    const mid = (bestBid.q.bid + bestAsk.q.ask) / 2;
    const spreadPct = clean(((bestAsk.q.ask - bestBid.q.bid) / mid) * 100);
    const quoteUsd = rows.reduce((s, r) => s + r.quoteUsd, 0) / rows.length;
    return {
      pair: `${base}/${quote}`,
      best_bid: bestBid.q.bid,
      best_bid_dex: `${bestBid.pool.dex} (${bestBid.pool.chain})`,
      best_ask: bestAsk.q.ask,
      best_ask_dex: `${bestAsk.pool.dex} (${bestAsk.pool.chain})`,
      spread_pct: spreadPct,
      spread_usd: clean((bestAsk.q.ask - bestBid.q.bid) * quoteUsd),
      mid_price: clean(mid),
      interpretation: interpret(spreadPct),
      band_pct: BAND * 100,
      depth_analysis: rows.map((r) => ({
        dex: r.pool.dex,
        chain: r.pool.chain,
        pair_address: r.pool.pairAddress,
        fee_bps: r.fee,
        bid_price: r.q.bid,
        ask_price: r.q.ask,
        spread_pct: r.q.spreadPct,
        bid_depth_usd: r.q.bidDepthUsd,
        ask_depth_usd: r.q.askDepthUsd,
      })),
      timestamp: isoNow(ctx),
      missing_sources,
    };
  },
});
