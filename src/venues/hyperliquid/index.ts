import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { HyperliquidTradeBackfill } from "./backfill.js";
import { HyperliquidPerpClient } from "./client.js";
import { HYPERLIQUID_ENDPOINTS } from "./endpoints.js";
import { HyperliquidFeed } from "./feed.js";

/** Hyperliquid USDC perpetuals (`POST /info`); its `predictedFundings` also predicts Binance's and Bybit's next rates. */
export const hyperliquid = defineVenue({
  id: "hyperliquid",
  name: "Hyperliquid",
  endpoints: HYPERLIQUID_ENDPOINTS,
  createClient: (config, common) => new HyperliquidPerpClient(config.venues.hyperliquid, common),
  createFeed: (input) => new HyperliquidFeed(feedOptions(input, input.config.streams?.wsUrls.hyperliquid)),
  createBackfill: (input) => new HyperliquidTradeBackfill(backfillOptions(input, input.config.venues.hyperliquid)),
  tradeIds: "unordered",
  liquidationFeed: { kind: "none", description: "no public liquidation feed" },
  instruments: { listing: "perpetual", margin: "USDC", contractUnits: "coins (kPEPE: 1000 coins)" },
  marginTierSource: "POST /info meta (marginTables)",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: false,
    liquidations: false,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: false,
    options: false,
  },
  missing: {
    openInterestHistory: "publishes no open-interest history",
    longShort: "publishes no long/short ratio",
    liquidations: "publishes no public liquidation feed",
    predictedFunding: "its predictedFundings is read for every venue it covers (Venues.predictions), not as this venue's own estimate",
    hourlyCandles: "published (candleSnapshot) but not read",
    options: "lists no options",
  },
  readinessProbe: true,
  doctor: [
    {
      id: "metaAndAssetCtxs",
      endpoint: "POST /info metaAndAssetCtxs",
      run: async (c) => {
        const list = await c.client.instruments();
        await allOf(c.client.fundingAll(), c.client.openInterest(c.perp), c.client.marginTiers!(c.perp));
        return list;
      },
    },
    { id: "fundingHistory", endpoint: "POST /info fundingHistory", needs: "metaAndAssetCtxs", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "predictedFundings", endpoint: "POST /info predictedFundings", run: (c) => c.venues.predictions.predictedFundings() },
    {
      id: "recentTrades",
      endpoint: "POST /info recentTrades (trade backfill)",
      needs: "metaAndAssetCtxs",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
