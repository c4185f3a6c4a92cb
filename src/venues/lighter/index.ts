import type { Config } from "../../config.js";
import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { LighterTradeBackfill } from "./backfill.js";
import { LighterPerpClient } from "./client.js";
import { LIGHTER_ENDPOINTS } from "./endpoints.js";
import { LighterFeed } from "./feed.js";
import { LIGHTER } from "./venue-id.js";

/*
 * Until the wiring lands (docs/adding-a-venue.md, "Wire it in": `LIGHTER_BASE_URL` in `Config.venues.lighter`,
 * `LIGHTER_WS_URL` in `streams.wsUrls.lighter`), the settings are read by Lighter's key; then these two become
 * `config.venues.lighter` and `input.config.streams?.wsUrls.lighter`. A missing REST setting is a programming error: it
 * must never fall back to the live host (sim mode would call the real venue).
 */
const restBase = (config: Config): string => {
  const url = (config.venues as unknown as Readonly<Record<string, string | undefined>>)[LIGHTER];
  if (url === undefined) throw new Error(`${LIGHTER_ENDPOINTS.rest.api.setting} is not in the configuration`);
  return url;
};
const wsBase = (config: Config): string | undefined => (config.streams?.wsUrls as unknown as Readonly<Record<string, string | undefined>> | undefined)?.[LIGHTER];

/** Lighter (zkLighter) USDC perpetuals, hourly funding, liquidations on the per-market trade channel (docs/methods/venues/lighter.md). */
export const lighter = defineVenue({
  id: LIGHTER,
  name: "Lighter",
  endpoints: LIGHTER_ENDPOINTS,
  createClient: (config, common) => new LighterPerpClient(restBase(config), common),
  createFeed: (input) => new LighterFeed(feedOptions(input, wsBase(input.config))),
  createBackfill: (input) => new LighterTradeBackfill(backfillOptions(input, restBase(input.config))),
  tradeIds: "sequence",
  liquidationFeed: { kind: "per_symbol", description: "trade/{market_id} liquidation_trades: every liquidation fill, for the streamed markets only" },
  instruments: { listing: "perpetual", margin: "USDC", contractUnits: "coins per venue unit (1000 for 1000PEPE)" },
  marginTierSource: "GET /api/v1/orderBookDetails (one tier per market: min_initial_margin_fraction, maintenance_margin_fraction)",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: false,
    longShort: false,
    liquidations: true,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: false,
    options: false,
  },
  missing: {
    openInterestHistory: "publishes no open-interest history (orderBookDetails and market_stats give the current value only)",
    longShort: "publishes no long/short ratio",
    predictedFunding: "publishes one current rate per market (funding-rates, market_stats), read as its funding; no separate estimate",
    hourlyCandles: "published (candles) but not read",
    options: "lists no options",
  },
  doctor: [
    {
      id: "orderBookDetails",
      endpoint: "GET /api/v1/orderBookDetails",
      run: async (c) => {
        const list = await c.client.instruments();
        await allOf(c.client.openInterest(c.perp), c.client.marginTiers!(c.perp));
        return list;
      },
    },
    { id: "fundingRates", endpoint: "GET /api/v1/funding-rates", needs: "orderBookDetails", run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp)) },
    { id: "fundings", endpoint: "GET /api/v1/fundings", needs: "orderBookDetails", run: (c) => c.client.fundingHistory(c.perp, 3) },
    {
      id: "recentTrades",
      endpoint: "GET /api/v1/recentTrades (trade backfill)",
      needs: "orderBookDetails",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
