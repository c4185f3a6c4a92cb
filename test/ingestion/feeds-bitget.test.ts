import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { BitgetTradeBackfill } from "../../src/venues/bitget/backfill.js";
import { BitgetFeed } from "../../src/venues/bitget/feed.js";
import { parseBitgetFills, parseBitgetMessage } from "../../src/venues/bitget/feed-parse.js";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import type { StreamGap, Trade } from "../../src/ingestion/types.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { startStub, type StubRoute } from "../venues/perp-server.js";
import { sleep, waitFor, type WsTestServer, wsTestKit } from "../helpers/ws-server.js";

/*
 * Bitget v2 public feed: frame parsing on the docs' recorded frames, the connection lifecycle against a local
 * `ws` server (subscribe, string ping/pong heartbeat, reconnect and resubscribe), and the fills-history backfill
 * paging against a local HTTP stub.
 */

const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 };
const bonk: FeedInstrument = { base: "BONK", venueSymbol: "1000BONKUSDT", multiplier: 1000, contractSize: 1 };
const lookup = new Map([btc, bonk].map((i) => [i.venueSymbol, i]));
const frames = () => fixtureText("bitget/ws_v2_public_docs_examples.ndjson").trim().split("\n");

describe("bitget frame parsing (docs frames)", () => {
  it("reads the trade push: coins, taker side, trade id; the subscribe ack and the string pong are control", () => {
    const [ack, trade, ticker] = frames();
    expect(parseBitgetMessage(ack, lookup)).toEqual({ trades: [], liquidations: [], skipped: 0, control: { type: "ack", message: "subscribe" } });
    expect(parseBitgetMessage(trade, lookup).trades).toEqual([
      { venue: "bitget", base: "BTC", time: 1695716760565, price: 27000.5, size: 0.001, side: "buy", id: "1111111111" },
      { venue: "bitget", base: "BTC", time: 1695716759514, price: 27000, size: 0.001, side: "sell", id: "1111111111" },
    ]);
    expect(parseBitgetMessage(fixtureText("bitget/ws_v2_pong_docs.txt"), lookup).control).toEqual({ type: "pong" });
    // A channel the feed does not read (the docs' ticker push) is neither data nor an error.
    expect(parseBitgetMessage(ticker, lookup)).toEqual({ trades: [], liquidations: [], skipped: 0 });
  });

  it("undoes the multiplier, counts unknown symbols as skipped, reports venue errors and malformed rows", () => {
    const push = (instId: string, row: object) => JSON.stringify({ action: "update", arg: { instType: "USDT-FUTURES", channel: "trade", instId }, data: [row], ts: 1 });
    const row = { ts: "1700000000000", price: "0.02", size: "500", side: "sell", tradeId: "42" };
    expect(parseBitgetMessage(push("1000BONKUSDT", row), lookup).trades[0]).toMatchObject({ base: "BONK", price: 0.00002, size: 500_000, side: "sell" });
    expect(parseBitgetMessage(push("DOGEUSDT", row), lookup)).toMatchObject({ trades: [], skipped: 1 });
    // An error event (the subscribe response's documented fields `event`, `code`, `msg`; values not from a recording).
    expect(
      parseBitgetMessage(JSON.stringify({ event: "error", code: 30001, msg: "instType:USDT-FUTURES,channel:trade,instId:NOPEUSDT doesn't exist" }), lookup).control,
    ).toMatchObject({
      type: "venue_error",
    });
    expect(parseBitgetMessage(push("BTCUSDT", { ...row, price: "" }), lookup).error).toMatch(/malformed/);
    expect(parseBitgetMessage("not json", lookup).error).toMatch(/not JSON/);
  });

  it("reads the fills-history docs example (capitalised sides) and refuses an error body", () => {
    expect(parseBitgetFills(fixture("bitget/fills_history_BTCUSDT_docs_example.json"), btc).trades).toEqual([
      { venue: "bitget", base: "BTC", time: 1695865151000, price: 26372.5, size: 9.25, side: "sell", id: "1" },
      { venue: "bitget", base: "BTC", time: 1695865115000, price: 26383, size: 12.12, side: "buy", id: "2" },
    ]);
    expect(parseBitgetFills(fixture("bitget/error_40034_parameter_does_not_exist_ccxt_issue_21163.json"), btc).error).toMatch(/40034/);
  });
});

const { cleanup, server } = wsTestKit();

/** A Bitget-like server: acks each subscribe argument, answers the string ping with the string pong. */
function bitgetServer(): Promise<WsTestServer> {
  return server((c) =>
    c.ws.on("message", (d: WebSocket.RawData) => {
      const text = d.toString();
      if (text === "ping") return void c.ws.send("pong");
      const m = JSON.parse(text) as { op: string; args: object[] };
      for (const arg of m.args) c.ws.send(JSON.stringify({ event: m.op, arg }));
    }),
  );
}

const source = { instrument: async (b: string) => [btc, bonk].find((i) => i.base === b), instruments: async () => [btc, bonk] };
const tradePush = (id: string, ts: number) =>
  JSON.stringify({
    action: "update",
    arg: { instType: "USDT-FUTURES", channel: "trade", instId: "BTCUSDT" },
    data: [{ ts: String(ts), price: "65000.5", size: "0.01", side: "buy", tradeId: id }],
    ts,
  });

