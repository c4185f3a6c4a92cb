import { z } from "zod";
import { longShortInterpretation, longShortSentiment } from "../../src/analytics/positioning.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { MissingExchanges, perVenue, PerpSymbol, requireListed } from "./common.js";
import { coverage, Coverage } from "./coverage.js";

/** `GET /futures/long-short/:symbol`: long/short ratios per venue with their population, and the aggregate sentiment (docs/methods/perpetuals.md). */
export const longShort = defineTool({
  name: "long_short",
  title: "Long/short ratio",
  method: "GET",
  path: "/futures/long-short/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 30,
  tags: ["futures"],
  summary: "Long/short ratio of one perpetual per venue (top traders where public) and the aggregate sentiment",
  description:
    "Binance: top-trader position ratio (source top_traders_positions). OKX: top-trader position ratio (top_traders_positions). Bybit publishes only the all-accounts ratio (all_accounts). Gate: top-trader position ratio (top_traders_positions), else all accounts. Bitget: large-holder account ratio (top_traders_accounts). Hyperliquid, Deribit and Aster publish none (missing_exchanges: no_public_data). Latest 5-minute values. Sentiment of avg_ls_ratio: > 2.0 extremely_bullish, 1.5-2.0 bullish, 1.05-1.5 slightly_bullish, 0.95-1.05 neutral, 0.67-0.95 slightly_bearish, 0.5-0.67 bearish, < 0.5 extremely_bearish.",
  example: { symbol: "BTC" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    exchanges: z.record(z.string(), z.object({ long_ratio: z.number(), short_ratio: z.number(), ls_ratio: z.number(), source: z.string(), period: z.string(), as_of: z.string() })),
    aggregate: z.object({ avg_ls_ratio: z.number(), sentiment: z.string(), interpretation: z.string() }),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const { results, answered, missing_exchanges } = await perVenue(ctx, symbol, (c) => c.longShort(symbol), { needs: "longShort" });
    const exchanges: Record<string, { long_ratio: number; short_ratio: number; ls_ratio: number; source: string; period: string; as_of: string }> = {};
    for (const v of answered) {
      const r = results[v]!;
      exchanges[v] = { long_ratio: r.longRatio, short_ratio: r.shortRatio, ls_ratio: r.lsRatio, source: r.source, period: r.period, as_of: new Date(r.time).toISOString() };
    }
    const avg = answered.reduce((s, v) => s + results[v]!.lsRatio, 0) / answered.length;
    return {
      symbol,
      timestamp: isoNow(ctx),
      exchanges,
      aggregate: { avg_ls_ratio: avg, sentiment: longShortSentiment(avg), interpretation: longShortInterpretation(avg, answered.length) },
      coverage: coverage(answered),
      missing_exchanges,
    };
  },
});
