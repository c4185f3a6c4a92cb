import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Bitget API v2 (mix = futures, `productType=USDT-FUTURES`): REST, the public v2 websocket, and our budgets.
 * The one place these URLs and budgets are written (src/config.ts defaults, the client, the feed and the
 * backfill read them here). Published limits are per endpoint and IP (https://www.bitget.com/api-doc/contract/market/...):
 * 20 requests/s on contracts, tickers, ticker, history-fund-rate and candles; 10/s on query-position-lever and
 * fills-history; 1/s on account-long-short.
 */
export const BITGET_ENDPOINTS = {
  rest: {
    /** 10 requests per 1 s window for the whole client: at or under every market endpoint it calls (20/s, tiers 10/s). */
    api: { setting: "BITGET_BASE_URL", url: "https://api.bitget.com", callsPerMin: 600, windowSec: 1 },
    /** `account-long-short` allows 1 request/s per IP: its own budget, on the same base URL and setting. */
    ratio: { setting: "BITGET_BASE_URL", url: "https://api.bitget.com", callsPerMin: 60, windowSec: 1 },
  },
  /** The feed appends `/v2/ws/public`. */
  ws: { setting: "BITGET_WS_URL", url: "wss://ws.bitget.com" },
  /** `fills-history` allows 10 requests/s per IP: 5/s beside the REST client. */
  backfill: { rest: "api", callsPerMin: 300, windowSec: 1 },
} as const satisfies VenueEndpoints;
