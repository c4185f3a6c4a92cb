import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { manualClock, type ManualClock } from "../../src/sim/clock.js";
import { createMarketModel } from "../../src/sim/market.js";
import { DEFAULT_REPLAY_DIR } from "../../src/sim/replay.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { createTape } from "../../src/sim/tape.js";
import { replayWsAvailable } from "../../src/sim/ws/replay.js";
import type { Liquidation, Trade } from "../../src/ingestion/types.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";

/** A fixed start, not aligned to any grid. */
const T0 = Date.parse("2026-11-21T12:34:56.789Z");
const MIN = 60_000;
const DECIMAL = /^\d+(\.\d+)?$/;

let sim: RunningSimulator;
let clock: ManualClock;

beforeAll(async () => {
  clock = manualClock(T0);
  sim = await startSimulator({ seed: 42, clock, ws: { pushIntervalMs: 20 } });
});
afterAll(async () => {
  await sim.close();
});

// ---------------------------------------------------------------- client helpers

class Client {
  readonly msgs: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  pongs = 0;
  pings = 0;

  constructor(readonly ws: WebSocket) {
    ws.on("message", (d: Buffer) => this.msgs.push(d.toString("utf8")));
    ws.on("pong", () => {
      this.pongs += 1;
    });
    ws.on("ping", () => {
      this.pings += 1;
    });
    this.closed = new Promise((resolve) => ws.on("close", (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
    this.opened = new Promise((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new HttpRefusal(res.statusCode ?? 0)));
    });
  }

  static async open(url: string): Promise<Client> {
    const c = new Client(new WebSocket(url));
    await c.opened;
    return c;
  }

  send(x: unknown): void {
    this.ws.send(typeof x === "string" ? x : JSON.stringify(x));
  }

  json(): Array<Record<string, unknown>> {
    return this.msgs.map((m) => JSON.parse(m) as Record<string, unknown>);
  }

  /** Waits until `pred(msgs)` holds. */
  async until(pred: (msgs: string[]) => boolean, timeoutMs = 5000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!pred(this.msgs)) {
      if (Date.now() > end) throw new Error(`timed out; got ${this.msgs.length} messages: ${this.msgs.slice(-3).join(" | ")}`);
      await sleep(10);
    }
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    await this.closed;
  }
}

class HttpRefusal extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function refusedStatus(url: string): Promise<number> {
  try {
    const c = await Client.open(url);
    await c.close();
    return 101;
  } catch (err) {
    if (err instanceof HttpRefusal) return err.status;
    throw err;
  }
}

/** A start time >= `from` (minute steps) whose next `spanMs` holds at least one event of `count`. */
function findWindow(from: number, spanMs: number, count: (t: number) => number): number {
  for (let t = from; t < from + 600 * MIN; t += MIN) if (count(t) > 0) return t;
  throw new Error("no window found");
}

// ---------------------------------------------------------------- normalisers (what a feed does with the wire)

type Row = Record<string, unknown>;
const mult = (sym: string): number => (/^1000|^k[A-Z]/.test(sym) ? 1000 : 1);

function binanceTrade(d: Row, base: string): Trade {
  const m = mult(d.s as string);
  return { venue: "binance", base, time: d.T as number, price: Number(d.p) / m, size: Number(d.q) * m, side: d.m ? "sell" : "buy", id: String(d.a) };
}
function bybitTrade(d: Row, base: string): Trade {
  const m = mult(d.s as string);
  return { venue: "bybit", base, time: d.T as number, price: Number(d.p) / m, size: Number(d.v) * m, side: d.S === "Buy" ? "buy" : "sell", id: d.i as string };
}
function okxTrade(d: Row, base: string, ctVal: number): Trade {
  return { venue: "okx", base, time: Number(d.ts), price: Number(d.px), size: Number(d.sz) * ctVal, side: d.side as "buy" | "sell", id: d.tradeId as string };
}
function hlTrade(d: Row, base: string): Trade {
  const m = mult(d.coin as string);
  return { venue: "hyperliquid", base, time: d.time as number, price: Number(d.px) / m, size: Number(d.sz) * m, side: d.side === "B" ? "buy" : "sell", id: String(d.tid) };
}

const ids = (ts: Trade[]) => ts.map((t) => t.id);

// ---------------------------------------------------------------- tests

describe("ws: mounting", () => {
  it("exposes wsUrls on the simulator's own port and answers 404 to unknown paths", async () => {
    const port = new URL(sim.baseUrl).port;
    // Every perp venue at `/<venue>-ws` (the mounts follow from the id list).
    expect(sim.wsUrls).toEqual(Object.fromEntries(PERP_VENUES.map((v) => [v, `ws://127.0.0.1:${port}/${v}-ws`])));
    expect(sim.wsUrls).toMatchObject({ binance: `ws://127.0.0.1:${port}/binance-ws`, gate: `ws://127.0.0.1:${port}/gate-ws` });
    expect(await refusedStatus(`${sim.wsUrls.binance}/nope`)).toBe(404);
    expect(await refusedStatus(`${sim.wsUrls.bybit}/v5/private`)).toBe(404);
    expect(await refusedStatus(`${sim.wsUrls.okx}/ws/v5/nope`)).toBe(404);
    expect(await refusedStatus(`${sim.wsUrls.hyperliquid}/nope`)).toBe(404);
    expect(await refusedStatus(`ws://127.0.0.1:${port}/elsewhere`)).toBe(404);
  });
});

