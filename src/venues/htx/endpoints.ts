import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * HTX (ex-Huobi) USDT-margined swaps (`linear-swap-api`, https://www.htx.com/en-us/opend/newApiPages/): REST, the
 * websocket host (the market feed appends `/linear-swap-ws`, the liquidation feed `/linear-swap-notification`), and
 * our budgets. The one place these URLs and budgets are written (src/config.ts defaults, the client, the feeds and the
 * backfill read them here).
 *
 * HTX's public limits, per IP ("API Rate Limit Illustration" of the USDT-margined docs): 240 requests per 3 s shared by
 * every non-market public endpoint (contract info, funding, open interest, elite ratios, adjustment factors,
 * liquidation orders) and 800 requests per second for market data (`/linear-swap-ex/market/*`, klines). Our budgets
 * are per client across all endpoints, so they are sized against the smaller, shared 240 / 3 s.
 */
export const HTX_ENDPOINTS = {
  rest: {
    /** 60 requests per 3 s window: a quarter of HTX's 240 / 3 s, leaving the rest to the backfill and other users of the IP. */
    api: { setting: "HTX_BASE_URL", url: "https://api.hbdm.com", callsPerMin: 1200, windowSec: 3 },
  },
  ws: { setting: "HTX_WS_URL", url: "wss://api.hbdm.com" },
  /** The trade backfill reads market data (`/linear-swap-ex/market/history/trade`, 800 / s): 30 requests per 3 s. */
  backfill: { rest: "api", callsPerMin: 600, windowSec: 3 },
} as const satisfies VenueEndpoints;

/**
 * The liquidation backfill's own budget on `rest.api` (`/linear-swap-api/v3/swap_liquidation_orders`, one contract per
 * request, in HTX's shared 240 / 3 s): 30 requests per 3 s, so with the client's 60 our two budgets stay under 90 / 3 s.
 */
export const HTX_LIQUIDATION_BACKFILL = { callsPerMin: 600, windowSec: 3 } as const;
