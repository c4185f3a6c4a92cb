import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { HTX_LIQUIDATION_TOPIC, HtxFeed } from "../../src/venues/htx/feed.js";
import { fixtureText } from "../helpers/fixtures.js";
import { collectEvents, jsonReceived, waitFor, type WsConn, wsTestKit } from "../helpers/ws-server.js";

/*
 * HTX feed lifecycle against a local `ws` server playing both HTX sockets: the market one (`/linear-swap-ws`: one `sub`
 * per contract, `{"ping": n}` answered `{"pong": n}`) and the notification one (`/linear-swap-notification`: the
 * wildcard liquidation topic, `{"op":"ping","ts":"…"}` answered with the same `ts`), reconnects, and the liquidation
 * events the feed forwards from its second socket.
 */

const btc: FeedInstrument = { base: "BTC", venueSymbol: "BTC-USDT", multiplier: 1, contractSize: 0.001 };
const eth: FeedInstrument = { base: "ETH", venueSymbol: "ETH-USDT", multiplier: 1, contractSize: 0.01 };
const source = { instrument: async (b: string) => [btc, eth].find((i) => i.base === b), instruments: async () => [btc, eth] };
const { cleanup, server } = wsTestKit();
type Sent = Record<string, unknown>;
const sent = (c: WsConn) => jsonReceived<Sent>(c);
const marketFrames = () => fixtureText("htx/ws_market_frames_docs_example.ndjson").trim().split("\n");

/** A trade.detail push of one BTC-USDT fill (the documented frame with this id, time and side). */
const tradePush = (id: number, ts: number, direction: "buy" | "sell") =>
  JSON.stringify({
    ch: "market.BTC-USDT.trade.detail",
    ts,
    tick: { id, ts, data: [{ amount: 2, ts, id: id * 10000, price: 13073.3, direction, quantity: 0.002, trade_turnover: 26.1 }] },
  });
/** A liquidation push of BTC-USDT (the documented O3-USDT row's shape). */
const liquidationPush = (ts: number) =>
  JSON.stringify({
    op: "notify",
    topic: "public.BTC-USDT.liquidation_orders",
    ts,
    data: [{ symbol: "BTC", contract_code: "BTC-USDT", direction: "buy", offset: "close", volume: 5, price: 65000, created_at: ts, amount: 0.005, trade_turnover: 325 }],
  });

/** An HTX-like server: acks market `sub`s and notification `op: sub`s (as text frames, or gzip when `gzip`). */
function htxServer(gzip = false) {
  const send = (c: WsConn, text: string) => c.ws.send(gzip ? gzipSync(Buffer.from(text)) : text);
  const srv = server((c) =>
    c.ws.on("message", (d) => {
      const m = JSON.parse(d.toString()) as Sent;
      if (typeof m.sub === "string") send(c, JSON.stringify({ id: m.id, status: "ok", subbed: m.sub, ts: 1 }));
      if (m.op === "sub") send(c, JSON.stringify({ op: "sub", cid: m.cid, topic: m.topic, ts: 1, "err-code": 0 }));
    }),
  );
  return { srv, send };
}

const market = (conns: WsConn[], n = 0) => conns.filter((c) => c.url === "/linear-swap-ws")[n];
const notification = (conns: WsConn[], n = 0) => conns.filter((c) => c.url === "/linear-swap-notification")[n];

