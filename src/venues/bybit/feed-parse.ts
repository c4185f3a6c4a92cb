import { z } from "zod";
import type { Trade } from "../../ingestion/types.js";
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
} from "../../ingestion/feeds/normalise.js";
import { bool, detached, object, oneOf, str, uint } from "../../ingestion/feeds/frame-layout.js";

/*
 * Bybit v5 public linear frames (https://bybit-exchange.github.io/docs/v5/websocket/public/trade and
 * https://bybit-exchange.github.io/docs/v5/websocket/public/all-liquidation): `publicTrade.{symbol}`
 * (`S` = TAKER side, `v` size, `p` price, `i` id, `T` time) and `allLiquidation.{symbol}` (`S` = the liquidated POSITION side: Buy → a
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

/** The start of a `publicTrade` frame as the venue sends it, up to its first row (sticky: `lastIndex` is where the rows start). */
const PUBLIC_TRADE_HEAD = new RegExp(
  object(
    [
      ["topic", str({ prefix: "publicTrade." })],
      ["type", str()],
      ["ts", uint()],
      ["data", "\\["], // the opening bracket of the rows
    ],
    { open: true },
  ),
  "y",
);
/**
 * One row of a `publicTrade` frame as the venue sends it: keys `T`, `s`, `S`, `v`, `p`, `L`, `i`, `BT`, then
 * `RPI` and `seq` (in the 2026 recordings; older frames end at `BT`), followed by the comma of the next
 * row or by the end of the frame. Captures: 1 `T` (not 0), 2 `s`, 3 `S`, 4 `v`, 5 `p`, 6 `i` (not empty),
 * 7 what follows (`,` or `]}`). Sticky: read from where the previous row ended.
 */
const PUBLIC_TRADE_ROW = new RegExp(
  `${object([
    ["T", uint({ capture: true, positive: true })],
    ["s", str({ capture: true })],
    ["S", oneOf("Buy", "Sell")],
    ["v", str({ capture: true })],
    ["p", str({ capture: true })],
    ["L", str()],
    ["i", str({ capture: true, nonEmpty: true })],
    ["BT", bool()],
    ["RPI", bool(), "optional"],
    ["seq", uint(), "optional"],
  ])}(,|\\]\\}$)`,
  "y",
);

/**
 * The layout scanner of Bybit v5 `publicTrade.{symbol}` frames: the text of a frame exactly as the venue
 * sends it, `{"topic":"publicTrade.…","type":"…","ts":…,"data":[row, …]}` with one row or more, each
 * `{"T","s","S","v","p","L","i","BT"}` then `"RPI"` and `"seq"` (in the 2026 recordings; absent from
 * older ones), in that order; no whitespace, no escapes, integers unsigned (at most 15 digits), `T` > 0,
 * `S` "Buy" or "Sell", `v` and `p` strings of positive decimals, `i` a non-empty string (see src/ingestion/feeds/frame-layout.ts).
 * Such a frame becomes its trades (rows of unknown symbols counted in `skipped`) without JSON.parse:
 * exactly the frame {@link parseBybitJson} gives for it. Undefined for anything else (other topics,
 * liquidations, acks and pongs, spot frames, another key order, an added key, one unusual row…): the
 * caller then takes the JSON.parse path, which decides.
 */
export function scanBybitPublicTrade(text: string, lookup: InstrumentLookup): ParsedFrame | undefined {
  PUBLIC_TRADE_HEAD.lastIndex = 0;
  if (!PUBLIC_TRADE_HEAD.test(text)) return undefined;
  PUBLIC_TRADE_ROW.lastIndex = PUBLIC_TRADE_HEAD.lastIndex;
  const trades: Trade[] = [];
  let skipped = 0;
  // The instrument of the previous row, looked up again only when the symbol changes (rows share the topic's).
  let symbol: string | undefined;
  let inst: FeedInstrument | undefined;
  for (;;) {
    const m = PUBLIC_TRADE_ROW.exec(text);
    if (m === null) return undefined;
    const size = positiveDecimal(m[4]);
    const price = positiveDecimal(m[5]);
    if (size === undefined || price === undefined) return undefined;
    if (m[2] !== symbol) inst = lookup.get((symbol = m[2]!));
    // `T` has at most 15 digits: `decimal` reads it exactly.
    if (inst) trades.push(newTrade(VENUE, inst, decimal(m[1]!), price, size, m[3] === "Buy" ? "buy" : "sell", detached(m[6]!)));
    else skipped++;
    if (m[7] !== ",") return tradeFrame(trades, skipped);
  }
}

/**
 * One raw Bybit v5 public WS message (text or parsed JSON) → trades / liquidations / control. Never throws.
 * Text in the venue's `publicTrade` layout is read by {@link scanBybitPublicTrade}; everything else, and
 * any deviation from that layout, goes through JSON.parse and the schemas.
 */
export function parseBybitMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  if (typeof raw === "string") {
    const scanned = scanBybitPublicTrade(raw, lookup);
    if (scanned) return scanned;
  }
  return parseBybitJson(raw, lookup);
}

/**
 * The JSON.parse path of {@link parseBybitMessage}: text through JSON.parse (an already parsed value as
 * is), then the hand checks and schemas. On every frame the scanner reads, it gives the same answer (the
 * scanner only does it sooner: test/ingestion/feeds-scan.test.ts).
 */
export function parseBybitJson(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
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
