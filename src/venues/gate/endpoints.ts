import type { VenueEndpoints } from "../endpoint-types.js";

/**
 * Gate API v4, USDT-margined perpetual futures: REST (`/futures/usdt/...` under the base path `/api/v4`), the
 * futures websocket (the feed appends `/v4/ws/usdt`), and our budgets. The one place these URLs and budgets
 * are written (src/config.ts defaults, the client, the feed and the backfill read them here).
 *
 * Gate allows 200 requests per 10 s per public endpoint per IP ("Frequency limit rule",
 * https://www.gate.io/docs/developers/apiv4/en/#frequency-limit-rule). Our budgets are per client across all
 * endpoints, so they stay under the per-endpoint rule even when every call hits the same endpoint.
 */
export const GATE_ENDPOINTS = {
  rest: {
    /** 100 requests per 10 s window across all endpoints: half of Gate's 200 / 10 s per endpoint. */
    api: { setting: "GATE_BASE_URL", url: "https://api.gateio.ws/api/v4", callsPerMin: 600, windowSec: 10 },
  },
  ws: { setting: "GATE_WS_URL", url: "wss://fx-ws.gateio.ws" },
  /** `/futures/usdt/trades` is one public endpoint: 50 requests per 10 s leaves it half of Gate's 200 / 10 s. */
  backfill: { rest: "api", callsPerMin: 300, windowSec: 10 },
} as const satisfies VenueEndpoints;
