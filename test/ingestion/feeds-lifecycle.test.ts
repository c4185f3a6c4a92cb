import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { BinanceFeed } from "../../src/venues/binance/feed.js";
import { BybitFeed } from "../../src/venues/bybit/feed.js";
import type { VenueFeed } from "../../src/ingestion/feeds/feed-base.js";
import { HyperliquidFeed } from "../../src/venues/hyperliquid/feed.js";
import { FeedMetrics } from "../../src/ingestion/feeds/metrics.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { OkxFeed } from "../../src/venues/okx/feed.js";
import type { Liquidation, StreamGap, Trade } from "../../src/ingestion/types.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { sleep, startWsServer, waitFor, type WsConn, wsTestKit } from "../helpers/ws-server.js";

/*
 * Connection lifecycle of the venue feeds against a local `ws` server on port 0 (not the simulator):
 * subscribe/ack, resubscribe after drops, backoff, stale timer, gap events, heartbeats, rotation.
 */

const { cleanup, server } = wsTestKit();
function track<F extends VenueFeed>(feed: F): F {
  cleanup(() => feed.stop());
  return feed;
}

const inst = (venueSymbol: string, base: string, contractSize = 1): FeedInstrument => ({ venueSymbol, base, multiplier: 1, contractSize });
function source(list: FeedInstrument[]) {
  const byBase = new Map(list.map((i) => [i.base, i]));
  return { instrument: async (b: string) => byBase.get(b), instruments: async () => list };
}
const binanceInsts = source([inst("BTCUSDT", "BTC"), inst("ETHUSDT", "ETH"), inst("SOLUSDT", "SOL")]);
const bybitInsts = source([inst("BTCUSDT", "BTC"), inst("ETHUSDT", "ETH")]);

const aggTrade = (a: number, T: number, s = "BTCUSDT") =>
  JSON.stringify({ stream: `${s.toLowerCase()}@aggTrade`, data: { e: "aggTrade", E: T + 3, a, s, p: "65000.1", q: "0.01", f: a * 2, l: a * 2, T, m: a % 2 === 0 } });
const bybitTrade = (id: string, T: number) =>
  JSON.stringify({ topic: "publicTrade.BTCUSDT", type: "snapshot", ts: T + 1, data: [{ T, s: "BTCUSDT", S: "Buy", v: "0.004", p: "65114.20", L: "PlusTick", i: id, BT: false }] });

/** A Bybit-like server: acks subscribes, answers pings. */
function bybitServer(c: WsConn): void {
  c.ws.on("message", (d: WebSocket.RawData) => {
    const m = JSON.parse(d.toString()) as { op: string; req_id: string };
    if (m.op === "subscribe") c.ws.send(JSON.stringify({ success: true, ret_msg: "", conn_id: "t", req_id: m.req_id, op: "subscribe" }));
    if (m.op === "ping") c.ws.send(JSON.stringify({ success: true, ret_msg: "pong", conn_id: "t", req_id: m.req_id, op: "ping" }));
  });
}

