/**
 * Simulated Kraken Futures websocket (`wss://futures.kraken.com`, base `wsUrls.kraken`), path `/ws/v1`; Kraken docs:
 * docs.kraken.com/exchange/api-reference/futures-websocket (trade, heartbeat, ticker pages) and the frames of
 * `src/venues/kraken/fixtures/`.
 *
 * - On connecting: `{"event":"info","version":1}`.
 * - `{"event":"subscribe","feed":"trade","product_ids":[…]}` → `{"event":"subscribed","feed":"trade","product_ids":[…]}`
 *   for the listed products, then per product a `trade_snapshot` of its last 100 trades (newest first; Kraken does not
 *   document the count), then one `trade` message per fill: `{feed, product_id, uid, side, type, seq, time, qty, price}`
 *   (`side` the taker's, `qty` contracts, `uid` = `krakenTradeUid` of the shared tape). The tape's liquidations arrive
 *   as fills of `type` `liquidation` (the liquidated position's order as the taker: a long sells). An unknown product →
 *   `{"event":"alert","message":"Bad request"}` (what the live venue answered on 2026-08-08). `unsubscribe` alike.
 * - `heartbeat` → `subscribed`, then `{"feed":"heartbeat","time"}` every `heartbeatMs` (60 s by default; the docs give
 *   no period). `ticker`, `ticker_lite` and `book` of listed products are acknowledged and silent.
 * - Any other event → `{"event":"alert","message":"Event(s) not found"}`; malformed JSON → `{"event":"alert","message":"Json Parse Error"}`.
 * - Keepalive: Kraken asks clients for a request at least every 60 s; the session closes a connection that sent
 *   nothing for `idleMs` (default 60 s).
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { KRAKEN_SIM, krakenEvents, krakenTradeFields } from "../venues/kraken.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** True for the Kraken Futures websocket path. */
export function krakenRoute(rest: string): boolean {
  return /^\/ws\/v1\/?$/.test(rest);
}

const SNAPSHOT_TRADES = 100;
const SILENT_FEEDS = new Set(["ticker", "ticker_lite", "book"]);

/** Timing of a {@link KrakenSession}, wall ms (tests shorten them). */
export interface KrakenSessionOptions {
  /** Period of the `heartbeat` feed (default 60 000). */
  heartbeatMs?: number;
  /** Close after this long without a client message (default 60 000). */
  idleMs?: number;
}

export class KrakenSession implements Session {
  /** Trade subscriptions by product, with the sim time pushed up to. */
  readonly #trades = new Map<string, { inst: PerpInstrumentSpec; cursor: number }>();
  readonly #silent = new Set<string>();
  #heartbeat = false;
  #lastBeatAt = 0;
  #lastClientAt = 0;
  readonly #heartbeatMs: number;
  readonly #idleMs: number;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    opts: KrakenSessionOptions = {},
  ) {
    this.#heartbeatMs = opts.heartbeatMs ?? 60_000;
    this.#idleMs = opts.idleMs ?? 60_000;
    this.#lastClientAt = io.elapsed();
    this.io.sendReply(JSON.stringify({ event: "info", version: 1 }));
  }

  #alert(message: string): void {
    this.io.sendReply(JSON.stringify({ event: "alert", message }));
  }

  onMessage(text: string): void {
    this.#lastClientAt = this.io.elapsed();
    let msg: { event?: unknown; feed?: unknown; product_ids?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return this.#alert("Json Parse Error");
    }
    const { event, feed } = msg ?? {};
    if ((event !== "subscribe" && event !== "unsubscribe") || typeof feed !== "string") return this.#alert("Event(s) not found");
    const done = `${event}d`;
    if (feed === "heartbeat") {
      this.#heartbeat = event === "subscribe";
      this.#lastBeatAt = this.io.elapsed();
      return this.io.sendPong(JSON.stringify({ event: done, feed }));
    }
    const ids = msg.product_ids;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((p) => typeof p === "string")) return this.#alert("Bad request");
    if (feed !== "trade" && !SILENT_FEEDS.has(feed)) return this.#alert("Bad request");
    const now = this.env.clock.now();
    const insts = (ids as string[]).map((p) => this.env.perp.instrument(KRAKEN_SIM, p.toUpperCase(), now));
    if (insts.some((i) => !i || i.kind !== "perpetual")) return this.#alert("Bad request");
    this.io.sendReply(JSON.stringify({ event: done, feed, product_ids: ids }));
    for (const inst of insts as PerpInstrumentSpec[]) {
      const key = inst.symbol;
      if (event === "unsubscribe") {
        if (feed === "trade") this.#trades.delete(key);
        else this.#silent.delete(`${feed}|${key}`);
        continue;
      }
      if (feed !== "trade") {
        this.#silent.add(`${feed}|${key}`);
        continue;
      }
      if (this.#trades.has(key)) continue;
      this.#trades.set(key, { inst, cursor: now + 1 });
      const recent = this.env.tape.tradesBefore(inst, now + 1, SNAPSHOT_TRADES);
      const trades = recent.map((t) => ({ feed: "trade", product_id: key, ...krakenTradeFields(t) }));
      this.io.sendData(JSON.stringify({ feed: "trade_snapshot", product_id: key, trades }));
    }
  }

  tick(now: number, elapsedMs: number): void {
    if (elapsedMs - this.#lastClientAt >= this.#idleMs) return this.io.close(1000, "no request for 60 s");
    if (this.#heartbeat && elapsedMs - this.#lastBeatAt >= this.#heartbeatMs) {
      this.#lastBeatAt = elapsedMs;
      this.io.sendData(JSON.stringify({ feed: "heartbeat", time: now }));
    }
    const to = now + 1;
    for (const [symbol, sub] of this.#trades) {
      if (to <= sub.cursor) continue;
      const from = sub.cursor;
      sub.cursor = to;
      for (const e of krakenEvents(this.env.tape, sub.inst, from, to)) this.io.sendData(JSON.stringify({ feed: "trade", product_id: symbol, ...e }));
    }
  }

  malformedSample(): string {
    return '{"feed":"trade","product_id":"PF_XBTUSD","uid":"caa9c653-420b-4c24-a9f1-462a054d86f1","side":';
  }
}
