import { z } from "zod";
import { pct } from "../../src/analytics/funding.js";
import { openInterestInterpretation } from "../../src/analytics/positioning.js";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, RequireField, Timestamp } from "../common.js";
import { MissingExchanges, perVenue, PerpSymbol, requireListed } from "./common.js";
import { coverage, Coverage, listedButUnread, oiSharePct, rememberOi } from "./coverage.js";

/** `GET /futures/open-interest/:symbol`: open interest per venue in coins and USD, shares and total (docs/methods/perpetuals.md). */
export const openInterest = defineTool({
  name: "open_interest",
  title: "Open interest",
  method: "GET",
  path: "/futures/open-interest/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 30,
  tags: ["futures"],
  summary: "Open interest of one perpetual per venue (coins and USD), shares and total",
  description:
    "Binance openInterest (coins) x mark; Bybit openInterest/openInterestValue; OKX oiCcy/oiUsd (contracts x ctVal); Hyperliquid openInterest x mark; Gate contract_stats open_interest (contracts x quanto_multiplier) and open_interest_usd; Bitget holdingAmount (coins) x mark; Deribit open_interest (USD on the inverse BTC and ETH perpetuals, coins on USDC perpetuals); Aster openInterest (coins) x mark. Multiplier markets (1000PEPE, kPEPE) are converted to single coins. coverage.oi_share_pct says how much of the venues' open interest the total covers when a venue is missing.",
  example: { symbol: "SOL" },
  input: z.object({ symbol: PerpSymbol, ...RequireField }),
  output: z.object({
    symbol: z.string(),
    timestamp: Timestamp,
    total_oi_usd: z.number(),
    total_oi_coins: z.number(),
    exchanges: z.record(z.string(), z.object({ oi_usd: z.number(), oi_coins: z.number(), share_pct: z.number() })),
    interpretation: z.string(),
    coverage: Coverage,
    missing_exchanges: MissingExchanges,
  }),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  async handler({ symbol }, ctx) {
    const { results, answered, missing_exchanges } = await perVenue(ctx, symbol, (c) => c.openInterest(symbol));
    const total = answered.reduce((s, v) => s + results[v]!.oiUsd, 0);
    for (const v of answered) rememberOi(results[v]!);
    const exchanges: Record<string, { oi_usd: number; oi_coins: number; share_pct: number }> = {};
    for (const v of answered) {
      const oi = results[v]!;
      exchanges[v] = { oi_usd: oi.oiUsd, oi_coins: oi.oiCoins, share_pct: total > 0 ? pct(oi.oiUsd / total) : 0 };
    }
    return {
      symbol,
      timestamp: isoNow(ctx),
      total_oi_usd: total,
      total_oi_coins: answered.reduce((s, v) => s + results[v]!.oiCoins, 0),
      exchanges,
      interpretation: openInterestInterpretation(
        Object.entries(exchanges).map(([exchange, e]) => ({ exchange, share_pct: e.share_pct })),
        total,
      ),
      coverage: coverage(answered, undefined, oiSharePct(symbol, total, listedButUnread(missing_exchanges), ctx.now())),
      missing_exchanges,
    };
  },
});
