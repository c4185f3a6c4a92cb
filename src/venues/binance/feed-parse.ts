import { z } from "zod";
import { Num } from "../wire.js";
import type { StreamVenue, Trade } from "../../ingestion/types.js";
import {
  decimal,
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
} from "../../ingestion/feeds/normalise.js";
import { bool, detached, fixed, object, str, uint } from "../../ingestion/feeds/frame-layout.js";

/*
 * Binance USDⓈ-M stream frames (https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams):
 * combined-stream wrappers `{"stream","data"}` (raw payloads are accepted too) carrying `aggTrade`
 * (`m: true` = buyer is maker → taker SELL; id = aggregate id `a`) and `forceOrder` (`o.S` is the
 * liquidation ORDER side: SELL → a long was liquidated; size `o.z` filled, else `o.q`; price `o.ap`
 * average, else `o.p`). Also the REST `/fapi/v1/aggTrades` rows. Aster (same wire) passes its venue key to the
 * JSON path and the REST parser.
 */

const VENUE = "binance";

/** One aggregate trade: the WS `aggTrade` payload or a REST `/fapi/v1/aggTrades` row (same keys). */
export const BinanceAggTradeRow = z.object({ a: Id, p: Pos, q: Pos, T: Time, m: z.boolean() });

/** A validated aggregate trade → {@link Trade} of `venue` (default binance). */
export function binanceTrade(inst: FeedInstrument, r: z.output<typeof BinanceAggTradeRow>, venue: StreamVenue = VENUE): Trade {
  return makeTrade(venue, inst, { time: r.T, price: r.p, size: r.q, side: r.m ? "sell" : "buy", id: r.a });
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
function fastAggTrade(e: Obj, lookup: InstrumentLookup, venue: StreamVenue): Trade | typeof SKIPPED | undefined {
  const { s, m } = e;
  const time = epochMs(e.T);
  const price = positiveDecimal(e.p);
  const size = positiveDecimal(e.q);
  const id = idOf(e.a);
  if (typeof s !== "string" || typeof m !== "boolean" || time === undefined || price === undefined || size === undefined || id === undefined) return undefined;
  const inst = lookup.get(s);
  return inst ? newTrade(venue, inst, time, price, size, m ? "sell" : "buy", id) : SKIPPED;
}
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The `aggTrade` payload exactly as the venue sends it: keys `e` ("aggTrade"), `E`, `a`, `s`, `p`, `q`, `f`,
 * `l`, `T`, `m` in this order. Captures: 1 `a`, 2 `s`, 3 `p`, 4 `q`, 5 `T` (not 0: the schema refuses it), 6 `m` ("t" if true).
 */
const AGG_TRADE = object([
  ["e", fixed("aggTrade")],
  ["E", uint()],
  ["a", uint({ capture: true })],
  ["s", str({ capture: true })],
  ["p", str({ capture: true })],
  ["q", str({ capture: true })],
  ["f", uint()],
  ["l", uint()],
  ["T", uint({ capture: true, positive: true })],
  ["m", bool({ capture: true })],
]);
/** As the feed receives it: the combined-stream wrapper of the routed endpoint. */
const COMBINED_AGG_TRADE = new RegExp(
  `^${object([
    ["stream", str()],
    ["data", AGG_TRADE],
  ])}$`,
);
/** The raw payload (a single-stream connection). */
const RAW_AGG_TRADE = new RegExp(`^${AGG_TRADE}$`);

/**
 * The layout scanner of Binance USDⓈ-M `aggTrade` frames, the busiest stream: the text of a frame exactly
 * as the venue sends it, combined-stream `{"stream":"<name>","data":{…}}` (the feed's endpoint) or the raw
 * payload `{…}`, payload keys in the venue's order `e` ("aggTrade"), `E`, `a`, `s`, `p`, `q`, `f`, `l`, `T`,
 * `m`, with no whitespace and no escapes, integers unsigned (at most 15 digits), `T` > 0, `p` and `q`
 * strings of positive decimals (see src/ingestion/feeds/frame-layout.ts). Such a frame becomes its {@link Trade} (an unknown symbol:
 * `skipped` 1) without JSON.parse: exactly the frame {@link parseBinanceJson} gives for it. Undefined for
 * anything else (other events, liquidations, acks, another key order, an added key, a value of another
 * type…): the caller then takes the JSON.parse path, which decides, errors included.
 */
export function scanBinanceAggTrade(text: string, lookup: InstrumentLookup): ParsedFrame | undefined {
  // `{"stream":…` (a third character "s") or the raw payload `{"e":…`.
  const m = (text.charCodeAt(2) === 115 ? COMBINED_AGG_TRADE : RAW_AGG_TRADE).exec(text);
  if (m === null) return undefined;
  const price = positiveDecimal(m[3]);
  const size = positiveDecimal(m[4]);
  if (price === undefined || size === undefined) return undefined;
  const inst = lookup.get(m[2]!);
  // Integers of at most 15 digits: `decimal` reads them exactly, and they are what JSON.parse's number prints as.
  return inst ? tradeFrame([newTrade(VENUE, inst, decimal(m[5]!), price, size, m[6] === "t" ? "sell" : "buy", detached(m[1]!))]) : tradeFrame([], 1);
}

/**
 * One raw Binance futures WS message (text or parsed JSON) → trades / liquidations / control. Never throws.
 * Text in the venue's `aggTrade` layout is read by {@link scanBinanceAggTrade}; everything else, and any
 * deviation from that layout, goes through JSON.parse and the schemas.
 */
export function parseBinanceMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  if (typeof raw === "string") {
    const scanned = scanBinanceAggTrade(raw, lookup);
    if (scanned) return scanned;
  }
  return parseBinanceJson(raw, lookup);
}

