import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { BinanceTradeBackfill } from "./backfill.js";
import { BinancePerpClient } from "./client.js";
import { BINANCE_ENDPOINTS } from "./endpoints.js";
import { BinanceFeed } from "./feed.js";

/** Binance USDⓈ-M futures (docs/methods/venues/README.md; its spot prices are read by the same client). */
export const binance = defineVenue({
  id: "binance",
  name: "Binance",
  endpoints: BINANCE_ENDPOINTS,
  createClient: (config, common) => new BinancePerpClient(config.venues.binanceFapi, { ...common, spotBaseUrl: config.venues.binanceSpot }),
  createFeed: (input) => new BinanceFeed(feedOptions(input, input.config.streams?.wsUrls.binance)),
  createBackfill: (input) => new BinanceTradeBackfill(backfillOptions(input, input.config.venues.binanceFapi)),
  tradeIds: "sequence",
  liquidationFeed: {
    kind: "all_symbols",
    description: "!forceOrder@arr: a snapshot of at most one liquidation per symbol per second, so bursts are undercounted",
    history: true,
  },
  instruments: { listing: "USDT perpetual", margin: "USDT", contractUnits: "coins per venue unit (1000 for 1000PEPEUSDT)" },
  marginTierSource: null,
  capabilities: {
    fundingHistory: true,
    openInterestHistory: true,
    longShort: true,
    liquidations: true,
    marginTiers: false,
    predictedFunding: false,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    marginTiers: "leverage brackets are a signed USER_DATA endpoint (/fapi/v1/leverageBracket)",
    predictedFunding: "no estimate of its own beyond premiumIndex, which /futures/predicted-funding reads directly (Hyperliquid's predictedFundings covers Binance)",
    options: "not read (USDⓈ-M futures only)",
  },
  readinessProbe: true,
  doctor: [
    { id: "instruments", endpoint: "GET /fapi/v1/exchangeInfo, /fapi/v1/fundingInfo", run: (c) => c.client.instruments() },
    { id: "premiumIndex", endpoint: "GET /fapi/v1/premiumIndex", needs: "instruments", run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp)) },
    { id: "fundingRate", endpoint: "GET /fapi/v1/fundingRate", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "openInterest", endpoint: "GET /fapi/v1/openInterest", needs: "instruments", run: (c) => c.client.openInterest(c.perp) },
    { id: "longShort", endpoint: "GET /futures/data/topLongShortPositionRatio", needs: "instruments", run: (c) => c.client.longShort(c.perp) },
    { id: "klines", endpoint: "GET /fapi/v1/klines", needs: "instruments", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    { id: "spotPrice", endpoint: "GET /api/v3/ticker/price (spot)", run: (c) => c.venues.spot.spotPrice(c.perp) },
    {
      id: "aggTrades",
      endpoint: "GET /fapi/v1/aggTrades (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
