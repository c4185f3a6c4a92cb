import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { OkxTradeBackfill } from "./backfill.js";
import { OkxPerpClient } from "./client.js";
import { OKX_ENDPOINTS } from "./endpoints.js";
import { OkxFeed } from "./feed.js";

/** OKX v5, USDT-margined swaps. */
export const okx = defineVenue({
  id: "okx",
  name: "OKX",
  endpoints: OKX_ENDPOINTS,
  createClient: (config, common) => new OkxPerpClient(config.venues.okx, common),
  createFeed: (input) => new OkxFeed(feedOptions(input, input.config.streams?.wsUrls.okx)),
  createBackfill: (input) => new OkxTradeBackfill(backfillOptions(input, input.config.venues.okx)),
  tradeIds: "sequence",
  liquidationFeed: { kind: "all_symbols", description: "liquidation-orders: every SWAP liquidation", history: true },
  instruments: { listing: "USDT swap", margin: "USDT", contractUnits: "contracts × ctVal coins" },
  marginTierSource: "GET /api/v5/public/position-tiers",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: true,
    liquidations: true,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    openInterestHistory: "published (rubik open-interest-volume, 5 requests per 2 s) but not read",
    predictedFunding: "publishes no estimate of the next rate",
    options: "not read (USDT swaps only)",
  },
  readinessProbe: true,
  doctor: [
    { id: "instruments", endpoint: "GET /api/v5/public/instruments", run: (c) => c.client.instruments() },
    {
      id: "fundingRate",
      endpoint: "GET /api/v5/public/funding-rate, /public/mark-price, /market/index-tickers",
      needs: "instruments",
      run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp)),
    },
    { id: "fundingHistory", endpoint: "GET /api/v5/public/funding-rate-history", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "openInterest", endpoint: "GET /api/v5/public/open-interest", needs: "instruments", run: (c) => c.client.openInterest(c.perp) },
    {
      id: "longShort",
      endpoint: "GET /api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader",
      needs: "instruments",
      run: (c) => c.client.longShort(c.perp),
    },
    { id: "positionTiers", endpoint: "GET /api/v5/public/position-tiers", needs: "instruments", run: (c) => c.client.marginTiers!(c.perp) },
    { id: "candles", endpoint: "GET /api/v5/market/candles", needs: "instruments", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "historyTrades",
      endpoint: "GET /api/v5/market/history-trades (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
