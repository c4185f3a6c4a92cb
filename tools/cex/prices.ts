import { z } from "zod";
import { assetBySymbol, listAssets } from "../../src/assets/catalogue.js";
import { AppError } from "../../src/errors.js";
import { COINGECKO } from "../../src/venues/coingecko/client.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, sourceLabel, Timestamp, UNKNOWN_SYMBOL_ISSUE } from "../common.js";

/** Most symbols one batch request may name (`/api/v1/prices`, docs/endpoints.md). */
export const MAX_SYMBOLS = 20;

const SUPPORTED = listAssets().map((a) => a.symbol.toLowerCase());

const Symbols = z
  .string()
  .min(1)
  .max(400)
  .describe(`Comma-separated lowercase symbols, at most ${MAX_SYMBOLS}. Supported: ${SUPPORTED.join(", ")}`)
  .transform((raw, ctx) => {
    const requested = [
      ...new Set(
        raw
          .split(",")
          .map((s) => s.trim().toLowerCase())
          .filter(Boolean),
      ),
    ].sort();
    if (requested.length === 0) {
      ctx.addIssue({ code: "custom", message: "symbols must name at least one symbol" });
      return z.NEVER;
    }
    if (requested.length > MAX_SYMBOLS) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_SYMBOLS} symbols per request, got ${requested.length}` });
      return z.NEVER;
    }
    const supported = requested.filter((s) => assetBySymbol(s));
    if (supported.length === 0) {
      ctx.addIssue({ code: "custom", message: `none of the symbols is supported (${requested.join(", ")})`, params: UNKNOWN_SYMBOL_ISSUE });
      return z.NEVER;
    }
    return { requested, supported, unsupported: requested.filter((s) => !assetBySymbol(s)) };
  });

const PriceEntry = z.object({
  price: z.number().describe("USD price"),
  change_24h: z.number().nullable().describe("24h change, pct"),
  volume_24h: z.number().nullable().describe("24h traded volume, USD"),
  market_cap: z.number().nullable().describe("market capitalisation, USD"),
  source: z.string().describe("data source (venue)"),
});

const Output = z.object({
  success: z.literal(true),
  data: z.record(z.string(), PriceEntry).describe("keyed by lowercase symbol"),
  meta: z.object({
    cached: z.boolean(),
    count: z.number().int().describe("symbols answered"),
    requested: z.number().int().describe("distinct symbols requested"),
    unsupported: z.array(z.string()).describe("requested symbols outside the supported list (not charged extra, not answered)"),
    unavailable: z.array(z.string()).describe("supported symbols the source returned no price for this time"),
    timestamp: Timestamp,
  }),
});

/** `GET /api/v1/prices`: batch USD prices from CoinGecko `/simple/price` (https://docs.coingecko.com/reference/simple-price). */
export const cexPrices = defineTool({
  name: "cex_prices",
  title: "Batch CEX prices",
  method: "GET",
  path: "/api/v1/prices",
  priceUsd: "0.005",
  cacheTtlSec: 10,
  tags: ["cex"],
  summary: "USD price, 24h change, volume and market cap for up to 20 symbols",
  description:
    "Aggregated centralized-exchange prices from CoinGecko for up to 20 comma-separated symbols. Unsupported symbols are listed in meta.unsupported and the rest are answered; a request with no supported symbol is a 404.",
  example: { symbols: "btc,eth,sol" },
  input: z.object({ symbols: Symbols }),
  output: Output,
  async handler({ symbols }, ctx) {
    const ids = symbols.supported.map((s) => assetBySymbol(s)!.coingeckoId);
    const prices = new Map((await ctx.venues.coingecko.simplePrice(ids)).map((p) => [p.coingeckoId, p]));
    const source = sourceLabel(ctx, COINGECKO);
    const data: Record<string, z.infer<typeof PriceEntry>> = {};
    const unavailable: string[] = [];
    for (const sym of symbols.supported) {
      const p = prices.get(assetBySymbol(sym)!.coingeckoId);
      if (!p) {
        unavailable.push(sym);
        continue;
      }
      data[sym] = { price: p.priceUsd, change_24h: p.change24hPct, volume_24h: p.volume24hUsd, market_cap: p.marketCapUsd, source };
    }
    if (unavailable.length === symbols.supported.length) {
      throw new AppError("UPSTREAM_ERROR", "coingecko returned no price for any requested symbol");
    }
    return {
      success: true as const,
      data,
      meta: { cached: false, count: Object.keys(data).length, requested: symbols.requested.length, unsupported: symbols.unsupported, unavailable, timestamp: isoNow(ctx) },
    };
  },
});
