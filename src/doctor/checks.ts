/**
 * The registry of `marketgate doctor` checks: every venue endpoint the service calls, each called once through the
 * service's own client (so the real request, budget and parser run), in the order the service needs them (a venue's
 * instrument list first). A perpetual venue's checks are in its definition (`doctor` of `src/venues/<venue>/index.ts`);
 * the CEX and DEX sources' are here.
 */
import type { Config } from "../config.js";
import type { Venues } from "../core/context.js";
import type { Metrics } from "../core/metrics.js";
import type { Logger } from "../lib/log.js";
import type { TradeBackfill } from "../ingestion/backfill/common.js";
import { createVenues } from "../venues/create.js";
import { VENUES, type PerpVenueDefinition } from "../venues/index.js";
import type { StreamVenue } from "../ingestion/types.js";
import type { VenueHealth } from "../core/venue-health.js";
import { coingeckoSimplePrice, dexscreenerTokens, geckoterminalOhlcv, geckoterminalTokenPools, PROBE_PERP as PERP, PROBE_WETH as WETH } from "./probes.js";

/** What the checks call: the service's venue clients and trade backfills, built from the configuration. */
export interface DoctorClients {
  venues: Venues;
  backfill: Record<StreamVenue, TradeBackfill>;
  health: VenueHealth;
  /** When the run started, epoch ms (backfill window). */
  now: number;
}

/** One check: a venue endpoint as the service uses it. */
export interface DoctorCheck {
  /** Unique id (`binance.instruments`). */
  readonly id: string;
  readonly venue: string;
  /** The endpoint(s) called, as printed (`GET /fapi/v1/premiumIndex`). */
  readonly endpoint: string;
  /** A check of the same venue that must pass first (the instrument list every symbol lookup needs). */
  readonly needs?: string;
  /** An empty list is a valid answer (recent trades of a quiet minute). */
  readonly allowEmpty?: boolean;
  /** Calls the endpoint through the service's client; resolves with what the parser returned. */
  run(c: DoctorClients): Promise<unknown>;
}

/** The checks of perp venue `v` (its definition's), ids and prerequisites prefixed with the venue id. */
function venueChecks(v: PerpVenueDefinition): DoctorCheck[] {
  return v.doctor.map((c) => ({
    id: `${v.id}.${c.id}`,
    venue: v.id,
    endpoint: c.endpoint,
    ...(c.needs === undefined ? {} : { needs: `${v.id}.${c.needs}` }),
    ...(c.allowEmpty ? { allowEmpty: true } : {}),
    run: (d: DoctorClients) => c.run({ client: d.venues.perps[v.id], backfill: d.backfill[v.id], venues: d.venues, perp: PERP, now: d.now }),
  }));
}

/** Every check, in run order (checks of one venue run one after the other; venues run side by side): the perp venues' in `VENUES` order, then the CEX and DEX sources'. */
export const DOCTOR_CHECKS: readonly DoctorCheck[] = [
  ...VENUES.flatMap(venueChecks),
  { id: "coingecko.simplePrice", venue: "coingecko", endpoint: "GET /simple/price", run: (c) => coingeckoSimplePrice(c.venues) },
  { id: "coingecko.coin", venue: "coingecko", endpoint: "GET /coins/{id}", run: (c) => c.venues.coingecko.coin("bitcoin") },
  { id: "coingecko.marketChart", venue: "coingecko", endpoint: "GET /coins/{id}/market_chart", run: (c) => c.venues.coingecko.marketChart("bitcoin", 1) },

  { id: "dexscreener.tokenPairs", venue: "dexscreener", endpoint: "GET /token-pairs/v1/{chain}/{token}", run: (c) => c.venues.dexscreener.tokenPairs("ethereum", WETH) },
  { id: "dexscreener.tokens", venue: "dexscreener", endpoint: "GET /tokens/v1/{chain}/{tokens}", run: (c) => dexscreenerTokens(c.venues) },
  { id: "dexscreener.search", venue: "dexscreener", endpoint: "GET /latest/dex/search", run: (c) => c.venues.dexscreener.search("WETH/USDC") },

  { id: "geckoterminal.tokenPools", venue: "geckoterminal", endpoint: "GET /networks/{network}/tokens/{token}/pools", run: (c) => geckoterminalTokenPools(c.venues) },
  {
    id: "geckoterminal.ohlcv",
    venue: "geckoterminal",
    endpoint: "GET /networks/{network}/pools/{pool}/ohlcv/{timeframe}",
    needs: "geckoterminal.tokenPools",
    run: (c) => geckoterminalOhlcv(3)(c.venues),
  },
];

/**
 * The service's venue clients and trade backfills for `config`, exactly as the service builds them (base URLs,
 * budgets, timeouts, circuit breakers), without its streams, alerts or stores.
 */
export function doctorClients(config: Config, deps: { metrics: Metrics; log: Logger; version: string; now: number }): DoctorClients {
  const { venues, health } = createVenues(config, { metrics: deps.metrics });
  health.configureCircuits(config.circuit);
  const { perps } = venues;
  const input = { config, metrics: deps.metrics, logger: deps.log };
  return {
    venues,
    health,
    now: deps.now,
    backfill: Object.fromEntries(VENUES.map((v) => [v.id, v.createBackfill({ ...input, instruments: perps[v.id] })])) as Record<StreamVenue, TradeBackfill>,
  };
}
