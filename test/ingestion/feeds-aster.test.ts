import { once } from "node:events";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AsterFeed } from "../../src/venues/aster/feed.js";
import { parseAsterAggTrades, parseAsterMessage } from "../../src/venues/aster/feed-parse.js";
import { AsterTradeBackfill } from "../../src/venues/aster/backfill.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { type RunningStub, startStub } from "../venues/perp-server.js";
import { sleep, waitFor, wsTestKit } from "../helpers/ws-server.js";

/*
 * Aster's feed: frame parsing on the documented frames (no live recording exists: src/venues/aster/fixtures/README.md),
 * the connection lifecycle against a local `ws` server, and the aggTrades backfill against a local HTTP stub.
 */

const FRAMES = fixtureText("aster/ws_frames_docs_example.ndjson").trim().split("\n");
const [AGG_TRADE, FORCE_ORDER, ACK, ERROR, MARK_PRICE] = FRAMES as [string, string, string, string, string];

const inst = (venueSymbol: string, base: string, multiplier = 1): FeedInstrument => ({ venueSymbol, base, multiplier, contractSize: 1 });
const BTC = inst("BTCUSDT", "BTC");
const lookupOf = (...list: FeedInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
const combined = (stream: string, payload: string) => `{"stream":"${stream}","data":${payload}}`;

describe("aster frames (docs examples)", () => {
  it("reads an aggTrade, raw or in the combined-stream wrapper: taker side from m, id = aggregate id a", () => {
    const want: Trade = { venue: "aster", base: "BTC", time: 123456785, price: 0.001, size: 100, side: "sell", id: "5933014" };
    expect(parseAsterMessage(AGG_TRADE, lookupOf(BTC))).toMatchObject({ trades: [want], liquidations: [] });
    const wrapped = parseAsterMessage(combined("btcusdt@aggTrade", AGG_TRADE), lookupOf(BTC));
    expect(wrapped.trades).toEqual([expect.objectContaining(want)]);
    expect(wrapped.error).toBeUndefined();
  });

  it("undoes a 1000× multiplier: the docs frame read as 1000PEPEUSDT", () => {
    const pepe = inst("1000PEPEUSDT", "PEPE", 1000);
    const [t] = parseAsterMessage(AGG_TRADE.replace('"s":"BTCUSDT"', '"s":"1000PEPEUSDT"'), lookupOf(pepe)).trades;
    expect(t).toMatchObject({ venue: "aster", base: "PEPE", price: 0.000001, size: 100_000 });
  });

  it("reads a forceOrder: SELL order = a long liquidated, filled size z at average price ap", () => {
    const want: Liquidation = { venue: "aster", base: "BTC", venueSymbol: "BTCUSDT", side: "long", price: 9910, size: 0.014, time: 1568014460893, valueUsd: 138.74 };
    expect(parseAsterMessage(combined("!forceOrder@arr", FORCE_ORDER), lookupOf(BTC)).liquidations).toEqual([expect.objectContaining(want)]);
    const buy = FORCE_ORDER.replace('"S":"SELL"', '"S":"BUY"');
    expect(parseAsterMessage(buy, lookupOf(BTC)).liquidations[0]).toMatchObject({ side: "short" });
  });

  it("skips unknown symbols, ignores other streams, reads the ack and the bare {code,msg} error", () => {
    expect(parseAsterMessage(AGG_TRADE, lookupOf())).toMatchObject({ trades: [], skipped: 1 });
    expect(parseAsterMessage(FORCE_ORDER, lookupOf())).toMatchObject({ liquidations: [], skipped: 1 });
    const mark = parseAsterMessage(MARK_PRICE, lookupOf(BTC));
    expect(mark).toMatchObject({ trades: [], liquidations: [] });
    expect(mark.error).toBeUndefined();
    expect(parseAsterMessage(ACK, lookupOf(BTC)).control).toEqual({ type: "ack" });
    expect(parseAsterMessage(ERROR, lookupOf(BTC)).control).toMatchObject({ type: "venue_error", message: expect.stringContaining("missing field") });
  });

  it("reports malformed frames without throwing, naming aster", () => {
    expect(parseAsterMessage("not json", lookupOf(BTC)).error).toMatch(/not JSON/);
    expect(parseAsterMessage("[1,2]", lookupOf(BTC)).error).toBe("aster frame is not an object");
    expect(parseAsterMessage(AGG_TRADE.replace('"a":5933014,', ""), lookupOf(BTC)).error).toMatch(/^aggTrade: a:/);
  });

  it("reads the documented REST aggTrades row under the aster key", () => {
    expect(parseAsterAggTrades(fixture("aster/aggTrades_docs_example.json"), BTC).trades).toEqual([
      expect.objectContaining({ venue: "aster", base: "BTC", id: "26129", price: 0.01633102, size: 4.70443515, time: 1498793709153, side: "sell" }),
    ]);
    expect(parseAsterAggTrades({ code: -1121, msg: "Invalid symbol." }, BTC).error).toBe("aster aggTrades body is not an array");
  });
});

const { cleanup, server: wsServer } = wsTestKit();

const source = (...list: FeedInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b), instruments: async () => list });
/** An aggTrade frame of the docs' layout at `T` with aggregate id `a` (the docs' own times are from 1970). */
const liveAggTrade = (a: number, T: number, s = "BTCUSDT") =>
  combined(`${s.toLowerCase()}@aggTrade`, AGG_TRADE.replace('"a":5933014', `"a":${a}`).replace('"T":123456785', `"T":${T}`).replace('"s":"BTCUSDT"', `"s":"${s}"`));

