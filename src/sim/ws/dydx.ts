/**
 * Simulated dYdX v4 indexer websocket (`wss://indexer.dydx.trade`, base `wsUrls.dydx`, path `/v4/ws`); the
 * protocol of dydxprotocol/v4-chain `indexer/services/socks` (https://docs.dydx.xyz/indexer-client/websockets).
 *
 * - On open: `{"type":"connected","connection_id","message_id":0}`; every message carries the connection's next
 *   `message_id`.
 * - `{"type":"subscribe","channel":"v4_trades","id":"BTC-USD","batched"?}` → `{"type":"subscribed",…,"contents":
 *   {"trades":[…]}}` with the market's latest 100 rows (newest first, as the REST endpoint), then per block with trades
 *   `{"type":"channel_data",…,"version":"2.1.0","contents":{"trades":[…]}}` (the block's rows, oldest first), or with
 *   `"batched":true` one `channel_batch_data` per push whose `contents` is the array of those. Tape liquidations are
 *   `LIQUIDATED` rows (`../venues/dydx-wire.ts`).
 * - `{"type":"subscribe","channel":"v4_block_height"}` → `subscribed` with `{"height","time"}`, then one `channel_data`
 *   `{"blockHeight","time"}` per block (one per second). `v4_markets`, `v4_orderbook` and `v4_candles` of a listed
 *   market are acknowledged (`subscribed`, empty contents) and silent.
 * - `unsubscribe` → `{"type":"unsubscribed","channel","id"}`. Refusals are `{"type":"error","message"}` with the
 *   server's wording: an unknown market, a second subscription, more than 32 `v4_trades` on one connection
 *   ("Per-connection subscription limit reached …"), an unparsable or typeless message.
 * - `{"type":"ping"}` is accepted and not answered (socks ignores it; `ws` answers protocol pings). The real server
 *   pings every 30 s and drops a connection silent to pings for 10 s: that keepalive is the hub's (wiring).
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import { dydxEventsOf, dydxRowsBefore, type DydxTradeRow } from "../venues/dydx-rows.js";
import { DYDX_SIM, dydxBlockStart, dydxHeight } from "../venues/dydx-wire.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** True for the indexer's websocket path. */
export function dydxRoute(rest: string): boolean {
  return rest === "/v4/ws" || rest === "/v4/ws/";
}

/** `v4_trades` subscriptions one connection may hold (socks `V4_TRADES_CHANNEL_LIMIT`). */
export const DYDX_SIM_TRADES_LIMIT = 32;
/** Rows of a `v4_trades` subscribe answer. */
const SNAPSHOT_ROWS = 100;
const SILENT_CHANNELS = new Set(["v4_markets", "v4_orderbook", "v4_candles"]);

type Sub = { kind: "trades"; inst: PerpInstrumentSpec; batched: boolean; cursor: number } | { kind: "blocks"; cursor: number } | { kind: "silent" };

