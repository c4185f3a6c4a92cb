import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ammQuote } from "../../src/analytics/dex.js";
import { canonicalTokens, isCanonical } from "../../src/assets/tokens.js";
import { SIM_DEX_LOOKALIKE_TOKENS } from "../../src/sim/dex-tokens.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { describePaidTools } from "../helpers/paid-tools.js";

const DEX_TOOLS = TOOLS.filter((t) => t.tags.includes("dex"));

describe("DEX tools on the simulator (payments off)", () => {
  let s: FreeStack;
  const get = (path: string) => s.get(path);
  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());

  it("aggregates only canonical pools: look-alikes never enter the price", async () => {
    const { status, body } = await get("/price/ETH");
    expect(status).toBe(200);
    expect(body.total_sources).toBeGreaterThan(3);
    expect(body.pools_rejected).toBeGreaterThan(0);
    const fakes = new Set(SIM_DEX_LOOKALIKE_TOKENS.map((t) => t.address.toLowerCase()));
    for (const src of body.sources) {
      expect(src.liquidity_usd).toBeGreaterThanOrEqual(50_000);
      expect(fakes.has(src.pair_address.toLowerCase())).toBe(false);
    }
    const model = s.sim.market.priceAt("ETH", Date.now());
    expect(Math.abs(body.price_usd / model - 1)).toBeLessThan(0.01);
    const prices = body.sources.map((x: { price: number }) => x.price);
    expect(body.spread).toBeCloseTo(((Math.max(...prices) - Math.min(...prices)) / Math.min(...prices)) * 100, 6);
    const noSources = await get("/price/ETH?include_sources=false");
    expect(noSources.body.sources).toBeUndefined();
  });

  it("answers 404 for symbols without canonical tokens, before any venue call", async () => {
    const before = s.sim.faults.requestCount("dexscreener");
    expect((await get("/price/NOTATOKEN")).status).toBe(404);
    expect((await get("/volume/APT")).status).toBe(404);
    expect((await get("/spread/FOO-USDC")).status).toBe(404);
    expect(s.sim.faults.requestCount("dexscreener")).toBe(before);
  });

  it("clamps candle limits to the interval's maximum and says so", async () => {
    const { body } = await get("/price/history/ETH?interval=15m&limit=200");
    expect(body).toMatchObject({ interval: "15m", limit_requested: 200, limit_applied: 96, limit_clamped: true });
    expect(body.total_candles).toBeLessThanOrEqual(96);
    const times = body.candles.map((c: { timestamp: string }) => Date.parse(c.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const c of body.candles) {
      expect(c.source_count).toBeGreaterThanOrEqual(1);
      expect(c.high).toBeGreaterThanOrEqual(Math.min(c.open, c.close) - 1e-9);
    }
    const h = await get("/price/history/BTC?interval=1h&limit=1000");
    expect(h.body).toMatchObject({ limit_applied: 720, limit_clamped: true });
    const unclamped = await get("/price/history/SOL?interval=1d&limit=30");
    expect(unclamped.body).toMatchObject({ limit_applied: 30, limit_clamped: false });
  });

  it("bounds candles by start and end", async () => {
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000);
    const start = new Date(end.getTime() - 10 * 3_600_000);
    const { body } = await get(`/price/history/ETH?interval=1h&limit=100&start=${start.toISOString()}&end=${end.toISOString()}`);
    expect(body.candles.length).toBeGreaterThan(0);
    for (const c of body.candles) {
      const t = Date.parse(c.timestamp);
      expect(t).toBeGreaterThanOrEqual(start.getTime());
      expect(t).toBeLessThanOrEqual(end.getTime());
    }
    expect((await get(`/price/history/ETH?start=${end.toISOString()}&end=${start.toISOString()}`)).status).toBe(400);
  });

  it("splits volume by DEX with swaps and average trade size", async () => {
    const { body } = await get("/volume/ETH");
    const sum = body.by_dex.reduce((a: number, d: { volume_usd: number }) => a + d.volume_usd, 0);
    expect(sum).toBeCloseTo(body.volume_24h_usd, 2);
    for (const d of body.by_dex) if (d.tx_count > 0) expect(d.avg_trade_size).toBeCloseTo(d.volume_usd / d.tx_count, 6);
    expect(typeof body.volume_change_24h).toBe("number");
  });

  it("accepts every pair spelling and quotes each pool with the AMM model", async () => {
    const dash = await get("/spread/ETH-USDC");
    expect(dash.status).toBe(200);
    expect((await get("/spread/ETH_USDC")).body.pair).toBe("ETH/USDC");
    expect((await get("/spread/eth%2Fusdc")).body.pair).toBe("ETH/USDC");
    const b = dash.body;
    expect(b.mid_price).toBeCloseTo((b.best_bid + b.best_ask) / 2, 6);
    expect(b.band_pct).toBe(2);
    for (const row of b.depth_analysis) {
      const mid = (row.bid_price + row.ask_price) / 2;
      expect(row.ask_price / row.bid_price).toBeCloseTo((1 + row.fee_bps / 1e4) / (1 - row.fee_bps / 1e4), 9);
      expect(row.ask_depth_usd / row.bid_depth_usd).toBeCloseTo(ammQuote(mid, row.fee_bps, 1e6, 0.02).askDepthUsd / ammQuote(mid, row.fee_bps, 1e6, 0.02).bidDepthUsd, 6);
      expect(b.best_bid).toBeGreaterThanOrEqual(row.bid_price - 1e-9);
      expect(b.best_ask).toBeLessThanOrEqual(row.ask_price + 1e-9);
    }
    // The real Uniswap v3 0.05% USDC/WETH pool: the fee comes from GeckoTerminal's pool name, not the 0.30% default.
    expect(b.depth_analysis.find((r: { pair_address: string }) => r.pair_address.toLowerCase() === "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640")?.fee_bps).toBe(5);
    expect((await get("/spread/ETH-NOTAQUOTE")).status).toBe(404);
    expect((await get("/spread/ETHUSDC")).status).toBe(400);
  });

  it("computes risk metrics consistent with their definitions", async () => {
    const { body } = await get("/volatility-index/ETH?period=30d");
    expect(body.period).toBe("30d");
    const daily = body.daily_volatility_pct;
    expect(body.risk_level).toBe(daily < 3 ? "low" : daily < 8 ? "medium" : daily <= 15 ? "high" : "extreme");
    expect(body.volatility_30d).toBeCloseTo(daily * Math.sqrt(365), 4);
    expect(body.risk_metrics.var_99_1d).toBeGreaterThan(body.risk_metrics.var_95_1d);
    expect(body.risk_metrics.var_95_1d).toBeCloseTo((1 - Math.exp((-1.6448536269514722 * daily) / 100)) * 100, 4); // log-normal
    expect(body.risk_metrics.correlation_vs_btc).toBeGreaterThan(-1);
    expect(body.risk_metrics.correlation_vs_btc).toBeLessThanOrEqual(1);
    expect(body.sentiment.sources_analyzed).toBeGreaterThanOrEqual(5); // 4 funding venues + long/short venues
    const btc = await get("/volatility-index/BTC?period=7d");
    expect(btc.body.risk_metrics.beta_vs_btc).toBeCloseTo(1, 9);
    expect(btc.body.risk_metrics.correlation_vs_btc).toBeCloseTo(1, 9);
  });

  it("resolves ETH to canonical contracts only", () => {
    const eth = canonicalTokens("ETH");
    expect(eth.length).toBeGreaterThanOrEqual(5);
    for (const t of SIM_DEX_LOOKALIKE_TOKENS) expect(isCanonical(t.symbol.replace(/^W/, ""), t.chain, t.address)).toBe(false);
  });
});

describePaidTools("DEX tools paid on anvil", DEX_TOOLS, 5);
