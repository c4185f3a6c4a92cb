import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { annualizedPct } from "../../src/analytics/funding.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { describePaidTools } from "../helpers/paid-tools.js";

const PERP_TOOLS = TOOLS.filter((t) => t.tags.includes("funding") || t.tags.includes("futures"));

describe("perp tools on the simulator (payments off)", () => {
  let s: FreeStack;
  const get = (path: string) => s.get(path);
  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());
  beforeEach(() => s.sim.faults.clear());

  it("compares funding per venue, annualising each with its own interval, and picks the arbitrage direction", async () => {
    const btc = await get("/futures/funding-compare/BTCUSDT");
    expect(btc.status).toBe(200);
    expect(Object.keys(btc.body.exchanges).sort()).toEqual([...PERP_VENUES].sort());
    // WIF settles every 4h on some venues and pays extreme funding: the legs differ.
    const { status, body } = await get("/futures/funding-compare/WIFUSDT");
    expect(status).toBe(200);
    expect(Object.values(body.exchanges).map((e) => (e as { funding_interval_hours: number }).funding_interval_hours)).toContain(4);
    for (const e of Object.values(body.exchanges) as Array<{ funding_rate: number; funding_interval_hours: number; annualized_pct: number }>) {
      expect(e.annualized_pct).toBeCloseTo(annualizedPct(e.funding_rate, e.funding_interval_hours), 8);
    }
    expect(body.exchanges.hyperliquid.funding_interval_hours).toBe(1);
    const arb = body.best_arb;
    expect(body.exchanges[arb.long_exchange].annualized_pct).toBeLessThanOrEqual(body.exchanges[arb.short_exchange].annualized_pct);
    expect(arb.annualized_spread_pct).toBeCloseTo(body.exchanges[arb.short_exchange].annualized_pct - body.exchanges[arb.long_exchange].annualized_pct, 8);
    expect(arb.direction).toBe(`long_${arb.long_exchange}_short_${arb.short_exchange}`);
  });

  it("degrades to the venues that answered and names the missing one", async () => {
    s.sim.faults.inject("okx", { kind: "server_error", status: 503 }, Infinity);
    const { status, body } = await get("/futures/open-interest/ETH");
    expect(status).toBe(200);
    expect(body.exchanges.okx).toBeUndefined();
    expect(body.missing_exchanges).toEqual([expect.objectContaining({ exchange: "okx", reason: expect.stringContaining("UPSTREAM") })]);
    const shares = Object.values(body.exchanges as Record<string, { share_pct: number }>).reduce((a, e) => a + e.share_pct, 0);
    expect(shares).toBeCloseTo(100, 6);
  });

  it("answers 404 before any payment when no venue lists the symbol", async () => {
    const { status, body } = await get("/futures/funding-compare/NOTAPERP");
    expect(status).toBe(404);
    expect(body.error.code).toBe("UNKNOWN_SYMBOL");
  });

  it("undoes size multipliers: PEPE costs the same per coin everywhere", async () => {
    const { body } = await get("/futures/funding-compare/PEPE");
    const marks = Object.values(body.exchanges as Record<string, { mark_price: number }>).map((e) => e.mark_price);
    expect(marks.length).toBeGreaterThanOrEqual(3);
    for (const m of marks) expect(Math.abs(m / marks[0]! - 1)).toBeLessThan(0.02);
    const oi = await get("/futures/open-interest/PEPE");
    for (const e of Object.values(oi.body.exchanges as Record<string, { oi_usd: number; oi_coins: number }>)) {
      expect(e.oi_usd / e.oi_coins / marks[0]!).toBeGreaterThan(0.97);
      expect(e.oi_usd / e.oi_coins / marks[0]!).toBeLessThan(1.03);
    }
  });

  it("scans extremes with the 8h-equivalent threshold and per-interval annualisation", async () => {
    const { body } = await get("/funding-rate/extreme?threshold=0.03");
    expect(body.total_markets_scanned).toBeGreaterThan(30);
    expect(body.results.length).toBeGreaterThan(0);
    for (const r of body.results) {
      expect(Math.abs(r.funding_rate_8h_pct)).toBeGreaterThanOrEqual(0.03);
      expect(r.annualized_pct).toBeCloseTo(annualizedPct(r.funding_rate, r.funding_interval_hours), 8);
      expect(r.direction).toBe(r.funding_rate > 0 ? "longs_paying" : "shorts_paying");
      expect(r.signal).toBe(r.funding_rate > 0 ? "extreme_bullish" : "extreme_bearish");
      expect(r.symbol).toMatch(/USDT$/);
      expect(body.coverage.exchanges_asked).toContain(r.exchange);
      // Hyperliquid (USDC) and Deribit (inverse, USDC) have no USDT perpetuals to scan.
      expect(["hyperliquid", "deribit"]).not.toContain(r.exchange);
    }
  });

  it("returns funding history newest first with a summary on the detected interval", async () => {
    const { body } = await get("/funding-rate/history/BTCUSDT?limit=50&exchange=bybit");
    expect(body).toMatchObject({ symbol: "BTCUSDT", exchange: "bybit", count: 50 });
    const times = body.history.map((h: { funding_time: string }) => Date.parse(h.funding_time));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((times[0] - times[1]) / 3_600_000).toBe(body.funding_interval_hours);
    expect(body.summary.annualized_avg).toBeCloseTo(annualizedPct(body.summary.avg_rate, body.funding_interval_hours), 8);
  });

  it("labels long/short populations and leaves Hyperliquid out as no_public_data", async () => {
    const { body } = await get("/futures/long-short/BTC");
    expect(body.exchanges.bybit.source).toBe("all_accounts");
    expect(body.exchanges.binance.source).toBe("top_traders_positions");
    expect(body.missing_exchanges).toContainEqual({ exchange: "hyperliquid", reason: "no_public_data" });
    for (const e of Object.values(body.exchanges as Record<string, { long_ratio: number; short_ratio: number; ls_ratio: number }>)) {
      expect(e.long_ratio + e.short_ratio).toBeCloseTo(1, 3);
      expect(e.ls_ratio).toBeCloseTo(e.long_ratio / e.short_ratio, 2);
    }
  });

  it("computes basis against Binance spot with contango/backwardation per venue", async () => {
    const { body } = await get("/futures/basis/ETH");
    expect(body.spot_source).toBe("binance_spot");
    for (const e of Object.values(body.exchanges as Record<string, { perp_price: number; basis_usd: number; basis_pct: number; direction: string }>)) {
      expect(e.basis_usd).toBeCloseTo(e.perp_price - body.spot_price, 6);
      expect(e.direction).toBe(e.basis_usd > 0 ? "contango" : e.basis_usd < 0 ? "backwardation" : "flat");
    }
  });

  it("predicts funding from Binance's premium index", async () => {
    const { body } = await get("/futures/predicted-funding/BTC");
    expect(body.source).toBe("binance_premium_index");
    expect(body.time_to_funding_ms).toBeGreaterThan(0);
    expect(body.premium_index).toBeCloseTo((body.mark_price - body.index_price) / body.index_price, 10);
    expect(Object.keys(body.predictions).length).toBeGreaterThan(0);
  });

  it("ranks arbitrage opportunities with consistent legs", async () => {
    const { body } = await get("/arbitrage-opportunity?min_annualized_pct=0&limit=50");
    expect(body.opportunities.length).toBeGreaterThan(0);
    const yields = body.opportunities.map((o: { annualized_yield_pct: number }) => o.annualized_yield_pct);
    expect(yields).toEqual([...yields].sort((a: number, b: number) => b - a));
    for (const o of body.opportunities.filter((x: { type: string }) => x.type === "funding_spread")) {
      const [long, short] = o.legs;
      expect(long.side).toBe("long");
      expect(long.funding_annualized_pct).toBeLessThanOrEqual(short.funding_annualized_pct);
      expect(o.annualized_yield_pct).toBeCloseTo(short.funding_annualized_pct - long.funding_annualized_pct, 8);
    }
  });

  it("computes the OI-weighted current funding", async () => {
    const { body } = await get("/funding-rate/ETH");
    const ex = body.exchanges as Record<string, { funding_rate_8h: number; oi_usd: number | null }>;
    const used = Object.values(ex).filter((e) => e.oi_usd);
    const expected = used.reduce((a, e) => a + e.funding_rate_8h * e.oi_usd!, 0) / used.reduce((a, e) => a + e.oi_usd!, 0);
    expect(body.oi_weighted.funding_rate_8h).toBeCloseTo(expected, 12);
  });
});

describe("perp tools when every venue fails", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack();
    // Instrument lists load first (they are cached for an hour); then every venue fails.
    expect((await fetch(`${s.url}/api/v1/quote?path=/futures/funding-compare/SOL`)).status).toBe(200);
    for (const v of PERP_VENUES) s.sim.faults.inject(v, { kind: "server_error", status: 500 }, Infinity);
    await new Promise((r) => setTimeout(r, 2_100)); // outlive Hyperliquid's 2 s snapshot
  });
  afterAll(() => s?.close());

  it("answers 503 with the reasons, never a crash", async () => {
    const res = await fetch(`${s.url}/futures/funding-compare/SOL`);
    expect(res.status).toBe(503);
    const body = await json(res);
    expect(body.error.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(body.error.details.map((d: { exchange: string }) => d.exchange).sort()).toEqual([...PERP_VENUES].sort());
  });
});

describePaidTools("perp tools paid on anvil", PERP_TOOLS, 3);
