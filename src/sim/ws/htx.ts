/**
 * Simulated HTX USDT-margined swap websockets (`wss://api.hbdm.com`, base `wsUrls.htx`); HTX docs "Swap WebSocket
 * Reference" (https://www.htx.com/en-us/opend/newApiPages/, mirrored in src/venues/htx/fixtures/README.md).
 *
 * Two paths, as on the real host:
 * - `/linear-swap-ws` (market): `{"sub": "market.BTC-USDT.trade.detail", "id"}` → `{"id", "status": "ok", "subbed",
 *   "ts"}`, then `{"ch", "ts", "tick": {"id", "ts", "data": [fills]}}` per push (fills of the tape, `amount` in
 *   contracts, `direction` the taker side); `{"unsub", "id"}` → `{"id", "status": "ok", "unsubbed", "ts"}`; other
 *   `market.<contract>.*` topics of a listed swap are acknowledged and silent; an unknown contract or topic →
 *   `{"id", "status": "error", "err-code": "bad-request", "err-msg": "invalid topic …", "ts"}`. Heartbeat: the server
 *   sends `{"ping": <ms>}` every 5 s and answers a client `{"ping": n}` with `{"pong": n}`.
 * - `/linear-swap-notification`: `{"op": "sub", "cid", "topic": "public.*.liquidation_orders" |
 *   "public.<contract>.liquidation_orders"}` → `{"op": "sub", "cid", "topic", "ts", "err-code": 0}` (2014 "Repeated
 *   subscription" when the wildcard already covers the contract, 2011 for an unknown contract, 2010 for another
 *   topic); pushes `{"op": "notify", "topic": "public.<contract>.liquidation_orders", "ts", "data": [rows]}` per
 *   contract (`direction` = the liquidation order's side, `volume` contracts). Heartbeat: `{"op": "ping", "ts":
 *   "<ms>"}` every 5 s (`ts` a string, as in the docs), answered `{"op": "pong", "ts"}`.
 * On both, a connection that leaves five pings unanswered is closed (the notification path sends `{"op": "close",
 * "ts"}` first), as the docs' heartbeat notes say. Frames are JSON text here; HTX compresses every frame with gzip,
 * which the hub applies to this venue's sends ({@link htxEncode}).
 */
import { gzipSync } from "node:zlib";
import type { PerpInstrumentSpec } from "../perp-model.js";
import { HTX_SIM, htxLiquidationRow, htxTradeRow } from "../venues/htx.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** The two HTX websocket paths. */
export type HtxRoute = "market" | "notification";

/** The route of an HTX websocket path, or undefined. */
export function htxRoute(rest: string): HtxRoute | undefined {
  if (/^\/linear-swap-ws\/?$/.test(rest)) return "market";
  if (/^\/linear-swap-notification\/?$/.test(rest)) return "notification";
  return undefined;
}

/** One frame as HTX puts it on the wire: the JSON text gzip-compressed (for the hub's sends to this venue). */
export function htxEncode(text: string): Buffer {
  return gzipSync(Buffer.from(text, "utf8"));
}

/** Heartbeat rules (wall ms): a ping every `pingEveryMs` (HTX: 5 s), the connection closed after `maxMissed` (5) unanswered. */
export interface HtxHeartbeat {
  readonly pingEveryMs: number;
  readonly maxMissed: number;
}

const HEARTBEAT: HtxHeartbeat = { pingEveryMs: 5_000, maxMissed: 5 };
const TRADE_TOPIC = /^market\.([^.]+)\.trade\.detail$/;
const MARKET_TOPIC =
  /^market\.([^.]+)\.(kline\.[^.]+|depth\.[^.]+|depth\.size_\d+\.high_freq|detail|bbo|index\.[^.]+|premium_index\.[^.]+|estimated_rate\.[^.]+|mark_price\.[^.]+)$/;
const LIQUIDATION_TOPIC = /^public\.([^.]+)\.liquidation_orders$/;

type Sub =
  { kind: "trades"; inst: PerpInstrumentSpec; topic: string; cursor: number } | { kind: "liquidations"; insts: "all" | PerpInstrumentSpec; cursor: number } | { kind: "silent" };