export class DydxSession implements Session {
  readonly #subs = new Map<string, Sub>();
  #messageId = 0;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
  ) {
    this.#send("reply", { type: "connected" });
  }

  /** Sends `body` with the connection id and the next message id (`reply`: acks and errors; `data`: channel data). */
  #send(kind: "reply" | "data", body: Record<string, unknown>): void {
    const text = JSON.stringify({ ...body, connection_id: this.io.connId, message_id: this.#messageId++ });
    if (kind === "data") this.io.sendData(text);
    else this.io.sendReply(text);
  }

  #error(message: string, extra: Record<string, unknown> = {}): void {
    this.#send("reply", { type: "error", message, ...extra });
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error("Invalid message: could not parse");
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg) || typeof (msg as { type?: unknown }).type !== "string") {
      return this.#error("Invalid message: type is required");
    }
    const m = msg as { type: string; channel?: unknown; id?: unknown; batched?: unknown };
    if (m.type === "ping") return;
    if (m.type !== "subscribe" && m.type !== "unsubscribe") return this.#error(`Invalid message type: ${m.type}`);
    const channel = typeof m.channel === "string" ? m.channel : "";
    const id = typeof m.id === "string" ? m.id : undefined;
    const now = this.env.clock.now();
    const key = `${channel}:${id ?? channel}`;
    if (m.type === "unsubscribe") {
      this.#subs.delete(key);
      return this.#send("reply", { type: "unsubscribed", channel, ...(id === undefined ? {} : { id }) });
    }

    if (channel === "v4_block_height") {
      if (this.#subs.has(key)) return this.#error(`Invalid subscribe message: already subscribed (${channel}-${channel})`, { channel });
      this.#subs.set(key, { kind: "blocks", cursor: dydxHeight(now) });
      return this.#send("reply", {
        type: "subscribed",
        channel,
        id: channel,
        contents: { height: String(dydxHeight(now)), time: new Date(dydxBlockStart(dydxHeight(now))).toISOString() },
      });
    }
    const inst = id === undefined ? undefined : this.env.perp.instrument(DYDX_SIM, id, now);
    const known = inst !== undefined && inst.target;
    if (channel === "v4_trades" || SILENT_CHANNELS.has(channel)) {
      if (channel !== "v4_markets" && !known) return this.#error(`Invalid subscription id for channel: (${channel}-${id})`);
    } else return this.#error(`Invalid channel: ${channel}`);
    if (this.#subs.has(key)) return this.#error(`Invalid subscribe message: already subscribed (${channel}-${id ?? channel})`, { channel, id });
    if (channel !== "v4_trades") {
      this.#subs.set(key, { kind: "silent" });
      return this.#send("reply", { type: "subscribed", channel, id: id ?? channel, contents: {} });
    }
    if ([...this.#subs.values()].filter((s) => s.kind === "trades").length >= DYDX_SIM_TRADES_LIMIT) {
      return this.#error(`Per-connection subscription limit reached for ${channel} (limit=${DYDX_SIM_TRADES_LIMIT}).`);
    }
    this.#subs.set(key, { kind: "trades", inst: inst!, batched: m.batched === true, cursor: now + 1 });
    const snapshot = dydxRowsBefore(this.env.tape, inst!, now + 1, SNAPSHOT_ROWS, now - 6 * 3_600_000);
    this.#send("reply", { type: "subscribed", channel, id, contents: { trades: snapshot } });
  }

  tick(now: number): void {
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      if (sub.kind === "blocks") {
        for (let h = sub.cursor + 1; h <= dydxHeight(now); h++) {
          this.#send("data", {
            type: "channel_data",
            id: "v4_block_height",
            channel: "v4_block_height",
            version: "1.0.0",
            contents: { blockHeight: String(h), time: new Date(dydxBlockStart(h)).toISOString() },
          });
        }
        sub.cursor = Math.max(sub.cursor, dydxHeight(now));
        continue;
      }
      if (sub.kind !== "trades" || to <= sub.cursor) continue;
      const events = dydxEventsOf(this.env.tape, sub.inst, sub.cursor, to);
      sub.cursor = to;
      if (events.length === 0) continue;
      // One message per block (the indexer publishes a market's trades block by block).
      const blocks: DydxTradeRow[][] = [];
      let last: string | undefined;
      for (const e of events) {
        if (e.row.createdAtHeight !== last) blocks.push([]);
        blocks[blocks.length - 1]!.push(e.row);
        last = e.row.createdAtHeight;
      }
      const head = { channel: "v4_trades", id: sub.inst.symbol, version: "2.1.0" };
      if (sub.batched) this.#send("data", { type: "channel_batch_data", ...head, contents: blocks.map((trades) => ({ trades })) });
      else for (const trades of blocks) this.#send("data", { type: "channel_data", ...head, contents: { trades } });
    }
  }

  malformedSample(): string {
    return '{"type":"channel_data","channel":"v4_trades","id":"BTC-USD","contents":{"trades":[{"id":';
  }
}
