import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService } from "../../src/service.js";
import { startSimulator } from "../../src/sim/server.js";
import { STREAM_VENUES, type Trade } from "../../src/ingestion/types.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` passes or `ms` elapse. */
async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(100);
  }
}

describe("CVD and liquidations from the simulator's streams (payments off)", () => {
  let s: FreeStack;
  const get = (path: string) => s.get(path);
  beforeAll(async () => {
    s = await startFreeStack({ STREAM_WARMUP_SEC: "1", STREAM_MAX_ON_DEMAND: "2" });
    await until(() => (s.service.ctx.ingestion?.activeConnections() ?? 0) >= STREAM_VENUES.length);
  });
  afterAll(() => s?.close());

  it("streams the pre-subscribed symbols from every stream venue", { timeout: 60_000 }, async () => {
    // Aster trades BTC about a hundredth of Binance's volume: its first simulated trade can take several seconds.
    await until(async () => Object.keys((await get("/cvd/BTC")).body.exchanges ?? {}).length === STREAM_VENUES.length, 40_000);
    const { status, body } = await get("/cvd/BTC?period=1h");
    expect(status).toBe(200);
    expect(body.active_ws_connections).toBeGreaterThanOrEqual(STREAM_VENUES.length);
    const venues = Object.values(body.exchanges) as Array<{ cvd: number; buy_volume: number; sell_volume: number }>;
    expect(venues.reduce((a, v) => a + v.buy_volume, 0)).toBeCloseTo(body.buy_volume, 4);
    for (const v of venues) expect(v.cvd).toBeCloseTo(v.buy_volume - v.sell_volume, 4);
    const pct = (body.period_cvd / (body.buy_volume + body.sell_volume)) * 100;
    expect(body.signal).toBe(
      pct > 15 ? "strong_bullish_pressure" : pct >= 5 ? "bullish_pressure" : pct > -5 ? "neutral" : pct >= -15 ? "bearish_pressure" : "strong_bearish_pressure",
    );
    const status2 = await get("/api/v1/status");
    expect(status2.body.streams.map((f: { venue: string; connected: boolean }) => [f.venue, f.connected])).toEqual(STREAM_VENUES.map((v) => [v, true]));
  });

  it("answers a new symbol with the warm-up body (202, Retry-After 10), then with data", async () => {
    const first = await get("/cvd/WIF");
    expect(first.status).toBe(202);
    expect(first.headers.get("retry-after")).toBe("10");
    expect(first.body).toEqual({ symbol: "WIF", status: "warming_up", message: expect.stringContaining("retry in 10 seconds") });
    expect(first.headers.get("x-cache")).toBeNull();
    await sleep(1200);
    const ready = await get("/cvd/WIF");
    expect(ready.status).toBe(200);
    expect(ready.body.symbol).toBe("WIF");
  });

  it("bounds on-demand symbols, evicting the least recently requested", async () => {
    await get("/cvd/TIA");
    await get("/cvd/SEI");
    const m = s.service.ctx.ingestion!;
    expect(m.onDemandCount).toBe(2);
    expect(m.subscribedBases()).not.toContain("WIF");
    expect(m.subscribedBases()).toEqual(expect.arrayContaining(["TIA", "SEI", "BTC", "ARB"]));
  });

  it("is a 404 for symbols no venue lists", async () => {
    expect((await get("/cvd/NOTAPERP")).status).toBe(404);
  });

  it("serves bucketed history per the spec's period table", async () => {
    const { body } = await get("/cvd/history/ETH?period=4h");
    expect(body.bucket_size).toBe("15 minutes");
    expect(body.data_points).toBe(body.history.length);
    for (const p of body.history) {
      expect(p.timestamp).toMatch(/\.\d{3}Z$/);
      expect(Date.parse(p.timestamp) % (15 * 60_000)).toBe(0);
      expect(p.cvd_delta).toBeCloseTo(p.buy_volume - p.sell_volume, 4);
    }
    expect((await get("/cvd/history/ETH")).body.bucket_size).toBe("1 hour");
  });

  it("serves recent liquidations in the spec's shape with stats and per-venue coverage", async () => {
    const now = Date.now();
    s.service.ctx.ingestion!.liquidations.add([
      { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: now - 1000, side: "long", price: 50_000, size: 0.5, valueUsd: 25_000 },
      { venue: "bybit", base: "ETH", venueSymbol: "ETHUSDT", time: now - 500, side: "short", price: 1_300, size: 10, valueUsd: 13_000 },
    ]);
    const { body } = await get("/liquidation/recent?limit=1000");
    const mine = body.events.filter((e: { value_usd: number }) => e.value_usd === 25_000 || e.value_usd === 13_000);
    expect(mine[0]).toMatchObject({ symbol: "ETHUSDT", side: "short", exchange: "BYBIT" });
    expect(mine[1]).toMatchObject({ symbol: "BTCUSDT", side: "long", exchange: "BINANCE", size: 0.5, price: 50_000 });
    expect(mine[1].id).toMatch(/^liq_\d+_\d+$/);
    expect(body.stats.last_1h.total_events).toBeGreaterThanOrEqual(2);
    expect(body.coverage.binance.feed).toContain("one liquidation per symbol per second");
    expect(body.coverage.hyperliquid.feed).toBe("no public liquidation feed");
    const filtered = await get("/liquidation/recent?symbol=ETHUSDT");
    expect(filtered.body.events.every((e: { symbol: string }) => e.symbol === "ETHUSDT")).toBe(true);
    expect(filtered.body.symbol_filter).toBe("ETHUSDT");
  });
});

