import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { BybitTradeBackfill } from "./backfill.js";
import { BybitPerpClient } from "./client.js";
import { BYBIT_ENDPOINTS } from "./endpoints.js";
import { BybitFeed } from "./feed.js";

/** Bybit v5, linear (USDT) perpetuals. */
export const bybit = defineVenue({
  id: "bybit",
  name: "Bybit",
  endpoints: BYBIT_ENDPOINTS,
  createClient: (config, common) => new BybitPerpClient(config.venues.bybit, common),
  createFeed: (input) => new BybitFeed(feedOptions(input, input.config.streams?.wsUrls.bybit)),
  createBackfill: (input) => new BybitTradeBackfill(backfillOptions(input, input.config.venues.bybit)),
  tradeIds: "unordered",
  liquidationFeed: { kind: "per_symbol", description: "allLiquidation.{symbol}: every liquidation, in 500 ms batches, for the streamed symbols only" },
  instruments: { listing: "USDT perpetual", margin: "USDT", contractUnits: "coins per venue unit (1000 for 1000PEPEUSDT)" },
  marginTierSource: "GET /v5/market/risk-limit",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: true,
    liquidations: true,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: false,
    options: false,
  },
  missing: {
    openInterestHistory: "published (/v5/market/open-interest) but not read",
    predictedFunding: "publishes no estimate of its own (Hyperliquid's predictedFundings covers Bybit)",
    hourlyCandles: "published (/v5/market/kline) but not read: the heatmap's candles come from Binance, else OKX",
    options: "not read (linear perpetuals only)",
  },
  readinessProbe: true,
  doctor: [
    { id: "instruments", endpoint: "GET /v5/market/instruments-info", run: (c) => c.client.instruments() },
    {
      id: "tickers",
      endpoint: "GET /v5/market/tickers",
      needs: "instruments",
      run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp), c.client.openInterest(c.perp)),
    },
    { id: "fundingHistory", endpoint: "GET /v5/market/funding/history", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "accountRatio", endpoint: "GET /v5/market/account-ratio", needs: "instruments", run: (c) => c.client.longShort(c.perp) },
    { id: "riskLimit", endpoint: "GET /v5/market/risk-limit", needs: "instruments", run: (c) => c.client.marginTiers!(c.perp) },
    {
      id: "recentTrade",
      endpoint: "GET /v5/market/recent-trade (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
