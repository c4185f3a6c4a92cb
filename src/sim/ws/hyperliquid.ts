/**
 * Simulated Hyperliquid websocket (`wss://api.hyperliquid.xyz`, base `wsUrls.hyperliquid`, path `/ws`);
 * Hyperliquid docs: https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions.
 *
 * - `{"method":"subscribe","subscription":{"type":"trades","coin":"BTC"}}` →
 *   `{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"trades","coin":"BTC"}}}`;
 *   `unsubscribe` alike. Unknown coins / types and duplicates → `{"channel":"error","data":"…"}`.
 * - `{"method":"ping"}` → `{"channel":"pong"}`. The server closes a connection after 60 s without a client message.
 * - `trades`: `{"channel":"trades","data":[{"coin","side","px","sz","time","hash","tid","users"}]}`, every trade of the
 *   push interval for that coin in one message; `side` `B` = buy aggressor, `A` = sell aggressor; `kPEPE` per 1000.
 * - Other subscription types (`allMids`, `l2Book`, `bbo`, `candle`, `activeAssetCtx`, …) are acknowledged and silent.
 *   There is no public liquidation stream (as on the real venue).
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { hlHash, hlTid, hlUsers } from "../tape.js";
import { ReplayCursor, type ConnIO, type Session, type SessionEnv } from "./session.js";

const SILENT_TYPES = new Set([
  "allMids",
  "l2Book",
  "bbo",
  "candle",
  "activeAssetCtx",
  "notification",
  "webData2",
  "orderUpdates",
  "userEvents",
  "userFills",
  "userFundings",
  "userNonFundingLedgerUpdates",
]);

type Sub = { kind: "trades"; inst: PerpInstrumentSpec; cursor: number } | { kind: "silent" | "replay"; cursor: number };

export class HyperliquidSession implements Session {
  readonly #subs = new Map<string, Sub>();
  readonly #replay: ReplayCursor | undefined;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
  ) {
    this.#replay = env.replay ? new ReplayCursor(env.replay) : undefined;
  }

  #error(data: string): void {
    this.io.sendReply(JSON.stringify({ channel: "error", data }));
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error(`Error parsing JSON into valid websocket request: ${text}`);
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      return this.#error(`Error parsing JSON into valid websocket request: ${text}`);
    }
    const m = msg as { method?: unknown; subscription?: unknown };
    if (m.method === "ping") return this.io.sendPong(JSON.stringify({ channel: "pong" }));
    if (m.method !== "subscribe" && m.method !== "unsubscribe") {
      return this.#error(`Error parsing JSON into valid websocket request: ${text}`);
    }
    const s = m.subscription;
    if (typeof s !== "object" || s === null || Array.isArray(s) || typeof (s as { type?: unknown }).type !== "string") {
      return this.#error(`Error parsing JSON into valid websocket request: ${text}`);
    }
    const sub = s as Record<string, unknown> & { type: string };
    const canonical = JSON.stringify(sub);
    const now = this.env.clock.now();
    let key: string;
    let entry: Sub;
    if (sub.type === "trades") {
      const coin = sub.coin;
      if (typeof coin !== "string") return this.#error(`Error parsing JSON into valid websocket request: ${text}`);
      key = `trades:${coin}`;
      const inst = this.env.perp.instrument("hyperliquid", coin, now);
      // A recording plays only on a coin the model does not serve: it never silences the simulated present.
      if (inst && !inst.delisted) entry = { kind: "trades", inst, cursor: now };
      else if (this.#replay?.covers(key)) entry = { kind: "replay", cursor: now };
      else return this.#error(`Invalid subscription ${canonical}`);
    } else if (SILENT_TYPES.has(sub.type)) {
      key = canonical;
      entry = { kind: "silent", cursor: now };
    } else return this.#error(`Error parsing JSON into valid websocket request: ${text}`);

    if (m.method === "subscribe") {
      if (this.#subs.has(key)) return this.#error(`Already subscribed: ${canonical}`);
      this.#subs.set(key, entry);
      if (entry.kind === "replay") this.#replay?.start(this.io.elapsed());
    } else if (!this.#subs.delete(key)) return this.#error(`Already unsubscribed: ${canonical}`);
    this.io.sendReply(JSON.stringify({ channel: "subscriptionResponse", data: { method: m.method, subscription: sub } }));
  }

  tick(now: number, elapsedMs: number): void {
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      const cursor = sub.cursor;
      if (to <= cursor) continue;
      sub.cursor = to;
      if (sub.kind !== "trades") continue;
      const trades = this.env.tape.tradesOf(sub.inst, cursor, to);
      if (trades.length === 0) continue;
      const data = trades.map((t) => ({
        coin: sub.inst.symbol,
        side: t.side === "buy" ? "B" : "A",
        px: t.px,
        sz: t.sz,
        time: t.time,
        hash: hlHash(t),
        tid: hlTid(t),
        users: hlUsers(t),
      }));
      this.io.sendData(JSON.stringify({ channel: "trades", data }));
    }
    if (this.#replay) {
      for (const f of this.#replay.due(elapsedMs, (k) => this.#subs.get(k)?.kind === "replay")) this.io.sendData(f.text);
    }
  }

  malformedSample(): string {
    return '{"channel":"trades","data":[{"coin":"BTC","side":';
  }
}
