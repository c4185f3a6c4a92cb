import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAssets } from "../../src/assets/catalogue.js";
import { fixedClock } from "../../src/sim/clock.js";
import { SIM_ASSET_PARAMS, createMarketModel } from "../../src/sim/market.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";

/** A fixed "now" that is not aligned to any grid (5 min / hour / day). */
const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const DAY = 86_400_000;

const SIMPLE_QS = "vs_currencies=usd&include_market_cap=true&include_24hr_vol=true&include_24hr_change=true&include_last_updated_at=true";
const COIN_QS = "localization=false&tickers=false&market_data=true&community_data=false&developer_data=false&sparkline=false";

let sim: RunningSimulator;
let cg: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 42, clock: fixedClock(NOW) });
  cg = sim.urls.coingecko;
});
afterAll(async () => {
  await sim.close();
});

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as unknown };
}

function isPoint(p: unknown): p is [number, number] {
  return Array.isArray(p) && p.length === 2 && typeof p[0] === "number" && typeof p[1] === "number" && Number.isFinite(p[1]);
}

describe("market model", () => {
  it("has explicit simulated parameters for every catalogue symbol", () => {
    for (const a of listAssets()) expect(SIM_ASSET_PARAMS[a.symbol], a.symbol).toBeDefined();
  });

  it("is deterministic, positive, and keeps ATH/ATL consistent with the past year", () => {
    const a = createMarketModel({ seed: 7, clock: fixedClock(NOW) });
    const b = createMarketModel({ seed: 7, clock: fixedClock(NOW + 5 * DAY) });
    for (const sym of ["BTC", "ETH", "PEPE"]) {
      expect(a.priceAt(sym, NOW - 123_456_789)).toBe(b.priceAt(sym, NOW - 123_456_789));
      const { ath, atl, athDate, atlDate } = a.athAtl(sym);
      expect(athDate).toBeLessThanOrEqual(NOW);
      expect(atlDate).toBeLessThanOrEqual(NOW);
      for (let t = NOW - 365 * DAY; t <= NOW; t += 6 * 3_600_000) {
        const px = a.priceAt(sym, t);
        expect(px).toBeGreaterThan(0);
        expect(px).toBeLessThanOrEqual(ath);
        expect(px).toBeGreaterThanOrEqual(atl);
      }
    }
    expect(a.marketCapUsdAt("BTC", NOW)).toBeCloseTo(a.priceAt("BTC", NOW) * a.circulatingSupply("bitcoin"), 0);
  });

  it("interpolates linearly between minute grid points", () => {
    const m = createMarketModel({ seed: 1, clock: fixedClock(NOW) });
    const t0 = Math.floor(NOW / 60_000) * 60_000;
    const mid = m.priceAt("ETH", t0 + 30_000);
    expect(mid).toBeCloseTo((m.priceAt("ETH", t0) + m.priceAt("ETH", t0 + 60_000)) / 2, 9);
  });
});

