import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

type Coverage = { exchanges_used: string[]; exchanges_asked: string[]; exchanges_total: number; oi_share_pct?: number | null };

describe("coverage of aggregate perpetual answers (simulator, payments off)", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());
  beforeEach(() => s.sim.faults.clear());

  it("names the venues used out of every venue read, and sizes open-interest-weighted figures by the share they hold", async () => {
    const { status, body } = await s.get("/futures/open-interest/SOL");
    expect(status).toBe(200);
    const cov = body.coverage as Coverage;
    expect(cov.exchanges_total).toBe(PERP_VENUES.length);
    expect(cov.exchanges_asked).toEqual([...PERP_VENUES]);
    expect([...cov.exchanges_used].sort()).toEqual(Object.keys(body.exchanges).sort());
    const notListed = (body.missing_exchanges as Array<{ exchange: string; reason: string }>).filter((m) => m.reason === "not_listed").map((m) => m.exchange);
    expect([...cov.exchanges_used, ...notListed].sort()).toEqual([...PERP_VENUES].sort());
    expect(cov.oi_share_pct).toBe(100);

    // OKX goes down: the funding average is weighted by the venues left, and their share counts OKX at the
    // open interest last read from it (the answer above).
    const okxOi = body.exchanges.okx.oi_usd as number;
    s.sim.faults.inject("okx", { kind: "server_error", status: 503 }, Infinity);
    const funding = await s.get("/funding-rate/SOL");
    expect(funding.status).toBe(200);
    const fcov = funding.body.coverage as Coverage;
    expect(fcov.exchanges_used).not.toContain("okx");
    expect(funding.body.missing_exchanges).toContainEqual(expect.objectContaining({ exchange: "okx", reason: expect.stringContaining("UPSTREAM") }));
    const used = funding.body.oi_weighted.total_oi_usd as number;
    expect(fcov.oi_share_pct).toBeCloseTo((used / (used + okxOi)) * 100, 1);
    expect(fcov.oi_share_pct).toBeLessThan(100);
  });

  it("says the share is unknown when a venue that lists the symbol was never read", async () => {
    s.sim.faults.inject("okx", { kind: "server_error", status: 503 }, Infinity);
    const { status, body } = await s.get("/funding-rate/XRP");
    expect(status).toBe(200);
    expect(body.missing_exchanges).toContainEqual(expect.objectContaining({ exchange: "okx" }));
    expect((body.coverage as Coverage).oi_share_pct).toBeNull();
  });

  it("best_arb can pair a venue added in issue 22 with any other", async () => {
    const added = new Set(["gate", "bitget", "deribit", "aster"]);
    const legs: string[] = [];
    for (const base of ["BTC", "ETH", "SOL", "XRP", "DOGE", "LINK", "AVAX", "LTC", "ADA", "DOT"]) {
      const { status, body } = await s.get(`/futures/funding-compare/${base}`);
      expect(status, base).toBe(200);
      if (body.best_arb) legs.push(body.best_arb.long_exchange, body.best_arb.short_exchange);
    }
    expect(legs.some((v) => added.has(v))).toBe(true);
  });

  it("every aggregate perpetual tool carries coverage", async () => {
    for (const path of [
      "/futures/funding-compare/BTC",
      "/futures/basis/BTC",
      "/futures/long-short/BTC",
      "/funding-rate/extreme",
      "/arbitrage-opportunity",
      "/futures/predicted-funding/BTC",
      "/liquidation/heatmap/BTC",
    ]) {
      const { status, body } = await s.get(path);
      expect(status, path).toBe(200);
      const cov = body.coverage as Coverage;
      expect(cov.exchanges_used.length, path).toBeGreaterThan(0);
      for (const v of cov.exchanges_used) expect(cov.exchanges_asked, path).toContain(v);
    }
  });
});
