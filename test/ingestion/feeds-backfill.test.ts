import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.js";
import { BinanceTradeBackfill } from "../../src/venues/binance/backfill.js";
import { BybitTradeBackfill } from "../../src/venues/bybit/backfill.js";
import { HyperliquidTradeBackfill } from "../../src/venues/hyperliquid/backfill.js";
import { OkxTradeBackfill } from "../../src/venues/okx/backfill.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { fixture } from "../helpers/fixtures.js";
import { type RunningStub, startStub, type StubRoute } from "../venues/perp-server.js";

/*
 * REST trade backfills against a local HTTP stub that implements each venue's paging rules over a
 * synthetic tape (row shapes as in the recorded fixtures).
 */

const stubs: RunningStub[] = [];
afterEach(async () => {
  for (const s of stubs.splice(0)) await s.close();
});
async function stub(routes: Record<string, StubRoute>): Promise<RunningStub> {
  const s = await startStub(routes);
  stubs.push(s);
  return s;
}

const source = (...list: FeedInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b) });
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const opts = (url: string, venueInst: FeedInstrument, extra: object = {}) => ({ baseUrl: url, instruments: source(venueInst), timeoutMs: 2_000, retries: 0, ...extra });

/** A Binance aggTrades tape: one trade every `stepMs` from T0, ids from 1. */
function binanceTape(count: number, stepMs: number) {
  return Array.from({ length: count }, (_, i) => ({ a: i + 1, p: (65000 + i).toFixed(1), q: "0.010", f: 2 * i, l: 2 * i, T: T0 + i * stepMs, m: i % 3 === 0 }));
}
function binanceRoute(tape: ReturnType<typeof binanceTape>, failAfter = Infinity): StubRoute {
  let n = 0;
  return (req) => {
    if (++n > failAfter) return { status: 400, body: { code: -1100, msg: "bad" } };
    const q = req.query as Record<string, string>;
    const limit = Number(q.limit ?? 500);
    if (q.startTime !== undefined && q.endTime !== undefined && Number(q.endTime) - Number(q.startTime) > HOUR)
      return { status: 400, body: { code: -1127, msg: "More than 1 hours between startTime and endTime." } };
    const rows = q.fromId !== undefined ? tape.filter((r) => r.a >= Number(q.fromId)) : tape.filter((r) => r.T >= Number(q.startTime) && r.T <= Number(q.endTime));
    return { body: rows.slice(0, limit) };
  };
}

describe("binance aggTrades backfill", () => {
  const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 };

  it("walks one-hour windows over a sparse interval and reports it complete", async () => {
    const tape = binanceTape(300, 30_000); // 2.5 h
    const s = await stub({ "GET /fapi/v1/aggTrades": binanceRoute(tape) });
    const bf = new BinanceTradeBackfill(opts(s.url, btc));
    const from = T0 + 60_000;
    const to = T0 + 2.4 * HOUR;
    const r = await bf.fetchTrades("btc", from, to);
    expect(r.complete).toBe(true);
    expect(r.trades.map((t) => t.id)).toEqual(tape.filter((x) => x.T >= from && x.T < to).map((x) => String(x.a)));
    expect(r.trades[0]).toMatchObject({ venue: "binance", base: "BTC", size: 0.01, side: "buy" });
    expect(s.calls).toHaveLength(3);
    expect(s.calls[0]).toBe(`GET /fapi/v1/aggTrades?symbol=BTCUSDT&startTime=${from}&endTime=${from + HOUR - 1}&limit=1000`);
  });

  it("continues by fromId after a full page and stays exact in dense intervals", async () => {
    const tape = binanceTape(2500, 100);
    const s = await stub({ "GET /fapi/v1/aggTrades": binanceRoute(tape) });
    const bf = new BinanceTradeBackfill(opts(s.url, btc));
    const r = await bf.fetchTrades("BTC", T0, T0 + 200_000);
    expect(r.complete).toBe(true);
    expect(r.trades).toHaveLength(2000);
    expect(new Set(r.trades.map((t) => t.id)).size).toBe(2000);
    expect(s.calls[1]).toBe("GET /fapi/v1/aggTrades?symbol=BTCUSDT&fromId=1001&limit=1000");
    expect(s.calls).toHaveLength(3);
  });

  it("is incomplete when maxPages runs out or a later page fails; the first failure throws", async () => {
    const tape = binanceTape(2500, 100);
    const s = await stub({ "GET /fapi/v1/aggTrades": binanceRoute(tape) });
    const capped = await new BinanceTradeBackfill(opts(s.url, btc, { maxPages: 2 })).fetchTrades("BTC", T0, T0 + 250_000);
    expect(capped).toMatchObject({ complete: false });
    expect(capped.trades).toHaveLength(2000);
    const s2 = await stub({ "GET /fapi/v1/aggTrades": binanceRoute(tape, 1) });
    const partial = await new BinanceTradeBackfill(opts(s2.url, btc)).fetchTrades("BTC", T0, T0 + 250_000);
    expect(partial.complete).toBe(false);
    expect(partial.trades).toHaveLength(1000);
    const s3 = await stub({ "GET /fapi/v1/aggTrades": binanceRoute(tape, 0) });
    await expect(new BinanceTradeBackfill(opts(s3.url, btc)).fetchTrades("BTC", T0, T0 + 1000)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    await expect(new BinanceTradeBackfill(opts(s3.url, btc)).fetchTrades("DOGE", T0, T0 + 1000)).rejects.toBeInstanceOf(AppError);
    expect(await new BinanceTradeBackfill(opts(s3.url, btc)).fetchTrades("BTC", T0, T0)).toEqual({ trades: [], complete: true });
  });

  it("parses the recorded aggTrades body through the REST path", async () => {
    const s = await stub({ "GET /fapi/v1/aggTrades": () => ({ body: fixture("binance/binance_rest_aggTrades_BTCUSDT_2021-10-22.json") }) });
    const r = await new BinanceTradeBackfill(opts(s.url, btc)).fetchTrades("BTC", 1634944096000, 1634944099000);
    expect(r.trades).toHaveLength(10);
    expect(r.complete).toBe(true);
  });
});

