import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { DeribitTradeBackfill } from "../../src/venues/deribit/backfill.js";
import { DeribitFeed } from "../../src/venues/deribit/feed.js";
import { parseDeribitMessage, parseDeribitTrades, TEST_REQUEST } from "../../src/venues/deribit/feed-parse.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "../venues/perp-server.js";
import { collectEvents, jsonReceived, sleep, waitFor, type WsConn, type WsTestServer, wsTestKit } from "../helpers/ws-server.js";

/*
 * Deribit frames (recorded: nautilus_trader and tardis-node; see src/venues/deribit/fixtures/README.md), the feed's
 * JSON-RPC lifecycle against a local `ws` server (subscribe, set_heartbeat, test_request → public/test, reconnect and
 * resubscribe), and the REST trade backfill's paging on a stub.
 */

const inst = (venueSymbol: string, base: string, multiplier = 1): FeedInstrument => ({ venueSymbol, base, multiplier, contractSize: 1 });
const BTC = inst("BTC-PERPETUAL", "BTC");
const ETH = inst("ETH-PERPETUAL", "ETH");
const SOL = inst("SOL_USDC-PERPETUAL", "SOL");
const PEPE = inst("1000PEPE_USDC-PERPETUAL", "PEPE", 1000);
const lookup = new Map([BTC, ETH, SOL, PEPE].map((i) => [i.venueSymbol, i]));
const line = (file: string, n: number) => fixtureText(`deribit/${file}`).trim().split("\n")[n - 1]!;

describe("deribit frames", () => {
  it("parses a real 100ms trades frame: taker side, USD amounts to coins by price, trade ids", () => {
    const f = parseDeribitMessage(line("ws_frames.ndjson", 5), lookup);
    expect(f.error).toBeUndefined();
    expect(f.liquidations).toEqual([]);
    expect(f.trades).toEqual([
      { venue: "deribit", base: "BTC", time: 1765531356452, price: 92294.5, size: Number((10 / 92294.5).toPrecision(15)), side: "sell", id: "403691824" },
      { venue: "deribit", base: "BTC", time: 1765531356452, price: 92288.5, size: Number((750 / 92288.5).toPrecision(15)), side: "sell", id: "403691825" },
    ]);
  });

  it("emits liquidations with the liquidated position's side (real T and M trades)", () => {
    const t = parseDeribitMessage(line("ws_frames.ndjson", 7), lookup);
    expect(t.trades).toHaveLength(1);
    // taker sold and was liquidated: a long
    expect(t.liquidations).toEqual([
      {
        venue: "deribit",
        base: "BTC",
        venueSymbol: "BTC-PERPETUAL",
        time: 1584058044032,
        side: "long",
        price: 4469.5,
        size: Number((1120 / 4469.5).toPrecision(15)),
        valueUsd: 1120,
      },
    ]);
    const m = parseDeribitMessage(line("ws_frames.ndjson", 8), lookup);
    // taker bought, the liquidated maker sold: a long
    expect(m.liquidations.map((l) => [l.side, l.price, l.valueUsd])).toEqual([["long", 4458.5, 2500]]);
    expect(m.trades[0]).toMatchObject({ side: "buy", id: "66460626" });
  });

  it("splits MT into both sides and reads linear amounts as coins (DERIVED frames)", () => {
    const mt = parseDeribitMessage(line("DERIVED_ws_frames.ndjson", 1), lookup);
    expect(mt.liquidations.map((l) => l.side)).toEqual(["short", "long"]);
    expect(mt.liquidations[0]!.valueUsd).toBe(5000);
    const sol = parseDeribitMessage(line("DERIVED_ws_frames.ndjson", 2), lookup);
    expect(sol.trades.map((t) => [t.size, t.price, t.side])).toEqual([
      [12.3, 137.25, "buy"],
      [40, 137.1, "sell"],
    ]);
    expect(sol.liquidations).toMatchObject([{ base: "SOL", side: "long", size: 40, valueUsd: 5484 }]);
    const pepe = parseDeribitMessage(line("DERIVED_ws_frames.ndjson", 3), lookup);
    expect(pepe.trades[0]).toMatchObject({ base: "PEPE", size: 2_000_000, price: 0.000004512 });
  });

  it("classifies control frames and ignores other channels and unknown instruments", () => {
    expect(parseDeribitMessage(line("ws_frames.ndjson", 1), lookup).control).toEqual({ type: "ack" });
    expect(parseDeribitMessage(line("ws_frames.ndjson", 2), lookup).control).toEqual({ type: "ack", message: TEST_REQUEST });
    expect(parseDeribitMessage(line("ws_frames.ndjson", 3), lookup).control).toEqual({ type: "pong" });
    expect(parseDeribitMessage(line("ws_frames.ndjson", 4), lookup).control).toEqual({ type: "venue_error", message: "10028 too_many_requests" });
    expect(parseDeribitMessage(line("ws_frames.ndjson", 9), lookup)).toEqual({ trades: [], liquidations: [], skipped: 0 });
    expect(parseDeribitMessage(line("ws_frames.ndjson", 6), new Map()).skipped).toBe(2);
    expect(parseDeribitMessage("not json", lookup).error).toMatch(/not JSON/);
    expect(parseDeribitMessage('{"method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.100ms","data":[{"instrument_name":"BTC-PERPETUAL"}]}}', lookup).error).toMatch(
      /malformed row/,
    );
  });

  it("parses a real REST last-trades page for its own instrument (ETH-PERPETUAL, 1 USD contracts)", () => {
    const p = parseDeribitTrades(fixture("deribit/last_trades_ETH-PERPETUAL_2025-12-21.json"), ETH);
    expect(p.trades).toHaveLength(10);
    expect(p.trades[9]).toEqual({
      venue: "deribit",
      base: "ETH",
      time: 1766332079917,
      price: 2968.3,
      size: Number((106 / 2968.3).toPrecision(15)),
      side: "buy",
      id: "ETH-284830854",
    });
    expect(parseDeribitTrades(fixture("deribit/last_trades_ETH-PERPETUAL_2025-12-21.json"), BTC).skipped).toBe(10);
    expect(parseDeribitTrades(fixture("deribit/error_instrument_not_found_2026-08-04.json"), ETH).error).toMatch(/-32602/);
  });
});