describe("ws: binance", () => {
  it("combined stream from the URL: aggTrade and !forceOrder@arr wrapped as {stream,data}, equal to the tape", async () => {
    const start = findWindow(T0, MIN, (t) => sim.tape.liquidations("binance", "*", t, t + MIN + 1).length);
    clock.set(start);
    const c = await Client.open(`${sim.wsUrls.binance}/market/stream?streams=btcusdt@aggTrade/!forceOrder@arr`);
    const want = sim.tape.trades("binance", "BTC", start, start + MIN + 1);
    const wantLiq = sim.tape.liquidations("binance", "*", start, start + MIN + 1);
    expect(want.length).toBeGreaterThan(60);
    clock.advance(MIN);
    await c.until((m) => m.length >= want.length + wantLiq.length);
    await sleep(60);
    const msgs = c.json();
    expect(msgs).toHaveLength(want.length + wantLiq.length);
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    for (const m of msgs) {
      expect(Object.keys(m)).toEqual(["stream", "data"]);
      const d = m.data as Row;
      if (m.stream === "btcusdt@aggTrade") {
        expect(Object.keys(d)).toEqual(["e", "E", "a", "s", "p", "q", "f", "l", "T", "m"]);
        expect(d.e).toBe("aggTrade");
        expect(d.s).toBe("BTCUSDT");
        expect(d.p).toMatch(DECIMAL);
        expect(d.q).toMatch(DECIMAL);
        for (const k of ["E", "a", "f", "l", "T"]) expect(Number.isSafeInteger(d[k])).toBe(true);
        expect(typeof d.m).toBe("boolean");
        expect(d.l as number).toBeGreaterThanOrEqual(d.f as number);
        expect(d.E as number).toBeGreaterThanOrEqual(d.T as number);
        trades.push(binanceTrade(d, "BTC"));
      } else {
        expect(m.stream).toBe("!forceOrder@arr");
        expect(Object.keys(d)).toEqual(["e", "E", "o"]);
        expect(d.e).toBe("forceOrder");
        const o = d.o as Row;
        expect(Object.keys(o)).toEqual(["s", "S", "o", "f", "q", "p", "ap", "X", "l", "z", "T"]);
        expect(["BUY", "SELL"]).toContain(o.S);
        expect([o.o, o.f, o.X]).toEqual(["LIMIT", "IOC", "FILLED"]);
        const sym = o.s as string;
        const m1 = mult(sym);
        const base = sym.replace(/^1000/, "").replace(/USDT$/, "");
        const price = Number(o.ap) / m1;
        const size = Number(o.z) * m1;
        liqs.push({ venue: "binance", base, venueSymbol: sym, time: o.T as number, side: o.S === "SELL" ? "long" : "short", price, size, valueUsd: price * size });
      }
    }
    expect(trades).toEqual(want);
    expect(liqs).toEqual(wantLiq);
    // At most one liquidation per symbol per second (forceOrder snapshot semantics).
    const perSecond = new Set(liqs.map((l) => `${l.venueSymbol}:${Math.floor(l.time / 1000)}`));
    expect(perSecond.size).toBe(liqs.length);
    await c.close();
  });

  it("raw /market/ws with live SUBSCRIBE / LIST_SUBSCRIPTIONS / UNSUBSCRIBE; 1000PEPEUSDT is per 1000 coins", async () => {
    const start = clock.now();
    const c = await Client.open(`${sim.wsUrls.binance}/market/ws`);
    c.send({ method: "SUBSCRIBE", params: ["1000pepeusdt@aggTrade"], id: 1 });
    await c.until((m) => m.length >= 1);
    expect(c.msgs[0]).toBe('{"result":null,"id":1}');
    c.send({ method: "LIST_SUBSCRIPTIONS", id: 2 });
    await c.until((m) => m.length >= 2);
    expect(c.msgs[1]).toBe('{"result":["1000pepeusdt@aggTrade"],"id":2}');
    clock.advance(10_000);
    const want = sim.tape.trades("binance", "PEPE", start, start + 10_001);
    await c.until((m) => m.length >= 2 + want.length);
    const data = c.json().slice(2);
    expect(data.every((d) => d.e === "aggTrade" && d.s === "1000PEPEUSDT")).toBe(true);
    expect(data.map((d) => binanceTrade(d, "PEPE"))).toEqual(want);
    const spot = sim.market.priceAt("PEPE", start);
    for (const d of data) expect(Math.abs(Number(d.p) / 1000 / spot - 1)).toBeLessThan(0.01);
    c.send({ method: "UNSUBSCRIBE", params: ["1000pepeusdt@aggTrade"], id: 3 });
    await c.until((m) => m.includes('{"result":null,"id":3}'));
    const n = c.msgs.length;
    clock.advance(10_000);
    await sleep(100);
    expect(c.msgs.length).toBe(n);
    c.send("{nope");
    c.send({ method: "FOO", id: 4 });
    await c.until((m) => m.length >= n + 2);
    const errs = c.json().slice(n);
    expect(errs[0]).toEqual({ error: { code: 3, msg: expect.stringMatching(/^Invalid JSON/) as unknown }, id: null });
    expect((errs[1]?.error as Row).code).toBe(2);
    expect(errs[1]?.id).toBe(4);
    await c.close();
  });

  it("legacy /stream and /ws paths complete the handshake and then stay silent", async () => {
    const a = await Client.open(`${sim.wsUrls.binance}/stream?streams=btcusdt@aggTrade/!forceOrder@arr`);
    const b = await Client.open(`${sim.wsUrls.binance}/ws/btcusdt@aggTrade`);
    const c = await Client.open(`${sim.wsUrls.binance}/ws`);
    c.send({ method: "SUBSCRIBE", params: ["btcusdt@aggTrade"], id: 1 });
    expect(sim.wsFaults.connections("binance")).toBeGreaterThanOrEqual(3);
    clock.advance(5 * MIN);
    await sleep(150);
    expect([a.msgs, b.msgs, c.msgs]).toEqual([[], [], []]);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it("answers protocol pings (no auto-pong shortcut) and its own server pings every interval", async () => {
    const c = await Client.open(`${sim.wsUrls.binance}/market/stream?streams=btcusdt@aggTrade`);
    c.ws.ping();
    const end = Date.now() + 2000;
    while (c.pongs === 0 && Date.now() < end) await sleep(10);
    expect(c.pongs).toBe(1);
    await c.close();
  });
});

describe("ws: bybit", () => {
  it("subscribe ack, ping/pong, failures for the deprecated liquidation topic and unknown symbols", async () => {
    const c = await Client.open(`${sim.wsUrls.bybit}/v5/public/linear`);
    c.send({ req_id: "1", op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.BTCUSDT"] });
    c.send({ req_id: "100001", op: "ping" });
    c.send({ op: "subscribe", args: ["liquidation.BTCUSDT"] });
    c.send({ op: "subscribe", args: ["publicTrade.NOPEUSDT"] });
    c.send({ op: "subscribe", args: ["publicTrade.BTCUSDT"] });
    await c.until((m) => m.length >= 5);
    const [ack, pong, dead, bad, dup] = c.json() as Row[];
    expect(Object.keys(ack as Row)).toEqual(["success", "ret_msg", "conn_id", "req_id", "op"]);
    expect(ack).toMatchObject({ success: true, ret_msg: "", req_id: "1", op: "subscribe" });
    expect((ack as Row).conn_id).toMatch(/^[0-9a-v]{20}-[0-9a-v]{5}$/);
    expect(pong).toEqual({ success: true, ret_msg: "pong", conn_id: (ack as Row).conn_id, req_id: "100001", op: "ping" });
    expect(dead).toMatchObject({ success: false, ret_msg: "error:handler not found,topic:liquidation.BTCUSDT", req_id: "", op: "subscribe" });
    expect(bad).toMatchObject({ success: false, ret_msg: "Invalid symbol :[publicTrade.NOPEUSDT]" });
    expect(dup).toMatchObject({ success: false, ret_msg: "error:already subscribed,topic:publicTrade.BTCUSDT" });
    await c.close();
  });

  it("publicTrade batches (S = taker) and allLiquidation every 500 ms (S = position side) match the tape", async () => {
    const start = findWindow(clock.now() + MIN, MIN, (t) => sim.tape.liquidations("bybit", "BTC", t, t + MIN + 1).length);
    clock.set(start);
    const c = await Client.open(`${sim.wsUrls.bybit}/v5/public/linear`);
    c.send({ req_id: "a", op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.BTCUSDT"] });
    await c.until((m) => m.length >= 1);
    const want = sim.tape.trades("bybit", "BTC", start, start + MIN + 1);
    const wantLiq = sim.tape.liquidations("bybit", "BTC", start, start + MIN + 1);
    clock.advance(MIN);
    const count = (kind: string) => (m: string[]) => m.filter((x) => x.includes(`"topic":"${kind}`)).reduce((n, x) => n + (JSON.parse(x) as { data: unknown[] }).data.length, 0);
    await c.until((m) => count("publicTrade")(m) >= want.length && count("allLiquidation")(m) >= wantLiq.length);
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    for (const m of c.json().slice(1)) {
      expect(Object.keys(m)).toEqual(["topic", "type", "ts", "data"]);
      expect(m.type).toBe("snapshot");
      expect(typeof m.ts).toBe("number");
      for (const d of m.data as Row[]) {
        if (m.topic === "publicTrade.BTCUSDT") {
          expect(Object.keys(d)).toEqual(["T", "s", "S", "v", "p", "L", "i", "BT", "RPI", "seq"]);
          expect(["PlusTick", "ZeroPlusTick", "MinusTick", "ZeroMinusTick"]).toContain(d.L);
          expect(d.i).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          expect(d.p).toMatch(/^\d+\.\d$/);
          expect(d.v).toMatch(/^\d+\.\d{3}$/);
          trades.push(bybitTrade(d, "BTC"));
        } else {
          expect(m.topic).toBe("allLiquidation.BTCUSDT");
          expect(Object.keys(d)).toEqual(["T", "s", "S", "v", "p"]);
          const price = Number(d.p);
          const size = Number(d.v);
          liqs.push({ venue: "bybit", base: "BTC", venueSymbol: "BTCUSDT", time: d.T as number, side: d.S === "Buy" ? "long" : "short", price, size, valueUsd: price * size });
        }
      }
    }
    expect(trades).toEqual(want);
    expect(liqs).toEqual(wantLiq);
    await c.close();
  });
});

describe("ws: okx", () => {
  it("subscribe acks per arg, text ping → text pong, 60018 for unknown instruments", async () => {
    const c = await Client.open(`${sim.wsUrls.okx}/ws/v5/public`);
    c.send({
      op: "subscribe",
      args: [
        { channel: "trades", instId: "BTC-USDT-SWAP" },
        { channel: "liquidation-orders", instType: "SWAP" },
      ],
    });
    c.send("ping");
    c.send({ op: "subscribe", args: [{ channel: "trades", instId: "NOPE-USDT-SWAP" }] });
    await c.until((m) => m.length >= 4);
    expect(c.msgs[2]).toBe("pong");
    const [a1, a2] = c.msgs.slice(0, 2).map((m) => JSON.parse(m) as Row);
    expect(Object.keys(a1 as Row)).toEqual(["event", "arg", "connId"]);
    expect(a1).toMatchObject({ event: "subscribe", arg: { channel: "trades", instId: "BTC-USDT-SWAP" } });
    expect((a1 as Row).connId).toMatch(/^[0-9a-f]{8}$/);
    expect(a2).toEqual({ event: "subscribe", arg: { channel: "liquidation-orders", instType: "SWAP" }, connId: (a1 as Row).connId });
    const err = JSON.parse(c.msgs[3] as string) as Row;
    expect(err).toMatchObject({ event: "error", code: "60018" });
    expect(err.msg).toMatch(/^Wrong URL or channel:trades,instId:NOPE-USDT-SWAP doesn't exist/);
    await c.close();
  });

  it("trades (sz in contracts, side = taker) and liquidation-orders (posSide, details) match the tape", async () => {
    const start = findWindow(clock.now() + MIN, MIN, (t) => sim.tape.liquidations("okx", "*", t, t + MIN + 1).length);
    clock.set(start);
    const c = await Client.open(`${sim.wsUrls.okx}/ws/v5/public`);
    c.send({
      op: "subscribe",
      args: [
        { channel: "trades", instId: "BTC-USDT-SWAP" },
        { channel: "liquidation-orders", instType: "SWAP" },
      ],
    });
    await c.until((m) => m.length >= 2);
    const ctVal = sim.perp.perpOf("okx", "BTC")?.ctVal as number;
    expect(ctVal).toBe(0.01);
    const want = sim.tape.trades("okx", "BTC", start, start + MIN + 1);
    const wantLiq = sim.tape.liquidations("okx", "*", start, start + MIN + 1);
    clock.advance(MIN);
    await c.until(
      (m) =>
        m.filter((x) => x.includes('"channel":"trades"')).length >= want.length &&
        m
          .slice(2)
          .filter((x) => x.includes('"channel":"liquidation-orders"'))
          .reduce((n, x) => n + ((JSON.parse(x) as { data: Array<{ details: unknown[] }> }).data[0]?.details.length ?? 0), 0) >= wantLiq.length,
    );
    const trades: Trade[] = [];
    const liqs: Liquidation[] = [];
    for (const m of c.json().slice(2)) {
      expect(Object.keys(m)).toEqual(["arg", "data"]);
      const arg = m.arg as Row;
      const data = m.data as Row[];
      expect(data).toHaveLength(1);
      const d = data[0] as Row;
      if (arg.channel === "trades") {
        expect(Object.keys(d)).toEqual(["instId", "tradeId", "px", "sz", "side", "ts", "count", "source", "seqId"]);
        for (const k of ["tradeId", "px", "sz", "ts"]) expect(d[k]).toMatch(DECIMAL);
        trades.push(okxTrade(d, "BTC", ctVal));
      } else {
        expect(arg).toEqual({ channel: "liquidation-orders", instType: "SWAP" });
        expect(Object.keys(d)).toEqual(["details", "instFamily", "instId", "instType", "uly"]);
        const instId = d.instId as string;
        const inst = sim.perp.instrument("okx", instId, start);
        expect(inst?.target).toBe(true);
        expect(d.instFamily).toBe(instId.replace(/-SWAP$/, ""));
        for (const x of d.details as Row[]) {
          expect(Object.keys(x)).toEqual(["bkLoss", "bkPx", "ccy", "posSide", "side", "sz", "ts"]);
          expect(x.side).toBe(x.posSide === "long" ? "sell" : "buy");
          const price = Number(x.bkPx);
          const size = Number(x.sz) * (inst?.ctVal as number);
          liqs.push({
            venue: "okx",
            base: inst?.base as string,
            venueSymbol: instId,
            time: Number(x.ts),
            side: x.posSide as "long" | "short",
            price,
            size,
            valueUsd: price * size,
          });
        }
      }
    }
    expect(trades).toEqual(want);
    liqs.sort((a, b) => a.time - b.time || (a.venueSymbol < b.venueSymbol ? -1 : a.venueSymbol > b.venueSymbol ? 1 : 0));
    expect(liqs).toEqual(wantLiq);
    await c.close();
  });
});

describe("ws: hyperliquid", () => {
  it("subscriptionResponse, {method:ping} → {channel:pong}, trades (B/A aggressor) match the tape", async () => {
    const start = clock.now();
    const c = await Client.open(`${sim.wsUrls.hyperliquid}/ws`);
    c.send({ method: "subscribe", subscription: { type: "trades", coin: "BTC" } });
    c.send({ method: "ping" });
    c.send({ method: "subscribe", subscription: { type: "trades", coin: "NOPE" } });
    await c.until((m) => m.length >= 3);
    expect(c.msgs[0]).toBe('{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"trades","coin":"BTC"}}}');
    expect(c.msgs[1]).toBe('{"channel":"pong"}');
    expect(JSON.parse(c.msgs[2] as string)).toMatchObject({ channel: "error" });
    const want = sim.tape.trades("hyperliquid", "BTC", start, start + 20_001);
    clock.advance(20_000);
    const n = (m: string[]) => m.slice(3).reduce((k, x) => k + (JSON.parse(x) as { data: unknown[] }).data.length, 0);
    await c.until((m) => n(m) >= want.length);
    const trades: Trade[] = [];
    for (const m of c.json().slice(3)) {
      expect(Object.keys(m)).toEqual(["channel", "data"]);
      expect(m.channel).toBe("trades");
      for (const d of m.data as Row[]) {
        expect(Object.keys(d)).toEqual(["coin", "side", "px", "sz", "time", "hash", "tid", "users"]);
        expect(["A", "B"]).toContain(d.side);
        expect(d.hash).toMatch(/^0x[0-9a-f]{64}$/);
        expect(Number.isSafeInteger(d.tid) && (d.tid as number) < 2 ** 50).toBe(true);
        expect(d.users).toHaveLength(2);
        expect(d.px).toMatch(/^\d+\.\d+$/);
        trades.push(hlTrade(d, "BTC"));
      }
    }
    expect(trades).toEqual(want);
    await c.close();
  });
});

describe("ws: tape", () => {
  it("is a pure function of (seed, time): same seed same tape, split intervals concatenate, other seeds differ", () => {
    const a = createTape(createMarketModel({ seed: 42, clock: manualClock(0) }));
    const b = createTape(createMarketModel({ seed: 42, clock: manualClock(T0) }));
    const c = createTape(createMarketModel({ seed: 7, clock: manualClock(T0) }));
    for (const venue of ["binance", "bybit", "okx", "hyperliquid"] as const) {
      const full = a.trades(venue, "ETH", T0, T0 + 5 * MIN);
      expect(full.length).toBeGreaterThan(100);
      expect(b.trades(venue, "ETH", T0, T0 + 5 * MIN)).toEqual(full);
      expect(sim.tape.trades(venue, "ETH", T0, T0 + 5 * MIN)).toEqual(full);
      const split = [...a.trades(venue, "ETH", T0, T0 + 77_777), ...b.trades(venue, "ETH", T0 + 77_777, T0 + 5 * MIN)];
      expect(split).toEqual(full);
      expect(ids(c.trades(venue, "ETH", T0, T0 + 5 * MIN))).not.toEqual(ids(full));
      expect(new Set(ids(full)).size).toBe(full.length);
      for (let i = 1; i < full.length; i++) expect((full[i] as Trade).time).toBeGreaterThanOrEqual((full[i - 1] as Trade).time);
      for (const t of full) {
        expect(t.venue).toBe(venue);
        expect(t.base).toBe("ETH");
        expect(t.size).toBeGreaterThan(0);
        expect(Math.abs(t.price / sim.market.priceAt("ETH", t.time) - 1)).toBeLessThan(0.01);
      }
    }
    const liq = a.liquidations("binance", "*", T0, T0 + 60 * MIN);
    expect(b.liquidations("binance", "*", T0, T0 + 60 * MIN)).toEqual(liq);
    expect(liq.length).toBeGreaterThan(0);
    expect(liq.length).toBeLessThan(a.trades("binance", "BTC", T0, T0 + 60 * MIN).length / 10);
    for (const l of liq) expect(l.valueUsd).toBeCloseTo(l.price * l.size, 6);
    expect(a.liquidations("hyperliquid", "*", T0, T0 + 60 * MIN)).toEqual([]);
    expect(() => a.trades("hyperliquid", "TON", T0, T0 + MIN)).toThrow(RangeError);
  });
});

describe("ws: the websocket tape equals the REST backfill", () => {
  it("binance aggTrades, bybit recent-trade, okx history-trades, hyperliquid recentTrades", async () => {
    const start = clock.now() + MIN;
    clock.set(start);
    const bn = await Client.open(`${sim.wsUrls.binance}/market/stream?streams=ethusdt@aggTrade`);
    const bb = await Client.open(`${sim.wsUrls.bybit}/v5/public/linear`);
    const ok = await Client.open(`${sim.wsUrls.okx}/ws/v5/public`);
    const hl = await Client.open(`${sim.wsUrls.hyperliquid}/ws`);
    bb.send({ op: "subscribe", args: ["publicTrade.ETHUSDT"] });
    ok.send({ op: "subscribe", args: [{ channel: "trades", instId: "ETH-USDT-SWAP" }] });
    hl.send({ method: "subscribe", subscription: { type: "trades", coin: "ETH" } });
    await Promise.all([bb.until((m) => m.length >= 1), ok.until((m) => m.length >= 1), hl.until((m) => m.length >= 1)]);
    const end = start + 2 * MIN;
    const want = (v: "binance" | "bybit" | "okx" | "hyperliquid") => sim.tape.trades(v, "ETH", start, end + 1);
    // Two steps, so each venue pushes in several batches.
    clock.advance(MIN);
    await sleep(60);
    clock.set(end);
    await bn.until((m) => m.length >= want("binance").length);
    const items = (c: Client, skip: number) =>
      c
        .json()
        .slice(skip)
        .flatMap((m) => m.data as Row[]);
    await bb.until(() => items(bb, 1).length >= want("bybit").length);
    await ok.until((m) => m.length - 1 >= want("okx").length);
    await hl.until(() => items(hl, 1).length >= want("hyperliquid").length);

    const wsBinance = bn.json().map((m) => m.data as Row);
    expect(wsBinance.map((d) => binanceTrade(d, "ETH"))).toEqual(want("binance"));
    const rest = (await (await fetch(`${sim.urls.binance}/fapi/v1/aggTrades?symbol=ETHUSDT&startTime=${start}&endTime=${end}&limit=1000`)).json()) as Row[];
    expect(rest.map((r) => Object.keys(r))[0]).toEqual(["a", "p", "q", "f", "l", "T", "m"]);
    expect(rest).toEqual(wsBinance.map(({ a, p, q, f, l, T, m }) => ({ a, p, q, f, l, T, m })));
    // fromId paging gives the same rows
    const firstId = rest[0]?.a as number;
    const paged = (await (await fetch(`${sim.urls.binance}/fapi/v1/aggTrades?symbol=ETHUSDT&fromId=${firstId}&limit=5`)).json()) as Row[];
    expect(paged).toEqual(rest.slice(0, 5));
    const tooLong = await fetch(`${sim.urls.binance}/fapi/v1/aggTrades?symbol=ETHUSDT&startTime=${start}&endTime=${start + 3_600_001}`);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as Row).code).toBe(-1127);

    const wsBybit = items(bb, 1);
    expect(wsBybit.map((d) => bybitTrade(d, "ETH"))).toEqual(want("bybit"));
    const rb = (await (await fetch(`${sim.urls.bybit}/v5/market/recent-trade?category=linear&symbol=ETHUSDT&limit=1000`)).json()) as {
      retCode: number;
      result: { category: string; list: Row[] };
    };
    expect(rb.retCode).toBe(0);
    expect(Object.keys(rb.result.list[0] as Row)).toEqual(["execId", "symbol", "price", "size", "side", "time", "isBlockTrade", "isRPITrade"]);
    const rbIn = rb.result.list.filter((r) => Number(r.time) >= start && Number(r.time) <= end).reverse();
    expect(rbIn.map((r) => [r.execId, r.price, r.size, r.side, Number(r.time)])).toEqual(wsBybit.map((d) => [d.i, d.p, d.v, d.S, d.T]));
    expect(rb.result.list.length).toBe(1000); // most recent 1000, newest first, no time filter
    expect(Number((rb.result.list[0] as Row).time)).toBeLessThanOrEqual(end);

    const wsOkx = ok
      .json()
      .slice(1)
      .map((m) => (m.data as Row[])[0] as Row);
    expect(wsOkx.map((d) => okxTrade(d, "ETH", 0.1))).toEqual(want("okx"));
    const pages: Row[] = [];
    let after: string | undefined;
    for (;;) {
      const q = `${sim.urls.okx}/api/v5/market/history-trades?instId=ETH-USDT-SWAP&type=2&limit=100${after ? `&after=${after}` : ""}`;
      const page = ((await (await fetch(q)).json()) as { code: string; data: Row[] }).data;
      expect(page.length).toBeGreaterThan(0);
      pages.push(...page);
      const last = page[page.length - 1] as Row;
      if (Number(last.ts) < start) break;
      after = last.ts as string;
    }
    // (type=2 pages split by timestamp; dedupe by tradeId, as a client would)
    const seen = new Set<string>();
    const okRest = pages.filter((r) => Number(r.ts) >= start && Number(r.ts) <= end && !seen.has(r.tradeId as string) && seen.add(r.tradeId as string)).reverse();
    expect(Object.keys(pages[0] as Row)).toEqual(["instId", "side", "sz", "px", "tradeId", "ts"]);
    expect(okRest.map((r) => [r.tradeId, r.px, r.sz, r.side, r.ts])).toEqual(wsOkx.map((d) => [d.tradeId, d.px, d.sz, d.side, d.ts]));
    const recent = ((await (await fetch(`${sim.urls.okx}/api/v5/market/trades?instId=ETH-USDT-SWAP&limit=3`)).json()) as { data: Row[] }).data;
    expect(recent.map((r) => r.tradeId)).toEqual(
      wsOkx
        .slice(-3)
        .reverse()
        .map((d) => d.tradeId),
    );
    // type=1 (tradeId cursor) walks back without gaps or duplicates
    const byId = (
      (await (await fetch(`${sim.urls.okx}/api/v5/market/history-trades?instId=ETH-USDT-SWAP&after=${(recent[2] as Row).tradeId as string}&limit=4`)).json()) as { data: Row[] }
    ).data;
    expect(byId.map((r) => r.tradeId)).toEqual(
      wsOkx
        .slice(-7, -3)
        .reverse()
        .map((d) => d.tradeId),
    );

    const wsHl = items(hl, 1);
    expect(wsHl.map((d) => hlTrade(d, "ETH"))).toEqual(want("hyperliquid"));
    const rh = (await (await fetch(`${sim.urls.hyperliquid}/info`, { method: "POST", body: JSON.stringify({ type: "recentTrades", coin: "ETH" }) })).json()) as Row[];
    expect(rh).toEqual(wsHl.slice(-10).reverse());

    await Promise.all([bn.close(), bb.close(), ok.close(), hl.close()]);
  });
});

describe("ws: faults", () => {
  it("drop closes every connection of the venue abruptly", async () => {
    const a = await Client.open(`${sim.wsUrls.bybit}/v5/public/linear`);
    const b = await Client.open(`${sim.wsUrls.bybit}/v5/public/linear`);
    const other = await Client.open(`${sim.wsUrls.okx}/ws/v5/public`);
    const okxOpen = sim.wsFaults.connections("okx");
    expect(sim.wsFaults.connections("bybit")).toBe(2);
    expect(sim.wsFaults.drop("bybit")).toBe(2);
    expect((await a.closed).code).toBe(1006);
    expect((await b.closed).code).toBe(1006);
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    expect(sim.wsFaults.inject("okx", { kind: "drop" })).toBe(okxOpen);
    await other.closed;
  });

  it("silence keeps the socket open but sends nothing; what fell due meanwhile is lost (a gap)", async () => {
    const t = clock.now();
    const c = await Client.open(`${sim.wsUrls.binance}/market/stream?streams=btcusdt@aggTrade`);
    sim.wsFaults.silence("binance");
    c.ws.ping();
    clock.advance(30_000);
    await sleep(150);
    expect(c.msgs).toEqual([]);
    expect(c.pongs).toBe(0);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    sim.wsFaults.clear("binance");
    clock.advance(30_000);
    const want = sim.tape.trades("binance", "BTC", t + 30_001, t + 60_001);
    await c.until((m) => m.length >= want.length);
    await sleep(50);
    expect(c.json().map((m) => binanceTrade(m.data as Row, "BTC"))).toEqual(want);
    // timed silence ends by itself
    sim.wsFaults.silence("binance", 150);
    expect(sim.wsFaults.isSilenced("binance")).toBe(true);
    await sleep(200);
    expect(sim.wsFaults.isSilenced("binance")).toBe(false);
    await c.close();
  });

  it("late_pong delays app-level and protocol pongs", async () => {
    const h = await Client.open(`${sim.wsUrls.hyperliquid}/ws`);
    sim.wsFaults.latePong("hyperliquid", 300);
    let t = Date.now();
    h.send({ method: "ping" });
    await h.until((m) => m.includes('{"channel":"pong"}'));
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    sim.wsFaults.inject("binance", { kind: "late_pong", ms: 250 });
    const b = await Client.open(`${sim.wsUrls.binance}/market/ws`);
    t = Date.now();
    b.ws.ping();
    while (b.pongs === 0) await sleep(5);
    expect(Date.now() - t).toBeGreaterThanOrEqual(230);
    sim.wsFaults.clear();
    t = Date.now();
    h.send({ method: "ping" });
    await h.until((m) => m.filter((x) => x === '{"channel":"pong"}').length === 2);
    expect(Date.now() - t).toBeLessThan(200);
    await Promise.all([h.close(), b.close()]);
  });

  it("malformed sends unparsable frames and the connection keeps working", async () => {
    const c = await Client.open(`${sim.wsUrls.okx}/ws/v5/public`);
    expect(sim.wsFaults.malformed("okx", 2)).toBe(1);
    await c.until((m) => m.length >= 2);
    for (const m of c.msgs) expect(() => JSON.parse(m) as unknown).toThrow();
    expect(c.msgs[0]).toMatch(/^\{"arg":\{"channel":"trades"/);
    c.send("ping");
    await c.until((m) => m[2] === "pong");
    await c.close();
  });

  it("refuse rejects new upgrades for a while (HTTP 503, or the given status)", async () => {
    const before = sim.wsFaults.upgrades("okx");
    sim.wsFaults.refuse("okx", 300);
    expect(await refusedStatus(`${sim.wsUrls.okx}/ws/v5/public`)).toBe(503);
    sim.wsFaults.inject("bybit", { kind: "refuse", status: 429 });
    expect(await refusedStatus(`${sim.wsUrls.bybit}/v5/public/linear`)).toBe(429);
    expect(await refusedStatus(`${sim.wsUrls.hyperliquid}/ws`)).toBe(101);
    await sleep(350);
    expect(await refusedStatus(`${sim.wsUrls.okx}/ws/v5/public`)).toBe(101);
    expect(await refusedStatus(`${sim.wsUrls.bybit}/v5/public/linear`)).toBe(429);
    sim.wsFaults.clear("bybit");
    expect(await refusedStatus(`${sim.wsUrls.bybit}/v5/public/linear`)).toBe(101);
    expect(sim.wsFaults.upgrades("okx")).toBe(before + 2);
  });
});

describe("ws: keepalive rules (shortened timers)", () => {
  let k: RunningSimulator;
  beforeAll(async () => {
    k = await startSimulator({
      seed: 42,
      clock: manualClock(T0),
      // Idle limits well above the 100 ms client pings, so that a loaded machine's late timers do not close the busy client.
      ws: { pushIntervalMs: 20, okxIdleMs: 1500, hyperliquidIdleMs: 1500, binancePingIntervalMs: 100 },
    });
  });
  afterAll(async () => {
    await k.close();
  });

  it("okx closes after the idle time without traffic unless the client pings", async () => {
    const idle = await Client.open(`${k.wsUrls.okx}/ws/v5/public`);
    const busy = await Client.open(`${k.wsUrls.okx}/ws/v5/public`);
    const t = Date.now();
    const timer = setInterval(() => busy.send("ping"), 100);
    const closed = await idle.closed;
    expect(closed.code).toBe(4004);
    expect(Date.now() - t).toBeGreaterThanOrEqual(1400);
    await sleep(400);
    clearInterval(timer);
    expect(busy.ws.readyState).toBe(WebSocket.OPEN);
    expect(busy.msgs.filter((m) => m === "pong").length).toBeGreaterThanOrEqual(5);
    await busy.close();
  });

  it("hyperliquid closes after the idle time without a client message; pings keep it open", async () => {
    const idle = await Client.open(`${k.wsUrls.hyperliquid}/ws`);
    const busy = await Client.open(`${k.wsUrls.hyperliquid}/ws`);
    const timer = setInterval(() => busy.send({ method: "ping" }), 100);
    await idle.closed;
    await sleep(400);
    clearInterval(timer);
    expect(busy.ws.readyState).toBe(WebSocket.OPEN);
    await busy.close();
  });

  it("binance sends protocol pings on the routed paths only", async () => {
    const live = await Client.open(`${k.wsUrls.binance}/market/stream?streams=btcusdt@aggTrade`);
    const legacy = await Client.open(`${k.wsUrls.binance}/stream?streams=btcusdt@aggTrade`);
    await sleep(350);
    expect(live.pings).toBeGreaterThanOrEqual(2);
    expect(legacy.pings).toBe(0);
    await Promise.all([live.close(), legacy.close()]);
  });
});

describe.skipIf(!replayWsAvailable(DEFAULT_REPLAY_DIR))("ws: replay", () => {
  it("pushes the recorded real frames verbatim on recorded topics the model does not serve", async () => {
    const r = await startSimulator({ seed: 42, clock: manualClock(T0), replay: { venues: ["binance", "bybit", "okx", "hyperliquid"] }, ws: { pushIntervalMs: 20 } });
    try {
      // Recordings play only on topics the model does not serve (docs/sandbox-replay.md): Bybit's spot path.
      const bb = await Client.open(`${r.wsUrls.bybit}/v5/public/spot`);
      bb.send({ op: "subscribe", args: ["publicTrade.ETHUSDT"] });
      await bb.until((m) => m.length >= 2);
      expect(bb.msgs[1]).toBe(
        '{"topic":"publicTrade.ETHUSDT","ts":1786310821917,"type":"snapshot","data":[{"i":"2280000001739247417","T":1786310821917,"p":"1923.28","v":"0.04537","S":"Sell","seq":178477362706,"s":"ETHUSDT","BT":false,"RPI":false}]}',
      ); // 2026-08-09 recording, verbatim

      const bn = await Client.open(`${r.wsUrls.binance}/market/stream?streams=sandusdt@aggTrade`);
      await bn.until((m) => m.length >= 1);
      expect(bn.msgs[0]).toBe(
        '{"stream":"sandusdt@aggTrade","data":{"e":"aggTrade","E":1617647797640,"a":9445517,"s":"SANDUSDT","p":"0.69067","q":"369","f":12821738,"l":12821738,"T":1617647797485,"m":true}}',
      );

      const hl = await Client.open(`${r.wsUrls.hyperliquid}/ws`);
      hl.send({ method: "subscribe", subscription: { type: "trades", coin: "FXS" } });
      await hl.until((m) => m.length >= 2);
      const rec = JSON.parse(hl.msgs[1] as string) as { channel: string; data: Row[] };
      expect(rec.channel).toBe("trades");
      expect(rec.data[0]).toMatchObject({ coin: "FXS", side: "A", px: "1.9008", sz: "10.5", time: 1730160015113 });
      // Topics the model serves stay simulated.
      hl.send({ method: "subscribe", subscription: { type: "trades", coin: "ETH" } });
      await hl.until((m) => m.some((x) => x.includes('"subscription":{"type":"trades","coin":"ETH"}')));
      await Promise.all([bb.close(), bn.close(), hl.close()]);
    } finally {
      await r.close();
    }
  });
});

describe("ws: close", () => {
  it("sim.close() terminates every socket and timer, leaving no open handles", async () => {
    const kinds = ["TCPSocketWrap", "TCPServerWrap", "Timeout"];
    const count = () => {
      const info = process.getActiveResourcesInfo();
      return Object.fromEntries(kinds.map((k) => [k, info.filter((x) => x === k).length]));
    };
    await sleep(50);
    const baseline = count();
    const s = await startSimulator({ seed: 1, clock: manualClock(T0), ws: { pushIntervalMs: 20 } });
    const clients = await Promise.all([
      Client.open(`${s.wsUrls.binance}/market/stream?streams=btcusdt@aggTrade`),
      Client.open(`${s.wsUrls.binance}/stream`),
      Client.open(`${s.wsUrls.bybit}/v5/public/linear`),
      Client.open(`${s.wsUrls.okx}/ws/v5/public`),
      Client.open(`${s.wsUrls.hyperliquid}/ws`),
    ]);
    s.wsFaults.latePong("hyperliquid", 10_000);
    (clients[4] as Client).send({ method: "ping" }); // a pending delayed pong timer
    await sleep(50);
    await s.close();
    await Promise.all(clients.map((c) => c.closed));
    await sleep(50);
    const after = count();
    for (const k of kinds) expect(after[k]).toBeLessThanOrEqual(baseline[k] as number);
    expect(await refusedStatus(`${s.wsUrls.okx}/ws/v5/public`).catch(() => -1)).toBe(-1); // nothing listens
  });
});
