import type { Config } from "../../config.js";
import { AppError } from "../../errors.js";
import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { DydxTradeBackfill } from "./backfill.js";
import { DydxPerpClient } from "./client.js";
import { DYDX_ENDPOINTS } from "./endpoints.js";
import { DydxFeed } from "./feed.js";
import { DYDX } from "./venue-id.js";

/*
 * Until the wiring lands (docs/adding-a-venue.md, "Wire it in": `DYDX_BASE_URL` in `Config.venues.dydx`, `DYDX_WS_URL`
 * in `streams.wsUrls.dydx`), the settings are looked up by dYdX's key; then these two become `config.venues.dydx` and
 * `input.config.streams?.wsUrls.dydx`. A missing REST setting is a programming error, never a fall-back to the live
 * host (sim mode must not reach the real venue).
 */
function restBase(config: Config): string {
  const url = (config.venues as unknown as Readonly<Record<string, string | undefined>>)[DYDX];
  if (url === undefined) throw new Error(`${DYDX_ENDPOINTS.rest.api.setting} is not in the configuration`);
  return url;
}
function wsBase(config: Config): string | undefined {
  return (config.streams?.wsUrls as unknown as Readonly<Record<string, string | undefined>> | undefined)?.[DYDX];
}

/** dYdX v4 (dYdX Chain) USDC-margined perpetuals through the public indexer (docs/methods/venues/dydx.md). */
export const dydx = defineVenue({
  id: DYDX,
  name: "dYdX",
  endpoints: DYDX_ENDPOINTS,
  createClient: (config, common) => new DydxPerpClient(restBase(config), common),
  createFeed: (input) => new DydxFeed(feedOptions(input, wsBase(input.config))),
  createBackfill: (input) => new DydxTradeBackfill(backfillOptions(input, restBase(input.config))),
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
