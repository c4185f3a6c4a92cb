import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Kraken Futures: one host for the public REST API (`/derivatives/api/v3/…`, `/derivatives/api/v4/historicalfundingrates`)
 * and the charts API (`/api/charts/v1/…`: candles and the analytics series), the v1 websocket, and our budgets. The one
 * place these URLs and budgets are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 *
 * Budgets: Kraken meters `/derivatives` calls per IP with a budget of 500 cost units per 10 s (docs.kraken.com,
 * guides/futures/ratelimits); the charts API publishes no limit. We take 50 requests per 10 s for the client (300/min,
 * a tenth of the budget even if every public call cost 1) and 20 per 10 s for the trade backfill, on the same host.
 */
export const KRAKEN_ENDPOINTS = {
  rest: {
    api: { setting: "KRAKEN_BASE_URL", url: "https://futures.kraken.com", callsPerMin: 300, windowSec: 10 },
  },
  /** The feed appends `/ws/v1`. */
  ws: { setting: "KRAKEN_WS_URL", url: "wss://futures.kraken.com" },
  /** `GET /derivatives/api/v3/history` pages (100 trades each): 2 requests/s, beside the client's 5/s. */
  backfill: { rest: "api", callsPerMin: 120, windowSec: 10 },
} as const satisfies VenueEndpoints;
