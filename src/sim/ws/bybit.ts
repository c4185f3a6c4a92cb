/**
 * Simulated Bybit v5 public websocket (`wss://stream.bybit.com`, base `wsUrls.bybit`);
 * Bybit docs: https://bybit-exchange.github.io/docs/v5/websocket/public/trade.
 *
 * Paths: `/v5/public/linear` (simulated instruments), `/v5/public/spot|inverse|option` (handshake only: no simulated
 * symbols there, except replayed spot frames).
 * - `{"req_id":"1","op":"subscribe","args":["publicTrade.BTCUSDT","allLiquidation.BTCUSDT"]}` →
 *   `{"success":true,"ret_msg":"","conn_id":"…","req_id":"1","op":"subscribe"}` (`req_id` "" when not sent, as
 *   recorded). Failures: `success:false` with `ret_msg` `Invalid symbol :[<topic>]`,
 *   `error:handler not found,topic:<topic>` (e.g. the deprecated `liquidation.<symbol>`) or
 *   `error:already subscribed,topic:<topic>`; valid args of the same request are still subscribed. `unsubscribe` alike.
 * - `{"req_id":"100001","op":"ping"}` → `{"success":true,"ret_msg":"pong","conn_id":"…","req_id":"100001","op":"ping"}`.
 * - `publicTrade.<symbol>`: `{"topic","type":"snapshot","ts","data":[{"T","s","S","v","p","L","i","BT","RPI","seq"}]}`,
 *   every trade of the push interval in one message (≤ 1024 per message); `S` is the TAKER side.
 * - `allLiquidation.<symbol>`: `{"topic","type":"snapshot","ts","data":[{"T","s","S","v","p"}]}` every 500 ms when
 *   something was liquidated; `S` is the POSITION side (`Buy` = a long was liquidated), `p` the bankruptcy price.
 * - `tickers.`, `orderbook.<depth>.`, `kline.<interval>.` topics of listed symbols are acknowledged but silent.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { bybitExecId } from "../tape.js";
import { ReplayCursor, chunks, type ConnIO, type Session, type SessionEnv } from "./session.js";

/** Category of a Bybit public path; null = not a Bybit websocket path. */
export function bybitRoute(rest: string): "linear" | "spot" | "inverse" | "option" | null {
  const m = /^\/v5\/public\/(linear|spot|inverse|option)\/?$/.exec(rest);
  return m ? (m[1] as "linear" | "spot" | "inverse" | "option") : null;
}

type Topic = { kind: "trade"; inst: PerpInstrumentSpec } | { kind: "liquidation"; inst: PerpInstrumentSpec } | { kind: "silent" } | { kind: "replay" };

const SILENT_PREFIXES = /^(tickers|orderbook\.(1|50|200|500|1000)|kline\.(1|3|5|15|30|60|120|240|360|720|D|W|M))\.([A-Z0-9]+)$/;
const LIQUIDATION_PUSH_MS = 500;

