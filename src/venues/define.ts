/*
 * The one description of a perpetual-futures venue: everything the rest of the code asks about it (docs/adding-a-venue.md).
 * Each `src/venues/<venue>/index.ts` exports one `defineVenue({...})`; `src/venues/index.ts` lists them in `VENUES` and
 * validates them at load. Every per-venue list and table outside the venue's folder is derived from `VENUES`: the
 * clients (src/venues/create.ts), the feeds and backfills (src/ingestion/create.ts receives the factories), the doctor's
 * checks (src/doctor/checks.ts), the tools' venue lists and their `missing_exchanges` reasons, the docs.
 *
 * The simulator is not part of this definition: src/sim is left out of the production build (tsconfig.build.json), so a
 * production module must not import it. The simulated venue (its REST routes, its websocket and its calibration) is
 * keyed by the same id in src/sim (`src/sim/venues/index.ts`), typed `Record<PerpVenue, …>` so that a venue without
 * one fails to compile.
 */
import type { Config } from "../config.js";
import type { Venues } from "../core/context.js";
import type { TradeBackfill } from "../ingestion/backfill/common.js";
import type { FeedOptions, VenueFeed } from "../ingestion/feeds/feed-base.js";
import type { FeedMetrics } from "../ingestion/feeds/metrics.js";
import type { IdOrder } from "../ingestion/store/trade-ledger.js";
import type { Logger } from "../lib/log.js";
import type { Metrics } from "../core/metrics.js";
import type { VenueEndpoints } from "./endpoint-types.js";
import type { PerpClientOptions } from "./perp/client-base.js";
import type { PerpVenue, PerpVenueClient } from "./perp/types.js";

/**
 * What a venue may publish beyond current funding and open interest (which every perpetual venue has). Each names the
 * {@link PerpVenueClient} method it needs (checked by `validateVenues`), except `liquidations` (the feed) and `options`.
 */
export const CAPABILITIES = ["fundingHistory", "openInterestHistory", "longShort", "liquidations", "marginTiers", "predictedFunding", "hourlyCandles", "options"] as const;
/** One capability of {@link CAPABILITIES}. */
export type Capability = (typeof CAPABILITIES)[number];

/** The client method each capability needs (absent: none, or not a client method). */
export const CAPABILITY_METHOD: Readonly<Partial<Record<Capability, keyof PerpVenueClient>>> = {
  fundingHistory: "fundingHistory",
  openInterestHistory: "openInterestHistory",
  longShort: "longShort",
  marginTiers: "marginTiers",
  predictedFunding: "predictedFunding",
  hourlyCandles: "hourlyCandles",
};

/** The `missing_exchanges` reason of a venue that does not publish what an answer reads (not a failure). */
export const NO_PUBLIC_DATA = "no_public_data";

/** How a venue's public websocket publishes liquidations. */
export type LiquidationFeedKind =
  /** One channel for every symbol (Binance `!forceOrder@arr`): the feed carries liquidations of symbols nobody streams. */
  | "all_symbols"
  /** One channel per subscribed symbol (Bybit `allLiquidation.<symbol>`): only the streamed symbols. */
  | "per_symbol"
  /** None read. */
  | "none";

/** A venue's liquidation feed, as `/liquidation/recent` describes it. */
export interface LiquidationFeed {
  readonly kind: LiquidationFeedKind;
  /** How complete the feed is, one line (`coverage.<venue>.feed` of `/liquidation/recent`; docs/methods/streams.md). */
  readonly description: string;
  /**
   * Busy enough that an hour without any liquidation of any symbol means the feed was down: its hourly totals are the
   * cascade-risk forecast's liquidation history (src/ingestion/store/liquidation-history.ts). `all_symbols` feeds only.
   */
  readonly history?: boolean;
}

/** What a venue's definition check gets: the venue's own client and backfill, every venue client, the probe base. */
export interface VenueCheckContext {
  readonly client: PerpVenueClient;
  readonly backfill: TradeBackfill;
  /** Every venue client (Binance's spot prices, Hyperliquid's predictions). */
  readonly venues: Venues;
  /** The perpetual the checks ask about (base: `BTC`). */
  readonly perp: string;
  /** When the run started, epoch ms (the backfill window ends there). */
  readonly now: number;
}

