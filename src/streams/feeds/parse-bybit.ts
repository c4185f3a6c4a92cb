import { z } from "zod";
import type { Trade } from "../types.js";
import {
  decode,
  eachRow,
  epochMs,
  type FeedInstrument,
  frame,
  Id,
  idOf,
  type InstrumentLookup,
  makeLiquidation,
  makeTrade,
  newTrade,
  type ParsedFrame,
  Pos,
  positiveDecimal,
  Time,
  tradeFrame,
} from "./normalise.js";

/*
 * Bybit v5 public linear frames (sources.md §3.5): `publicTrade.{symbol}` (`S` = TAKER side, `v` size,
 * `p` price, `i` id, `T` time) and `allLiquidation.{symbol}` (`S` = the liquidated POSITION side: Buy → a
 * long was liquidated; `p` bankruptcy price). Control: subscribe acks and pongs (`op`, `success`,
 * `ret_msg`). The REST `/v5/market/recent-trade` rows use long names (`execId`, `price`, `size`, `side`,
 * `time`) for the same facts.
 */

const VENUE = "bybit";

const Side = z.enum(["Buy", "Sell"]);
const TradeRow = z.object({ T: Time, s: z.string(), S: Side, v: Pos, p: Pos, i: Id });
const LiquidationRow = z.object({ T: Time, s: z.string(), S: Side, v: Pos, p: Pos });
/** One REST `recent-trade` row. */
export const BybitRestTradeRow = z.object({ execId: Id, symbol: z.string(), price: Pos, size: Pos, side: Side, time: Time });

/** A Bybit trade in venue units → {@link Trade} (`side` is the taker side). */
export function bybitTrade(inst: FeedInstrument, r: { time: number; price: number; size: number; side: "Buy" | "Sell"; id: string }): Trade {
  return makeTrade(VENUE, inst, { ...r, side: r.side === "Buy" ? "buy" : "sell" });
}

/**
 * The hot path: the rows of a `publicTrade` frame of the usual wire types (numeric times, price/size strings,
 * string ids) become trades without zod and without intermediate rows. Undefined as soon as one row is
 * unusual: then the schema reads the whole frame, with its errors, exactly as before.
 */
function fastTrades(rows: readonly unknown[], lookup: InstrumentLookup): ParsedFrame | undefined {
  const trades: Trade[] = [];
  let skipped = 0;
  for (const r of rows) {
    if (typeof r !== "object" || r === null) return undefined;
    const row = r as Record<string, unknown>;
    const { s, S } = row;
    const time = epochMs(row.T);
    const price = positiveDecimal(row.p);
    const size = positiveDecimal(row.v);
    const id = idOf(row.i);
    if (typeof s !== "string" || (S !== "Buy" && S !== "Sell") || time === undefined || price === undefined || size === undefined || id === undefined) return undefined;
    const inst = lookup.get(s);
    if (inst) trades.push(newTrade(VENUE, inst, time, price, size, S === "Buy" ? "buy" : "sell", id));
    else skipped++;
  }
  return tradeFrame(trades, skipped);
}

/** One raw Bybit v5 public WS message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseBybitMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "bybit frame is not an object" });
  if (typeof v.op === "string") {
    const message = typeof v.ret_msg === "string" ? v.ret_msg : undefined;
    if (v.success === false) return frame({ control: { type: "venue_error", message: `${v.op}: ${message ?? "refused"}` } });
    return frame({ control: { type: v.op === "ping" || v.op === "pong" || message === "pong" ? "pong" : "ack", message } });
  }
  // Checked by hand rather than with a schema: this runs for every message.
  const { topic, data } = v;
  if (typeof topic !== "string") return frame({ error: "bybit frame has no topic/data" });
  const ours = topic.startsWith("publicTrade.") || topic.startsWith("allLiquidation.");
  if (!ours) return frame(); // tickers, kline, orderbook… are not ours
  if (!Array.isArray(data)) return frame({ error: `bybit ${topic}: data is not an array` });
  if (topic.startsWith("publicTrade.")) {
    const fast = fastTrades(data, lookup);
    if (fast) return fast;
    const { out, skipped, error } = eachRow(data, TradeRow, (r) => {
      const inst = lookup.get(r.s);
      return inst && bybitTrade(inst, { time: r.T, price: r.p, size: r.v, side: r.S, id: r.i });
    });
    return frame({ trades: out, skipped, error });
  }
  if (topic.startsWith("allLiquidation.")) {
    const { out, skipped, error } = eachRow(data, LiquidationRow, (r) => {
      const inst = lookup.get(r.s);
      return inst && makeLiquidation(VENUE, inst, { time: r.T, price: r.p, size: r.v, side: r.S === "Buy" ? "long" : "short" });
    });
    return frame({ liquidations: out, skipped, error });
  }
  return frame();
}

/** A REST `GET /v5/market/recent-trade` body for `inst` (rows newest first). Never throws. */
export function parseBybitRecentTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = z.object({ retCode: z.number(), retMsg: z.string().optional(), result: z.object({ list: z.array(z.unknown()) }).optional() }).safeParse(raw);
  if (!body.success) return frame({ error: "bybit recent-trade body has an unexpected shape" });
  if (body.data.retCode !== 0 || !body.data.result) return frame({ error: `bybit retCode ${body.data.retCode}: ${body.data.retMsg ?? ""}` });
  const { out, skipped, error } = eachRow(body.data.result.list, BybitRestTradeRow, (r) =>
    r.symbol === inst.venueSymbol ? bybitTrade(inst, { time: r.time, price: r.price, size: r.size, side: r.side, id: r.execId }) : undefined,
  );
  return frame({ trades: out, skipped, error });
}
