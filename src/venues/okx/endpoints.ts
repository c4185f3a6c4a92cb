import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * OKX v5: REST, the public websocket, and our budgets. The one place these URLs and budgets are written
 * (src/config.ts defaults, the client, the feed and the backfill read them here).
 */
export const OKX_ENDPOINTS = {
  rest: {
    /** 15 requests per 2 s window, under OKX's 20 / 2 s per public endpoint (rubik allows 5 / 2 s and is rarely hit). */
    api: { setting: "OKX_BASE_URL", url: "https://www.okx.com", callsPerMin: 450, windowSec: 2 },
  },
  ws: { setting: "OKX_WS_URL", url: "wss://ws.okx.com:8443" },
  /** `history-trades` allows 20 requests / 2 s per IP. */
  backfill: { rest: "api", callsPerMin: 300, windowSec: 2 },
} as const satisfies VenueEndpoints;
