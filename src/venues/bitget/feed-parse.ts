import { z } from "zod";
import type { Trade } from "../../ingestion/types.js";
import { decode, eachRow, type FeedInstrument, frame, Id, type InstrumentLookup, makeTrade, type ParsedFrame, Pos, Time } from "../../ingestion/feeds/normalise.js";

/*
 * Bitget v2 public websocket frames (`wss://ws.bitget.com/v2/ws/public`,
 * https://www.bitget.com/api-doc/contract/websocket/public/New-Trades-Channel and …/common/websocket-intro):
 * the `trade` channel of `instType` USDT-FUTURES pushes `{action, arg: {instType, channel, instId}, data: [{ts,
 * price, size, side, tradeId}], ts}` (strings; `size` in base coins; `side` buy/sell = the taker's side; the
 * first push after a subscribe is a snapshot of recent trades, later ones are updates). Control: the string
 * `pong` (answer to the client's string `ping`), `{event: "subscribe"|"unsubscribe", arg}` acks and
 * `{event: "error", code, msg}`. The v2 public websocket has NO liquidation channel (Bitget's only public
 * liquidation topic is on the separate UTA v3 websocket, aggregated per second): this feed carries trades only.
 * The REST `fills-history` rows use the same names with `Buy`/`Sell` capitalised.
 */

const VENUE = "bitget";

const Side = z
  .string()
  .transform((s) => s.toLowerCase())
  .pipe(z.enum(["buy", "sell"]));
const TradeRow = z.object({ ts: Time, price: Pos, size: Pos, side: Side, tradeId: Id });
/** One REST `fills-history` row. */
export const BitgetRestTradeRow = TradeRow.extend({ symbol: z.string() });

/** A Bitget trade in venue units → {@link Trade} (`side` is the taker side; sizes in coins × multiplier). */
export function bitgetTrade(inst: FeedInstrument, r: z.output<typeof TradeRow>): Trade {
  return makeTrade(VENUE, inst, { time: r.ts, price: r.price, size: r.size, side: r.side, id: r.tradeId });
}

/** One raw Bitget v2 public WS message (text or parsed JSON) → trades / control. Never throws. */
export function parseBitgetMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  if (raw === "pong") return frame({ control: { type: "pong" } });
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "bitget frame is not an object" });
  if (typeof v.event === "string") {
    const msg = typeof v.msg === "string" ? v.msg : undefined;
    if (v.event === "error") return frame({ control: { type: "venue_error", message: `${String(v.code ?? "error")}: ${msg ?? "refused"}` } });
    return frame({ control: { type: "ack", message: v.event } });
  }
  const arg = v.arg as Record<string, unknown> | undefined;
  if (typeof arg !== "object" || arg === null) return frame({ error: "bitget frame has no arg" });
  if (arg.channel !== "trade") return frame(); // tickers, books, candles… are not ours
  const symbol = arg.instId;
  if (typeof symbol !== "string" || !Array.isArray(v.data)) return frame({ error: "bitget trade frame has no instId/data" });
  const inst = lookup.get(symbol);
  if (!inst) return frame({ skipped: v.data.length });
  const { out, error } = eachRow(v.data, TradeRow, (r) => bitgetTrade(inst, r));
  return frame({ trades: out, error });
}

/** A REST `GET /api/v2/mix/market/fills-history` body for `inst` (rows newest first). Never throws. */
export function parseBitgetFills(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = z.object({ code: z.string(), msg: z.string().optional(), data: z.array(z.unknown()).nullable().optional() }).safeParse(raw);
  if (!body.success) return frame({ error: "bitget fills-history body has an unexpected shape" });
  if (body.data.code !== "00000" || !body.data.data) return frame({ error: `bitget code ${body.data.code}: ${body.data.msg ?? ""}` });
  const { out, skipped, error } = eachRow(body.data.data, BitgetRestTradeRow, (r) => (r.symbol === inst.venueSymbol ? bitgetTrade(inst, r) : undefined));
  return frame({ trades: out, skipped, error });
}
