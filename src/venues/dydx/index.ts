import { AppError } from "../../errors.js";
import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { DydxTradeBackfill } from "./backfill.js";
import { DydxPerpClient } from "./client.js";
import { DYDX_ENDPOINTS } from "./endpoints.js";
import { DydxFeed } from "./feed.js";
import { DYDX } from "./venue-id.js";

/** dYdX v4 (dYdX Chain) USDC-margined perpetuals through the public indexer (docs/methods/venues/dydx.md). */
export const dydx = defineVenue({
  id: DYDX,
  name: "dYdX",
  endpoints: DYDX_ENDPOINTS,
  createClient: (config, common) => new DydxPerpClient(config.venues.dydx, common),
  createFeed: (input) => new DydxFeed(feedOptions(input, input.config.streams?.wsUrls.dydx)),
  createBackfill: (input) => new DydxTradeBackfill(backfillOptions(input, input.config.venues.dydx)),
  tradeIds: "unordered",
  liquidationFeed: { kind: "per_symbol", description: "LIQUIDATED fills on v4_trades of each streamed market (one event per fill)" },
  instruments: { listing: "perpetual", margin: "USDC", contractUnits: "coins (no multipliers)" },
  marginTierSource: "GET /perpetualMarkets (one tier per market: initial and maintenance margin fractions, IMF raised by the open-interest caps)",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: true,
    longShort: false,
    liquidations: true,
    marginTiers: true,
    predictedFunding: true,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    longShort: "publishes no long/short ratio",
    options: "lists no options",
  },
  doctor: [
    {
      id: "perpetualMarkets",
      endpoint: "GET /perpetualMarkets",
      run: async (c) => {
        const list = await c.client.instruments();
        await allOf(c.client.openInterest(c.perp), c.client.marginTiers!(c.perp), c.client.predictedFunding!(c.perp));
        return list;
      },
    },
    {
      id: "sparklines",
      endpoint: "GET /sparklines (mark price: last trade)",
      needs: "perpetualMarkets",
      run: async (c) => {
        const f = await c.client.funding(c.perp);
        if (f.markPrice === null) throw new AppError("UPSTREAM_ERROR", `dydx /sparklines gave no last price for ${f.venueSymbol}`);
        return f;
      },
    },
    { id: "historicalFunding", endpoint: "GET /historicalFunding/{ticker}", needs: "perpetualMarkets", run: (c) => c.client.fundingHistory(c.perp, 3) },
    {
      id: "candles",
      endpoint: "GET /candles/perpetualMarkets/{ticker}?resolution=1HOUR",
      needs: "perpetualMarkets",
      run: (c) => allOf(c.client.hourlyCandles!(c.perp, 3), c.client.openInterestHistory!(c.perp, 3)),
    },
    {
      id: "trades",
      endpoint: "GET /trades/perpetualMarket/{ticker} (trade and liquidation backfill)",
      needs: "perpetualMarkets",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