/** One `marketgate doctor` check of a venue endpoint (src/doctor/checks.ts prefixes `id` and `needs` with the venue id). */
export interface VenueCheck {
  /** Unique within the venue (`instruments`): the check id is `<venue>.<id>`. */
  readonly id: string;
  /** The endpoint(s) called, as printed (`GET /fapi/v1/premiumIndex`). */
  readonly endpoint: string;
  /** A check of the venue that must pass first (its instrument list), by `id`. */
  readonly needs?: string;
  /** An empty list is a valid answer (recent trades of a quiet minute). */
  readonly allowEmpty?: boolean;
  /** Calls the endpoint through the service's client; resolves with what the parser returned. */
  run(c: VenueCheckContext): Promise<unknown>;
}

/** What a feed factory gets: the configuration (its websocket base), the instrument source, the feed metrics. */
export interface VenueFeedInput {
  readonly config: Config;
  readonly instruments: FeedOptions["instruments"];
  readonly metrics?: FeedMetrics;
}

/** What a backfill factory gets: the configuration (its REST base), the instrument source, timeouts and metrics. */
export interface VenueBackfillInput {
  readonly config: Config;
  readonly instruments: PerpVenueClient;
  readonly metrics: Metrics;
  readonly logger?: Logger;
}

/** Everything about one perpetual-futures venue (see the module comment; docs/adding-a-venue.md). */
export interface PerpVenueDefinition<Id extends PerpVenue = PerpVenue> {
  /** The venue key of every answer, metric and setting (`binance`). */
  readonly id: Id;
  /** Display name in descriptions and docs (`Binance`). */
  readonly name: string;
  /** Live base URLs, the settings overriding them, our request budgets (`./<venue>/endpoints.ts`). */
  readonly endpoints: VenueEndpoints;
  /** The REST client of the configuration (base URL from `config.venues`); `common`: timeout, metrics, health. */
  createClient(config: Config, common: PerpClientOptions): PerpVenueClient;
  /** The websocket trade (and liquidation) feed; base URL from `config.streams.wsUrls`. */
  createFeed(input: VenueFeedInput): VenueFeed;
  /** The REST trade backfill that fills the feed's gaps; base URL from `config.venues`. */
  createBackfill(input: VenueBackfillInput): TradeBackfill;
  /** How the venue numbers its trades (src/ingestion/store/trade-ledger.ts, docs/methods/cvd.md). */
  readonly tradeIds: IdOrder;
  readonly liquidationFeed: LiquidationFeed;
  /** What is listed and in which units (docs/methods/venues/<venue>.md says more). */
  readonly instruments: {
    /** The perpetuals read, as the not-found message says them (`USDT perpetual`). */
    readonly listing: string;
    /** Margin currency of the perpetuals read: only USDT-margined ones are scanned by `/futures/funding-extreme`. */
    readonly margin: "USDT" | "USDC" | "USD and USDC";
    /** How sizes and open interest are quoted, and how they become coins. */
    readonly contractUnits: string;
  };
  /** Where the maintenance-margin tiers come from (endpoint), or null when the venue publishes none publicly. */
  readonly marginTierSource: string | null;
  /** What the venue publishes; a `false` one must say why in {@link missing}. `options` is for option chains (later). */
  readonly capabilities: Readonly<Record<Capability, boolean>>;
  /** Why each capability the venue lacks is missing (one line each): answers list the venue as `no_public_data`. */
  readonly missing: Readonly<Partial<Record<Capability, string>>>;
  /** Every endpoint the service calls, checked once by `marketgate doctor`, in run order (instrument list first). */
  readonly doctor: readonly VenueCheck[];
  /** Probed by `GET /ready` (in `VENUES` order) when no perp venue had a recent successful call. */
  readonly readinessProbe?: boolean;
}

/** Declares a venue (identity function: the type checks the definition; `validateVenues` checks the rest at load). */
export function defineVenue<const Id extends PerpVenue>(def: PerpVenueDefinition<Id>): PerpVenueDefinition<Id> {
  return def;
}

/** The options every backfill factory passes its backfill: REST base `baseUrl`, the service's timeout, metrics and logger. */
export function backfillOptions(input: VenueBackfillInput, baseUrl: string) {
  return { timeoutMs: input.config.upstreamTimeoutMs, metrics: input.metrics, logger: input.logger, instruments: input.instruments, baseUrl };
}

/** The options every feed factory passes its feed: websocket base `baseUrl` (undefined: the live host), instruments, metrics. */
export function feedOptions(input: VenueFeedInput, baseUrl: string | undefined): FeedOptions {
  return { metrics: input.metrics, instruments: input.instruments, baseUrl };
}

/** Runs a check's calls side by side (one check may read several endpoints); rejects with the first failure. */
export const allOf = (...calls: Array<Promise<unknown>>): Promise<unknown[]> => Promise.all(calls);
