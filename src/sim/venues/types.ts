/**
 * Contract every simulated venue implements. Add a venue by writing `venues/<name>.ts` exporting a
 * `SimVenue` and listing it in `venues/index.ts`; the server mounts it with its own fault middleware.
 */
import type { Router } from "express";
import type { Clock } from "../clock.js";
import type { FaultResponses } from "../faults.js";
import type { MarketModel } from "../market.js";
import type { ReplaySettings } from "../replay.js";

/**
 * What a venue router gets: the shared market model, the clock that defines "now", and the replay settings
 * (undefined = everything simulated; see `replay.ts` for which endpoints replay recordings).
 */
export interface VenueContext {
  readonly market: MarketModel;
  readonly clock: Clock;
  readonly replay?: ReplaySettings;
}

/** One simulated venue. */
export interface SimVenue<N extends string = string> {
  /** Key for fault injection, request counts and `urls` (`"coingecko"`). */
  readonly name: N;
  /** Path prefix the router is mounted at, reproducing the real base path (`"/coingecko/api/v3"`). */
  readonly mountPath: string;
  /** Builds the venue's express Router (paths relative to `mountPath`). */
  createRouter(ctx: VenueContext): Router;
  /** Venue-shaped bodies for injected 429/5xx responses. */
  readonly faultResponses?: FaultResponses;
}