describe("htx feed lifecycle (local ws server)", () => {
  it("subscribes trades per contract and the wildcard liquidations, echoes both pings, forwards liquidations, reconnects", async () => {
    const { srv: pending, send } = htxServer();
    const srv = await pending;
    const feed = new HtxFeed({ baseUrl: srv.url, instruments: source, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const { trades, liqs, gaps } = collectEvents(feed);
    expect(await feed.subscribe(["btc", "ETH", "NOPE"])).toEqual({ subscribed: ["BTC", "ETH"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const m1 = await waitFor(() => market(srv.conns));
    const n1 = await waitFor(() => notification(srv.conns));
    await waitFor(() => sent(m1).length >= 2 && sent(n1).length >= 1);
    expect(sent(m1).map((m) => m.sub)).toEqual(["market.BTC-USDT.trade.detail", "market.ETH-USDT.trade.detail"]);
    expect(sent(n1)[0]).toMatchObject({ op: "sub", topic: HTX_LIQUIDATION_TOPIC, business_type: "swap" });
    // server pings, echoed verbatim in each socket's shape (the notification's ts stays a string)
    send(m1, marketFrames()[2]!);
    send(n1, JSON.stringify({ op: "ping", ts: "1492420473058" }));
    await waitFor(() => m1.received.includes('{"pong":18212558000}') && n1.received.includes('{"op":"pong","ts":"1492420473058"}'));
    send(m1, tradePush(131602265, Date.now(), "sell"));
    send(n1, liquidationPush(Date.now()));
    await waitFor(() => trades.length === 1 && liqs.length === 1);
    expect(trades[0]).toMatchObject({ venue: "htx", base: "BTC", side: "sell", size: 0.002, id: "1316022650000" });
    expect(liqs[0]).toMatchObject({ venue: "htx", base: "BTC", side: "short", size: 0.005, valueUsd: 325 });
    // the market socket drops: reconnect, resubscribe, one gap; the liquidation socket stays
    m1.ws.terminate();
    const m2 = await waitFor(() => market(srv.conns, 1));
    await waitFor(() => sent(m2).length >= 2);
    send(m2, tradePush(131602266, Date.now(), "buy"));
    await waitFor(() => trades.length === 2);
    expect(gaps).toHaveLength(1);
    expect(notification(srv.conns, 1)).toBeUndefined();
    expect(feed.state()).toMatchObject({ venue: "htx", connected: true, reconnects: 1, subscribedSymbols: 2 });
    feed.unsubscribe(["ETH"]);
    await waitFor(() => sent(m2).some((m) => m.unsub !== undefined));
    expect(sent(m2).find((m) => m.unsub !== undefined)).toMatchObject({ unsub: "market.ETH-USDT.trade.detail" });
    // a listener removed from the feed no longer hears the liquidation socket
    const heard: number[] = [];
    const off = feed.on("liquidations", (l) => heard.push(l.length));
    off();
    send(n1, liquidationPush(Date.now() + 1));
    await waitFor(() => liqs.length === 2);
    expect(heard).toEqual([]);
    await feed.stop();
    await waitFor(() => m2.closed && n1.closed);
  });

  it("opens no notification socket when liquidations are off", async () => {
    const { srv: pending } = htxServer();
    const srv = await pending;
    const feed = new HtxFeed({ baseUrl: srv.url, instruments: source, liquidations: false, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    await feed.subscribe(["BTC"]);
    feed.start();
    const m1 = await waitFor(() => market(srv.conns));
    await waitFor(() => sent(m1).length >= 1);
    expect(srv.conns.map((c) => c.url)).toEqual(["/linear-swap-ws"]);
  });

  // HTX sends every frame gzip-compressed; the feed inflates them in VenueFeed's message-text hook.
  it("reads gzip frames as HTX sends them", async () => {
    const { srv: pending, send } = htxServer(true);
    const srv = await pending;
    const feed = new HtxFeed({ baseUrl: srv.url, instruments: source, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const { trades, liqs } = collectEvents(feed);
    await feed.subscribe(["BTC"]);
    feed.start();
    const m1 = await waitFor(() => market(srv.conns));
    const n1 = await waitFor(() => notification(srv.conns));
    await waitFor(() => sent(m1).length >= 1 && sent(n1).length >= 1);
    send(m1, marketFrames()[2]!);
    send(m1, tradePush(1, Date.now(), "buy"));
    send(n1, liquidationPush(Date.now()));
    await waitFor(() => trades.length === 1 && liqs.length === 1 && m1.received.includes('{"pong":18212558000}'));
  });
});
