/**
 * Simulated Bitget v2 public websocket (`wss://ws.bitget.com`, base `wsUrls.bitget`), path `/v2/ws/public`;
 * Bitget docs: https://www.bitget.com/api-doc/common/websocket-intro and …/contract/websocket/public/New-Trades-Channel.
 *
 * - The string `ping` → the string `pong` (the hub closes a connection that sent nothing for `bitgetIdleMs`, 2 min by
 *   default, the Chinese page's rule; the English page says 30 s).
 * - `{"op":"subscribe","args":[{"instType":"USDT-FUTURES","channel":"trade","instId":"BTCUSDT"}]}` → one
 *   `{"event":"subscribe","arg":{…}}` per argument; an unknown symbol, product type or channel →
 *   `{"event":"error","arg":{…},"code":30001,"msg":"…doesn't exist"}` (the other arguments are still subscribed).
 *   `unsubscribe` alike. `ticker`, `books*`, `candle*` of listed symbols are acknowledged but silent.
 * - `trade`: first a `snapshot` push of the 50 latest trades, then `update` pushes of each push interval's trades,
 *   `{"action","arg","data":[{"ts","price","size","side","tradeId"}],"ts"}`, newest first; `side` is the TAKER side,
 *   `size` in coins of the venue unit, `tradeId` = `bitgetTradeId` of the shared tape.
 * - No liquidation channel: the real v2 public websocket has none (`liquidation` answers the 30001 error).
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { bitgetTradeId, type TapeTrade } from "../tape.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** True for the Bitget public websocket path. */
export function bitgetRoute(rest: string): boolean {
  return /^\/v2\/ws\/public\/?$/.test(rest);
}

const SILENT_CHANNEL = /^(ticker|books|books1|books5|books15|candle(1m|5m|15m|30m|1H|4H|6H|12H|1D|1W))$/;
const SNAPSHOT_TRADES = 50;

interface Arg {
  instType: string;
  channel: string;
  instId: string;
}

export class BitgetSession implements Session {
  readonly #subs = new Map<string, { arg: Arg; inst: PerpInstrumentSpec; trade: boolean; cursor: number }>();

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
  ) {}

  #send(event: string, arg: unknown, error?: string): void {
    this.io.sendReply(JSON.stringify(error === undefined ? { event, arg } : { event: "error", arg, code: 30001, msg: error }));
  }

  onMessage(text: string): void {
    if (text === "ping") return this.io.sendPong("pong");
    let msg: { op?: unknown; args?: unknown };
    try {
      msg = JSON.parse(text) as { op?: unknown; args?: unknown };
    } catch {
      return this.#send("error", {}, "request parse failed");
    }
    const op = msg?.op;
    if ((op !== "subscribe" && op !== "unsubscribe") || !Array.isArray(msg.args)) return this.#send("error", {}, `op ${String(op)} doesn't exist`);
    const now = this.env.clock.now();
    for (const raw of msg.args as unknown[]) {
      const a = raw as Partial<Arg> | null;
      const arg: Arg = { instType: String(a?.instType ?? ""), channel: String(a?.channel ?? ""), instId: String(a?.instId ?? "") };
      const key = `${arg.instType.toUpperCase()}|${arg.channel}|${arg.instId}`;
      if (op === "unsubscribe") {
        this.#subs.delete(key);
        this.#send("unsubscribe", arg);
        continue;
      }
      const inst = arg.instType.toUpperCase() === "USDT-FUTURES" ? this.env.perp.instrument("bitget", arg.instId, now) : undefined;
      const known = arg.channel === "trade" || SILENT_CHANNEL.test(arg.channel);
      if (!inst || !known) {
        this.#send("error", arg, `instType:${arg.instType},channel:${arg.channel},instId:${arg.instId} doesn't exist`);
        continue;
      }
      this.#send("subscribe", arg);
      if (this.#subs.has(key)) continue;
      const trade = arg.channel === "trade";
      this.#subs.set(key, { arg, inst, trade, cursor: now + 1 });
      if (trade) this.#push("snapshot", arg, this.env.tape.tradesBefore(inst, now + 1, SNAPSHOT_TRADES), now);
    }
  }

  /** One push of `trades` (NEWEST first, as the venue sends them). */
  #push(action: "snapshot" | "update", arg: Arg, newestFirst: readonly TapeTrade[], now: number): void {
    if (newestFirst.length === 0) return;
    const data = newestFirst.map((t) => ({ ts: String(t.time), price: t.px, size: t.sz, side: t.side, tradeId: bitgetTradeId(t) }));
    this.io.sendData(JSON.stringify({ action, arg, data, ts: now }));
  }

  tick(now: number): void {
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      if (to <= sub.cursor) continue;
      const from = sub.cursor;
      sub.cursor = to;
      if (sub.trade) this.#push("update", sub.arg, this.env.tape.tradesOf(sub.inst, from, to).reverse(), now);
    }
  }

  malformedSample(): string {
    return '{"action":"update","arg":{"instType":"USDT-FUTURES","channel":"trade","instId":"BTCUSDT"},"data":[{"ts":';
  }
}
