/**
 * The venue list (src/venues/index.ts `VENUES`): validated at load, and a definition that lacks what a capability
 * needs fails validation, so a new venue cannot claim data it does not serve nor leave a gap silently.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { Metrics } from "../../src/core/metrics.js";
import { DOCTOR_CHECKS } from "../../src/doctor/checks.js";
import { createIngestionManager } from "../../src/ingestion/create.js";
import type { Trade } from "../../src/ingestion/types.js";
import { createVenues } from "../../src/venues/create.js";
import { CAPABILITIES, type PerpVenueDefinition } from "../../src/venues/define.js";
import { VENUES, venuesWith } from "../../src/venues/index.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { validateClients, validateVenues, VenueDefinitionError } from "../../src/venues/validate.js";

/** `VENUES` with venue `id`'s definition changed by `edit`. */
function withEdit(id: string, edit: (v: PerpVenueDefinition) => PerpVenueDefinition): PerpVenueDefinition[] {
  return VENUES.map((v) => (v.id === id ? edit(v) : v));
}

/** The problems `validateVenues` finds in `venues` (none: an empty list). */
function problems(venues: readonly PerpVenueDefinition[], ids: readonly string[] = PERP_VENUES): string[] {
  try {
    validateVenues(venues, ids);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(VenueDefinitionError);
    return (err as VenueDefinitionError).problems;
  }
}

describe("VENUES", () => {
  it("lists every perpetual venue once, in answer order, and passes validation", () => {
    expect(VENUES.map((v) => v.id)).toEqual([...PERP_VENUES]);
    expect(problems(VENUES)).toEqual([]);
  });

  it("builds a client per definition with every method its capabilities need", () => {
    const { venues } = createVenues(loadConfig({}), { metrics: new Metrics({ defaultMetrics: false }) });
    expect(Object.keys(venues.perps)).toEqual([...PERP_VENUES]);
    expect(() => validateClients(VENUES, venues.perps)).not.toThrow();
    for (const v of VENUES) expect(venues.perps[v.id].venue).toBe(v.id);
  });

  it("fails a definition that claims a capability its client lacks", () => {
    const { venues } = createVenues(loadConfig({}), { metrics: new Metrics({ defaultMetrics: false }) });
    // Binance's margin tiers are signed: its client has no marginTiers.
    const claimed = withEdit("binance", (v) => ({
      ...v,
      capabilities: { ...v.capabilities, marginTiers: true },
      missing: { ...v.missing, marginTiers: undefined },
      marginTierSource: "GET /fapi/v1/leverageBracket",
    }));
    expect(() => validateClients(claimed, venues.perps)).toThrow(/binance: capability marginTiers needs the client method marginTiers/);
  });

  it("fails a missing capability without a reason, and a reason for a capability the venue has", () => {
    const silent = withEdit("aster", (v) => ({ ...v, missing: { ...v.missing, longShort: undefined } }));
    expect(problems(silent)).toEqual(["aster: capability longShort is missing without a reason in missing.longShort"]);
    const both = withEdit("gate", (v) => ({ ...v, missing: { ...v.missing, longShort: "none" } }));
    expect(problems(both)).toEqual(["gate: missing.longShort given for a capability it has"]);
  });

  it("fails a liquidation feed that disagrees with the capability, and a history on a per-symbol feed", () => {
    const noFeed = withEdit("okx", (v) => ({ ...v, liquidationFeed: { ...v.liquidationFeed, kind: "none" } }));
    expect(problems(noFeed)).toContain("okx: capabilities.liquidations disagrees with liquidationFeed.kind none");
    const history = withEdit("bybit", (v) => ({ ...v, liquidationFeed: { ...v.liquidationFeed, history: true } }));
    expect(problems(history)).toContain("bybit: only an all_symbols liquidation feed can be the liquidation history");
  });

  it("fails doctor checks whose prerequisite is not an earlier check, and a venue without a feed", () => {
    const late = withEdit("okx", (v) => ({ ...v, doctor: [...v.doctor].reverse() }));
    expect(problems(late)).toContain("okx: the first doctor check (the instrument list) needs nothing");
    const noWs = withEdit("deribit", (v) => ({ ...v, endpoints: { rest: v.endpoints.rest, backfill: v.endpoints.backfill } }));
    expect(problems(noWs)).toEqual([
      "deribit: endpoints not in VENUE_ENDPOINTS (src/venues/endpoints.ts: config defaults, sim-mode checks)",
      "deribit: endpoints.ws missing (every perpetual venue has a trade feed)",
    ]);
  });

  it("fails a trade-id order or liquidation history that disagrees with the stores' copy", () => {
    const order = withEdit("binance", (v) => ({ ...v, tradeIds: "unordered" }));
    expect(problems(order)).toEqual(["binance: tradeIds unordered disagrees with VENUE_ID_ORDER"]);
    const history = withEdit("gate", (v) => ({ ...v, liquidationFeed: { ...v.liquidationFeed, history: true } }));
    expect(problems(history)).toEqual(["gate: liquidationFeed.history disagrees with LIQUIDATION_HISTORY_VENUES"]);
  });

  it("fails a list whose ids differ from the id list the stores key by", () => {
    expect(problems(VENUES.slice(1))).toEqual([`VENUES (${PERP_VENUES.slice(1).join(",")}) must list the ids of PERP_VENUES (${PERP_VENUES.join(",")}) in the same order`]);
  });

  it("derives the doctor's perpetual checks and the capability lists from the definitions", () => {
    for (const v of VENUES) {
      const ids = DOCTOR_CHECKS.filter((c) => c.venue === v.id).map((c) => c.id);
      expect(ids).toEqual(v.doctor.map((c) => `${v.id}.${c.id}`));
    }
    for (const cap of CAPABILITIES) expect(venuesWith(cap)).toEqual(VENUES.filter((v) => v.capabilities[cap]).map((v) => v.id));
    expect(venuesWith("longShort").slice(0, 5)).toEqual(["binance", "bybit", "okx", "gate", "bitget"]);
    expect(venuesWith("longShort")).not.toContain("hyperliquid");
  });

  it("gives the service's stores each venue's trade-id order and liquidation history from its definition", async () => {
    const config = loadConfig({ DATA_DIR: ":memory:" });
    const streams = { ...config, streams: config.streams! };
    const { venues } = createVenues(config, { metrics: new Metrics({ defaultMetrics: false }) });
    const now = Date.now();
    // 50 trades of the last venue with growing integer ids; none is in the VENUE_ID_ORDER defaults of the stores.
    const last = VENUES[VENUES.length - 1]!;
    const trades: Trade[] = Array.from({ length: 50 }, (_, i) => ({ venue: last.id, base: "BTC", time: now - 60_000 + i, price: 100, size: 1, side: "buy", id: String(1000 + i) }));
    const idsKept = async (order: "sequence" | "unordered"): Promise<number> => {
      const defs = VENUES.map((v) => (v.id === last.id ? { ...v, tradeIds: order } : v));
      const m = createIngestionManager(streams, defs, venues.perps, new Metrics({ defaultMetrics: false }));
      try {
        expect(m.cvd.add(trades)).toBe(50);
        return m.cvd.stats().idsInMemory;
      } finally {
        await m.stop();
      }
    };
    // A sequence venue keeps a high-water mark, an unordered one every id: the order came from the definition.
    expect(await idsKept("sequence")).toBe(0);
    expect(await idsKept("unordered")).toBe(50);
  });
});
