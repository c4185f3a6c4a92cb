import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * CoinGecko v3: one REST base and budget per plan (`COINGECKO_PLAN`; `COINGECKO_BASE_URL` overrides the
 * plan's URL and `COINGECKO_CALLS_PER_MIN` its budget). Budgets are a little under the published limits.
 * The one place these URLs and budgets are written (src/config.ts reads them here).
 */
export const COINGECKO_ENDPOINTS = {
  rest: {
    public: { setting: "COINGECKO_BASE_URL", url: "https://api.coingecko.com/api/v3", callsPerMin: 5 },
    demo: { setting: "COINGECKO_BASE_URL", url: "https://api.coingecko.com/api/v3", callsPerMin: 25 },
    pro: { setting: "COINGECKO_BASE_URL", url: "https://pro-api.coingecko.com/api/v3", callsPerMin: 400 },
  },
} as const satisfies VenueEndpoints;