describe("coingecko simulator: shapes", () => {
  it("answers /ping and marks responses as simulated", async () => {
    const r = await getJson(`${cg}/ping`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ gecko_says: "(V3) To the Moon!" });
    expect(r.headers.get("x-simulated")).toBe("true");
  });

  it("GET /simple/price with all include flags: numbers only, unknown ids absent, seconds timestamp", async () => {
    const r = await getJson(`${cg}/simple/price?ids=bitcoin,ethereum,not-a-coin&${SIMPLE_QS}`, {
      headers: { "x-cg-demo-api-key": "CG-test" },
    });
    expect(r.status).toBe(200);
    const body = r.body as Record<string, Record<string, unknown>>;
    expect(Object.keys(body).sort()).toEqual(["bitcoin", "ethereum"]);
    for (const coin of Object.values(body)) {
      expect(Object.keys(coin)).toEqual(["usd", "usd_market_cap", "usd_24h_vol", "usd_24h_change", "last_updated_at"]);
      for (const v of Object.values(coin)) expect(typeof v).toBe("number");
      expect(coin.last_updated_at).toBe(Math.floor(NOW / 1000));
    }
  });

  it("GET /simple/price only includes the flagged keys", async () => {
    const r = await getJson(`${cg}/simple/price?ids=solana&vs_currencies=usd&include_24hr_change=true`);
    const body = r.body as Record<string, Record<string, unknown>>;
    expect(Object.keys(body.solana ?? {})).toEqual(["usd", "usd_24h_change"]);
  });

  it("GET /simple/price without ids or vs_currencies is a 400 JSON error", async () => {
    for (const url of [`${cg}/simple/price?vs_currencies=usd`, `${cg}/simple/price?ids=bitcoin`]) {
      const r = await getJson(url);
      expect(r.status).toBe(400);
      expect(typeof (r.body as { error: unknown }).error).toBe("string");
    }
  });

  it("GET /coins/:id has the documented fields and types", async () => {
    const r = await getJson(`${cg}/coins/ethereum?${COIN_QS}`);
    expect(r.status).toBe(200);
    const b = r.body as Record<string, unknown>;
    expect(b.id).toBe("ethereum");
    expect(b.symbol).toBe("eth");
    expect(b.name).toBe("Ethereum");
    expect(typeof b.market_cap_rank).toBe("number");
    expect(b.last_updated).toBe(new Date(NOW).toISOString());
    expect(b).not.toHaveProperty("tickers");
    const md = b.market_data as Record<string, unknown>;
    for (const k of ["current_price", "ath", "atl", "market_cap", "total_volume", "high_24h", "low_24h"]) {
      expect(typeof (md[k] as Record<string, unknown>).usd, k).toBe("number");
    }
    for (const k of ["ath_date", "atl_date"]) {
      const iso = (md[k] as Record<string, unknown>).usd;
      expect(typeof iso).toBe("string");
      expect(new Date(iso as string).toISOString()).toBe(iso);
    }
    for (const k of ["24h", "7d", "14d", "30d", "60d", "200d", "1y"]) {
      expect(typeof md[`price_change_percentage_${k}`], k).toBe("number");
    }
    expect(typeof md.circulating_supply).toBe("number");
    expect(typeof md.total_supply).toBe("number");
    expect(md.max_supply).toBeNull(); // ETH: uncapped, JSON null (not the string "null")
    expect(md.market_cap_rank).toBe(b.market_cap_rank);
    expect(md.last_updated).toBe(b.last_updated);
    const usd = (k: string) => (md[k] as { usd: number }).usd;
    expect(usd("high_24h")).toBeGreaterThanOrEqual(usd("low_24h"));
    expect(usd("ath")).toBeGreaterThanOrEqual(usd("high_24h"));
    expect(usd("atl")).toBeLessThanOrEqual(usd("low_24h"));
  });

  it("GET /coins/:id for an unknown id (or a symbol) is 404 coin not found", async () => {
    for (const id of ["not-a-coin", "btc"]) {
      const r = await getJson(`${cg}/coins/${id}?${COIN_QS}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: "coin not found" });
    }
    const chart = await getJson(`${cg}/coins/not-a-coin/market_chart?vs_currency=usd&days=1`);
    expect(chart.status).toBe(404);
  });

  it.each([
    [1, 289, 5 * 60_000],
    [7, 169, 3_600_000],
    [90, 2161, 3_600_000],
    [365, 366, DAY],
  ])("GET /coins/bitcoin/market_chart days=%i gives %i points at automatic granularity", async (days, count, step) => {
    const r = await getJson(`${cg}/coins/bitcoin/market_chart?vs_currency=usd&days=${days}`);
    expect(r.status).toBe(200);
    const b = r.body as Record<string, unknown[]>;
    expect(Object.keys(b)).toEqual(["prices", "market_caps", "total_volumes"]);
    for (const series of Object.values(b)) {
      expect(series).toHaveLength(count);
      expect(series.every(isPoint)).toBe(true);
    }
    const ts = (b.prices as Array<[number, number]>).map((p) => p[0]);
    expect(ts.at(-1)).toBe(NOW);
    expect(ts[0]).toBeGreaterThanOrEqual(NOW - days * DAY);
    for (let i = 0; i < ts.length - 1; i++) {
      expect((ts[i] as number) % step).toBe(0);
      if (i < ts.length - 2) expect((ts[i + 1] as number) - (ts[i] as number)).toBe(step);
    }
    expect((b.total_volumes as Array<[number, number]>).every((p) => p[1] > 0)).toBe(true);
  });

  it("market_chart interval=daily forces daily points at 00:00 UTC", async () => {
    const r = await getJson(`${cg}/coins/ethereum/market_chart?vs_currency=usd&days=30&interval=daily`);
    const prices = (r.body as { prices: Array<[number, number]> }).prices;
    expect(prices).toHaveLength(31);
    expect(prices.slice(0, -1).every((p) => p[0] % DAY === 0)).toBe(true);
  });

  it("market_chart beyond 365 days is CoinGecko's 401 error 10012", async () => {
    for (const days of ["366", "max"]) {
      const r = await getJson(`${cg}/coins/bitcoin/market_chart?vs_currency=usd&days=${days}`);
      expect(r.status).toBe(401);
      const status = (r.body as { error: { status: { error_code: number; error_message: string } } }).error.status;
      expect(status.error_code).toBe(10012);
      expect(status.error_message).toMatch(/limited to querying historical data within the past 365 days/);
    }
  });

  it("market_chart missing/invalid params are 400 JSON errors", async () => {
    for (const qs of ["days=1", "vs_currency=usd", "vs_currency=usd&days=abc", "vs_currency=usd&days=7&interval=weekly"]) {
      const r = await getJson(`${cg}/coins/bitcoin/market_chart?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(typeof (r.body as { error: unknown }).error).toBe("string");
    }
  });

  it("unknown paths are 404 JSON", async () => {
    const r = await getJson(`${sim.baseUrl}/nope`);
    expect(r.status).toBe(404);
    expect(r.headers.get("x-simulated")).toBe("true");
    const r2 = await getJson(`${cg}/coins`);
    expect(r2.status).toBe(404);
  });
});

