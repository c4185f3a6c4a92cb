/**
 * Simulated OKX v5 public websocket (`wss://ws.okx.com:8443`, base `wsUrls.okx`); OKX docs: https://www.okx.com/docs-v5/en/#websocket-api.
 *
 * Paths: `/ws/v5/public` (trades, liquidation-orders), `/ws/v5/business` and `/ws/v5/private` (handshake; every
 * subscription there fails with 60018, candles and private data are not simulated).
 * - `{"op":"subscribe","args":[{"channel":"trades","instId":"BTC-USDT-SWAP"},{"channel":"liquidation-orders","instType":"SWAP"}]}`
 *   → one `{"event":"subscribe","arg":{…},"connId":"…"}` per arg (an `id` sent with the request is echoed first).
 *   Unknown instruments/channels → `{"event":"error","code":"60018","msg":"Wrong URL or channel:…","connId":"…"}`;
 *   bad requests → code `60012`. `unsubscribe` alike.
 * - Text `ping` → text `pong`. The server closes a connection (code 4004) after 30 s without any traffic in either
 *   direction (pushes count; protocol pings do not).
 * - `trades`: one message per trade `{"arg":{"channel":"trades","instId"},"data":[{"instId","tradeId","px","sz",
 *   "side","ts","count","source","seqId"}]}`; `sz` in CONTRACTS (× ctVal = coins), `side` the TAKER side.
 * - `liquidation-orders` (`instType` SWAP; other types are acknowledged and silent): one message per instrument and
 *   push `{"arg":{"channel":"liquidation-orders","instType":"SWAP"},"data":[{"details":[{"bkLoss","bkPx","ccy",
 *   "posSide","side","sz","ts"}],"instFamily","instId","instType":"SWAP","uly"}]}`; `posSide` is the liquidated
 *   position, `side` the order side (sell for a long), `sz` contracts.
 * - `tickers`, `mark-price`, `funding-rate`, `open-interest`, `index-tickers`, `price-limit`, `bbo-tbt`, `books*` of
 *   a listed instrument are acknowledged but silent.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { okxTradeId } from "../tape.js";
import { ReplayCursor, type ConnIO, type Session, type SessionEnv } from "./session.js";

/** OKX path kind; null = not an OKX websocket path. */
export function okxRoute(rest: string): "public" | "business" | "private" | null {
  const m = /^\/ws\/v5\/(public|business|private)\/?$/.exec(rest);
  return m ? (m[1] as "public" | "business" | "private") : null;
}

const SILENT_CHANNELS = new Set([
  "tickers",
  "mark-price",
  "funding-rate",
  "open-interest",
  "index-tickers",
  "price-limit",
  "bbo-tbt",
  "books",
  "books5",
  "books-l2-tbt",
  "books50-l2-tbt",
  "estimated-price",
]);
const INST_TYPES = new Set(["SPOT", "MARGIN", "SWAP", "FUTURES", "OPTION", "ANY"]);

type Sub =
  | { kind: "trades"; inst: PerpInstrumentSpec; cursor: number; arg: Record<string, string> }
  | { kind: "liquidations"; swap: boolean; cursor: number; arg: Record<string, string> }
  | { kind: "silent"; cursor: number; arg: Record<string, string> }
  | { kind: "replay"; cursor: number; arg: Record<string, string> };

