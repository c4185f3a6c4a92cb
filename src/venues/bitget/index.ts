import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { BitgetTradeBackfill } from "./backfill.js";
import { BitgetPerpClient } from "./client.js";
import { BITGET_ENDPOINTS } from "./endpoints.js";
import { BitgetFeed } from "./feed.js";

/** Bitget API v2 mix, USDT-FUTURES perpetuals (docs/methods/venues/bitget.md). */
export const bitget = defineVenue({
  id: "bitget",
  name: "Bitget",
  endpoints: BITGET_ENDPOINTS,
  createClient: (config, common) => new BitgetPerpClient(config.venues.bitget, common),
  createFeed: (input) => new BitgetFeed(feedOptions(input, input.config.streams?.wsUrls.bitget)),
  createBackfill: (input) => new BitgetTradeBackfill(backfillOptions(input, input.config.venues.bitget)),
  tradeIds: "unordered",
  liquidationFeed: {
    kind: "none",
    description: "no public liquidation feed read (the v2 public websocket has none; the UTA v3 liquidation topic only samples the largest per symbol per second)",
  },
  instruments: { listing: "USDT perpetual", margin: "USDT", contractUnits: "coins" },
  marginTierSource: "GET /api/v2/mix/market/query-position-lever",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: true,
    liquidations: false,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    openInterestHistory: "publishes no open-interest history on the v2 mix API",
    liquidations: "the v2 public websocket has no liquidation channel; the UTA v3 topic only samples the largest per symbol per second",
    predictedFunding: "publishes no estimate of the next rate",
    options: "lists no options",
  },
  doctor: [
    { id: "contracts", endpoint: "GET /api/v2/mix/market/contracts", run: (c) => c.client.instruments() },
    {
      id: "tickers",
      endpoint: "GET /api/v2/mix/market/tickers, /api/v2/mix/market/ticker",
      needs: "contracts",
      run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp), c.client.openInterest(c.perp)),
    },
    { id: "historyFundRate", endpoint: "GET /api/v2/mix/market/history-fund-rate", needs: "contracts", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "accountLongShort", endpoint: "GET /api/v2/mix/market/account-long-short", needs: "contracts", run: (c) => c.client.longShort(c.perp) },
    { id: "positionTiers", endpoint: "GET /api/v2/mix/market/query-position-lever", needs: "contracts", run: (c) => c.client.marginTiers!(c.perp) },
    { id: "candles", endpoint: "GET /api/v2/mix/market/candles", needs: "contracts", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "fillsHistory",
      endpoint: "GET /api/v2/mix/market/fills-history (trade backfill)",
      needs: "contracts",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