describe("aster feed lifecycle (local ws server)", () => {
  it("connects to /stream with every stream in the URL, SUBSCRIBEs later symbols, emits trades and liquidations, resubscribes after a drop", async () => {
    const srv = await wsServer((c) =>
      c.ws.on("message", (d: WebSocket.RawData) => {
        const m = JSON.parse(d.toString()) as { id: number };
        c.ws.send(JSON.stringify({ result: null, id: m.id }));
      }),
    );
    const feed = new AsterFeed({ baseUrl: srv.url, instruments: source(BTC, inst("ETHUSDT", "ETH")), backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("liquidations", (l) => liqs.push(...l));
    expect(await feed.subscribe(["btc", "NOPE"])).toEqual({ subscribed: ["BTC"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/stream?streams=!forceOrder@arr/btcusdt@aggTrade");
    await waitFor(() => feed.state().connected);
    await feed.subscribe(["ETH"]);
    await waitFor(() => c1.received.length >= 1);
    expect(JSON.parse(c1.received[0]!)).toMatchObject({ method: "SUBSCRIBE", params: ["ethusdt@aggTrade"] });
    const now = Date.now();
    c1.ws.send(liveAggTrade(1, now));
    c1.ws.send(combined("!forceOrder@arr", FORCE_ORDER.replace(/"T":1568014460893/, `"T":${now}`)));
    await waitFor(() => trades.length === 1 && liqs.length === 1);
    expect(trades[0]).toMatchObject({ venue: "aster", id: "1", side: "sell" });
    expect(liqs[0]).toMatchObject({ venue: "aster", side: "long" });
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    expect(c2.url).toBe("/stream?streams=!forceOrder@arr/btcusdt@aggTrade/ethusdt@aggTrade");
    await waitFor(() => feed.state().connected);
    expect(feed.state().reconnects).toBeGreaterThanOrEqual(1);
  });

  it("answers the server's keepalive ping frames with pongs and sends no client heartbeat", async () => {
    const srv = await wsServer();
    const feed = new AsterFeed({ baseUrl: srv.url, instruments: source(BTC) });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    await waitFor(() => c.ws.readyState === WebSocket.OPEN);
    const pong = once(c.ws, "pong");
    c.ws.ping("keepalive");
    const [data] = (await pong) as [Buffer];
    expect(data.toString()).toBe("keepalive");
    await sleep(50);
    expect(c.received).toEqual([]);
  });

  it("reconnects a silent connection after staleMs", async () => {
    const srv = await wsServer();
    const feed = new AsterFeed({ baseUrl: srv.url, instruments: source(BTC), staleMs: 100, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    await waitFor(() => srv.conns.length >= 2, 2_000);
    expect(srv.conns[1]!.url).toBe(srv.conns[0]!.url);
  });
});

describe("aster aggTrades backfill (local HTTP stub)", () => {
  const T0 = 1_700_000_000_000;
  const HOUR = 3_600_000;
  /** A synthetic tape in the docs' row layout: one trade every `stepMs` from T0, ids from 1. */
  const tape = (count: number, stepMs: number) =>
    Array.from({ length: count }, (_, i) => ({ a: i + 1, p: (65000 + i).toFixed(1), q: "0.010", f: 2 * i, l: 2 * i, T: T0 + i * stepMs, m: i % 3 === 0 }));

  async function stub(rows: ReturnType<typeof tape>): Promise<RunningStub> {
    const s = await startStub({
      "GET /fapi/v1/aggTrades": (req) => {
        const q = req.query as Record<string, string>;
        const limit = Number(q.limit ?? 500);
        if (q.startTime !== undefined && q.endTime !== undefined && Number(q.endTime) - Number(q.startTime) >= HOUR)
          return { status: 400, body: { code: -1127, msg: "More than 1 hours between startTime and endTime." } };
        const out = q.fromId !== undefined ? rows.filter((r) => r.a >= Number(q.fromId)) : rows.filter((r) => r.T >= Number(q.startTime) && r.T <= Number(q.endTime));
        return { body: out.slice(0, limit) };
      },
    });
    cleanup(() => s.close());
    return s;
  }
  const opts = (url: string) => ({ baseUrl: url, instruments: source(BTC), timeoutMs: 2_000, retries: 0 });

  it("walks windows under one hour, then continues by fromId after a full page; trades keyed aster", async () => {
    const sparse = await stub(tape(300, 30_000));
    const r = await new AsterTradeBackfill(opts(sparse.url)).fetchTrades("BTC", T0, T0 + 2 * HOUR);
    expect(r.complete).toBe(true);
    expect(r.trades).toHaveLength(240);
    expect(r.trades[0]).toMatchObject({ venue: "aster", id: "1", side: "sell" });
    expect(sparse.calls[0]).toBe(`GET /fapi/v1/aggTrades?symbol=BTCUSDT&startTime=${T0}&endTime=${T0 + HOUR - 1}&limit=1000`);
    const dense = await stub(tape(2500, 100));
    const d = await new AsterTradeBackfill(opts(dense.url)).fetchTrades("BTC", T0, T0 + 200_000);
    expect(d.complete).toBe(true);
    expect(new Set(d.trades.map((t) => t.id)).size).toBe(2000);
    expect(dense.calls[1]).toBe("GET /fapi/v1/aggTrades?symbol=BTCUSDT&fromId=1001&limit=1000");
  });
});