// ---- lifecycle against a local ws server ----

/** A JSON-RPC request the feed sent. */
type RpcRequest = { method: string; id: number; params: Record<string, unknown> };
const { cleanup, server } = wsTestKit();
const sent = (c: WsConn) => jsonReceived<RpcRequest>(c);

/** A Deribit-like server: answers public/subscribe with the channels, public/test with a version, anything else with "ok". */
function deribitServer(): Promise<WsTestServer> {
  return server((c) =>
    c.ws.on("message", (d: WebSocket.RawData) => {
      const m = JSON.parse(d.toString()) as RpcRequest;
      if (m.method === "public/subscribe") c.ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.params.channels }));
      else if (m.method === "public/test") c.ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { version: "1.2.26" } }));
      else c.ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: "ok" }));
    }),
  );
}

const source = (list: FeedInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b), instruments: async () => list });

describe("deribit feed lifecycle (local ws server)", () => {
  it("asks for heartbeats, subscribes 100ms trade channels, answers test_request, emits trades and liquidations, resubscribes after a drop", async () => {
    const srv = await deribitServer();
    const feed = new DeribitFeed({ baseUrl: srv.url, instruments: source([BTC, ETH]), heartbeatMs: 0, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const { trades, liqs, gaps } = collectEvents(feed);
    expect(await feed.subscribe(["btc", "ETH", "DOGE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["DOGE"], rejected: [] });
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    expect(c.url).toBe("/ws/api/v2");
    await waitFor(() => sent(c).length >= 2);
    expect(sent(c)[0]).toMatchObject({ jsonrpc: "2.0", method: "public/set_heartbeat", params: { interval: 30 } });
    expect(sent(c)[1]).toMatchObject({ method: "public/subscribe", params: { channels: ["trades.BTC-PERPETUAL.100ms", "trades.ETH-PERPETUAL.100ms"] } });
    expect(sent(c)[1]!.id).toBeGreaterThan(sent(c)[0]!.id);

    c.ws.send(line("ws_frames.ndjson", 2)); // the server's test_request
    await waitFor(() => sent(c).some((m) => m.method === "public/test"));
    c.ws.send(line("ws_frames.ndjson", 7)); // 2020: older frames first, the replay guard drops what is older than the newest trade
    c.ws.send(line("ws_frames.ndjson", 5));
    c.ws.send(line("ws_frames.ndjson", 5)); // a repeat: counted once by trade id
    await waitFor(() => trades.length >= 3);
    await sleep(30);
    expect(trades.map((t) => t.id)).toEqual(["66460463", "403691824", "403691825"]);
    expect(liqs).toMatchObject([{ base: "BTC", side: "long", valueUsd: 1120 }]);

    c.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => sent(c2).length >= 2);
    expect(sent(c2).map((m) => m.method)).toEqual(["public/set_heartbeat", "public/subscribe"]);
    c2.ws.send(line("ws_frames.ndjson", 1));
    await waitFor(() => gaps.length === 1);
    expect(feed.state()).toMatchObject({ venue: "deribit", connected: true, reconnects: 1, subscribedSymbols: 2 });

    feed.unsubscribe(["ETH"]);
    await waitFor(() => sent(c2).some((m) => m.method === "public/unsubscribe"));
    expect(sent(c2).find((m) => m.method === "public/unsubscribe")!.params).toEqual({ channels: ["trades.ETH-PERPETUAL.100ms"] });
  });

  it("sends public/test after heartbeatMs without traffic", async () => {
    const srv = await deribitServer();
    const feed = new DeribitFeed({ baseUrl: srv.url, instruments: source([BTC]), heartbeatMs: 40 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    await waitFor(() => sent(c).filter((m) => m.method === "public/test").length >= 2);
  });
});

// ---- REST backfill ----

describe("deribit last-trades backfill", () => {
  let stub: RunningStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  it("pages forward by timestamp until has_more is false, dropping repeats and trades outside the window", async () => {
    const T0 = 1_766_332_000_000;
    const all = Array.from({ length: 25 }, (_, i) => ({
      trade_id: `ETH-${1000 + i}`,
      trade_seq: 1000 + i,
      timestamp: T0 + i * 100,
      price: 2968.3,
      amount: 10,
      direction: i % 2 ? "buy" : "sell",
      instrument_name: "ETH-PERPETUAL",
    }));
    stub = await startStub({
      "GET /public/get_last_trades_by_instrument": (req) => {
        const start = Number(req.query.start_timestamp);
        const end = Number(req.query.end_timestamp);
        const count = Number(req.query.count);
        expect(req.query).toMatchObject({ instrument_name: "ETH-PERPETUAL", sorting: "asc" });
        const rows = all.filter((t) => t.timestamp >= start && t.timestamp <= end);
        // a small page cap so the walk needs several pages
        const page = rows.slice(0, Math.min(count, 10));
        return { body: { jsonrpc: "2.0", result: { trades: page, has_more: rows.length > page.length } } };
      },
    });
    const bf = new DeribitTradeBackfill({ instruments: source([ETH]), baseUrl: stub.url, retries: 0 });
    const r = await bf.fetchTrades("ETH", T0 + 50, T0 + 2_000);
    expect(r.complete).toBe(true);
    expect(r.trades.map((t) => t.id)).toEqual(all.slice(1, 20).map((t) => t.trade_id));
    expect(r.trades[0]!.size).toBeCloseTo(10 / 2968.3, 12);
    expect(stub.calls.length).toBeGreaterThanOrEqual(2);
    await expect(bf.fetchTrades("DOGE", T0, T0 + 1)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("throws on a failing first page and is incomplete when pages run out", async () => {
    stub = await startStub({ "GET /public/get_last_trades_by_instrument": () => ({ status: 400, body: fixture("deribit/error_instrument_not_found_2026-08-04.json") }) });
    const bad = new DeribitTradeBackfill({ instruments: source([ETH]), baseUrl: stub.url, retries: 0 });
    await expect(bad.fetchTrades("ETH", 1, 2)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    await stub.close();
    let t = 1_000;
    stub = await startStub({
      "GET /public/get_last_trades_by_instrument": () => ({
        body: { result: { has_more: true, trades: [{ trade_id: `ETH-${t}`, timestamp: (t += 10), price: 2000, amount: 1, direction: "buy", instrument_name: "ETH-PERPETUAL" }] } },
      }),
    });
    const short = new DeribitTradeBackfill({ instruments: source([ETH]), baseUrl: stub.url, retries: 0, maxPages: 3 });
    const r = await short.fetchTrades("ETH", 1_000, 10_000);
    expect(r).toMatchObject({ complete: false });
    expect(r.trades).toHaveLength(3);
  });
});