describe("bitget feed lifecycle (local ws server)", () => {
  it("subscribes the trade channel on /v2/ws/public, sends the string ping, emits trades, resubscribes after a drop with a gap", async () => {
    const srv = await bitgetServer();
    const feed = new BitgetFeed({ baseUrl: srv.url, instruments: source, heartbeatMs: 40, backoffMinMs: 20, backoffMaxMs: 40 });
    cleanup(() => feed.stop());
    const trades: Trade[] = [];
    const gaps: StreamGap[] = [];
    feed.on("trades", (t) => trades.push(...t));
    feed.on("gap", (g) => gaps.push(g));
    expect(await feed.subscribe(["btc", "BONK", "NOPE"])).toEqual({ subscribed: ["BTC", "BONK"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/v2/ws/public");
    await waitFor(() => c1.received.some((r) => r.startsWith("{")));
    expect(JSON.parse(c1.received.find((r) => r.startsWith("{"))!)).toEqual({
      op: "subscribe",
      args: [
        { instType: "USDT-FUTURES", channel: "trade", instId: "BTCUSDT" },
        { instType: "USDT-FUTURES", channel: "trade", instId: "1000BONKUSDT" },
      ],
    });
    await waitFor(() => c1.received.filter((r) => r === "ping").length >= 2);
    const t1 = Date.now();
    c1.ws.send(tradePush("1", t1));
    c1.ws.send(tradePush("1", t1)); // the same trade again (a replayed snapshot): counted once
    await waitFor(() => trades.length >= 1);
    await sleep(30);
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ venue: "bitget", base: "BTC", side: "buy", size: 0.01, price: 65000.5, id: "1" });
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => c2.received.some((r) => r.startsWith("{")));
    expect(JSON.parse(c2.received.find((r) => r.startsWith("{"))!)).toMatchObject({ op: "subscribe" });
    await waitFor(() => gaps.length === 1);
    expect(gaps[0]!.venue).toBe("bitget");
    c2.ws.send(tradePush("2", Date.now() + 1));
    await waitFor(() => trades.length === 2);
    expect(feed.state()).toMatchObject({ venue: "bitget", connected: true, reconnects: 1, subscribedSymbols: 2 });
    feed.unsubscribe(["BONK"]);
    await waitFor(() => c2.received.some((r) => r.includes('"unsubscribe"')));
    expect(JSON.parse(c2.received.find((r) => r.includes('"unsubscribe"'))!)).toEqual({
      op: "unsubscribe",
      args: [{ instType: "USDT-FUTURES", channel: "trade", instId: "1000BONKUSDT" }],
    });
  });
});

describe("bitget fills-history backfill (local stub)", () => {
  const T0 = 1_700_000_000_000;
  /** A tape of `count` trades every `stepMs` from T0, ids 1001…; the route serves it newest first with the venue's filters. */
  const tape = (count: number, stepMs: number) =>
    Array.from({ length: count }, (_, i) => ({
      tradeId: String(1001 + i),
      price: (65000 + i).toFixed(1),
      size: "0.01",
      side: i % 2 ? "Buy" : "Sell",
      ts: String(T0 + i * stepMs),
      symbol: "BTCUSDT",
    }));
  function route(rows: ReturnType<typeof tape>): StubRoute {
    return (req) => {
      const q = req.query as Record<string, string>;
      const sel = rows
        .filter((r) => Number(r.ts) >= Number(q.startTime) && Number(r.ts) <= Number(q.endTime))
        .filter((r) => q.idLessThan === undefined || Number(r.tradeId) < Number(q.idLessThan))
        .reverse()
        .slice(0, Number(q.limit ?? 500));
      return { body: { code: "00000", msg: "success", requestTime: 1, data: sel } };
    };
  }

  it("pages older by idLessThan until fromMs and returns the interval oldest first, complete", async () => {
    const rows = tape(2500, 1000);
    const s = await startStub({ "GET /api/v2/mix/market/fills-history": route(rows) });
    cleanup(() => s.close());
    const bf = new BitgetTradeBackfill({ baseUrl: s.url, instruments: source, timeoutMs: 2000, retries: 0 });
    const from = T0 + 100_000;
    const to = T0 + 2_400_000;
    const r = await bf.fetchTrades("BTC", from, to);
    expect(r.complete).toBe(true);
    expect(r.trades.map((t) => t.id)).toEqual(rows.filter((x) => Number(x.ts) >= from && Number(x.ts) < to).map((x) => x.tradeId));
    const calls = s.calls.filter((c) => c.startsWith("GET /api/v2/mix/market/fills-history"));
    expect(calls[0]).toBe(`GET /api/v2/mix/market/fills-history?symbol=BTCUSDT&productType=USDT-FUTURES&startTime=${from}&endTime=${to}&limit=1000`);
    expect(calls[1]).toContain("&idLessThan=");
    expect(calls).toHaveLength(3);
  });

  it("is incomplete when maxPages runs out, and throws NOT_FOUND for an unlisted base", async () => {
    const s = await startStub({ "GET /api/v2/mix/market/fills-history": route(tape(2500, 1000)) });
    cleanup(() => s.close());
    const bf = new BitgetTradeBackfill({ baseUrl: s.url, instruments: source, timeoutMs: 2000, retries: 0, maxPages: 1 });
    expect((await bf.fetchTrades("BTC", T0, T0 + 2_500_000)).complete).toBe(false);
    await expect(bf.fetchTrades("DOGE", T0, T0 + 1)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
