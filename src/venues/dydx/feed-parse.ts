import { z } from "zod";
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
  zodIssues,
} from "../../ingestion/feeds/normalise.js";
import type { Liquidation, Trade } from "../../ingestion/types.js";
import { DYDX } from "./venue-id.js";

/*
 * dYdX v4 indexer websocket frames (`wss://indexer.dydx.trade/v4/ws`, https://docs.dydx.xyz/indexer-client/websockets;
 * v4-chain `indexer/services/socks`) and the REST trade pages (`GET /trades/perpetualMarket/{ticker}`):
 * - `{"type":"connected",…}` on open; `{"type":"subscribed","channel":"v4_trades","id":"BTC-USD","contents":{"trades":[…]}}`
 *   answers a subscribe with the market's latest trades (the REST rows, newest first: emitted as trades, never as
 *   liquidations); `unsubscribed` answers an
 *   unsubscribe; `{"type":"error","message":…}` a refused request. `v4_block_height` frames (`{"blockHeight","time"}`
 *   per block, subscribed for liveness) and the other channels carry nothing the feed reads. A `pong` type exists in
 *   the server's types but a `{"type":"ping"}` is not answered (protocol pings are).
 * - `{"type":"channel_data","channel":"v4_trades","id":"BTC-USD","contents":{"trades":[…]}}`, or with `"batched":true`
 *   `channel_batch_data` whose `contents` is an array of `{"trades":[…]}`.
 * - A trade row: `id` (the taker fill's event id, 24 hex digits: block height, transaction index + 2, event index; in
 *   no per-market sequence), `side` the TAKER's `BUY`/`SELL`, `size` coins, `price` USD per coin, `createdAt` ISO time,
 *   `type` LIMIT / LIQUIDATED / DELEVERAGED / TWAP_SUBORDER (REST rows add `createdAtHeight`).
 * - `LIQUIDATED`: the taker is a protocol liquidation order of the liquidated subaccount matched against the book
 *   (https://docs.dydx.xyz/concepts/trading/liquidations): the row is a trade AND a liquidation of the position on the
 *   other side (a SELL closes a long). A liquidation order filled by several makers prints one row per fill, so one
 *   liquidation may be several events.
 * - `DELEVERAGED`: a bankrupt position closed against an offsetting account at the bankruptcy price, off the book: it
 *   is neither a market trade nor a liquidation order, and is dropped.
 */

/** A time sent as an ISO-8601 string → epoch ms. */
const IsoMs = z.string().transform((s, ctx) => {
  const t = Date.parse(s);
  if (!(t > 0)) {
    ctx.addIssue({ code: "custom", message: `expected an ISO time, got ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return t;
});

/** One trade row of `v4_trades` or of a REST trades page. */
export const DydxTradeRow = z.object({ id: Id, side: z.enum(["BUY", "SELL"]), size: Pos, price: Pos, createdAt: IsoMs, type: z.string().optional() });
type Row = z.output<typeof DydxTradeRow>;

/** Trade types that are not market trades (see the module comment). */
const NOT_TRADES = new Set(["DELEVERAGED"]);

/** A validated row of `inst` → its trade, and its liquidation when the row is a `LIQUIDATED` fill. */
function events(inst: FeedInstrument, r: Row): { trade: Trade; liquidation?: Liquidation } {
  const trade = makeTrade(DYDX, inst, { time: r.createdAt, price: r.price, size: r.size, side: r.side === "BUY" ? "buy" : "sell", id: r.id });
  if (r.type !== "LIQUIDATED") return { trade };
  return { trade, liquidation: makeLiquidation(DYDX, inst, { time: r.createdAt, price: r.price, size: r.size, side: r.side === "SELL" ? "long" : "short" }) };
}

/** The rows of one market as a frame: trades and liquidations, oldest first (the venue lists newest first). */
function rowsFrame(rows: readonly unknown[], inst: FeedInstrument | undefined, extra: Partial<ParsedFrame> = {}): ParsedFrame {
  const kept = rows.filter((r) => !NOT_TRADES.has((r as { type?: unknown } | null)?.type as string));
  const { out, skipped, error } = eachRow(kept, DydxTradeRow, (r) => (inst ? events(inst, r) : undefined));
  out.sort((a, b) => a.trade.time - b.trade.time || (a.trade.id < b.trade.id ? -1 : a.trade.id > b.trade.id ? 1 : 0));
  const liquidations = out.flatMap((e) => (e.liquidation ? [e.liquidation] : []));
  return { ...frame(extra), trades: out.map((e) => e.trade), liquidations, skipped, error };
}

const Envelope = z.object({ type: z.string(), channel: z.string().optional(), id: z.unknown().optional(), contents: z.unknown().optional(), message: z.unknown().optional() });
const TradeContents = z.object({ trades: z.array(z.unknown()) });

/** `contents` of a `v4_trades` frame → its rows: one `{trades}` object, or an array of them (`channel_batch_data`). */
function contentRows(type: string, contents: unknown): unknown[] | string {
  const parts = type === "channel_batch_data" ? contents : [contents];
  if (!Array.isArray(parts)) return "channel_batch_data contents is not an array";
  const rows: unknown[] = [];
  for (const p of parts) {
    const c = TradeContents.safeParse(p);
    if (!c.success) return `v4_trades contents: ${zodIssues(c.error)}`;
    rows.push(...c.data.trades);
  }
  return rows;
}

/** One raw dYdX websocket message (text or parsed JSON) → trades, liquidations, control. Never throws. */
export function parseDydxMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const env = Envelope.safeParse(d.value);
  if (!env.success) return frame({ error: `dydx frame: ${zodIssues(env.error)}` });
  const { type, channel, id, contents } = env.data;
  switch (type) {
    case "pong":
      return frame({ control: { type: "pong" } });
    case "connected":
      return frame();
    case "unsubscribed":
      return frame({ control: { type: "ack" } });
    case "error":
      return frame({ control: { type: "venue_error", message: typeof env.data.message === "string" ? env.data.message : JSON.stringify(env.data.message) } });
    case "subscribed":
    case "channel_data":
    case "channel_batch_data": {
      const ack: Partial<ParsedFrame> = type === "subscribed" ? { control: { type: "ack" } } : {};
      if (channel !== "v4_trades") return frame(ack);
      if (typeof id !== "string") return frame({ ...ack, error: "dydx v4_trades frame without a market id" });
      const rows = contentRows(type, contents);
      if (typeof rows === "string") return frame({ ...ack, error: rows });
      const parsed = rowsFrame(rows, lookup.get(id), ack);
      // The subscribe answer is history (the latest rows, hours old on a quiet market): its trades go to the CVD,
      // which counts each id once, but its liquidations are not news; a gap's are backfilled from REST.
      return type === "subscribed" ? { ...parsed, liquidations: [] } : parsed;
    }
    default:
      return frame();
  }
}

const TradesPage = z.object({ trades: z.array(z.unknown()) });

/**
 * A REST `GET /trades/perpetualMarket/{ticker}` page of `inst` (`{"trades":[…]}`, newest first) → its trades and
 * liquidations, oldest first. Never throws.
 */
export function parseDydxTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const page = TradesPage.safeParse(raw);
  if (!page.success) return frame({ error: `dydx trades body: ${zodIssues(page.error)}` });
  return rowsFrame(page.data.trades, inst);
}
