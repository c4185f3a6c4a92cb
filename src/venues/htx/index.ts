import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { HtxTradeBackfill } from "./backfill.js";
import { HtxPerpClient } from "./client.js";
import { HTX_ENDPOINTS } from "./endpoints.js";
import { HtxFeed } from "./feed.js";
import { HTX } from "./venue-id.js";

/** HTX (ex-Huobi) USDT-margined swaps (docs/methods/venues/htx.md). */
export const htx = defineVenue({
  id: HTX,
  name: "HTX",
  endpoints: HTX_ENDPOINTS,
  createClient: (config, common) => new HtxPerpClient(config.venues.htx, common),
  createFeed: (input) => new HtxFeed(feedOptions(input, input.config.streams?.wsUrls.htx)),
  createBackfill: (input) => new HtxTradeBackfill(backfillOptions(input, input.config.venues.htx)),
  tradeIds: "sequence",
  liquidationFeed: { kind: "all_symbols", description: "public.*.liquidation_orders (notification socket): every liquidation of every USDT swap" },
  instruments: { listing: "USDT swap", margin: "USDT", contractUnits: "contracts × contract_size coins" },
  marginTierSource: "GET /linear-swap-api/v1/swap_adjustfactor (maintenance rate = adjust_factor / leverage)",
  capabilities: {
    fundingHistory: true,
    openInterestHistory: true,
    longShort: true,
    liquidations: true,
    marginTiers: true,
    predictedFunding: false,
    hourlyCandles: true,
    options: false,
  },
  missing: {
    predictedFunding: "settles funding in real time (the current rate is the one that settles); its estimated_rate field is deprecated and null",
    options: "not read (USDT-margined swaps only)",
  },
  doctor: [
    { id: "contracts", endpoint: "GET /linear-swap-api/v1/swap_contract_info, /swap_query_elements", run: (c) => c.client.instruments() },
    {
      id: "funding",
      endpoint: "GET /linear-swap-api/v1/swap_batch_funding_rate, /swap_index, /index/market/history/linear_swap_mark_price_kline",
      needs: "contracts",
      run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp)),
    },
    { id: "fundingHistory", endpoint: "GET /linear-swap-api/v1/swap_historical_funding_rate", needs: "contracts", run: (c) => c.client.fundingHistory(c.perp, 3) },
    { id: "openInterest", endpoint: "GET /linear-swap-api/v1/swap_open_interest", needs: "contracts", run: (c) => c.client.openInterest(c.perp) },
    { id: "openInterestHistory", endpoint: "GET /linear-swap-api/v1/swap_his_open_interest", needs: "contracts", run: (c) => c.client.openInterestHistory!(c.perp, 3) },
    { id: "elitePositionRatio", endpoint: "GET /linear-swap-api/v1/swap_elite_position_ratio", needs: "contracts", run: (c) => c.client.longShort(c.perp) },
    { id: "adjustFactor", endpoint: "GET /linear-swap-api/v1/swap_adjustfactor", needs: "contracts", run: (c) => c.client.marginTiers!(c.perp) },
    { id: "kline", endpoint: "GET /linear-swap-ex/market/history/kline", needs: "contracts", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "historyTrade",
      endpoint: "GET /linear-swap-ex/market/history/trade (trade backfill)",
      needs: "contracts",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
