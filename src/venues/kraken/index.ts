import type { Config } from "../../config.js";
import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { KrakenTradeBackfill } from "./backfill.js";
import { KrakenPerpClient } from "./client.js";
import { KRAKEN_ENDPOINTS } from "./endpoints.js";
import { KrakenFeed } from "./feed.js";
import { KRAKEN } from "./parse.js";

/*
 * The settings are read by the venue key until src/config.ts names them (`config.venues.kraken`,
 * `config.streams.wsUrls.kraken`, from KRAKEN_BASE_URL and KRAKEN_WS_URL): then these two reads become those fields.
 */
const restBase = (config: Config): string => (config.venues as Readonly<Record<string, string | undefined>>)[KRAKEN] ?? KRAKEN_ENDPOINTS.rest.api.url;
const wsBase = (config: Config): string | undefined => (config.streams?.wsUrls as Readonly<Record<string, string | undefined>> | undefined)?.[KRAKEN];

/** Kraken Futures, the multi-collateral USD perpetuals `PF_<COIN>USD` (docs/methods/venues/kraken.md). */
export const kraken = defineVenue({
  id: KRAKEN,
  name: "Kraken Futures",
  endpoints: KRAKEN_ENDPOINTS,
  createClient: (config, common) => new KrakenPerpClient(restBase(config), common),
  createFeed: (input) => new KrakenFeed(feedOptions(input, wsBase(input.config))),
  createBackfill: (input) => new KrakenTradeBackfill(backfillOptions(input, restBase(input.config))),
  // Trade ids are UUIDs (`uid`), not a sequence.
  tradeIds: "unordered",
  liquidationFeed: { kind: "per_symbol", description: "trade feed: fills of type liquidation, for the streamed PF_ perpetuals only" },
  // Quoted in USD and margined in any collateral currency (USD, USDC, USDT, BTC, ETH…): not USDT-margined.
  instruments: { listing: "USD perpetual", margin: "USD and USDC", contractUnits: "contracts of 1 coin (PF_ linear perpetuals; XBT is BTC)" },
  marginTierSource: "GET /derivatives/api/v3/instruments (marginLevels)",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: true,
    longShort: true,
    liquidations: true,
    marginTiers: true,
    predictedFunding: true,
    hourlyCandles: true,
    options: false,
  },
  missing: { options: "options not read (perpetuals only)" },
  doctor: [
    { id: "instruments", endpoint: "GET /derivatives/api/v3/instruments", run: (c) => allOf(c.client.instruments(), c.client.marginTiers!(c.perp)) },
    { id: "tickers", endpoint: "GET /derivatives/api/v3/tickers", needs: "instruments", run: (c) => c.client.fundingAll() },
    {
      id: "ticker",
      endpoint: "GET /derivatives/api/v3/tickers/{symbol}",
      needs: "instruments",
      run: (c) => allOf(c.client.funding(c.perp), c.client.openInterest(c.perp), c.client.predictedFunding!(c.perp)),
    },
    { id: "historicalFundingRates", endpoint: "GET /derivatives/api/v4/historicalfundingrates", needs: "instruments", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "candles", endpoint: "GET /api/charts/v1/trade/{symbol}/1h", needs: "instruments", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "openInterest",
      endpoint: "GET /api/charts/v1/analytics/{symbol}/open-interest",
      needs: "instruments",
      run: (c) => c.client.openInterestHistory!(c.perp, 3),
    },
    { id: "longShort", endpoint: "GET /api/charts/v1/analytics/{symbol}/long-short-info", needs: "instruments", run: (c) => c.client.longShort(c.perp) },
    {
      id: "history",
      endpoint: "GET /derivatives/api/v3/history (trade backfill)",
      needs: "instruments",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