describe("a dropped connection is backfilled from REST with no hole", () => {
  let s: FreeStack;
  const counted: Trade[] = [];
  beforeAll(async () => {
    s = await startFreeStack({ STREAMS: "on" });
    const m = s.service.ctx.ingestion!;
    const add = m.cvd.add.bind(m.cvd);
    m.cvd.add = (trades) => {
      const n = add(trades);
      counted.push(...trades.filter((t) => t.venue === "binance" && t.base === "BTC"));
      return n;
    };
    await until(() => counted.length > 0);
  });
  afterAll(() => s?.close());

  it("counts exactly the tape's trades across the drop", async () => {
    const m = s.service.ctx.ingestion!;
    // Enough trades on both sides of the drop, however slowly a loaded machine runs.
    await until(() => counted.length >= 8);
    const beforeDrop = counted.length;
    s.sim.wsFaults.drop("binance");
    await sleep(2500); // reconnect (1 s backoff) + backfill
    await until(() => m.backfillCount > 0);
    await until(() => counted.length >= beforeDrop + 8);
    await sleep(800);
    const ids = new Map(counted.map((t) => [t.id, t]));
    const times = [...ids.values()].map((t) => t.time).sort((a, b) => a - b);
    const from = times[0]!;
    const to = times[times.length - 1]! - 500; // leave the last half second (still in flight)
    const tape = s.sim.tape.trades("binance", "BTC", from, to);
    expect(tape.length).toBeGreaterThan(5);
    const got = [...ids.values()]
      .filter((t) => t.time >= from && t.time < to)
      .map((t) => t.id)
      .sort();
    expect(got).toEqual(tape.map((t) => t.id).sort());
    // counted once each
    expect(counted.filter((t) => t.time >= from && t.time < to).length).toBeGreaterThanOrEqual(got.length);
  });
});

describe("CVD history survives a restart", () => {
  it("reads back identical history from SQLite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "marketgate-cvd-"));
    const sim = await startSimulator();
    const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), DATA_DIR: dir });
    const a = await createService({ config });
    const la = await a.listen();
    await until(() => (a.ctx.ingestion?.cvd.cumulative("BTC").total.trades ?? 0) > 10);
    const now = Date.now();
    const before = a.ctx.ingestion!.cvd.history("BTC", now - 3_600_000, now + 1, 5 * 60_000);
    await la.close();
    const b = await createService({ config }); // not listening: no new trades
    const after = b.ctx.ingestion!.cvd.history("BTC", now - 3_600_000, now + 1, 5 * 60_000);
    // Every completed bucket reads back exactly; the current one may have grown until the first service stopped.
    const row = (p: (typeof before)[number]) => [p.start, p.buyUsd, p.sellUsd, p.buyBase, p.sellBase, p.trades, p.missing];
    expect(after.slice(0, -1).map(row)).toEqual(before.slice(0, -1).map(row));
    expect(after.at(-1)!.trades).toBeGreaterThanOrEqual(before.at(-1)!.trades);
    await b.stopIngestion();
    await sim.close();
  });
});

describe("the warm-up is never charged", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ env: { STREAM_WARMUP_SEC: "60" } });
  });
  afterAll(() => stack?.close());

  it("answers 202 without asking for payment", async () => {
    const res = await fetch(`${stack.url}/cvd/INJ`);
    expect(res.status).toBe(202);
    expect(res.headers.get("payment-required")).toBeNull();
    expect((await json(res)).status).toBe("warming_up");
    const ready = await fetch(`${stack.url}/cvd/BTC`);
    expect(ready.status).toBe(402);
  });
});