describe("feed lifecycle (local ws server)", () => {
  it("bybit: subscribes on open in batches, acks, emits normalised trades, pings, reports state", async () => {
    const srv = await server(bybitServer);
    const feed = track(new BybitFeed({ baseUrl: srv.url, instruments: bybitInsts, heartbeatMs: 40 }));
    const trades: Trade[] = [];
    feed.on("trades", (t) => trades.push(...t));
    expect(await feed.subscribe(["btc", "ETH", "NOPE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    expect(c.url).toBe("/v5/public/linear");
    await waitFor(() => c.received.length >= 1);
    expect(JSON.parse(c.received[0]!)).toMatchObject({ op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.BTCUSDT", "publicTrade.ETHUSDT", "allLiquidation.ETHUSDT"] });
    // a real recorded frame
    c.ws.send(JSON.stringify(fixture("bybit/bybit_v5_ws_allLiquidation_PIPPINUSDT_2025-02-25.json") as object));
    c.ws.send(JSON.stringify(JSON.parse(readLine("bybit/bybit_v5_ws_linear_2026-08-09_excerpt.ndjson", 1))));
    await waitFor(() => trades.length === 1);
    expect(trades[0]).toMatchObject({ venue: "bybit", base: "BTC", side: "sell", size: 0.004, price: 65114.2 });
    await waitFor(() => c.received.filter((r) => (JSON.parse(r) as { op: string }).op === "ping").length >= 2);
    const st = feed.state();
    expect(st).toMatchObject({ venue: "bybit", connected: true, reconnects: 0, subscribedSymbols: 2 });
    expect(st.connectedSince).toBeTypeOf("number");
    expect(st.lastMessageAt).toBeGreaterThanOrEqual(st.connectedSince!);
    expect(st.lagMs).toBeGreaterThan(0);
    // live unsubscribe
    feed.unsubscribe(["ETH"]);
    await waitFor(() => c.received.some((r) => r.includes('"unsubscribe"')));
    expect(JSON.parse(c.received.find((r) => r.includes('"unsubscribe"'))!)).toMatchObject({ args: ["publicTrade.ETHUSDT", "allLiquidation.ETHUSDT"] });
    expect(feed.subscriptions()).toEqual(["BTC"]);
  });

  it("resubscribes after the server drops the connection and emits a gap from the last trade (made before its frame arrived) to the first new message", async () => {
    const srv = await server(bybitServer);
    const feed = track(new BybitFeed({ baseUrl: srv.url, instruments: bybitInsts, backoffMinMs: 30, backoffMaxMs: 60 }));
    const gaps: StreamGap[] = [];
    const trades: Trade[] = [];
    feed.on("gap", (g) => gaps.push(g));
    feed.on("trades", (t) => trades.push(...t));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    await waitFor(() => c1.received.length >= 1);
    // Made 500 ms before its frame arrives: a trade the venue made between them was never sent, so the gap opens
    // at the newest trade, not at the frame's arrival.
    const t1At = Date.now() - 500;
    c1.ws.send(bybitTrade("t1", t1At));
    await waitFor(() => trades.length === 1);
    const lastBefore = feed.state().lastMessageAt!;
    expect(lastBefore).toBeGreaterThan(t1At);
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => c2.received.length >= 1);
    expect(JSON.parse(c2.received[0]!)).toMatchObject({ op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.BTCUSDT"] });
    await waitFor(() => gaps.length === 1); // closed by the subscribe ack on the new connection
    expect(gaps[0]!.venue).toBe("bybit");
    expect(gaps[0]!.from).toBe(t1At);
    expect(gaps[0]!.to - lastBefore).toBeGreaterThanOrEqual(30);
    expect(gaps[0]!.to).toBe(feed.state().lastMessageAt);
    c2.ws.send(bybitTrade("t2", Date.now()));
    await waitFor(() => trades.length === 2);
    expect(feed.state()).toMatchObject({ connected: true, reconnects: 1 });
    expect(gaps).toHaveLength(1);
  });

  it("backs off exponentially (capped) while connections fail and resets after the first good message", async () => {
    let good = false;
    const srv = await server((c) => {
      if (good) c.ws.send(JSON.stringify({ success: true, ret_msg: "", op: "subscribe" }));
      else c.ws.close();
    });
    const feed = track(new BybitFeed({ baseUrl: srv.url, instruments: bybitInsts, backoffMinMs: 40, backoffMaxMs: 200, random: () => 1, heartbeatMs: 0 }));
    feed.start();
    await waitFor(() => srv.conns.length >= 5, 5_000);
    good = true;
    const at = srv.conns.slice(0, 5).map((c) => c.openedAt);
    const intervals = at.slice(1).map((t, i) => t - at[i]!);
    const expected = [40, 80, 160, 200];
    intervals.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(expected[i]! - 5);
      expect(ms).toBeLessThan(expected[i]! + 150);
    });
    const ok = await waitFor(() => srv.conns.find((c) => !c.closed && c.openedAt > at[4]!), 5_000);
    await waitFor(() => feed.state().lastMessageAt !== null);
    const droppedAt = Date.now();
    ok.ws.close();
    const next = await waitFor(() => srv.conns.find((c) => c.openedAt >= droppedAt));
    expect(next.openedAt - droppedAt).toBeLessThan(150); // back to 40 ms, not 200
  });

  it("terminates a silent connection after staleMs (the legacy-path symptom) and reconnects with the streams in the URL", async () => {
    const srv = await server(); // handshakes, never sends
    const gaps: StreamGap[] = [];
    const feed = track(new BinanceFeed({ baseUrl: srv.url, instruments: binanceInsts, staleMs: 120, heartbeatMs: 0, backoffMinMs: 10, backoffMaxMs: 20 }));
    feed.on("gap", (g) => gaps.push(g));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/market/stream?streams=!forceOrder@arr/btcusdt@aggTrade");
    const c2 = await waitFor(() => srv.conns[1]);
    expect(c1.closed).toBe(true);
    expect(c2.openedAt - c1.openedAt).toBeGreaterThanOrEqual(120);
    expect(c2.url).toBe(c1.url);
    expect(feed.state().reconnects).toBeGreaterThanOrEqual(1);
    expect(gaps).toEqual([]); // nothing was ever received: no gap to report
  });

  it("binance: live SUBSCRIBE/UNSUBSCRIBE, all-market liquidations of known instruments, resubscribe via the URL", async () => {
    const srv = await server((c) =>
      c.ws.on("message", (d: WebSocket.RawData) => {
        const m = JSON.parse(d.toString()) as { id: number };
        c.ws.send(JSON.stringify({ result: null, id: m.id }));
      }),
    );
    const feed = track(new BinanceFeed({ baseUrl: srv.url, instruments: binanceInsts, heartbeatMs: 0, backoffMinMs: 10 }));
    const liqs: Liquidation[] = [];
    feed.on("liquidations", (l) => liqs.push(...l));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    await waitFor(() => feed.state().connected);
    await feed.subscribe(["ETH"]);
    feed.unsubscribe(["BTC"]);
    await waitFor(() => c1.received.length >= 2);
    expect(c1.received.map((r) => JSON.parse(r) as object)).toMatchObject([
      { method: "SUBSCRIBE", params: ["ethusdt@aggTrade"] },
      { method: "UNSUBSCRIBE", params: ["btcusdt@aggTrade"] },
    ]);
    // SOL is not subscribed but listed: its liquidation is kept; an unlisted symbol is dropped
    const force = fixture("binance/binance_usdm_ws_forceOrder_BTCUSDT_2020-03-13.json") as { data: { o: { s: string } } };
    c1.ws.send(JSON.stringify({ ...force, data: { ...force.data, o: { ...force.data.o, s: "XYZUSDT" } } }));
    const sol = JSON.stringify({ ...force, data: { ...force.data, o: { ...force.data.o, s: "SOLUSDT" } } });
    c1.ws.send(sol);
    c1.ws.send(sol); // an identical repeat (overlapping snapshots) is dropped
    c1.ws.send(aggTrade(7, Date.now(), "ETHUSDT"));
    await waitFor(() => feed.state().lagMs !== null);
    expect(liqs).toHaveLength(1);
    expect(liqs[0]).toMatchObject({ base: "SOL", venueSymbol: "SOLUSDT", side: "short" });
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    expect(c2.url).toBe("/market/stream?streams=!forceOrder@arr/ethusdt@aggTrade");
  });

  it("binance: rotates make-before-break (no gap, no duplicate trades, old connection closed)", async () => {
    const srv = await server();
    const metrics = new FeedMetrics(new Registry());
    const feed = track(new BinanceFeed({ baseUrl: srv.url, instruments: binanceInsts, rotateAfterMs: 150, heartbeatMs: 0, metrics }));
    const trades: Trade[] = [];
    const gaps: StreamGap[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("gap", (g) => gaps.push(g));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    const t0 = Date.now();
    c1.ws.send(aggTrade(1, t0));
    await waitFor(() => trades.length === 1);
    const since1 = feed.state().connectedSince!;
    const c2 = await waitFor(() => srv.conns[1]);
    expect(c2.openedAt - c1.openedAt).toBeGreaterThanOrEqual(145);
    expect(c2.url).toBe(c1.url);
    // the old connection still serves until the new one delivers
    c1.ws.send(aggTrade(2, t0 + 1));
    await waitFor(() => trades.length === 2);
    expect(c1.closed).toBe(false);
    c2.ws.send(aggTrade(2, t0 + 1)); // overlap: already delivered by the old connection
    c2.ws.send(aggTrade(3, t0 + 2));
    await waitFor(() => trades.length === 3);
    await waitFor(() => c1.closed);
    expect(trades.map((t) => t.id)).toEqual(["1", "2", "3"]);
    expect(gaps).toEqual([]);
    const st = feed.state();
    expect(st.reconnects).toBe(0);
    expect(st.connected).toBe(true);
    expect(st.connectedSince).toBeGreaterThan(since1);
    expect((await metrics.rotations.get()).values[0]?.value).toBe(1);
  });

  it("drops replays within replayGuardMs: trades at or before the latest time emitted before the frame, several ids in one millisecond", async () => {
    const srv = await server(bybitServer);
    const feed = track(new BybitFeed({ baseUrl: srv.url, instruments: bybitInsts }));
    const batches: Trade[][] = [];
    feed.on("trades", (t) => batches.push(t));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    const T = Date.now();
    const row = (i: string, t: number, s = "BTCUSDT") => ({ T: t, s, S: "Buy", v: "0.004", p: "65114.20", L: "PlusTick", i, BT: false });
    const send = (rows: object[]) => c.ws.send(JSON.stringify({ topic: "publicTrade.BTCUSDT", type: "snapshot", ts: T, data: rows }));
    send([row("a", T), row("b", T), row("c", T)]);
    await waitFor(() => batches.length === 1);
    // A snapshot replayed: a, b and an older trade are dropped; d (same millisecond) and e are new.
    send([row("a", T), row("z", T - 1), row("d", T), row("b", T), row("e", T + 1)]);
    await waitFor(() => batches.length === 2);
    send([row("d", T + 1), row("e", T + 1), row("f", T + 2)]); // d is new at T + 1: ids are per millisecond
    await waitFor(() => batches.length === 3);
    // Newest first in one frame (Bitget's order): each is judged against the watermark before the frame, so h
    // does not shadow g; a repeat of f (the watermark before the frame) is still dropped.
    send([row("h", T + 5), row("g", T + 4), row("f", T + 2)]);
    await waitFor(() => batches.length === 4);
    expect(batches.map((b) => b.map((t) => t.id))).toEqual([
      ["a", "b", "c"],
      ["d", "e"],
      ["d", "f"],
      ["h", "g"],
    ]);
  });

  it("okx: subscribes liquidations + trades on open, pings only when idle, rotates on the upgrade notice", async () => {
    const srv = await server((c) => c.ws.on("message", (d: WebSocket.RawData) => d.toString() === "ping" && c.ws.send("pong")));
    const feed = track(new OkxFeed({ baseUrl: srv.url, instruments: source([inst("BTC-USDT-SWAP", "BTC", 0.01), inst("ETH-USDT-SWAP", "ETH", 0.1)]), heartbeatMs: 60 }));
    const liqs: Liquidation[] = [];
    const trades: Trade[] = [];
    feed.on("liquidations", (l) => liqs.push(...l));
    feed.on("trades", (t) => trades.push(...t));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/ws/v5/public");
    await waitFor(() => c1.received.length >= 1);
    expect(JSON.parse(c1.received[0]!)).toEqual({
      op: "subscribe",
      args: [
        { channel: "liquidation-orders", instType: "SWAP" },
        { channel: "trades", instId: "BTC-USDT-SWAP" },
      ],
    });
    const pings = () => c1.received.filter((r) => r === "ping").length;
    await waitFor(() => pings() >= 2);
    // while traffic flows, no ping is sent
    const real = fixture("okx/okx_v5_ws_trades_BTC-USDT-SWAP_2021-12-22.json");
    await sleep(70);
    const before = pings();
    for (let i = 0; i < 10; i++) {
      c1.ws.send(JSON.stringify(real));
      await sleep(20);
    }
    expect(pings()).toBeLessThanOrEqual(before + 1);
    expect(trades.length).toBeGreaterThanOrEqual(1);
    expect(trades[0]).toMatchObject({ base: "BTC", size: 0.05 });
    // all-swap liquidations: ETH is listed (instruments()) though not subscribed
    c1.ws.send(
      JSON.stringify({
        arg: { channel: "liquidation-orders", instType: "SWAP" },
        data: [{ instId: "ETH-USDT-SWAP", details: [{ bkPx: "3000", sz: "2", side: "sell", posSide: "long", ts: "1700000000000" }] }],
      }),
    );
    await waitFor(() => liqs.length === 1);
    expect(liqs[0]).toMatchObject({ base: "ETH", side: "long", size: 0.2, valueUsd: 600 });
    // service-upgrade notice → a second connection, the first closed once the second delivers
    c1.ws.send(JSON.stringify({ event: "notice", code: "64008", msg: "The connection will soon be closed for a service upgrade.", connId: "x" }));
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => c2.received.length >= 1);
    expect(c1.closed).toBe(false);
    c2.ws.send(JSON.stringify({ event: "subscribe", arg: { channel: "trades", instId: "BTC-USDT-SWAP" }, connId: "y" }));
    await waitFor(() => c1.closed);
    expect(feed.state()).toMatchObject({ connected: true, reconnects: 0 });
  });

  it("hyperliquid: one subscription per coin and a JSON ping every heartbeatMs", async () => {
    const srv = await server((c) =>
      c.ws.on("message", (d: WebSocket.RawData) => {
        const m = JSON.parse(d.toString()) as { method: string };
        c.ws.send(JSON.stringify(m.method === "ping" ? { channel: "pong" } : { channel: "subscriptionResponse", data: m }));
      }),
    );
    const feed = track(new HyperliquidFeed({ baseUrl: srv.url, instruments: source([inst("BTC", "BTC"), inst("FXS", "FXS")]), heartbeatMs: 40 }));
    const trades: Trade[] = [];
    feed.on("trades", (t) => trades.push(...t));
    await feed.subscribe(["BTC", "FXS"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    expect(c.url).toBe("/ws");
    await waitFor(() => c.received.filter((r) => r === '{"method":"ping"}').length >= 2);
    expect(c.received.slice(0, 2).map((r) => JSON.parse(r) as object)).toEqual([
      { method: "subscribe", subscription: { type: "trades", coin: "BTC" } },
      { method: "subscribe", subscription: { type: "trades", coin: "FXS" } },
    ]);
    c.ws.send(readLine("hyperliquid/hyperliquid_ws_trades_2024-10-29.ndjson", 2));
    await waitFor(() => trades.length === 3);
    expect(trades.map((t) => t.side)).toEqual(["buy", "buy", "buy"]);
  });

  it("keeps retrying (without throwing) while nothing listens on the port", async () => {
    const srv = await startWsServer();
    const url = srv.url;
    await srv.close();
    const feed = track(new HyperliquidFeed({ baseUrl: url, instruments: source([inst("BTC", "BTC")]), backoffMinMs: 10, backoffMaxMs: 20 }));
    await feed.subscribe(["BTC"]);
    feed.start();
    await waitFor(() => feed.state().reconnects >= 3);
    expect(feed.state()).toMatchObject({ connected: false, connectedSince: null, lastMessageAt: null, lagMs: null, subscribedSymbols: 1 });
  });

  it("never throws to its owner: malformed frames, venue refusals and throwing listeners are counted; stop() ends reconnects", async () => {
    const srv = await server();
    const metrics = new FeedMetrics(new Registry());
    const feed = track(new BybitFeed({ baseUrl: srv.url, instruments: bybitInsts, metrics, heartbeatMs: 0, backoffMinMs: 10 }));
    const seen: Trade[] = [];
    feed.on("trades", () => {
      throw new Error("listener bug");
    });
    feed.on("trades", (t) => seen.push(...t));
    await feed.subscribe(["BTC"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    c.ws.send("garbage{");
    c.ws.send(JSON.stringify({ success: false, ret_msg: "handler not found", conn_id: "x", op: "subscribe" }));
    c.ws.send(bybitTrade("ok", Date.now()));
    await waitFor(() => seen.length === 1);
    const errors = (await metrics.errors.get()).values.map((v) => [v.labels.kind, v.value]);
    expect(errors).toEqual(
      expect.arrayContaining([
        ["malformed", 1],
        ["venue_error", 1],
        ["listener", 1],
      ]),
    );
    expect((await metrics.messages.get()).values[0]?.value).toBe(3);
    // Per-message counters are handed over when read: exact at every read, also after stop().
    c.ws.send(bybitTrade("ok2", Date.now()));
    await waitFor(() => seen.length === 2);
    expect((await metrics.trades.get()).values).toMatchObject([{ labels: { venue: "bybit" }, value: 2 }]);
    expect((await metrics.messages.get()).values[0]?.value).toBe(4);
    expect((await metrics.liquidations.get()).values).toEqual([]);
    await feed.stop();
    expect((await metrics.messages.get()).values[0]?.value).toBe(4);
    await waitFor(() => c.closed);
    await sleep(60);
    expect(srv.conns).toHaveLength(1);
    expect(feed.state().connected).toBe(false);
  });
});

/** Line `index` of a venue's `.ndjson` fixture (`<venue>/<file>`). */
function readLine(path: string, index: number): string {
  return fixtureText(path).split("\n")[index]!;
}
