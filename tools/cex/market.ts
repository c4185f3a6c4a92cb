import { z } from "zod";
import { COINGECKO } from "../../src/venues/coingecko/client.js";
import { defineTool } from "../../src/registry/tool.js";
import { AssetIdParam, sourceLabel } from "../common.js";

const Output = z.object({
  success: z.literal(true),
  data: z.object({
    id: z.string().describe("CoinGecko coin id"),
    symbol: z.string().describe("uppercase symbol"),
    name: z.string(),
    price: z.number().nullable().describe("USD"),
    change_24h: z.number().nullable().describe("pct"),
    change_7d: z.number().nullable().describe("pct"),
    change_30d: z.number().nullable().describe("pct"),
    volume_24h: z.number().nullable().describe("USD"),
    market_cap: z.number().nullable().describe("USD"),
    market_cap_rank: z.number().int().nullable(),
    circulating_supply: z.number().nullable().describe("coins"),
    total_supply: z.number().nullable().describe("coins; null when uncapped or unknown"),
    ath: z.number().nullable().describe("all-time high, USD"),
    ath_date: z.string().nullable(),
    atl: z.number().nullable().describe("all-time low, USD"),
    atl_date: z.string().nullable(),
    last_updated: z.string().nullable().describe("ISO 8601, as reported by the source"),
    source: z.string(),
  }),
});

/** `GET /api/v1/market/:id`: market details of one asset from CoinGecko `/coins/{id}` (https://docs.coingecko.com/reference/coins-id). */
export const cexMarket = defineTool({
  name: "cex_market",
  title: "Market details",
  method: "GET",
  path: "/api/v1/market/:id",
  priceUsd: "0.005",
  cacheTtlSec: 30,
  tags: ["cex"],
  summary: "Price, changes (24h/7d/30d), volume, market cap, supply, ATH/ATL of one asset",
  description: "Market details of one supported asset from CoinGecko, addressed by CoinGecko id (bitcoin, ethereum, ...) or symbol.",
  example: { id: "bitcoin" },
  input: z.object({ id: AssetIdParam }),
  output: Output,
  async handler({ id: asset }, ctx) {
    const c = await ctx.venues.coingecko.coin(asset.coingeckoId);
    return {
      success: true as const,
      data: {
        id: c.id,
        symbol: c.symbol,
        name: c.name,
        price: c.priceUsd,
        change_24h: c.change24hPct,
        change_7d: c.change7dPct,
        change_30d: c.change30dPct,
        volume_24h: c.volume24hUsd,
        market_cap: c.marketCapUsd,
        market_cap_rank: c.marketCapRank,
        circulating_supply: c.circulatingSupply,
        total_supply: c.totalSupply,
        ath: c.athUsd,
        ath_date: c.athDate,
        atl: c.atlUsd,
        atl_date: c.atlDate,
        last_updated: c.lastUpdated,
        source: sourceLabel(ctx, COINGECKO),
      },
    };
  },
});
