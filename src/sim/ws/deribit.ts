/**
 * Simulated Deribit websocket (`wss://www.deribit.com`, base `wsUrls.deribit`, path `/ws/api/v2`), JSON-RPC 2.0 as in
 * Deribit's API reference (https://docs.deribit.com/, subscription channels and session management).
 *
 * - `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["trades.BTC-PERPETUAL.100ms"]}}` →
 *   `{"jsonrpc":"2.0","id":1,"result":[<the channels subscribed>],…}`; channels of unknown instruments are left out of
 *   the result, `raw` intervals are refused (error 13778, raw subscriptions need an authorised connection), other
 *   channel kinds (`ticker.*`, `book.*`, …) are acknowledged and silent. `public/unsubscribe` alike.
 * - `public/set_heartbeat {interval}` (seconds, at least 10) → `"ok"`; the server then sends
 *   `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}` every `interval` and closes the connection
 *   when the previous one was not answered with `public/test` (→ `{"version":…}`). `public/disable_heartbeat` stops it.
 * - `trades.{instrument}.{100ms|agg2}`: `{"jsonrpc":"2.0","method":"subscription","params":{"channel",…,"data":[…]}}`,
 *   every trade of the push interval; the tape's liquidations arrive as trades with `liquidation` "T"/"M"/"MT"
 *   (`deribitLiquidationTrade`, tape.ts). `amount` is USD on the inverse perpetuals, coins on the linear ones.
 * - Unknown methods → error -32601 `Method not found`; malformed JSON → -32700 `Parse error`.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { deribitRows } from "../venues/deribit.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** Deribit's smallest `public/set_heartbeat` interval, seconds. */
const MIN_HEARTBEAT_SEC = 10;

type Sub = { kind: "trades"; inst: PerpInstrumentSpec; channel: string; cursor: number } | { kind: "silent"; channel: string; cursor: number };

export class DeribitSession implements Session {
  readonly #subs = new Map<string, Sub>();
  /** Heartbeat period in wall ms (null: off), the last test_request sent, and whether it was answered. */
  #heartbeatMs: number | null = null;
  #lastTestAt = 0;
  #answered = true;

  /** @param secondMs wall ms per heartbeat second (1000; tests shorten it). */
  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly secondMs = 1000,
  ) {}

  #send(body: Record<string, unknown>): void {
    const usIn = this.env.clock.now() * 1000;
    this.io.sendReply(JSON.stringify({ jsonrpc: "2.0", ...body, usIn, usOut: usIn + 40, usDiff: 40, testnet: false }));
  }

  #error(id: unknown, code: number, message: string, data?: Record<string, unknown>): void {
    this.#send({ id, error: data ? { code, message, data } : { code, message } });
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error(null, -32700, "Parse error");
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return this.#error(null, -32600, "Invalid Request");
    const { id, method, params } = msg as { id?: unknown; method?: unknown; params?: Record<string, unknown> };
    switch (method) {
      case "public/subscribe":
      case "public/unsubscribe":
        return this.#channels(id, method, params?.channels);
      case "public/set_heartbeat": {
        const interval = params?.interval;
        if (typeof interval !== "number" || !(interval >= MIN_HEARTBEAT_SEC))
          return this.#error(id, -32602, "Invalid params", { reason: "must be at least 10", param: "interval" });
        this.#heartbeatMs = interval * this.secondMs;
        this.#lastTestAt = this.io.elapsed();
        this.#answered = true;
        return this.#send({ id, result: "ok" });
      }
      case "public/disable_heartbeat":
        this.#heartbeatMs = null;
        return this.#send({ id, result: "ok" });
      case "public/test": {
        this.#answered = true;
        const usIn = this.env.clock.now() * 1000;
        return this.io.sendPong(JSON.stringify({ jsonrpc: "2.0", id, result: { version: "1.2.26" }, usIn, usOut: usIn + 10, usDiff: 10, testnet: false }));
      }
      case "public/get_time":
        return this.#send({ id, result: this.env.clock.now() });
      case "public/hello":
        return this.#send({ id, result: { version: "1.2.26" } });
      default:
        return this.#error(id, -32601, "Method not found");
    }
  }

  #channels(id: unknown, method: "public/subscribe" | "public/unsubscribe", channels: unknown): void {
    if (!Array.isArray(channels) || !channels.every((c) => typeof c === "string"))
      return this.#error(id, -32602, "Invalid params", { reason: "must be an array", param: "channels" });
    const now = this.env.clock.now();
    const done: string[] = [];
    for (const channel of channels as string[]) {
      if (method === "public/unsubscribe") {
        if (this.#subs.delete(channel)) done.push(channel);
        continue;
      }
      const m = /^trades\.([^.]+)\.(raw|100ms|agg2)$/.exec(channel);
      if (m) {
        if (m[2] === "raw") return this.#error(id, 13778, "raw_subscriptions_not_available_for_unauthorized");
        const inst = this.env.perp.instrument("deribit", m[1]!, now);
        if (!inst || inst.kind !== "perpetual") continue;
        if (!this.#subs.has(channel)) this.#subs.set(channel, { kind: "trades", inst, channel, cursor: now });
      } else if (/^(ticker|book|quote|perpetual|deribit_price_index|incremental_ticker)\./.test(channel)) {
        if (!this.#subs.has(channel)) this.#subs.set(channel, { kind: "silent", channel, cursor: now });
      } else continue;
      done.push(channel);
    }
    this.#send({ id, result: done });
  }

  tick(now: number, elapsedMs: number): void {
    if (this.#heartbeatMs !== null && elapsedMs - this.#lastTestAt >= this.#heartbeatMs) {
      if (!this.#answered) return this.io.close(1000, "heartbeat: test_request not answered");
      this.#lastTestAt = elapsedMs;
      this.#answered = false;
      this.io.sendReply(JSON.stringify({ jsonrpc: "2.0", method: "heartbeat", params: { type: "test_request" } }));
    }
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      const cursor = sub.cursor;
      if (to <= cursor) continue;
      sub.cursor = to;
      if (sub.kind !== "trades") continue;
      const trades = this.env.tape.tradesOf(sub.inst, cursor, to);
      const rows = deribitRows(this.env.tape, this.env.perp, sub.inst, trades, cursor, to);
      if (rows.length === 0) continue;
      this.io.sendData(JSON.stringify({ jsonrpc: "2.0", method: "subscription", params: { channel: sub.channel, data: rows.map((r) => r.row) } }));
    }
  }

  malformedSample(): string {
    return '{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.100ms","data":[{"trade_seq":';
  }
}