export class BybitSession implements Session {
  readonly #subs = new Map<string, { topic: Topic; cursor: number }>();
  readonly #replay: ReplayCursor | undefined;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly category: "linear" | "spot" | "inverse" | "option",
  ) {
    this.#replay = env.replay ? new ReplayCursor(env.replay) : undefined;
  }

  /** Parses a topic; a string is the failure `ret_msg`. */
  #topic(name: string, now: number): Topic | string {
    const lookup = (sym: string) => (this.category === "linear" ? this.env.perp.instrument("bybit", sym, now) : undefined);
    let m = /^(publicTrade|allLiquidation)\.([A-Za-z0-9]+)$/.exec(name);
    if (m) {
      const inst = lookup(m[2] as string);
      // A recording plays only on a topic the model does not serve: it never silences the simulated present.
      if (!inst) return this.#replay?.covers(name) ? { kind: "replay" } : `Invalid symbol :[${name}]`;
      return m[1] === "publicTrade" ? { kind: "trade", inst } : { kind: "liquidation", inst };
    }
    m = SILENT_PREFIXES.exec(name);
    if (m && lookup(m[4] as string)) return { kind: "silent" };
    if (this.#replay?.covers(name)) return { kind: "replay" };
    return m ? `Invalid symbol :[${name}]` : `error:handler not found,topic:${name}`;
  }

  #reply(success: boolean, retMsg: string, reqId: string, op: string): void {
    this.io.sendReply(JSON.stringify({ success, ret_msg: retMsg, conn_id: this.io.connId, req_id: reqId, op }));
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#reply(false, "error:request parse failed", "", "");
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return this.#reply(false, "error:request parse failed", "", "");
    const m = msg as { req_id?: unknown; op?: unknown; args?: unknown };
    const reqId = typeof m.req_id === "string" ? m.req_id : typeof m.req_id === "number" ? String(m.req_id) : "";
    const op = typeof m.op === "string" ? m.op : "";
    switch (op) {
      case "ping":
        return this.io.sendPong(JSON.stringify({ success: true, ret_msg: "pong", conn_id: this.io.connId, req_id: reqId, op: "ping" }));
      case "subscribe":
      case "unsubscribe": {
        if (!Array.isArray(m.args) || !m.args.every((a) => typeof a === "string") || m.args.length === 0) {
          return this.#reply(false, "error:args invalid", reqId, op);
        }
        const now = this.env.clock.now();
        const errors: string[] = [];
        for (const name of m.args as string[]) {
          if (op === "unsubscribe") {
            if (!this.#subs.delete(name)) errors.push(`error:not subscribed,topic:${name}`);
            continue;
          }
          if (this.#subs.has(name)) {
            errors.push(`error:already subscribed,topic:${name}`);
            continue;
          }
          const t = this.#topic(name, now);
          if (typeof t === "string") errors.push(t);
          else {
            this.#subs.set(name, { topic: t, cursor: now });
            if (t.kind === "replay") this.#replay?.start(this.io.elapsed());
          }
        }
        return this.#reply(errors.length === 0, errors.join(";"), reqId, op);
      }
      default:
        return this.#reply(false, `error:op not supported,op:${op}`, reqId, op);
    }
  }

  tick(now: number, elapsedMs: number): void {
    const { tape } = this.env;
    const to = now + 1;
    for (const [name, sub] of this.#subs) {
      const { topic, cursor } = sub;
      if (to <= cursor) continue;
      if (topic.kind === "trade") {
        sub.cursor = to;
        const trades = tape.tradesOf(topic.inst, cursor, to);
        if (trades.length === 0) continue;
        const ticks = tape.tickDirections(trades);
        const rows = trades.map((t, i) => ({
          T: t.time,
          s: topic.inst.symbol,
          S: t.side === "buy" ? "Buy" : "Sell",
          v: t.sz,
          p: t.px,
          L: ticks[i],
          i: bybitExecId(t),
          BT: false,
          RPI: false,
          seq: t.seq,
        }));
        for (const data of chunks(rows, 1024)) this.io.sendData(JSON.stringify({ topic: name, type: "snapshot", ts: now, data }));
      } else if (topic.kind === "liquidation") {
        if (to - cursor < LIQUIDATION_PUSH_MS) continue;
        sub.cursor = to;
        const liqs = tape.liquidationsOf(topic.inst, cursor, to);
        if (liqs.length === 0) continue;
        const data = liqs.map((l) => ({ T: l.time, s: topic.inst.symbol, S: l.side === "long" ? "Buy" : "Sell", v: l.sz, p: l.px }));
        this.io.sendData(JSON.stringify({ topic: name, type: "snapshot", ts: now, data }));
      } else sub.cursor = to;
    }
    if (this.#replay) {
      for (const f of this.#replay.due(elapsedMs, (k) => this.#subs.get(k)?.topic.kind === "replay")) this.io.sendData(f.text);
    }
  }

  malformedSample(): string {
    return '{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":';
  }
}