describe("bybit recent-trade backfill", () => {
  const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 };
  const rows = Array.from({ length: 50 }, (_, i) => ({
    execId: `e${i}`,
    symbol: "BTCUSDT",
    price: "65114.20",
    size: "0.004",
    side: i % 2 ? "Buy" : "Sell",
    time: String(T0 + (49 - i) * 1000),
    isBlockTrade: false,
  }));

  it("keeps trades in range; complete only when the oldest trade predates `from`", async () => {
    const s = await stub({ "GET /v5/market/recent-trade": () => ({ body: { retCode: 0, retMsg: "OK", result: { category: "linear", list: rows }, time: T0 } }) });
    const bf = new BybitTradeBackfill(opts(s.url, btc));
    const ok = await bf.fetchTrades("BTC", T0 + 10_000, T0 + 20_000);
    expect(ok.complete).toBe(true);
    expect(ok.trades.map((t) => t.time)).toEqual(Array.from({ length: 10 }, (_, i) => T0 + 10_000 + i * 1000));
    expect(s.calls[0]).toBe("GET /v5/market/recent-trade?category=linear&symbol=BTCUSDT&limit=1000");
    const older = await bf.fetchTrades("BTC", T0 - 5_000, T0 + 20_000);
    expect(older.complete).toBe(false);
    expect(older.trades).toHaveLength(20);
  });
});

describe("okx history-trades backfill", () => {
  const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTC-USDT-SWAP", multiplier: 1, contractSize: 0.01 };
  // 250 trades, 4 per millisecond, ids 1000..1249; newest first like OKX
  const tape = Array.from({ length: 250 }, (_, i) => ({
    instId: "BTC-USDT-SWAP",
    tradeId: String(1000 + i),
    px: "65000.5",
    sz: "3",
    side: i % 2 ? "buy" : "sell",
    ts: String(T0 + Math.floor(i / 4)),
    source: "0",
  })).reverse();
  const route: StubRoute = (req) => {
    const q = req.query as Record<string, string>;
    const rows = q.type === "2" ? tape.filter((r) => Number(r.ts) < Number(q.after)) : tape.filter((r) => Number(r.tradeId) < Number(q.after));
    return { body: { code: "0", msg: "", data: rows.slice(0, Number(q.limit)) } };
  };

  it("pages by time then by trade id back to `from`, converting contracts × ctVal", async () => {
    const s = await stub({ "GET /api/v5/market/history-trades": route });
    const bf = new OkxTradeBackfill(opts(s.url, btc));
    const r = await bf.fetchTrades("BTC", T0 + 10, T0 + 60);
    expect(r.complete).toBe(true);
    expect(r.trades).toHaveLength(200);
    expect(r.trades[0]).toMatchObject({ venue: "okx", base: "BTC", time: T0 + 10, size: 0.03, price: 65000.5 });
    expect(r.trades.at(-1)!.time).toBe(T0 + 59);
    expect(s.calls).toEqual([
      `GET /api/v5/market/history-trades?instId=BTC-USDT-SWAP&type=2&after=${T0 + 60}&limit=100`,
      "GET /api/v5/market/history-trades?instId=BTC-USDT-SWAP&type=1&after=1140&limit=100",
      "GET /api/v5/market/history-trades?instId=BTC-USDT-SWAP&type=1&after=1040&limit=100",
    ]);
  });

  it("is complete at the end of the history and incomplete when pages run out", async () => {
    const s = await stub({ "GET /api/v5/market/history-trades": route });
    expect((await new OkxTradeBackfill(opts(s.url, btc)).fetchTrades("BTC", T0 - 1000, T0 + 100)).complete).toBe(true);
    expect((await new OkxTradeBackfill(opts(s.url, btc, { maxPages: 1 })).fetchTrades("BTC", T0, T0 + 100)).complete).toBe(false);
  });
});

describe("hyperliquid recentTrades backfill", () => {
  const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTC", multiplier: 1, contractSize: 1 };

  it("POSTs recentTrades and is complete only when it reaches back to `from`", async () => {
    const rows = (fixture("hyperliquid/DERIVED_multiplier_frames.json") as { hyperliquid_kPEPE_trades: { data: object[] } }).hyperliquid_kPEPE_trades.data;
    const body = [1730160007572, 1730160007000, 1730160006192].map((time, i) => ({ ...rows[0], coin: "BTC", side: i ? "A" : "B", px: "69997.0", sz: "0.5", time, tid: 100 + i }));
    const s = await stub({ "POST /info": () => ({ body }) });
    const bf = new HyperliquidTradeBackfill(opts(s.url, btc));
    const r = await bf.fetchTrades("BTC", 1730160006500, 1730160008000);
    expect(r).toMatchObject({ complete: true });
    expect(r.trades.map((t) => [t.time, t.side, t.id])).toEqual([
      [1730160007000, "sell", "101"],
      [1730160007572, "buy", "100"],
    ]);
    expect(s.calls[0]).toBe('POST /info {"type":"recentTrades","coin":"BTC"}');
    expect((await bf.fetchTrades("BTC", 1730160006192, 1730160008000)).complete).toBe(false);
  });
});
