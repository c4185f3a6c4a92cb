import { z } from "zod";
import { Num } from "../../venues/wire.js";
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
  zodIssues,
} from "./normalise.js";

/*
 * Binance USDⓈ-M stream frames (sources.md §1.8): combined-stream wrappers `{"stream","data"}` (raw
 * payloads are accepted too) carrying `aggTrade` (`m: true` = buyer is maker → taker SELL; id = aggregate
 * id `a`) and `forceOrder` (`o.S` is the liquidation ORDER side: SELL → a long was liquidated; size `o.z`
 * filled, else `o.q`; price `o.ap` average, else `o.p`). Also the REST `/fapi/v1/aggTrades` rows.
 */

const VENUE = "binance";

/** One aggregate trade: the WS `aggTrade` payload or a REST `/fapi/v1/aggTrades` row (same keys). */
export const BinanceAggTradeRow = z.object({ a: Id, p: Pos, q: Pos, T: Time, m: z.boolean() });

/** A validated aggregate trade → {@link Trade}. */
export function binanceTrade(inst: FeedInstrument, r: z.output<typeof BinanceAggTradeRow>): Trade {
  return makeTrade(VENUE, inst, { time: r.T, price: r.p, size: r.q, side: r.m ? "sell" : "buy", id: r.a });
}

const AggTradeEvent = BinanceAggTradeRow.extend({ s: z.string() });
const OptPos = Num.optional();
const ForceOrderEvent = z.object({
  E: Time.optional(),
  o: z.object({ s: z.string(), S: z.enum(["BUY", "SELL"]), q: Num, p: Num, ap: OptPos, z: OptPos, T: Time.optional() }),
});

type Obj = Record<string, unknown>;

/** {@link fastAggTrade}: the symbol is not in the lookup. */
const SKIPPED = 0;

/**
 * The hot path: an `aggTrade` of the usual wire types (price/qty strings, numeric ids and times) becomes a
 * {@link Trade} without zod and without an intermediate row, which more than halves the cost of the
 * busiest stream. Undefined for anything unusual, which then goes through the schema (and its errors).
 */
function fastAggTrade(e: Obj, lookup: InstrumentLookup): Trade | typeof SKIPPED | undefined {
  const { s, m } = e;
  const time = epochMs(e.T);
  const price = positiveDecimal(e.p);
  const size = positiveDecimal(e.q);
  const id = idOf(e.a);
  if (typeof s !== "string" || typeof m !== "boolean" || time === undefined || price === undefined || size === undefined || id === undefined) return undefined;
  const inst = lookup.get(s);
  return inst ? newTrade(VENUE, inst, time, price, size, m ? "sell" : "buy", id) : SKIPPED;
}
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** One raw Binance futures WS message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseBinanceMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value;
  if (!isObj(v)) return frame({ error: "binance frame is not an object" });
  if ("id" in v && ("result" in v || "error" in v)) {
    if (v.error !== undefined && v.error !== null) return frame({ control: { type: "venue_error", message: JSON.stringify(v.error) } });
    return frame({ control: { type: "ack" } });
  }
  const payload = "stream" in v ? v.data : v;
  if (Array.isArray(payload)) return frame(); // `!markPrice@arr`-style array streams are not ours
  if (!isObj(payload) || typeof payload.e !== "string") return frame({ error: "binance frame has no event type" });
  if (payload.e === "aggTrade") {
    const fast = fastAggTrade(payload, lookup);
    if (fast !== undefined) return fast === SKIPPED ? tradeFrame([], 1) : tradeFrame([fast]);
    const r = AggTradeEvent.safeParse(payload);
    if (!r.success) return frame({ error: `aggTrade: ${zodIssues(r.error)}` });
    const inst = lookup.get(r.data.s);
    return inst ? tradeFrame([binanceTrade(inst, r.data)]) : tradeFrame([], 1);
  }
  if (payload.e === "forceOrder") {
    const r = ForceOrderEvent.safeParse(payload);
    if (!r.success) return frame({ error: `forceOrder: ${zodIssues(r.error)}` });
    const o = r.data.o;
    const inst = lookup.get(o.s);
    if (!inst) return frame({ skipped: 1 });
    const price = o.ap !== undefined && o.ap > 0 ? o.ap : o.p;
    const size = o.z !== undefined && o.z > 0 ? o.z : o.q;
    const time = o.T ?? r.data.E;
    if (!(price > 0) || !(size > 0) || time === undefined) return frame({ error: "forceOrder without price, size or time" });
    return frame({ liquidations: [makeLiquidation(VENUE, inst, { time, price, size, side: o.S === "SELL" ? "long" : "short" })] });
  }
  return frame(); // other streams (markPriceUpdate, kline…) are ignored
}

/** A REST `GET /fapi/v1/aggTrades` body (array of rows, oldest first) for `inst`. Never throws. */
export function parseBinanceAggTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  if (!Array.isArray(raw)) return frame({ error: "binance aggTrades body is not an array" });
  const { out, error } = eachRow(raw, BinanceAggTradeRow, (r) => binanceTrade(inst, r));
  return frame({ trades: out, error });
}
