import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * dYdX v4 (dYdX Chain): the public indexer's REST API (`https://indexer.dydx.trade/v4`, the v4-chain `comlink`
 * service), its websocket host (the feed appends `/v4/ws`, the `socks` service), and our budgets. The one place these
 * URLs and budgets are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 *
 * The indexer limits every IP to 100 requests per 10 s across its GET endpoints ("Indexer Rate Limits",
 * https://docs.dydx.xyz/concepts/trading/limits/rate-limits; comlink's `RATE_LIMIT_GET_POINTS` 100 /
 * `RATE_LIMIT_GET_DURATION_SECONDS` 10). Our two budgets together stay at 60 per 10 s.
 */
export const DYDX_ENDPOINTS = {
  rest: {
    /** 40 requests per 10 s window: two fifths of the indexer's 100 / 10 s per IP. */
    api: { setting: "DYDX_BASE_URL", url: "https://indexer.dydx.trade/v4", callsPerMin: 240, windowSec: 10 },
  },
  ws: { setting: "DYDX_WS_URL", url: "wss://indexer.dydx.trade" },
  /** `/trades/perpetualMarket/{ticker}` pages (trade and liquidation backfill): 20 requests per 10 s. */
  backfill: { rest: "api", callsPerMin: 120, windowSec: 10 },
} as const satisfies VenueEndpoints;
