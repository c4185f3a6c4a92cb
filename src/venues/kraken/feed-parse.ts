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
  Pos,
  Time,
} from "../../ingestion/feeds/normalise.js";
import { KRAKEN } from "./parse.js";

/*
 * Kraken Futures websocket frames (`wss://futures.kraken.com/ws/v1`, docs.kraken.com/exchange/api-reference/futures-websocket)
 * and the REST `GET /derivatives/api/v3/history` rows, which describe the same trades:
 * - `trade` (one per fill): `{feed, product_id, uid, side, type, seq, time (ms), qty, price}`; `trade_snapshot` on
 *   subscribing: `{feed, product_id, trades: [...]}`, newest first. REST rows: `{time (ISO), trade_id, price, size, side,
 *   type, uid}`, newest first. `uid` (a UUID) is the trade's id in both.
 * - `side` is the TAKER's side ("buy" if the taker is a buyer: the OpenAPI `HistoryJson`). `qty` / `size` are contracts
 *   (1 coin on the `PF_` perpetuals read), `price` USD per contract unit.
 * - `type`: `fill` (a normal trade), `liquidation` (the fill of a liquidated position), `assignment` (a position assigned
 *   to a market maker), `termination`, `block` (off-book). Fills and liquidations are trades; the other three are not
 *   order-book trades and are left out of the tape.
 * - A liquidation fill is the liquidation order taking liquidity, so its taker side is the order's side: a liquidated
 *   LONG sells (`side` sell), a liquidated SHORT buys (tardis-node's Kraken Futures liquidation mapper reads it the same way).
 * Control: `{event: "info", version}` on connecting; `{event: "subscribed" | "unsubscribed", feed, product_ids}`;
 * refusals `{event: "error" | "alert" | "subscribed_failed", message}` (an unknown product answers `alert`, live 2026-08-08);
 * the `heartbeat` feed's `{feed: "heartbeat", time}`.
 */

/** Trade classifications that are order-book trades (counted in the tape); the others are not. */
const BOOK_TRADES = new Set(["fill", "liquidation"]);

const Side = z.enum(["buy", "sell"]);
const WsTrade = z.object({ product_id: z.string(), uid: Id, side: Side, type: z.string(), time: Time, qty: Pos, price: Pos });
const RestTrade = z.object({
  time: z.string().transform((s, ctx) => {
    const t = Date.parse(s);
    if (!(t > 0)) {
      ctx.addIssue({ code: "custom", message: `expected an ISO time, got ${JSON.stringify(s)}` });
      return z.NEVER;
    }
    return t;
  }),
  uid: Id.optional(),
  trade_id: Id.optional(),
  price: Pos,
  size: Pos,
  side: Side,
  type: z.string().optional(),
});

/** One trade in venue units, from either wire. */
interface Row {
  time: number;
  price: number;
  size: number;
  side: "buy" | "sell";
  id: string;
  type: string;
}

/** The trade and (for a `liquidation` fill) the liquidation of one row; undefined for a non-book classification. */
function rowEvents(inst: FeedInstrument, r: Row): { trade: Trade; liquidation?: Liquidation } | undefined {
  if (!BOOK_TRADES.has(r.type)) return undefined;
  const trade = makeTrade(KRAKEN, inst, { time: r.time, price: r.price, size: r.size, side: r.side, id: r.id });
  if (r.type !== "liquidation") return { trade };
  return { trade, liquidation: makeLiquidation(KRAKEN, inst, { time: r.time, price: r.price, size: r.size, side: r.side === "sell" ? "long" : "short" }) };
}

/** Parses rows of one instrument (`inst`, or none: all skipped) into trades and liquidations. */
function parseRows<S extends z.ZodType>(rows: readonly unknown[], schema: S, toRow: (r: z.output<S>) => Row, inst: FeedInstrument | undefined): ParsedFrame {
  if (!inst) return frame({ skipped: rows.length });
  const liquidations: Liquidation[] = [];
  const { out, error } = eachRow(rows, schema, (r) => rowEvents(inst, toRow(r)) ?? null);
  const trades: Trade[] = [];
  for (const e of out) {
    if (e === null) continue;
    trades.push(e.trade);
    if (e.liquidation) liquidations.push(e.liquidation);
  }
  return frame({ trades, liquidations, error });
}

const wsRow = (r: z.output<typeof WsTrade>): Row => ({ time: r.time, price: r.price, size: r.qty, side: r.side, id: r.uid, type: r.type });

/** The message of a control frame (`info`, `subscribed`, …, `error`, `alert`), as one line. */
function eventFrame(v: Record<string, unknown>): ParsedFrame {
  const event = String(v.event);
  const detail = [v.message, v.error].find((x) => typeof x === "string") as string | undefined;
  if (event === "error" || event === "alert" || event.endsWith("_failed")) {
    return frame({ control: { type: "venue_error", message: `${event}: ${detail ?? "refused"}` } });
  }
  // The answer to our keepalive (a heartbeat subscription, see feed.ts) is the pong.
  if (event === "subscribed" && v.feed === "heartbeat") return frame({ control: { type: "pong" } });
  return frame({ control: { type: "ack", message: typeof v.feed === "string" ? `${event} ${v.feed}` : event } });
}

/** One raw Kraken Futures websocket message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseKrakenMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "kraken frame is not an object" });
  if (typeof v.event === "string") return eventFrame(v);
  if (v.feed === "heartbeat") return frame({ control: { type: "ack", message: "heartbeat" } });
  if (v.feed === "trade_snapshot") {
    if (typeof v.product_id !== "string" || !Array.isArray(v.trades)) return frame({ error: "kraken trade_snapshot has no product_id/trades" });
    return parseRows(v.trades, WsTrade, wsRow, lookup.get(v.product_id));
  }
  if (v.feed !== "trade") return frame(); // ticker, book… are not ours
  if (typeof v.product_id !== "string") return frame({ error: "kraken trade has no product_id" });
  return parseRows([v], WsTrade, wsRow, lookup.get(v.product_id));
}

/** A REST `GET /derivatives/api/v3/history?symbol=` body for `inst` (rows newest first). Never throws. */
export function parseKrakenHistory(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = z.object({ result: z.string().optional(), history: z.array(z.unknown()) }).safeParse(raw);
  if (!body.success) {
    const err = (raw as { error?: unknown; errors?: unknown } | null)?.error;
    return frame({ error: typeof err === "string" ? `kraken history error ${err}` : "kraken history body has an unexpected shape" });
  }
  return parseRows(
    body.data.history,
    RestTrade,
    (r) => ({ time: r.time, price: r.price, size: r.size, side: r.side, id: r.uid ?? `trade-${r.trade_id ?? r.time}`, type: r.type ?? "fill" }),
    inst,
  );
}
