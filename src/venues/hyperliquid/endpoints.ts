import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Hyperliquid: the `/info` REST API, the websocket, and our budgets. The one place these URLs and budgets
 * are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 */
export const HYPERLIQUID_ENDPOINTS = {
  rest: {
    /** Most `/info` requests weigh 20 of the 1,200 weight/min per IP. */
    api: { setting: "HYPERLIQUID_BASE_URL", url: "https://api.hyperliquid.xyz", callsPerMin: 50 },
  },
  ws: { setting: "HYPERLIQUID_WS_URL", url: "wss://api.hyperliquid.xyz" },
  /** `recentTrades` on `/info` (weight 20): 10 calls/min for backfills. */
  backfill: { rest: "api", callsPerMin: 10 },
} as const satisfies VenueEndpoints;
