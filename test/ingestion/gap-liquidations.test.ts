import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventEmitter } from "node:events";
import { manualClock } from "../../src/sim/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { GateTradeBackfill } from "../../src/venues/gate/backfill.js";
import { GatePerpClient } from "../../src/venues/gate/client.js";
import { IngestionManager } from "../../src/ingestion/manager.js";
import type { TradeBackfill } from "../../src/ingestion/backfill/common.js";
import type { VenueFeed } from "../../src/ingestion/feeds/feed-base.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES, type StreamVenue } from "../../src/ingestion/types.js";

/*
 * A stream gap's liquidations: the manager backfills Gate's all-market liquidations of the gap from the
 * simulator's /liq_orders into a real liquidation store (once, whatever the repeats), and has nothing to do on
 * venues whose REST publishes no liquidations.
 */

const NOW = Date.parse("2026-11-21T12:34:56.789Z");
let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 5, clock: manualClock(NOW) });
});
afterAll(() => sim.close());

/** A feed that never connects: the manager only registers listeners and asks for subscriptions. */
class IdleFeed extends EventEmitter {
  subscriptions(): string[] {
    return [];
  }
}

describe("gap liquidation backfill", () => {
  it("stores Gate's liquidations of the gap once; other venues have none to backfill", async () => {
    const db = openStreamDb(":memory:");
    const liquidations = new LiquidationStore(db, { now: () => NOW });
    const cvd = new CvdStore(db, { now: () => NOW });
    const feeds = Object.fromEntries(STREAM_VENUES.map((v) => [v, new IdleFeed()])) as unknown as Record<StreamVenue, VenueFeed>;
    const gate = new GateTradeBackfill({ instruments: new GatePerpClient(sim.urls.gate, { timeoutMs: 5000, retries: 0 }), baseUrl: sim.urls.gate, retries: 0 });
    const none = (venue: StreamVenue): TradeBackfill => ({ venue, fetchTrades: async () => ({ trades: [], complete: true }) });
    const backfills = Object.fromEntries(STREAM_VENUES.map((v) => [v, v === "gate" ? gate : none(v)])) as Record<StreamVenue, TradeBackfill>;
    const manager = new IngestionManager(feeds, backfills, cvd, liquidations, { now: () => NOW });
    const gap = { venue: "gate" as const, from: NOW - 20 * 60_000, to: NOW };
    expect(await manager.backfillLiquidationsSince(gap)).toBe(true);
    const want = sim.tape.liquidations("gate", "*", gap.from, gap.to).length;
    expect(want).toBeGreaterThan(10); // about 1.8 a minute
    const stored = liquidations.recent({ limit: 1000 });
    expect(stored.length).toBe(want);
    expect(stored.every((l) => l.venue === "gate")).toBe(true);
    expect(await manager.backfillLiquidationsSince(gap)).toBe(true);
    expect(liquidations.recent({ limit: 1000 }).length).toBe(want); // a repeat adds nothing
    expect(await manager.backfillLiquidationsSince({ venue: "binance", from: gap.from, to: gap.to })).toBe(true);
    expect(liquidations.recent({ limit: 1000 }).length).toBe(want);
    cvd.close();
    liquidations.close();
  });
});
