import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Deribit: the public JSON-RPC over HTTP API v2, the websocket, and our budgets. The one place these URLs and
 * budgets are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 *
 * Budgets: Deribit meters non-matching-engine requests with credits (support.deribit.com "Rate Limits",
 * docs.deribit.com/articles/rate-limits): each request costs 500 credits from a pool of 50,000 refilled at
 * 10,000 credits/s, i.e. 20 requests/s sustained and a burst of 100; exhausting it answers error 10028
 * `too_many_requests` and closes the session. `public/get_instruments` alone costs 10,000 credits (1/s sustained);
 * the client reads it once an hour. We take half the sustained rate: 10 requests/s = 600/min, counted in 5 s
 * windows (50 per window, half the burst), and a separate 2/s for the trade backfill, together under 20/s.
 */
export const DERIBIT_ENDPOINTS = {
  rest: {
    api: { setting: "DERIBIT_BASE_URL", url: "https://www.deribit.com/api/v2", callsPerMin: 600, windowSec: 5 },
  },
  /** The feed appends `/ws/api/v2`. */
  ws: { setting: "DERIBIT_WS_URL", url: "wss://www.deribit.com" },
  /** `public/get_last_trades_by_instrument` pages: 2 requests/s (10 per 5 s), beside the client's 10/s. */
  backfill: { rest: "api", callsPerMin: 120, windowSec: 5 },
} as const satisfies VenueEndpoints;
