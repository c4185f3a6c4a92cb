import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Bybit v5: REST, the public linear websocket, and our budgets. The one place these URLs and budgets are
 * written (src/config.ts defaults, the client, the feed and the backfill read them here).
 */
export const BYBIT_ENDPOINTS = {
  rest: {
    /** Well under Bybit's 600 requests / 5 s per IP. */
    api: { setting: "BYBIT_BASE_URL", url: "https://api.bybit.com", callsPerMin: 1200, windowSec: 5 },
  },
  ws: { setting: "BYBIT_WS_URL", url: "wss://stream.bybit.com" },
  /** `recent-trade`, beside the REST client's budget. */
  backfill: { rest: "api", callsPerMin: 120, windowSec: 5 },
} as const satisfies VenueEndpoints;