export class HtxSession implements Session {
  readonly #subs = new Map<string, Sub>();
  #lastPingAt = 0;
  #missed = 0;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly route: HtxRoute,
    private readonly heartbeat: HtxHeartbeat = HEARTBEAT,
  ) {}

  #swap(code: string, now: number): PerpInstrumentSpec | undefined {
    const inst = this.env.perp.instrument(HTX_SIM, code.toUpperCase(), now);
    return inst && inst.kind === "perpetual" && !inst.inverse ? inst : undefined;
  }

  #reply(body: Record<string, unknown>): void {
    this.io.sendReply(JSON.stringify({ ...body, ts: this.env.clock.now() }));
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      msg = undefined;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      return this.route === "market" ? this.#reply({ status: "error", "err-code": "bad-request", "err-msg": "invalid request" }) : this.#reply({ op: "error" });
    }
    return this.route === "market" ? this.#market(msg as Record<string, unknown>) : this.#notification(msg as Record<string, unknown>);
  }

  #market(m: Record<string, unknown>): void {
    if ("pong" in m) return void (this.#missed = 0);
    if ("ping" in m) return this.io.sendPong(JSON.stringify({ pong: m.ping }));
    const now = this.env.clock.now();
    const refuse = (topic: unknown) => this.#reply({ id: m.id, status: "error", "err-code": "bad-request", "err-msg": `invalid topic ${String(topic)}` });
    if (typeof m.unsub === "string") {
      this.#subs.delete(m.unsub);
      return this.#reply({ id: m.id, status: "ok", unsubbed: m.unsub });
    }
    if (typeof m.sub !== "string") return refuse(m.sub ?? m.req);
    const topic = m.sub;
    const trade = TRADE_TOPIC.exec(topic);
    const other = MARKET_TOPIC.exec(topic);
    const inst = this.#swap((trade ?? other)?.[1] ?? "", now);
    if (!inst) return refuse(topic);
    if (!this.#subs.has(topic)) this.#subs.set(topic, trade ? { kind: "trades", inst, topic, cursor: now } : { kind: "silent" });
    this.#reply({ id: m.id, status: "ok", subbed: topic });
  }

  #notification(m: Record<string, unknown>): void {
    const now = this.env.clock.now();
    if (m.op === "pong") return void (this.#missed = 0);
    if (m.op !== "sub" && m.op !== "unsub") return this.#reply({ op: "error" });
    const topic = typeof m.topic === "string" ? m.topic : "";
    const ack = (code: number, msg?: string) => this.#reply({ op: m.op, cid: m.cid, topic, "err-code": code, ...(msg ? { "err-msg": msg } : {}) });
    const code = LIQUIDATION_TOPIC.exec(topic)?.[1];
    if (code === undefined) return ack(2010, "Topic error.");
    if (m.op === "unsub") {
      if (code === "*") this.#subs.clear();
      else this.#subs.delete(topic);
      return ack(0);
    }
    if (code === "*") {
      this.#subs.set("public.*.liquidation_orders", { kind: "liquidations", insts: "all", cursor: now });
      return ack(0);
    }
    const inst = this.#swap(code, now);
    if (!inst) return ack(2011, "Contract doesn't exist.");
    if (this.#subs.has("public.*.liquidation_orders")) return ack(2014, "Repeated subscription.");
    if (!this.#subs.has(topic)) this.#subs.set(topic, { kind: "liquidations", insts: inst, cursor: now });
    ack(0);
  }

  tick(now: number, elapsedMs: number): void {
    if (elapsedMs - this.#lastPingAt >= this.heartbeat.pingEveryMs) {
      if (this.#missed >= this.heartbeat.maxMissed) {
        if (this.route === "notification") this.#reply({ op: "close" });
        return this.io.close(1000, "Bye");
      }
      this.#lastPingAt = elapsedMs;
      this.#missed += 1;
      this.io.sendReply(JSON.stringify(this.route === "market" ? { ping: now } : { op: "ping", ts: String(now) }));
    }
    const { tape, perp } = this.env;
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      if (sub.kind === "silent" || to <= sub.cursor) continue;
      const cursor = sub.cursor;
      sub.cursor = to;
      if (sub.kind === "trades") {
        const trades = tape.tradesOf(sub.inst, cursor, to);
        if (trades.length === 0) continue;
        const last = trades[trades.length - 1]!;
        this.io.sendData(JSON.stringify({ ch: sub.topic, ts: now, tick: { id: last.seq, ts: last.time, data: trades.map(htxTradeRow) } }));
        continue;
      }
      const insts = sub.insts === "all" ? perp.instruments(HTX_SIM, now).filter((i) => i.target) : [sub.insts];
      for (const inst of insts) {
        const liqs = tape.liquidationsOf(inst, cursor, to);
        if (liqs.length === 0) continue;
        this.io.sendData(JSON.stringify({ op: "notify", topic: `public.${inst.symbol}.liquidation_orders`, ts: now, data: liqs.map(htxLiquidationRow) }));
      }
    }
  }

  malformedSample(): string {
    return this.route === "market" ? '{"ch":"market.BTC-USDT.trade.detail","ts":1,"tick":{"id":' : '{"op":"notify","topic":"public.BTC-USDT.liquidation_orders","data":[{"volume":';
  }
}
