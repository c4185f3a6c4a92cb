import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Metrics } from "../../src/core/metrics.js";
import { VenueHealth } from "../../src/core/venue-health.js";
import { AppError } from "../../src/errors.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { CoinGeckoClient } from "../../src/venues/coingecko/client.js";
import { parseCoin, parseMarketChart, parseSimplePrice } from "../../src/venues/coingecko/parse.js";
import { fixture } from "../helpers/fixtures.js";

describe("coingecko parsers on recorded payloads", () => {
  it("parses a real /coins/{id}/market_chart body", () => {
    const chart = parseMarketChart(fixture("coingecko/market_chart_bitcoin_daily_2023-12.json"));
    expect(chart.prices).toHaveLength(5);
    expect(chart.prices[0]).toEqual([1702771200000, 42247.06788172229]);
    expect(chart.marketCaps[4]).toEqual([1703116800000, 854173854159.8182]);
    expect(chart.totalVolumes[2]![1]).toBeCloseTo(26473040426.6, 0);
  });

  it("parses a real /simple/price body, converting last_updated_at from seconds to ms", () => {
    expect(parseSimplePrice(fixture("coingecko/simple_price_solana_2021-07.json"))).toEqual([
      {
        coingeckoId: "solana",
        priceUsd: 30.98,
        change24hPct: 7.567819671750593,
        volume24hUsd: 476280865.7456335,
        marketCapUsd: 8474612022.806003,
        lastUpdatedMs: 1626316083000,
      },
    ]);
  });

  it("maps /coins/{id} market data without inventing missing fields", () => {
    const c = parseCoin(fixture("coingecko/coins_ethereum_docs_shape.json"));
    expect(c).toMatchObject({ id: "ethereum", symbol: "ETH", priceUsd: 3200, change7dPct: 5.3, athDate: "2021-11-10T14:24:11.849Z", marketCapRank: 2 });
    expect(c.change30dPct).toBeNull();
    expect(c.lastUpdated).toBeNull();
  });

  it("drops null chart points and omits ids CoinGecko answered with an empty object", () => {
    expect(
      parseMarketChart({
        prices: [
          [2, 1],
          [1, null],
        ],
        market_caps: [],
        total_volumes: [],
      }).prices,
    ).toEqual([[2, 1]]);
    expect(parseSimplePrice({ bitcoin: {} })).toEqual([]);
  });

  it("rejects an unexpected shape with UPSTREAM_ERROR", () => {
    expect(() => parseMarketChart({ prices: "nope" })).toThrow(AppError);
    expect(() => parseSimplePrice({ bitcoin: { usd: "1" } })).toThrowError(/unexpected shape/);
  });
});

describe("coingecko client against the simulator", () => {
  let sim: RunningSimulator;
  let health: VenueHealth;
  const client = (over: { callsPerMin?: number; timeoutMs?: number; maxWaitMs?: number } = {}) =>
    new CoinGeckoClient(
      { baseUrl: sim.urls.coingecko, plan: "pro", callsPerMin: over.callsPerMin ?? 600 },
      { timeoutMs: over.timeoutMs ?? 2000, metrics: new Metrics({ defaultMetrics: false }), health, maxWaitMs: over.maxWaitMs ?? 3000 },
    );

  beforeAll(async () => {
    sim = await startSimulator({ seed: 7 });
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.faults.clear();
    sim.faults.resetCounts();
    health = new VenueHealth();
  });

  it("fetches prices, details and history in the wire format", async () => {
    const cg = client();
    const prices = await cg.simplePrice(["bitcoin", "ethereum"]);
    expect(prices.map((p) => p.coingeckoId).sort()).toEqual(["bitcoin", "ethereum"]);
    expect(prices[0]!.priceUsd).toBeGreaterThan(0);
    expect((await cg.coin("bitcoin")).symbol).toBe("BTC");
    const chart = await cg.marketChart("bitcoin", 1);
    expect(chart.prices.length).toBeGreaterThan(280);
    expect(health.snapshot()[0]).toMatchObject({ venue: "coingecko", reachable: true, errors: 0 });
  });

  it("honours Retry-After on 429 and succeeds on the retry", async () => {
    sim.faults.inject("coingecko", { kind: "rate_limit", retryAfterSec: 1 });
    const started = Date.now();
    await client().simplePrice(["bitcoin"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(sim.faults.requestCount("coingecko")).toBe(2);
  });

  it("fails fast with 503 and Retry-After when the venue asks for a longer wait than we sit out", async () => {
    sim.faults.inject("coingecko", { kind: "rate_limit", retryAfterSec: 60 });
    const err = await client()
      .simplePrice(["bitcoin"])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 60 });
    expect(sim.faults.requestCount("coingecko")).toBe(1);
    expect(health.snapshot()[0]).toMatchObject({ reachable: false, last_error: "HTTP 429" });
  });

  it("retries 5xx and malformed bodies, then gives up with a clear error", async () => {
    sim.faults.inject("coingecko", { kind: "server_error", status: 502 });
    sim.faults.inject("coingecko", { kind: "malformed" });
    await expect(client().coin("ethereum")).resolves.toMatchObject({ id: "ethereum" });
    expect(sim.faults.requestCount("coingecko")).toBe(3);

    sim.faults.inject("coingecko", { kind: "malformed" }, Infinity);
    await expect(client().coin("solana")).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
  });

  it("times out a silent venue with UPSTREAM_TIMEOUT", async () => {
    sim.faults.inject("coingecko", { kind: "timeout", delayMs: 60_000 }, Infinity);
    await expect(client({ timeoutMs: 200 }).marketChart("bitcoin", 7)).rejects.toMatchObject({ code: "UPSTREAM_TIMEOUT" });
    expect(sim.faults.requestCount("coingecko")).toBe(3);
  });

  it("maps an unknown coin to NOT_FOUND without retrying", async () => {
    await expect(client().coin("not-a-coin")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(sim.faults.requestCount("coingecko")).toBe(1);
  });

  it("coalesces identical concurrent requests into one upstream call", async () => {
    const cg = client();
    await Promise.all(Array.from({ length: 10 }, () => cg.marketChart("solana", 30)));
    expect(sim.faults.requestCount("coingecko")).toBe(1);
  });

  it("keeps under its request budget by queueing, and refuses when the wait would be too long", async () => {
    const cg = client({ callsPerMin: 2, maxWaitMs: 300 });
    await cg.coin("bitcoin");
    await cg.coin("ethereum");
    await expect(cg.coin("solana")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    expect(sim.faults.requestCount("coingecko")).toBe(2);
  });
});
