import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * DexScreener public API (no key). The one place its URL and budget are written (src/config.ts defaults
 * and the client read them here; `DEXSCREENER_CALLS_PER_MIN` overrides the budget).
 */
export const DEXSCREENER_ENDPOINTS = {
  rest: {
    /** 250 a minute, under the published 300/min of the pair, search and token endpoints. */
    api: { setting: "DEXSCREENER_BASE_URL", url: "https://api.dexscreener.com", callsPerMin: 250 },
  },
} as const satisfies VenueEndpoints;
