import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Aster futures (Binance-compatible `fapi`): REST, the market-stream websocket, and our budgets. The one place
 * these URLs and budgets are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 * Published limit: 2,400 request weight per minute per IP (`rateLimits` of `/fapi/v1/exchangeInfo`,
 * https://github.com/asterdex/api-docs, "LIMITS"); a 429 is answered by backing off, repeated 429s earn an IP ban (418).
 */
export const ASTER_ENDPOINTS = {
  rest: {
    /** Weights: premiumIndex, fundingRate, fundingInfo, exchangeInfo 1; klines 1–10; openInterest not published (1 assumed). 600 calls stay under 2,400 weight/min even at weight 4. */
    fapi: { setting: "ASTER_FAPI_BASE_URL", url: "https://fapi.asterdex.com", callsPerMin: 600 },
  },
  ws: { setting: "ASTER_WS_URL", url: "wss://fstream.asterdex.com" },
  /** `aggTrades` weighs 20 of 2,400/min: 30 calls/min (600 weight) leave the rest to the REST client. */
  backfill: { rest: "fapi", callsPerMin: 30 },
} as const satisfies VenueEndpoints;
