import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { GateTradeBackfill } from "../../src/venues/gate/backfill.js";
import { GateFeed } from "../../src/venues/gate/feed.js";
import { parseGateLiqOrders, parseGateMessage, parseGateTrades } from "../../src/venues/gate/feed-parse.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { type RunningStub, startStub } from "../venues/perp-server.js";
import { collectEvents, jsonReceived, waitFor, type WsConn, type WsTestServer, wsTestKit } from "../helpers/ws-server.js";

/*
 * Gate futures feed: frame parsing on the documented frames, the connection lifecycle against a local `ws`
 * server (subscribe, futures.ping heartbeat, reconnect and resubscribe, upgrade notice), and the REST trade
 * backfill's paging on a stub.
 */

/** BTC_USDT as Gate lists it (docs example contract: quanto_multiplier 0.0001). */
const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTC_USDT", multiplier: 1, contractSize: 0.0001 };
/** The WS docs' trade example names the inverse BTC_USD contract; the same contract size is assumed for the mapping test. */
const btcUsd: FeedInstrument = { base: "BTC", venueSymbol: "BTC_USD", multiplier: 1, contractSize: 0.0001 };
const lookup = (...list: FeedInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
const frames = () => fixtureText("gate/ws_frames_docs_example.ndjson").trim().split("\n");

describe("gate frame parsing (documented frames)", () => {
  it("reads acks, trades, pong, liquidations, ignores other channels and reports refusals", () => {
    const [ack, trades, pong, liqAck, liq, stats, refused] = frames().map((f) => parseGateMessage(f, lookup(btc, btcUsd)));
    expect(ack!.control).toEqual({ type: "ack", message: "futures.trades subscribe" });
    expect(trades!.trades).toEqual([{ venue: "gate", base: "BTC", time: 1545136464123, price: 96.4, size: 0.0108, side: "sell", id: "27753479" }]);
    expect(pong!.control).toEqual({ type: "pong" });
    expect(liqAck!.control?.type).toBe("ack");
    // size -124 is a sell order: a long position was liquidated
    expect(liq!.liquidations).toEqual([{ venue: "gate", base: "BTC", venueSymbol: "BTC_USDT", time: 1541486601123, side: "long", price: 215.1, size: 0.0124, valueUsd: 2.66724 }]);
    expect(stats).toEqual({ trades: [], liquidations: [], skipped: 0 });
    expect(refused!.control).toEqual({ type: "venue_error", message: "2 unknown currency pair GIBBERISH_USD" });
  });

  it("reads the aggregated liquidation push (several rows, decimal sizes, ms times)", () => {
    const f = parseGateMessage(fixture("gate/ws_public_liquidates_aggregated_docs_2026-08-20.json"), lookup(btc));
    expect(f.liquidations.map((l) => [l.time, l.side, l.price, l.size])).toEqual([
      [1541486601123, "long", 215.1, 0.01245],
      [1541486601456, "long", 215.2, 0.00105],
    ]);
  });

  it("skips unknown contracts, counts them, and never throws", () => {
    expect(parseGateMessage(frames()[4]!, lookup()).skipped).toBe(1);
    expect(parseGateMessage(frames()[1]!, lookup(btc)).skipped).toBe(1);
    expect(parseGateMessage("not json", lookup(btc)).error).toMatch(/not JSON/);
    expect(parseGateMessage("[]", lookup(btc)).error).toBeDefined();
    expect(parseGateMessage({ type: "upgrade", msg: "restart" }, lookup(btc)).control).toEqual({ type: "reconnect", message: "restart" });
  });

  it("reads a REST /liq_orders page (docs example): position size 600 (a long), sold at the fill price", () => {
    expect(parseGateLiqOrders(fixture("gate/liq_orders_usdt_docs_example.json"), lookup(btc))).toEqual({
      trades: [],
      liquidations: [{ venue: "gate", base: "BTC", venueSymbol: "BTC_USDT", time: 1548654951000, side: "long", price: 3424, size: 0.06, valueUsd: 205.44 }],
      skipped: 0,
    });
    expect(parseGateLiqOrders(fixture("gate/liq_orders_usdt_docs_example.json"), lookup()).skipped).toBe(1);
    expect(parseGateLiqOrders(fixture("gate/error_invalid_param_docs_example.json"), lookup(btc)).error).toBeDefined();
  });

  it("reads a REST /trades page (docs example): create_time seconds, signed contracts", () => {
    expect(parseGateTrades(fixture("gate/trades_BTC_USDT_docs_example.json"), btc).trades).toEqual([
      { venue: "gate", base: "BTC", time: 1514764800000, price: 100.123, size: 0.01, side: "sell", id: "121234231" },
    ]);
    expect(parseGateTrades(fixture("gate/error_invalid_param_docs_example.json"), btc).error).toBeDefined();
  });
});

/** A frame the feed sent to Gate. */
type GateRequest = Record<string, unknown> & { channel: string; event?: string };
const { cleanup, server } = wsTestKit();
const sent = (c: WsConn) => jsonReceived<GateRequest>(c);

/** A Gate-like server: acks subscribes, answers futures.ping with futures.pong. */
function gateServer(): Promise<WsTestServer> {
  return server((c) =>
    c.ws.on("message", (d: WebSocket.RawData) => {
      const m = JSON.parse(d.toString()) as GateRequest;
      if (m.channel === "futures.ping") c.ws.send(JSON.stringify({ time: 1, time_ms: 1000, channel: "futures.pong", event: "", result: null }));
      else if (m.event === "subscribe") c.ws.send(JSON.stringify({ time: 1, time_ms: 1000, channel: m.channel, event: "subscribe", result: { status: "success" } }));
    }),
  );
}

const eth: FeedInstrument = { base: "ETH", venueSymbol: "ETH_USDT", multiplier: 1, contractSize: 0.01 };
const source = { instrument: async (b: string) => [btc, eth].find((i) => i.base === b), instruments: async () => [btc, eth] };
const tradeFrame = (id: number, t: number, size: number) =>
  JSON.stringify({
    channel: "futures.trades",
    event: "update",
    time: Math.floor(t / 1000),
    time_ms: t,
    result: [{ size, id, create_time: Math.floor(t / 1000), create_time_ms: t, price: "96.4", contract: "BTC_USDT" }],
  });

describe("gate feed lifecycle (local ws server)", () => {
  it("subscribes trades and !all liquidations on /v4/ws/usdt, pings when idle, reconnects and resubscribes", async () => {
    const srv = await gateServer();
    const feed = new GateFeed({ baseUrl: srv.url, instruments: source, heartbeatMs: 40, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const { trades, liqs, gaps } = collectEvents(feed);
    expect(await feed.subscribe(["btc", "ETH", "NOPE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/v4/ws/usdt");
    await waitFor(() => sent(c1).length >= 2);
    expect(sent(c1)[0]).toMatchObject({ channel: "futures.public_liquidates", event: "subscribe", payload: ["!all"] });
    expect(sent(c1)[1]).toMatchObject({ channel: "futures.trades", event: "subscribe", payload: ["BTC_USDT", "ETH_USDT"] });
    expect(typeof sent(c1)[1]!.time).toBe("number");
    c1.ws.send(tradeFrame(1, Date.now(), 5));
    c1.ws.send(frames()[4]!);
    await waitFor(() => trades.length === 1 && liqs.length === 1);
    expect(trades[0]).toMatchObject({ venue: "gate", base: "BTC", side: "buy", size: 0.0005, id: "1" });
    expect(liqs[0]).toMatchObject({ venue: "gate", side: "long", size: 0.0124 });
    // idle → futures.ping, answered by futures.pong
    await waitFor(() => sent(c1).some((m) => m.channel === "futures.ping"));
    // the server drops the connection: the feed reconnects and resubscribes both channels
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => sent(c2).filter((m) => m.event === "subscribe").length >= 2);
    expect(
      sent(c2)
        .filter((m) => m.event === "subscribe")
        .map((m) => m.channel),
    ).toEqual(["futures.public_liquidates", "futures.trades"]);
    c2.ws.send(tradeFrame(2, Date.now(), -3));
    await waitFor(() => trades.length === 2);
    expect(trades[1]).toMatchObject({ side: "sell", size: 0.0003, id: "2" });
    expect(gaps).toHaveLength(1);
    expect(feed.state()).toMatchObject({ venue: "gate", connected: true, reconnects: 1, subscribedSymbols: 2 });
    // unsubscribe sends futures.trades unsubscribe with the contract
    feed.unsubscribe(["ETH"]);
    await waitFor(() => sent(c2).some((m) => m.event === "unsubscribe"));
    expect(sent(c2).find((m) => m.event === "unsubscribe")).toMatchObject({ channel: "futures.trades", payload: ["ETH_USDT"] });
  });

  it("rotates to a fresh connection on an upgrade notice", async () => {
    const srv = await gateServer();
    const feed = new GateFeed({ baseUrl: srv.url, instruments: source, liquidations: false, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    await waitFor(() => sent(c1).length >= 1);
    expect(sent(c1).map((m) => m.channel)).toEqual(["futures.trades"]);
    c1.ws.send(JSON.stringify({ type: "upgrade", msg: "The connection will soon be closed for a service upgrade." }));
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => sent(c2).some((m) => m.channel === "futures.trades"));
  });
});

describe("gate trades backfill (stub)", () => {
  const T0 = 1_700_000_000_000;
  /** A tape of one trade every `stepMs` from T0 (ids from 1), served newest first by `to` (s) or `last_id`, like /futures/usdt/trades. */
  function tape(count: number, stepMs: number) {
    return Array.from({ length: count }, (_, i) => ({ id: i + 1, create_time: (T0 + i * stepMs) / 1000, contract: "BTC_USDT", size: i % 2 ? "-2" : "3", price: "100.5" }));
  }
  async function serve(rows: ReturnType<typeof tape>, failAfter = Infinity): Promise<RunningStub> {
    let n = 0;
    const s = await startStub({
      "GET /api/v4/futures/usdt/trades": (req) => {
        if (++n > failAfter) return { status: 400, body: fixture("gate/error_invalid_param_docs_example.json") };
        const q = req.query as Record<string, string>;
        const limit = Number(q.limit ?? 100);
        const picked = q.last_id !== undefined ? rows.filter((r) => r.id < Number(q.last_id)) : rows.filter((r) => r.create_time <= Number(q.to));
        return { body: picked.slice(-limit).reverse() };
      },
    });
    cleanup(() => s.close());
    return s;
  }
  const opts = (url: string, extra: object = {}) => ({
    baseUrl: `${url}/api/v4`,
    instruments: { instrument: async (b: string) => (b === "BTC" ? btc : undefined) },
    timeoutMs: 2_000,
    retries: 0,
    ...extra,
  });

  it("pages back by `to` seconds over more than one page and reports the interval complete", async () => {
    const rows = tape(2500, 100); // 250 s, 10 trades a second
    const s = await serve(rows);
    const from = T0 + 10_000;
    const to = T0 + 240_000;
    const r = await new GateTradeBackfill(opts(s.url)).fetchTrades("btc", from, to);
    expect(r.complete).toBe(true);
    expect(r.trades.map((t) => Number(t.id))).toEqual(rows.filter((x) => x.create_time * 1000 >= from && x.create_time * 1000 < to).map((x) => x.id));
    expect(r.trades[0]).toMatchObject({ venue: "gate", base: "BTC", size: 0.0003, side: "buy", price: 100.5 });
    expect(s.calls.length).toBeGreaterThan(2);
    expect(s.calls[0]).toBe(`GET /api/v4/futures/usdt/trades?contract=BTC_USDT&limit=1000&to=${Math.ceil(to / 1000)}`);
  });

  it("falls back to last_id when one second holds a full page, and returns a partial result when a later page fails", async () => {
    const dense = tape(1500, 0); // every trade in the same millisecond
    const s = await serve(dense, 2);
    const r = await new GateTradeBackfill(opts(s.url)).fetchTrades("BTC", T0 - 1000, T0 + 1000);
    expect(s.calls[1]).toMatch(/last_id=501$/);
    expect(r.trades.length).toBe(1500);
    const s2 = await serve(tape(2500, 100), 1);
    const partial = await new GateTradeBackfill(opts(s2.url)).fetchTrades("BTC", T0, T0 + 240_000);
    expect(partial.complete).toBe(false);
    expect(partial.trades.length).toBe(999); // the first page, less the trade at exactly toMs (the interval is half-open)
  });

  it("throws NOT_FOUND for an unlisted base and the mapped error when the first page fails", async () => {
    const s = await serve(tape(10, 100), 0);
    await expect(new GateTradeBackfill(opts(s.url)).fetchTrades("NOPE", T0, T0 + 1000)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(new GateTradeBackfill(opts(s.url)).fetchTrades("BTC", T0, T0 + 1000)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
  });
});

describe("gate liquidation backfill (stub /liq_orders)", () => {
  const S0 = 1_700_000_000; // Unix s
  /** Liquidations every 100 ms from S0 (10 a second), alternating longs and shorts; one of an unlisted contract a second. */
  function rows(seconds: number) {
    return Array.from({ length: seconds * 10 }, (_, i) => ({
      time: S0 + Math.floor(i / 10),
      contract: i % 10 === 9 ? "NOPE_USDT" : "BTC_USDT",
      size: i % 2 ? "-5" : "7",
      order_size: i % 2 ? "5" : "-7",
      order_price: "100",
      fill_price: String(100 + (i % 10)),
      left: "0",
    }));
  }
  async function serve(all: ReturnType<typeof rows>, failAfter = Infinity): Promise<RunningStub> {
    let n = 0;
    const s = await startStub({
      "GET /api/v4/futures/usdt/liq_orders": (req) => {
        if (++n > failAfter) return { status: 400, body: fixture("gate/error_invalid_param_docs_example.json") };
        const q = req.query as Record<string, string>;
        if (Number(q.to) - Number(q.from) > 3600) return { status: 400, body: fixture("gate/error_invalid_param_docs_example.json") };
        const picked = all.filter((r) => r.time >= Number(q.from) && r.time <= Number(q.to));
        return { body: picked.reverse().slice(0, Number(q.limit ?? 100)) };
      },
    });
    cleanup(() => s.close());
    return s;
  }
  const opts = (url: string) => ({
    baseUrl: `${url}/api/v4`,
    instruments: { instrument: async () => btc, instruments: async () => [btc] },
    timeoutMs: 2_000,
    retries: 0,
  });

  it("pages full pages back by their oldest second, keeps whole seconds inside the gap, skips unlisted contracts", async () => {
    const s = await serve(rows(250)); // 2,500 rows: three pages of at most 1,000
    const from = (S0 + 10) * 1000 + 500; // mid-second: S0+10 is left to the stream
    const to = (S0 + 240) * 1000 + 300; // mid-second: S0+240 too
    const r = await new GateTradeBackfill(opts(s.url)).fetchLiquidations(from, to);
    expect(r.complete).toBe(true);
    // seconds S0+11 .. S0+239 (229 s), nine listed rows a second
    expect(r.liquidations).toHaveLength(229 * 9);
    expect(r.liquidations[0]).toMatchObject({ venue: "gate", base: "BTC", time: (S0 + 11) * 1000 });
    expect(new Set(r.liquidations.map((l) => `${l.time}|${l.side}|${l.price}|${l.size}`)).size).toBe(229 * 9); // none twice, none lost at page joins
    expect(r.liquidations.at(-1)!.time).toBe((S0 + 239) * 1000);
    expect(s.calls[0]).toBe(`GET /api/v4/futures/usdt/liq_orders?from=${S0 + 11}&to=${S0 + 239}&limit=1000`);
    expect(s.calls.length).toBeGreaterThanOrEqual(3);
  });

  it("returns what it has, incomplete, when a later page fails; an empty interval is complete", async () => {
    const s = await serve(rows(250), 1);
    const r = await new GateTradeBackfill(opts(s.url)).fetchLiquidations(S0 * 1000, (S0 + 250) * 1000);
    expect(r.complete).toBe(false);
    expect(r.liquidations.length).toBeGreaterThan(0);
    expect(await new GateTradeBackfill(opts(s.url)).fetchLiquidations(S0 * 1000 + 1, S0 * 1000 + 999)).toEqual({ liquidations: [], complete: true });
  });
});
