/**
 * Simulated Lighter websocket (`wss://mainnet.zklighter.elliot.ai`, base `wsUrls.lighter`, path `/stream`, with or
 * without `?readonly=true`); https://apidocs.lighter.xyz/docs/websocket-reference, frames as recorded
 * (src/venues/lighter/fixtures/README.md).
 *
 * - On open: `{"session_id":"…","type":"connected"}`.
 * - `{"type":"subscribe","channel":"trade/<market_id>"}` → `subscribed/trade` on channel `trade:<market_id>` (the last
 *   50 prints and the last hour's liquidation prints, newest first), then one `update/trade` per push with that
 *   interval's prints: `trades` and, disjoint from them, `liquidation_trades` (a liquidation is the liquidated account's
 *   order taking liquidity). Ids are the tape's time-ordered `trade_id` (`lighter-wire.ts`).
 * - `{"type":"unsubscribe","channel":…}` → `{"type": "unsubscribed", "channel": "trade:<id>"}` (spaces as recorded).
 * - `{"type":"ping"}` → `{"type":"pong"}`; a client `{"type":"pong"}` is accepted silently.
 * - Errors as recorded: `{"error":{"code":30005,"message":"Invalid Channel:  (marketId)"}}` for an unknown market or
 *   channel, `{"error":{"code":30003,"message":"Already Subscribed to : trade:<id>"}}` for a repeat subscribe; the
 *   socket stays open. Other public channels (`market_stats`, `order_book`, `ticker`, `candle`, `height`,
 *   `spot_market_stats`) are accepted and stay silent here.
 * - Keepalive: the connection closes after {@link LIGHTER_IDLE_MS} without a client message (the docs' 2 minutes).
 *   The real server also sends its own `{"type":"ping"}` frames; the simulator does not.
 */
import { randomUUID } from "node:crypto";
import type { PerpInstrumentSpec } from "../perp-model.js";
import { type LighterPrint, lighterTradeFrame, lighterTradeRow } from "../venues/lighter-wire.js";
import { lighterMarkets, lighterPrints, tradePrint } from "../venues/lighter.js";
import { HOUR } from "../venues/wire.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** Wall-clock ms without a client message after which the server closes the connection (the docs' 2 minutes). */
export const LIGHTER_IDLE_MS = 120_000;
/** Prints the subscribe replay carries (the recorded `subscribed/trade` held 50). */
export const LIGHTER_REPLAY_PRINTS = 50;

/** Channel families the session accepts without data. */
const SILENT = new Set(["market_stats", "spot_market_stats", "order_book", "ticker", "candle", "height"]);

/** True for the path after the Lighter base that the websocket serves (`/stream`). */
export function lighterRoute(rest: string): boolean {
  return rest === "/stream" || rest === "/stream/";
}

type Sub = { kind: "trade"; inst: PerpInstrumentSpec; marketId: number; cursor: number } | { kind: "silent" };

export class LighterSession implements Session {
  readonly #subs = new Map<string, Sub>();
  #nonce: number;
  #lastClientMs: number;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly idleMs = LIGHTER_IDLE_MS,
  ) {
    this.#nonce = env.clock.now();
    this.#lastClientMs = io.elapsed();
    io.sendReply(JSON.stringify({ session_id: randomUUID(), type: "connected" }));
  }

  #error(code: number, message: string): void {
    this.io.sendReply(JSON.stringify({ error: { code, message } }));
  }

  onMessage(text: string): void {
    this.#lastClientMs = this.io.elapsed();
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error(30001, "Invalid Message");
    }
    const m = (typeof msg === "object" && msg !== null ? msg : {}) as { type?: unknown; channel?: unknown };
    if (m.type === "ping") return this.io.sendPong(JSON.stringify({ type: "pong" }));
    if (m.type === "pong") return;
    if ((m.type !== "subscribe" && m.type !== "unsubscribe") || typeof m.channel !== "string") return this.#error(30001, "Invalid Message");
    const [family, id, ...more] = m.channel.split("/");
    const key = `${family}:${[id, ...more].filter((p) => p !== undefined).join(":")}`;
    if (m.type === "unsubscribe") {
      this.#subs.delete(key);
      return this.io.sendReply(`{"type": "unsubscribed", "channel": ${JSON.stringify(key)}}`);
    }
    if (this.#subs.has(key)) return this.#error(30003, `Already Subscribed to : ${key}`);
    if (family !== "trade") {
      if (!family || !SILENT.has(family)) return this.#error(30005, "Invalid Channel");
      this.#subs.set(key, { kind: "silent" });
      return;
    }
    const now = this.env.clock.now();
    const market = /^\d+$/.test(id ?? "") && more.length === 0 ? lighterMarkets(this.env.perp, now).find((x) => x.marketId === Number(id)) : undefined;
    if (!market) return this.#error(30005, "Invalid Channel:  (marketId)");
    this.#subs.set(key, { kind: "trade", inst: market.inst, marketId: market.marketId, cursor: now + 1 });
    const rows = (list: readonly LighterPrint[]) => list.map((p) => lighterTradeRow(market.marketId, p));
    const replay = this.env.tape.tradesBefore(market.inst, now + 1, LIGHTER_REPLAY_PRINTS).map(tradePrint);
    const { liquidations } = lighterPrints(this.env.tape, market.inst, now - HOUR, now + 1);
    this.io.sendReply(lighterTradeFrame("subscribed", market.marketId, rows(replay), rows(liquidations), this.#nonce++));
  }

  tick(now: number, elapsedMs: number): void {
    if (elapsedMs - this.#lastClientMs >= this.idleMs) return this.io.close(1000, "Inactive connection");
    const to = now + 1;
    for (const sub of this.#subs.values()) {
      if (sub.kind !== "trade" || to <= sub.cursor) continue;
      const { trades, liquidations } = lighterPrints(this.env.tape, sub.inst, sub.cursor, to);
      sub.cursor = to;
      if (trades.length === 0 && liquidations.length === 0) continue;
      const rows = (list: readonly LighterPrint[]) => list.map((p) => lighterTradeRow(sub.marketId, p));
      this.io.sendData(lighterTradeFrame("update", sub.marketId, rows(trades), rows(liquidations), this.#nonce++));
    }
  }

  malformedSample(): string {
    return '{"channel":"trade:1","liquidation_trades":[],"nonce":1,"trades":[{"trade_id":';
  }
}
