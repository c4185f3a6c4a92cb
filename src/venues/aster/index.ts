import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { AsterTradeBackfill } from "./backfill.js";
import { AsterPerpClient } from "./client.js";
import { ASTER_ENDPOINTS } from "./endpoints.js";
import { AsterFeed } from "./feed.js";

/** Aster futures, Binance-compatible USDT perpetuals (docs/methods/venues/aster.md). */
export const aster = defineVenue({
  id: "aster",
  name: "Aster",
  endpoints: ASTER_ENDPOINTS,
  createClient: (config, common) => new AsterPerpClient(config.venues.aster, common),
  createFeed: (input) => new AsterFeed(feedOptions(input, input.config.streams?.wsUrls.aster)),
  createBackfill: (input) => new AsterTradeBackfill(backfillOptions(input, input.config.venues.aster)),
  tradeIds: "sequence",
  liquidationFeed: { kind: "all_symbols", description: "!forceOrder@arr: a snapshot of at most one liquidation per symbol per second, as Binance's" },
  instruments: { listing: "USDT perpetual", margin: "USDT", contractUnits: "coins per venue unit (1000 for 1000PEPEUSDT)" },
  marginTierSource: null,
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: false,
    liquidations: true,
    marginTiers: false,
    predictedFunding: true,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    openInterestHistory: "publishes no openInterestHist",
    longShort: "publishes no long/short ratio (no /futures/data/*)",
    marginTiers: "leverage brackets are a signed USER_DATA endpoint",
    options: "lists no options",
  },
  doctor: [
    { id: "instruments", endpoint: "GET /fapi/v1/exchangeInfo, /fapi/v1/fundingInfo", run: (c) => c.client.instruments() },
    { id: "premiumIndex", endpoint: "GET /fapi/v1/premiumIndex", needs: "instruments", run: (c) => allOf(c.client.fundingAll(), c.client.predictedFunding!(c.perp)) },
    { id: "fundingRate", endpoint: "GET /fapi/v1/fundingRate", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "openInterest", endpoint: "GET /fapi/v1/openInterest", needs: "instruments", run: (c) => c.client.openInterest(c.perp) },
    { id: "klines", endpoint: "GET /fapi/v1/klines", needs: "instruments", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "aggTrades",
      endpoint: "GET /fapi/v1/aggTrades (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
