import { allOf, backfillOptions, defineVenue, feedOptions } from "../define.js";
import { GateTradeBackfill } from "./backfill.js";
import { GatePerpClient } from "./client.js";
import { GATE_ENDPOINTS } from "./endpoints.js";
import { GateFeed } from "./feed.js";

/** Gate API v4, USDT-margined perpetual futures (docs/methods/venues/gate.md). */
export const gate = defineVenue({
  id: "gate",
  name: "Gate",
  endpoints: GATE_ENDPOINTS,
  createClient: (config, common) => new GatePerpClient(config.venues.gate, common),
  createFeed: (input) => new GateFeed(feedOptions(input, input.config.streams?.wsUrls.gate)),
  createBackfill: (input) => new GateTradeBackfill(backfillOptions(input, input.config.venues.gate)),
  tradeIds: "sequence",
  liquidationFeed: { kind: "all_symbols", description: "futures.public_liquidates (!all): every liquidation of every USDT contract" },
  instruments: { listing: "USDT perpetual", margin: "USDT", contractUnits: "contracts × quanto_multiplier coins" },
  marginTierSource: "GET /futures/usdt/risk_limit_tiers",
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
  missing: { options: "not read (USDT futures only)" },
  doctor: [
    { id: "contracts", endpoint: "GET /futures/usdt/contracts", run: (c) => c.client.instruments() },
    {
      id: "funding",
      endpoint: "GET /futures/usdt/contracts (funding_rate, funding_rate_indicative)",
      needs: "contracts",
      run: (c) => allOf(c.client.fundingAll(), c.client.funding(c.perp), c.client.predictedFunding!(c.perp)),
    },
    { id: "fundingRate", endpoint: "GET /futures/usdt/funding_rate", needs: "contracts", run: (c) => c.client.fundingHistory(c.perp, 3) },
    {
      id: "contractStats",
      endpoint: "GET /futures/usdt/contract_stats",
      needs: "contracts",
      run: (c) => allOf(c.client.openInterest(c.perp), c.client.longShort(c.perp), c.client.openInterestHistory!(c.perp, 3)),
    },
    { id: "riskLimitTiers", endpoint: "GET /futures/usdt/risk_limit_tiers", needs: "contracts", run: (c) => c.client.marginTiers!(c.perp) },
    { id: "candlesticks", endpoint: "GET /futures/usdt/candlesticks", needs: "contracts", run: (c) => c.client.hourlyCandles!(c.perp, 3) },
    {
      id: "trades",
      endpoint: "GET /futures/usdt/trades (trade backfill)",
      needs: "contracts",
      allowEmpty: true,
      run: (c) => c.backfill.fetchTrades(c.perp, c.now - 60_000, c.now),
    },
  ],
});
