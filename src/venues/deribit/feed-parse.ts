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
  newTrade,
  type ParsedFrame,
  Pos,
  Time,
  zodIssues,
} from "../../ingestion/feeds/normalise.js";
import { isInverseName } from "./parse.js";

/*
 * Deribit websocket frames (JSON-RPC 2.0, https://docs.deribit.com/, subscription channel `trades.{instrument_name}.{interval}`)
 * and the REST `public/get_last_trades_by_instrument` rows, which share the trade keys: `trade_id` (string, unique per
 * instrument), `timestamp` ms, `price` (USD or USDC per venue unit), `amount` (USD on inverse `BTC-PERPETUAL`, base
 * coins on linear `*_USDC-PERPETUAL`), `direction` = the TAKER side, and, on trades caused by a liquidation,
 * `liquidation`: "M" (the maker side was liquidated), "T" (the taker side), "MT" (both).
 * The liquidated position follows from who sold: a liquidated taker selling (`direction` sell) or a liquidated maker
 * selling (`direction` buy, so the maker sold) closes a LONG; the other way round a SHORT. "MT" yields one of each.
 * Control frames: `{id, result}` answers (subscribe: the channel list; `public/test`: `{version}` = our pong),
 * `{id, error}` refusals, and `method: heartbeat` notices (`params.type` "test_request" must be answered with
 * `public/test`: see {@link isTestRequest}).
 */

const VENUE = "deribit";

/** One trade row, WS `trades.*` data or REST `get_last_trades_by_instrument` `result.trades`. */
export const DeribitTradeRow = z.object({
  instrument_name: z.string(),
  trade_id: Id,
  timestamp: Time,
  price: Pos,
  amount: Pos,
  direction: z.enum(["buy", "sell"]),
  liquidation: z.enum(["M", "T", "MT"]).optional(),
});
type Row = z.output<typeof DeribitTradeRow>;

/** Base coins of a trade: USD / price on inverse perpetuals, else the amount (the multiplier is applied by {@link newTrade}). */
function venueSize(inst: FeedInstrument, r: Row): number {
  return isInverseName(inst.venueSymbol) ? Number((r.amount / r.price).toPrecision(15)) : r.amount;
}

/** A validated trade row → {@link Trade} (taker side, coins, USD per coin). */
export function deribitTrade(inst: FeedInstrument, r: Row): Trade {
  return newTrade(VENUE, inst, r.timestamp, r.price, venueSize(inst, r), r.direction, r.trade_id);
}

/** The liquidated positions of a trade row: none without a `liquidation` field, two for "MT". */
export function deribitLiquidations(inst: FeedInstrument, r: Row): Liquidation[] {
  if (!r.liquidation) return [];
  const takerSide = r.direction === "sell" ? "long" : "short";
  const makerSide = takerSide === "long" ? "short" : "long";
  const sides: ("long" | "short")[] = r.liquidation === "T" ? [takerSide] : r.liquidation === "M" ? [makerSide] : [takerSide, makerSide];
  const size = venueSize(inst, r);
  return sides.map((side) => makeLiquidation(VENUE, inst, { time: r.timestamp, price: r.price, size, side }));
}

const Notification = z.object({ method: z.literal("subscription"), params: z.object({ channel: z.string(), data: z.unknown() }) });

/** True for the server's `heartbeat` notice of type `test_request`, which the client must answer with `public/test`. */
export function isTestRequest(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  const o = v as { method?: unknown; params?: { type?: unknown } };
  return o.method === "heartbeat" && o.params?.type === "test_request";
}

/** The control message of a `test_request` frame (the feed answers it). */
export const TEST_REQUEST = "heartbeat test_request";

/** One raw Deribit websocket message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseDeribitMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "deribit frame is not an object" });
  if (v.error !== undefined) {
    const e = v.error as { code?: unknown; message?: unknown };
    return frame({ control: { type: "venue_error", message: [e?.code, e?.message].filter((x) => x !== undefined).join(" ") || undefined } });
  }
  if (v.method === "heartbeat") return frame({ control: { type: "ack", message: isTestRequest(v) ? TEST_REQUEST : "heartbeat" } });
  if (v.result !== undefined) {
    const r = v.result as { version?: unknown } | null;
    return frame({ control: { type: typeof r === "object" && r !== null && typeof r.version === "string" ? "pong" : "ack" } });
  }
  const n = Notification.safeParse(v);
  if (!n.success) return frame({ error: `deribit frame: ${zodIssues(n.error)}` });
  const { channel, data } = n.data.params;
  if (!channel.startsWith("trades.")) return frame(); // tickers, books… are not ours
  if (!Array.isArray(data)) return frame({ error: `deribit ${channel}: data is not an array` });
  return parseRows(data, (name) => lookup.get(name));
}

function parseRows(rows: readonly unknown[], find: (instrumentName: string) => FeedInstrument | undefined): ParsedFrame {
  const liquidations: Liquidation[] = [];
  const { out, skipped, error } = eachRow(rows, DeribitTradeRow, (r) => {
    const inst = find(r.instrument_name);
    if (!inst) return undefined;
    if (r.liquidation) liquidations.push(...deribitLiquidations(inst, r));
    return deribitTrade(inst, r);
  });
  return frame({ trades: out, liquidations, skipped, error });
}

/** A REST `public/get_last_trades_by_instrument` body for `inst` (`result.trades`, any order). Never throws. */
export function parseDeribitTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = z.object({ result: z.object({ trades: z.array(z.unknown()), has_more: z.boolean().optional() }) }).safeParse(raw);
  if (!body.success) {
    const err = (raw as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    return frame({ error: err ? `deribit error ${String(err.code)} ${String(err.message ?? "")}`.trim() : "deribit trades body has an unexpected shape" });
  }
  return parseRows(body.data.result.trades, (name) => (name === inst.venueSymbol ? inst : undefined));
}
