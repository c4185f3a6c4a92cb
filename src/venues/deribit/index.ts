import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { DeribitTradeBackfill } from "./backfill.js";
import { DeribitPerpClient } from "./client.js";
import { DERIBIT_ENDPOINTS } from "./endpoints.js";
import { DeribitFeed } from "./feed.js";

/** Deribit perpetuals: the inverse BTC and ETH perpetuals and the USDC linear ones (docs/methods/venues/deribit.md). */
export const deribit = defineVenue({
  id: "deribit",
  name: "Deribit",
  endpoints: DERIBIT_ENDPOINTS,
  createClient: (config, common) => new DeribitPerpClient(config.venues.deribit, common),
  createFeed: (input) => new DeribitFeed(feedOptions(input, input.config.streams?.wsUrls.deribit)),
  createBackfill: (input) => new DeribitTradeBackfill(backfillOptions(input, input.config.venues.deribit)),
  tradeIds: "unordered",
  liquidationFeed: { kind: "per_symbol", description: "trades.{instrument}.raw: trades flagged as liquidations, for the streamed perpetuals only" },
  instruments: { listing: "perpetual", margin: "USD and USDC", contractUnits: "USD on the inverse BTC and ETH perpetuals (amount / price coins), coins on USDC ones" },
  marginTierSource: null,
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: false,
    liquidations: true,
    marginTiers: false,
    predictedFunding: false,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    openInterestHistory: "publishes no open-interest history",
    longShort: "publishes no long/short ratio",
    marginTiers: "publishes no tier table: margins follow a formula of position size",
    predictedFunding: "funding accrues continuously: there is no next settlement to predict",
    options: "options not read yet",
  },
  doctor: [
    { id: "instruments", endpoint: "GET /public/get_instruments", run: (c) => c.client.instruments() },
    { id: "bookSummary", endpoint: "GET /public/get_book_summary_by_currency", needs: "instruments", run: (c) => c.client.fundingAll() },
    { id: "ticker", endpoint: "GET /public/ticker", needs: "instruments", run: (c) => allOf(c.client.funding(c.perp), c.client.openInterest(c.perp)) },
    { id: "fundingRateHistory", endpoint: "GET /public/get_funding_rate_history", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "chartData", endpoint: "GET /public/get_tradingview_chart_data", needs: "instruments", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "lastTrades",
      endpoint: "GET /public/get_last_trades_by_instrument (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
