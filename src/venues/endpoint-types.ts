/*
 * The shape of what each venue states once in `src/venues/<venue>/endpoints.ts`: its live base URLs, the
 * setting that overrides each one, and our request budgets. No imports on purpose: config.ts and every
 * venue module read these types, and this file must not close a cycle between them.
 */

/** One REST base URL of a venue, with our client-side budget on it. */
export interface RestEndpoint {
  /** The environment setting that overrides the URL (`BINANCE_FAPI_BASE_URL`; docs/configuration.md). */
  readonly setting: string;
  /** The live base URL, without a trailing slash (a path is allowed: `https://api.geckoterminal.com/api/v2`). */
  readonly url: string;
  /** Requests per minute we allow ourselves, kept under the venue's published limit (`VenueHttpClient`). */
  readonly callsPerMin: number;
  /** Budget window in seconds for venues that limit per short window (default 60: see `VenueHttpClient`). */
  readonly windowSec?: number;
}

/** The websocket base URL of a venue with a trade feed; the feed appends the venue's path. */
export interface WsEndpoint {
  /** The environment setting that overrides the URL (`BINANCE_WS_URL`). */
  readonly setting: string;
  /** The live base URL (`wss://…`, no trailing slash). */
  readonly url: string;
}

/** The REST trade backfill's own budget: a separate client on the REST base `rest` (a key of {@link VenueEndpoints.rest}). */
export interface BackfillBudget {
  readonly rest: string;
  readonly callsPerMin: number;
  readonly windowSec?: number;
}

/**
 * Everything about where a venue lives and how fast we call it. The hosts of its URLs are the venue's live
 * hosts (sim mode refuses them: src/config.ts), so a URL is never written twice.
 */
export interface VenueEndpoints {
  /** REST base URLs by role (`fapi`, `spot`; CoinGecko: one per plan, sharing one setting). */
  readonly rest: Readonly<Record<string, RestEndpoint>>;
  /** The websocket base of the venue's trade feed (venues with a feed only). */
  readonly ws?: WsEndpoint;
  /** The budget of the venue's REST trade backfill (venues with a feed only). */
  readonly backfill?: BackfillBudget;
}
