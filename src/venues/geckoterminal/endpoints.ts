import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * GeckoTerminal public API v2 (no key). The one place its URL and budget are written (src/config.ts
 * defaults and the client read them here; `GECKOTERMINAL_CALLS_PER_MIN` overrides the budget).
 */
export const GECKOTERMINAL_ENDPOINTS = {
  rest: {
    /** 20 a minute: the public limit is 30/min (apiguide.geckoterminal.com/faq); plan for fewer. */
    api: { setting: "GECKOTERMINAL_BASE_URL", url: "https://api.geckoterminal.com/api/v2", callsPerMin: 20 },
  },
} as const satisfies VenueEndpoints;
