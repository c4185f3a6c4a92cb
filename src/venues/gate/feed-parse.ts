import { z } from "zod";
import type { Liquidation, Trade } from "../../ingestion/types.js";
import {
  decode,
  eachRow,
  type FeedInstrument,
  frame,
  Id,
  type InstrumentLookup,
  makeLiquidation,
  makeTrade,
  type ParsedFrame,
  zodIssues,
} from "../../ingestion/feeds/normalise.js";
import { Num } from "../wire.js";
import { gateTimeMs } from "./parse.js";

/*
 * Gate Futures WebSocket v4 frames (`wss://fx-ws.gateio.ws/v4/ws/usdt`, https://www.gate.com/docs/developers/futures/ws/en/):
 * envelope `{time, time_ms, channel, event, result, error?}`.
 * - `futures.trades` update: `result` rows `{id, contract, size, price, create_time (s), create_time_ms}`;
 *   `size` is SIGNED contracts ("Positive size means taker is buyer, negative seller") → × quanto_multiplier.
 * - `futures.public_liquidates` update (payload `["!all"]` for every contract): rows `{contract, price, size,
 *   time_ms | time}`; `size` is the signed size of the liquidation ORDER, so a negative size (a sell) closes a
 *   LONG position (the liquidated side), a positive one a short. Since 2026-08-20 one push may hold several
 *   liquidations of a contract.
 * - control: `futures.pong`; `event` subscribe / unsubscribe (an `error` object = refused); a system notice
 *   `{type: "upgrade", msg}` before a server restart (→ reconnect).
 * The REST `/futures/usdt/trades` rows have the trade keys (`create_time` seconds, possibly fractional).
 */

const VENUE = "gate";

/** A signed decimal sent as a string or a number (Gate sizes carry the side in their sign). */
const Signed = Num.refine((n) => n !== 0, "expected a non-zero size");

/** One trade row: WS `futures.trades` or REST `/futures/usdt/trades`. */
export const GateTradeRow = z.object({
  id: Id,
  contract: z.string(),
  size: Signed,
  price: Num.refine((n) => n > 0, "expected a positive price"),
  create_time: Num.optional(),
  create_time_ms: Num.optional(),
});

/** Trade time in epoch ms: `create_time_ms` (ms on the socket, fractional seconds on REST), else `create_time` seconds. */
function tradeTime(r: z.output<typeof GateTradeRow>): number | undefined {
  const t = r.create_time_ms ?? r.create_time;
  return t === undefined || !(t > 0) ? undefined : gateTimeMs(t);
}

/** A validated trade row → {@link Trade} (taker side from the sign, size in coins), or undefined without a time. */
export function gateTrade(inst: FeedInstrument, r: z.output<typeof GateTradeRow>): Trade | undefined {
  const time = tradeTime(r);
  if (time === undefined) return undefined;
  return makeTrade(VENUE, inst, { time, price: r.price, size: Math.abs(r.size), side: r.size > 0 ? "buy" : "sell", id: r.id });
}

const LiquidationRow = z.object({
  contract: z.string(),
  price: Num.refine((n) => n > 0, "expected a positive price"),
  size: Signed,
  time_ms: Num.optional(),
  time: Num.optional(),
});

/** A validated liquidation row → {@link Liquidation} (negative order size = a long was liquidated), or undefined without a time. */
function gateLiquidation(inst: FeedInstrument, r: z.output<typeof LiquidationRow>, fallbackMs: number | undefined): Liquidation | undefined {
  const t = r.time_ms ?? r.time;
  const time = t !== undefined && t > 0 ? gateTimeMs(t) : fallbackMs;
  if (time === undefined) return undefined;
  return makeLiquidation(VENUE, inst, { time, price: r.price, size: Math.abs(r.size), side: r.size < 0 ? "long" : "short" });
}

const Envelope = z.object({
  channel: z.string().optional(),
  event: z.string().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  time_ms: z.number().optional(),
});

/** `result` as a list of rows (Gate sends a list; a single object is accepted too). */
function rowsOf(result: unknown): unknown[] | undefined {
  if (Array.isArray(result)) return result;
  return typeof result === "object" && result !== null ? [result] : undefined;
}

