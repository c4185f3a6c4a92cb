/**
 * Simulated Gate Futures WebSocket v4 (`wss://fx-ws.gateio.ws`, base `wsUrls.gate`); Gate docs:
 * https://www.gate.com/docs/developers/futures/ws/en/.
 *
 * Path `/v4/ws/usdt` (USDT-margined contracts). Requests `{"time": s, "channel", "event": "subscribe"|"unsubscribe",
 * "payload": [...]}`; every request is answered `{"time","time_ms","channel","event","result":{"status":"success"}}`,
 * or with `"error":{"code":2,"message":…}` and `"result":{"status":"fail"}` when a contract is unknown (code 1 for a
 * malformed request).
 * - `{"channel":"futures.ping"}` → `{"time","time_ms","channel":"futures.pong","event":"","result":null}` (no idle
 *   timeout is documented, so none is simulated).
 * - `futures.trades` (payload: contract names): one message per contract and push, `result` the trades of the tape
 *   `[{"size","id","create_time","create_time_ms","price","contract"}]`; `size` SIGNED whole contracts (negative = the
 *   taker sold).
 * - `futures.public_liquidates` (payload: contract names or `"!all"`): one message per contract and push, `result`
 *   the liquidations of the tape `[{"price","size","time_ms","contract"}]` (aggregated per contract since the
 *   2026-08-20 docs change); `size` is the liquidation ORDER's signed size: negative (a sell) when a long was closed.
 * - `futures.tickers`, `futures.book_ticker`, `futures.order_book_update`, `futures.candlesticks`,
 *   `futures.contract_stats` of a listed contract are acknowledged but silent.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { gateSignedSize, gateTradeId } from "../tape.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** True for the Gate USDT futures path. */
export function gateRoute(rest: string): boolean {
  return /^\/v4\/ws\/usdt\/?$/.test(rest);
}

const SILENT_CHANNELS = new Set(["futures.tickers", "futures.book_ticker", "futures.order_book", "futures.order_book_update", "futures.candlesticks", "futures.contract_stats"]);

type Sub =
  { kind: "trades"; inst: PerpInstrumentSpec; cursor: number } | { kind: "liquidations"; inst: PerpInstrumentSpec | "all"; cursor: number } | { kind: "silent"; cursor: number };

export class GateSession implements Session {
  readonly #subs = new Map<string, Sub>();

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
  ) {}

  #stamp(): { time: number; time_ms: number } {
    const ms = this.env.clock.now();
    return { time: Math.floor(ms / 1000), time_ms: ms };
  }

  #reply(channel: unknown, event: unknown, error?: { code: number; message: string }): void {
    const head = { ...this.#stamp(), channel: typeof channel === "string" ? channel : "", event: typeof event === "string" ? event : "" };
    this.io.sendReply(JSON.stringify(error ? { ...head, error, result: { status: "fail" } } : { ...head, result: { status: "success" } }));
  }

  #contract(name: string, now: number): PerpInstrumentSpec | undefined {
    const inst = this.env.perp.instrument("gate", name, now);
    return inst && inst.kind === "perpetual" && !inst.inverse ? inst : undefined;
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#reply("", "", { code: 1, message: "invalid request: not JSON" });
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return this.#reply("", "", { code: 1, message: "invalid request" });
    const m = msg as { channel?: unknown; event?: unknown; payload?: unknown };
    if (m.channel === "futures.ping") {
      return this.io.sendPong(JSON.stringify({ ...this.#stamp(), channel: "futures.pong", event: "", result: null }));
    }
    if ((m.event !== "subscribe" && m.event !== "unsubscribe") || typeof m.channel !== "string") return this.#reply(m.channel, m.event, { code: 1, message: "invalid request" });
    const payload = Array.isArray(m.payload) ? m.payload.filter((p): p is string => typeof p === "string") : [];
    const channel = m.channel;
    const now = this.env.clock.now();
    const next = new Map<string, Sub>();
    if (channel === "futures.public_liquidates" && payload.includes("!all")) next.set(`${channel}:!all`, { kind: "liquidations", inst: "all", cursor: now });
    else {
      if (payload.length === 0) return this.#reply(channel, m.event, { code: 1, message: "invalid request: empty payload" });
      const [name] = payload;
      const inst = name === undefined ? undefined : this.#contract(name, now);
      if (!inst || !(channel === "futures.trades" || channel === "futures.public_liquidates" || SILENT_CHANNELS.has(channel))) {
        return this.#reply(channel, m.event, { code: 2, message: `unknown contract ${name ?? ""}` });
      }
      if (channel === "futures.trades" || channel === "futures.public_liquidates") {
        for (const p of payload) {
          const i = this.#contract(p, now);
          if (!i) return this.#reply(channel, m.event, { code: 2, message: `unknown contract ${p}` });
          next.set(`${channel}:${p}`, channel === "futures.trades" ? { kind: "trades", inst: i, cursor: now } : { kind: "liquidations", inst: i, cursor: now });
        }
      } else next.set(`${channel}:${payload.join(",")}`, { kind: "silent", cursor: now });
    }
    for (const [key, sub] of next) {
      if (m.event === "subscribe") {
        if (!this.#subs.has(key)) this.#subs.set(key, sub);
      } else this.#subs.delete(key);
    }
    this.#reply(channel, m.event);
  }

  tick(now: number): void {
    const { tape, perp } = this.env;
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      const cursor = sub.cursor;
      if (to <= cursor) continue;
      sub.cursor = to;
      if (sub.kind === "trades") {
        const trades = tape.tradesOf(sub.inst, cursor, to);
        if (trades.length === 0) continue;
        const result = trades.map((t) => ({
          size: gateSignedSize(t),
          id: gateTradeId(t),
          create_time: Math.floor(t.time / 1000),
          create_time_ms: t.time,
          price: t.px,
          contract: sub.inst.symbol,
        }));
        this.io.sendData(JSON.stringify({ channel: "futures.trades", event: "update", ...this.#stamp(), result }));
      } else if (sub.kind === "liquidations") {
        const insts = sub.inst === "all" ? perp.instruments("gate", now).filter((i) => i.target) : [sub.inst];
        for (const inst of insts) {
          const liqs = tape.liquidationsOf(inst, cursor, to);
          if (liqs.length === 0) continue;
          const result = liqs.map((l) => ({ price: l.px, size: String(l.side === "long" ? -Number(l.sz) : Number(l.sz)), time_ms: l.time, contract: inst.symbol }));
          this.io.sendData(JSON.stringify({ channel: "futures.public_liquidates", event: "update", ...this.#stamp(), result }));
        }
      }
    }
  }

  malformedSample(): string {
    return '{"channel":"futures.trades","event":"update","result":[{"size":';
  }
}