export class OkxSession implements Session {
  readonly #subs = new Map<string, Sub>();
  readonly #replay: ReplayCursor | undefined;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly path: "public" | "business" | "private",
  ) {
    this.#replay = env.replay && path === "public" ? new ReplayCursor(env.replay) : undefined;
  }

  #send(obj: Record<string, unknown>): void {
    this.io.sendReply(JSON.stringify(obj));
  }

  #error(code: string, msg: string): void {
    this.#send({ event: "error", code, msg, connId: this.io.connId });
  }

  /** Canonical arg and subscription for a raw arg; a string is the 60018 message. */
  #parse(raw: Record<string, unknown>, now: number): { key: string; sub: Sub } | string {
    const channel = raw.channel;
    const instId = raw.instId;
    const instType = raw.instType;
    const wrong = (): string =>
      `Wrong URL or channel:${String(channel)}${typeof instId === "string" ? `,instId:${instId}` : typeof instType === "string" ? `,instType:${instType}` : ""} doesn't exist. Please use the correct URL, channel and parameters referring to API document.`;
    if (typeof channel !== "string" || this.path !== "public") return wrong();
    if (channel === "liquidation-orders") {
      if (typeof instType !== "string" || !INST_TYPES.has(instType)) return wrong();
      const arg = { channel, instType };
      return { key: `${channel}:${instType}`, sub: { kind: "liquidations", swap: instType === "SWAP", cursor: now, arg } };
    }
    if (typeof instId !== "string") return wrong();
    const arg = { channel, instId };
    const key = `${channel}:${instId}`;
    const inst = this.env.perp.instrument("okx", instId, now);
    // A recording plays only on an instrument the model does not serve: it never silences the simulated present.
    if (!inst) return this.#replay?.covers(key) ? { key, sub: { kind: "replay", cursor: now, arg } } : wrong();
    if (channel === "trades") return { key, sub: { kind: "trades", inst, cursor: now, arg } };
    if (SILENT_CHANNELS.has(channel)) return { key, sub: { kind: "silent", cursor: now, arg } };
    return wrong();
  }

  onMessage(text: string): void {
    if (text === "ping") return this.io.sendPong("pong");
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error("60012", `Illegal request: ${text}`);
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return this.#error("60012", `Illegal request: ${text}`);
    const m = msg as { id?: unknown; op?: unknown; args?: unknown };
    if (m.op !== "subscribe" && m.op !== "unsubscribe") return this.#error("60012", `Invalid request: ${text}`);
    if (!Array.isArray(m.args) || m.args.length === 0 || !m.args.every((a) => typeof a === "object" && a !== null && !Array.isArray(a))) {
      return this.#error("60012", `Invalid request: ${text}`);
    }
    const idPart = typeof m.id === "string" ? { id: m.id } : {};
    const now = this.env.clock.now();
    for (const raw of m.args as Array<Record<string, unknown>>) {
      const parsed = this.#parse(raw, now);
      if (typeof parsed === "string") {
        this.#send({ ...idPart, event: "error", code: "60018", msg: parsed, connId: this.io.connId });
        continue;
      }
      if (m.op === "subscribe") {
        if (!this.#subs.has(parsed.key)) this.#subs.set(parsed.key, parsed.sub);
        if (parsed.sub.kind === "replay") this.#replay?.start(this.io.elapsed());
      } else this.#subs.delete(parsed.key);
      this.#send({ ...idPart, event: m.op, arg: parsed.sub.arg, connId: this.io.connId });
    }
  }

  tick(now: number, elapsedMs: number): void {
    const { tape, perp } = this.env;
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      const cursor = sub.cursor;
      if (to <= cursor) continue;
      sub.cursor = to;
      if (sub.kind === "trades") {
        for (const t of tape.tradesOf(sub.inst, cursor, to)) {
          this.io.sendData(
            JSON.stringify({
              arg: sub.arg,
              data: [
                {
                  instId: sub.inst.symbol,
                  tradeId: okxTradeId(t),
                  px: t.px,
                  sz: t.sz,
                  side: t.side,
                  ts: String(t.time),
                  count: "1",
                  source: "0",
                  seqId: t.seq,
                },
              ],
            }),
          );
        }
      } else if (sub.kind === "liquidations" && sub.swap) {
        for (const inst of perp.instruments("okx", now)) {
          if (!inst.target) continue;
          const liqs = tape.liquidationsOf(inst, cursor, to);
          if (liqs.length === 0) continue;
          const details = liqs.map((l) => ({
            bkLoss: "0",
            bkPx: l.px,
            ccy: "",
            posSide: l.side,
            side: l.side === "long" ? "sell" : "buy",
            sz: l.sz,
            ts: String(l.time),
          }));
          const family = `${inst.base}-${inst.quote}`;
          this.io.sendData(
            JSON.stringify({
              arg: sub.arg,
              data: [{ details, instFamily: family, instId: inst.symbol, instType: "SWAP", uly: family }],
            }),
          );
        }
      }
    }
    if (this.#replay) {
      for (const f of this.#replay.due(elapsedMs, (k) => this.#subs.get(k)?.kind === "replay")) this.io.sendData(f.text);
    }
  }

  malformedSample(): string {
    return '{"arg":{"channel":"trades","instId":"BTC-USDT-SWAP"},"data":[{"instId":';
  }
}