/** The message of an `error` field (`{code, message}`), if any. */
function errorMessage(e: unknown): string | undefined {
  if (e === null || e === undefined) return undefined;
  if (typeof e === "object") {
    const o = e as { code?: unknown; message?: unknown };
    return [o.code, o.message].filter((x) => x !== undefined && x !== null).join(" ") || "error";
  }
  return String(e);
}

/** One raw Gate futures WS message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseGateMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "gate frame is not an object" });
  if (v.type === "upgrade") return frame({ control: { type: "reconnect", message: typeof v.msg === "string" ? v.msg : undefined } });
  const env = Envelope.safeParse(v);
  if (!env.success) return frame({ error: `gate frame: ${zodIssues(env.error)}` });
  const { channel, event, result, error, time_ms } = env.data;
  if (channel === "futures.pong") return frame({ control: { type: "pong" } });
  const refused = errorMessage(error);
  if (event === "subscribe" || event === "unsubscribe")
    return frame({ control: refused ? { type: "venue_error", message: refused } : { type: "ack", message: `${channel} ${event}` } });
  if (refused) return frame({ control: { type: "venue_error", message: refused } });
  if (event !== "update" && event !== "all") return frame();
  if (channel === "futures.trades") {
    const rows = rowsOf(result);
    if (!rows) return frame({ error: "gate futures.trades: result is not a list" });
    let undated = 0;
    const {
      out,
      skipped,
      error: bad,
    } = eachRow(rows, GateTradeRow, (r) => {
      const inst = lookup.get(r.contract);
      if (!inst) return undefined;
      const t = gateTrade(inst, r);
      if (!t) undated++;
      return t;
    });
    return frame({ trades: out, skipped: skipped - undated, error: bad ?? (undated ? `${undated} trade(s) without a time` : undefined) });
  }
  if (channel === "futures.public_liquidates") {
    const rows = rowsOf(result);
    if (!rows) return frame({ error: "gate futures.public_liquidates: result is not a list" });
    const {
      out,
      skipped,
      error: bad,
    } = eachRow(rows, LiquidationRow, (r) => {
      const inst = lookup.get(r.contract);
      return inst && gateLiquidation(inst, r, time_ms);
    });
    return frame({ liquidations: out, skipped, error: bad });
  }
  return frame(); // tickers, books, contract_stats… are not ours
}

/** A REST `GET /futures/usdt/trades?contract=` body for `inst` (rows newest first). Never throws. */
export function parseGateTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  if (!Array.isArray(raw)) return frame({ error: "gate trades body is not a list" });
  const { out, skipped, error } = eachRow(raw, GateTradeRow, (r) => (r.contract === inst.venueSymbol ? gateTrade(inst, r) : undefined));
  return frame({ trades: out, skipped, error });
}

const LiqOrderRow = z.object({
  time: Num,
  contract: z.string(),
  size: Signed,
  order_size: Num.optional(),
  order_price: Num.optional(),
  fill_price: Num.optional(),
});

/**
 * A REST `GET /futures/usdt/liq_orders` body (rows `{time: s, contract, size, order_size, order_price, fill_price,
 * left}`, newest first) → liquidations of known contracts. `size` is the liquidated POSITION (positive = a long),
 * `order_size` the liquidation order (negative = a sell); the price is `fill_price` (the average taker price) when
 * positive, else `order_price`; the size is |`size`| contracts × quanto_multiplier. Rows without a price are
 * reported in `error`. Never throws. Read by the gap and takeover liquidation backfill (`liquidation-backfill.ts`).
 */
export function parseGateLiqOrders(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  if (!Array.isArray(raw)) return frame({ error: "gate liq_orders body is not a list" });
  let unpriced = 0;
  const { out, skipped, error } = eachRow(raw, LiqOrderRow, (r) => {
    const inst = lookup.get(r.contract);
    if (!inst) return undefined;
    const price = r.fill_price !== undefined && r.fill_price > 0 ? r.fill_price : r.order_price;
    if (price === undefined || !(price > 0)) {
      unpriced++;
      return undefined;
    }
    return makeLiquidation(VENUE, inst, { time: gateTimeMs(r.time), price, size: Math.abs(r.size), side: r.size > 0 ? "long" : "short" });
  });
  return frame({ liquidations: out, skipped: skipped - unpriced, error: error ?? (unpriced ? `${unpriced} liquidation(s) without a price` : undefined) });
}
