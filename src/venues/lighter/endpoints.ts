import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Lighter (zkLighter perpetuals): the public REST API `https://mainnet.zklighter.elliot.ai/api/v1`, the websocket host
 * (the feed appends `/stream?readonly=true`), and our budgets. The one place these URLs and budgets are written
 * (src/config.ts defaults, the client, the feed and the backfill read them here).
 *
 * Lighter's published limits (https://apidocs.lighter.xyz/docs/rate-limits): a standard (unauthenticated) user gets
 * 60 requests per rolling minute, per IP and per L1 address. Standard limits are not weighted, except that an endpoint
 * whose premium weight would allow fewer calls caps them: `trades` and `recentTrades` weigh 600 of the premium 24,000,
 * hence at most 40 calls a minute. Our two budgets together stay under the 60.
 */
export const LIGHTER_ENDPOINTS = {
  rest: {
    /** 40 calls per minute of the 60: `orderBookDetails`, `funding-rates`, `fundings`. */
    api: { setting: "LIGHTER_BASE_URL", url: "https://mainnet.zklighter.elliot.ai/api/v1", callsPerMin: 40 },
  },
  ws: { setting: "LIGHTER_WS_URL", url: "wss://mainnet.zklighter.elliot.ai" },
  /** `recentTrades` for backfills: 10 calls per minute (its own cap is 40; 40 + 10 stays under the IP's 60). */
  backfill: { rest: "api", callsPerMin: 10 },
} as const satisfies VenueEndpoints;
