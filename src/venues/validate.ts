import { LIQUIDATION_HISTORY_VENUES } from "../ingestion/store/liquidation-history.js";
import { VENUE_ID_ORDER } from "../ingestion/store/trade-ledger.js";
import { CAPABILITIES, CAPABILITY_METHOD, type PerpVenueDefinition } from "./define.js";
import type { VenueEndpoints } from "./endpoint-types.js";
import { ENDPOINTS_BY_VENUE } from "./endpoints.js";
import type { PerpVenueClient } from "./perp/types.js";

/** Thrown at load (and in tests) when a venue definition is inconsistent; lists every problem at once. */
export class VenueDefinitionError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid venue definitions:\n  - ${problems.join("\n  - ")}`);
    this.name = "VenueDefinitionError";
  }
}

const ID = /^[a-z][a-z0-9]{1,19}$/;

/** The problems of one definition's capabilities: each missing one says why, a present one does not; the liquidation feed agrees. */
function capabilityProblems(v: PerpVenueDefinition): string[] {
  const problems: string[] = [];
  for (const cap of CAPABILITIES) {
    const why = v.missing[cap];
    if (!v.capabilities[cap] && !why?.trim()) problems.push(`${v.id}: capability ${cap} is missing without a reason in missing.${cap}`);
    if (v.capabilities[cap] && why !== undefined) problems.push(`${v.id}: missing.${cap} given for a capability it has`);
  }
  const feed = v.liquidationFeed;
  if (v.capabilities.liquidations !== (feed.kind !== "none")) problems.push(`${v.id}: capabilities.liquidations disagrees with liquidationFeed.kind ${feed.kind}`);
  if (feed.history && feed.kind !== "all_symbols") problems.push(`${v.id}: only an all_symbols liquidation feed can be the liquidation history`);
  if (!feed.description.trim()) problems.push(`${v.id}: liquidationFeed.description is empty`);
  if ((v.marginTierSource !== null) !== v.capabilities.marginTiers) problems.push(`${v.id}: marginTierSource and capabilities.marginTiers disagree`);
  return problems;
}

/**
 * The service's stores take the trade-id orders and liquidation-history venues from the definitions
 * (src/ingestion/create.ts); stores built without them (unit tests) use the defaults of the first eight venues
 * (`VENUE_ID_ORDER` in src/ingestion/store/trade-ledger.ts, `LIQUIDATION_HISTORY_VENUES` in liquidation-history.ts),
 * which must agree with those venues' definitions. A venue not in the defaults is stated in its definition only.
 */
function storeProblems(v: PerpVenueDefinition): string[] {
  const problems: string[] = [];
  const order = (VENUE_ID_ORDER as Readonly<Record<string, string | undefined>>)[v.id];
  if (order === undefined) return problems;
  if (order !== v.tradeIds) problems.push(`${v.id}: tradeIds ${v.tradeIds} disagrees with VENUE_ID_ORDER`);
  if (LIQUIDATION_HISTORY_VENUES.includes(v.id) !== (v.liquidationFeed.history ?? false))
    problems.push(`${v.id}: liquidationFeed.history disagrees with LIQUIDATION_HISTORY_VENUES`);
  return problems;
}

/** The problems of one definition's doctor checks: unique ids, a prerequisite named before it, the instrument list first. */
function checkProblems(v: PerpVenueDefinition): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  if (v.doctor.length === 0) problems.push(`${v.id}: no doctor check`);
  else if (v.doctor[0]!.needs !== undefined) problems.push(`${v.id}: the first doctor check (the instrument list) needs nothing`);
  for (const c of v.doctor) {
    if (seen.has(c.id)) problems.push(`${v.id}: duplicate doctor check ${c.id}`);
    if (c.needs !== undefined && !seen.has(c.needs)) problems.push(`${v.id}.${c.id}: needs ${c.needs}, not an earlier check of the venue`);
    seen.add(c.id);
  }
  return problems;
}

/**
 * Checks the venue list at load: unique lowercase ids in the order of `ids` (the id list every layer below the venues
 * keys its records by, src/venues/perp/types.ts), a display name, endpoints listed under its id in `ENDPOINTS_BY_VENUE` (the settings
 * and sim-mode checks of src/config.ts come from there) with a websocket and a backfill budget, a
 * reason for every capability a venue lacks, a liquidation feed that agrees with the capability, and doctor checks whose
 * prerequisites come first.
 * @throws VenueDefinitionError with every problem found.
 */
export function validateVenues(venues: readonly PerpVenueDefinition[], ids: readonly string[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const v of venues) {
    if (!ID.test(v.id)) problems.push(`${v.id}: id must be 2-20 lowercase letters or digits`);
    if (seen.has(v.id)) problems.push(`${v.id}: duplicate id`);
    seen.add(v.id);
    if (!v.name.trim()) problems.push(`${v.id}: empty name`);
    if ((ENDPOINTS_BY_VENUE as Readonly<Record<string, VenueEndpoints>>)[v.id] !== v.endpoints)
      problems.push(`${v.id}: endpoints not in VENUE_ENDPOINTS (src/venues/endpoints.ts: config defaults, sim-mode checks)`);
    if (!v.endpoints.ws) problems.push(`${v.id}: endpoints.ws missing (every perpetual venue has a trade feed)`);
    if (!v.endpoints.backfill) problems.push(`${v.id}: endpoints.backfill missing (the REST trade backfill's budget)`);
    else if (!(v.endpoints.backfill.rest in v.endpoints.rest)) problems.push(`${v.id}: endpoints.backfill.rest names no REST base`);
    problems.push(...capabilityProblems(v), ...checkProblems(v), ...storeProblems(v));
  }
  const order = venues.map((v) => v.id).join(",");
  if (order !== ids.join(",")) problems.push(`VENUES (${order}) must list the ids of PERP_VENUES (${ids.join(",")}) in the same order`);
  if (problems.length) throw new VenueDefinitionError(problems);
}

/**
 * Checks the clients the definitions built: each has the method every capability of its venue needs.
 * @throws VenueDefinitionError with every problem found.
 */
export function validateClients(venues: readonly PerpVenueDefinition[], clients: Readonly<Record<string, PerpVenueClient>>): void {
  const problems: string[] = [];
  for (const v of venues) {
    const client = clients[v.id];
    if (!client || client.venue !== v.id) {
      problems.push(`${v.id}: createClient built no client of this venue`);
      continue;
    }
    for (const cap of CAPABILITIES) {
      const method = CAPABILITY_METHOD[cap];
      if (v.capabilities[cap] && method && typeof client[method] !== "function") problems.push(`${v.id}: capability ${cap} needs the client method ${method}`);
    }
  }
  if (problems.length) throw new VenueDefinitionError(problems);
}
