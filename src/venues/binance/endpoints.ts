import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Binance: USDⓈ-M futures REST (`fapi`), spot REST (spot prices), the USDⓈ-M websocket, and our budgets.
 * The one place these URLs and budgets are written (src/config.ts defaults, the clients, the feed and the
 * backfill read them here).
 */
export const BINANCE_ENDPOINTS = {
  rest: {
    /** Under Binance's 2,400 weight/min (premiumIndex without symbol weighs 10). */
    fapi: { setting: "BINANCE_FAPI_BASE_URL", url: "https://fapi.binance.com", callsPerMin: 1000 },
    /** The spot limit is 6,000 weight/min. */
    spot: { setting: "BINANCE_SPOT_BASE_URL", url: "https://api.binance.com", callsPerMin: 1000 },
  },
  ws: { setting: "BINANCE_WS_URL", url: "wss://fstream.binance.com" },
  /** `aggTrades` weighs 20 of 2,400/min: 60 calls/min leaves the rest to the REST client. */
  backfill: { rest: "fapi", callsPerMin: 60 },
} as const satisfies VenueEndpoints;