/**
 * The JSON.parse path of {@link parseBinanceMessage}: text through JSON.parse (an already parsed value as
 * is), then the hand checks and schemas. On every frame the scanner reads, it gives the same answer (the
 * scanner only does it sooner: test/ingestion/feeds-scan.test.ts). `venue` (default binance) names the records and errors.
 */
export function parseBinanceJson(raw: unknown, lookup: InstrumentLookup, venue: StreamVenue = VENUE): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value;
  if (!isObj(v)) return frame({ error: `${venue} frame is not an object` });
  if ("id" in v && ("result" in v || "error" in v)) {
    if (v.error !== undefined && v.error !== null) return frame({ control: { type: "venue_error", message: JSON.stringify(v.error) } });
    return frame({ control: { type: "ack" } });
  }
  const payload = "stream" in v ? v.data : v;
  if (Array.isArray(payload)) return frame(); // `!markPrice@arr`-style array streams are not ours
  if (!isObj(payload) || typeof payload.e !== "string") return frame({ error: `${venue} frame has no event type` });
  if (payload.e === "aggTrade") {
    const fast = fastAggTrade(payload, lookup, venue);
    if (fast !== undefined) return fast === SKIPPED ? tradeFrame([], 1) : tradeFrame([fast]);
    const r = AggTradeEvent.safeParse(payload);
    if (!r.success) return frame({ error: `aggTrade: ${zodIssues(r.error)}` });
    const inst = lookup.get(r.data.s);
    return inst ? tradeFrame([binanceTrade(inst, r.data, venue)]) : tradeFrame([], 1);
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
    return frame({ liquidations: [makeLiquidation(venue, inst, { time, price, size, side: o.S === "SELL" ? "long" : "short" })] });
  }
  return frame(); // other streams (markPriceUpdate, kline…) are ignored
}

/** A REST `GET /fapi/v1/aggTrades` body (array of rows, oldest first) for `inst` of `venue` (default binance). Never throws. */
export function parseBinanceAggTrades(raw: unknown, inst: FeedInstrument, venue: StreamVenue = VENUE): ParsedFrame {
  if (!Array.isArray(raw)) return frame({ error: `${venue} aggTrades body is not an array` });
  const { out, error } = eachRow(raw, BinanceAggTradeRow, (r) => binanceTrade(inst, r, venue));
  return frame({ trades: out, error });
}