describe("coingecko simulator: determinism", () => {
  const paths = [`/simple/price?ids=bitcoin,ethereum,solana&${SIMPLE_QS}`, `/coins/solana?${COIN_QS}`, `/coins/bitcoin/market_chart?vs_currency=usd&days=7`];

  it("same seed + fixed clock gives identical bodies; another seed differs", async () => {
    const twin = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
    const other = await startSimulator({ seed: 43, clock: fixedClock(NOW) });
    try {
      for (const path of paths) {
        const [a, b, c] = await Promise.all([cg, twin.urls.coingecko, other.urls.coingecko].map(async (base) => (await fetch(base + path)).text()));
        expect(b).toBe(a);
        expect(c).not.toBe(a);
      }
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });
});

describe("coingecko simulator: faults", () => {
  const ping = () => fetch(`${cg}/ping`);

  it("rate_limit: 429 with Retry-After once, then 200; requests are counted", async () => {
    sim.faults.clear();
    const before = sim.faults.requestCount("coingecko");
    sim.faults.inject("coingecko", { kind: "rate_limit", retryAfterSec: 30 });
    const first = await ping();
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("30");
    const body = (await first.json()) as { status: { error_code: number } };
    expect(body.status.error_code).toBe(429);
    const second = await ping();
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    expect(sim.faults.requestCount("coingecko") - before).toBe(2);
  });

  it("server_error: 503 by default, custom status, applied `times` times", async () => {
    sim.faults.inject("coingecko", { kind: "server_error" }, 2);
    sim.faults.inject("coingecko", { kind: "server_error", status: 502 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await ping();
      await r.arrayBuffer();
      statuses.push(r.status);
    }
    expect(statuses).toEqual([503, 503, 502, 200]);
  });

  it("malformed: 200 with an unparsable, truncated JSON body", async () => {
    sim.faults.inject("coingecko", { kind: "malformed" });
    const r = await fetch(`${cg}/simple/price?ids=bitcoin&${SIMPLE_QS}`);
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text.startsWith('{"bitcoin":')).toBe(true);
    expect(() => JSON.parse(text) as unknown).toThrow();
    const ok = await fetch(`${cg}/simple/price?ids=bitcoin&${SIMPLE_QS}`);
    expect(((await ok.json()) as Record<string, unknown>).bitcoin).toBeDefined();
  });

  it("timeout: holds the response for delayMs, then answers normally", async () => {
    sim.faults.inject("coingecko", { kind: "timeout", delayMs: 300 });
    const t0 = performance.now();
    const r = await ping();
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ gecko_says: "(V3) To the Moon!" });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(280);
  });

  it("timeout with an endless delay never answers (client gives up)", async () => {
    sim.faults.inject("coingecko", { kind: "timeout", delayMs: Infinity });
    await expect(fetch(`${cg}/ping`, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    const r = await ping();
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  });

  it("Infinity times keeps failing until cleared; faults are per venue", async () => {
    sim.faults.inject("coingecko", { kind: "server_error", status: 500 }, Infinity);
    sim.faults.inject("other-venue", { kind: "rate_limit", retryAfterSec: 1 });
    for (let i = 0; i < 3; i++) {
      const r = await ping();
      await r.arrayBuffer();
      expect(r.status).toBe(500);
    }
    sim.faults.clear("coingecko");
    const r = await ping();
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    expect(sim.faults.pending("other-venue")).toHaveLength(1);
    sim.faults.clear();
    expect(() => sim.faults.inject("coingecko", { kind: "malformed" }, 0)).toThrow(RangeError);
  });
});
