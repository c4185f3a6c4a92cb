import { z } from "zod";
import type { Liquidation, Trade } from "../../ingestion/types.js";
import { decode, eachRow, type FeedInstrument, frame, type InstrumentLookup, makeLiquidation, makeTrade, type ParsedFrame, Pos, Time } from "../../ingestion/feeds/normalise.js";
import { lighterMarketId } from "./parse.js";
import { LIGHTER } from "./venue-id.js";

/*
 * Lighter websocket frames (`wss://mainnet.zklighter.elliot.ai/stream`, https://apidocs.lighter.xyz/docs/websocket-reference;
 * AsyncAPI mirror: github.com/elliottech/lighter-python `asyncapi.json`), as recorded live (fixtures README):
 * - `{"type":"subscribe","channel":"trade/36"}` is answered on channel `trade:36` (a colon, not a slash): first
 *   `subscribed/trade`, a replay of the market's last prints, then `update/trade` per block. Both carry `trades` and
 *   `liquidation_trades`: two DISJOINT arrays of real prints (a liquidation fill is a trade of the tape too), rows
 *   `{trade_id, type, market_id, size, price, is_maker_ask, timestamp (ms), …}`, newest first.
 * - `is_maker_ask` true: the resting order was the ask, so the TAKER BOUGHT. A liquidation is the liquidated account's
 *   order taking liquidity ("the liquidation engine … sends IoC limit orders on behalf of the margin called user",
 *   docs.lighter.xyz, Liquidations & Insurance Fund; recorded: the taker, long 8432.2 CRV before, sold 8215.3 and paid
 *   the 1 % liquidation fee): taker sold → a long was liquidated, taker bought → a short.
 * - Row `type`: `trade` and `liquidation` are order-book prints and counted. Other types (`deleverage`,
 *   `market-settlement`, as open-source readers of the websocket reference list them; never recorded) are transfers at a
 *   set price, not trades anyone took, and are left out.
 * - `trade_id` is one counter across all markets, growing with time (`sequence` ids, docs/methods/cvd.md).
 * - Control: `{"session_id","type":"connected"}` on open, `{"type":"pong"}` to a client `{"type":"ping"}`, the server's
 *   own `{"type":"ping"}`, `{"type": "unsubscribed","channel"}`, errors `{"error":{"code":30005,"message":"Invalid
 *   Channel:  (marketId)"}}` (no channel named). Other channels (`market_stats:*`, `height`, `ticker:*`) are ignored.
 * Frames name markets by `market_id` only: the lookup is keyed by the market id as a decimal string.
 */

const VENUE = LIGHTER;

/** Row types that are order-book prints (counted as trades); `deleverage` and `market-settlement` are not. */
const PRINT_TYPES = new Set(["trade", "liquidation"]);

/** One trade row, websocket `trades` / `liquidation_trades` or REST `recentTrades`. */
export const LighterTradeRow = z.object({
  trade_id: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]),
  trade_id_str: z.string().optional(),
  type: z.string().optional(),
  market_id: z.number().int().nonnegative(),
  size: Pos,
  price: Pos,
  is_maker_ask: z.boolean(),
  timestamp: Time,
});
type Row = z.output<typeof LighterTradeRow>;

const isPrint = (r: Row): boolean => r.type === undefined || PRINT_TYPES.has(r.type);
const idOf = (r: Row): string => r.trade_id_str ?? String(r.trade_id);

/** A validated row → {@link Trade}: taker side from `is_maker_ask`, id `trade_id`. */
export function lighterTrade(inst: FeedInstrument, r: Row): Trade {
  return makeTrade(VENUE, inst, { time: r.timestamp, price: r.price, size: r.size, side: r.is_maker_ask ? "buy" : "sell", id: idOf(r) });
}

/** A validated liquidation row → {@link Liquidation}: the liquidated taker's side (it sold: a long). */
export function lighterLiquidation(inst: FeedInstrument, r: Row): Liquidation {
  return makeLiquidation(VENUE, inst, { time: r.timestamp, price: r.price, size: r.size, side: r.is_maker_ask ? "short" : "long" });
}

/** Oldest first, ties by id (one counter, so per market the order the venue executed them). */
const byTimeThenId = (a: Trade, b: Trade): number => a.time - b.time || Number(a.id) - Number(b.id);

interface Located {
  r: Row;
  inst: FeedInstrument;
}

const TradeFrame = z.object({ type: z.string(), trades: z.array(z.unknown()), liquidation_trades: z.array(z.unknown()).optional() });

function tradeFrame(v: unknown, lookup: InstrumentLookup): ParsedFrame {
  const f = TradeFrame.safeParse(v);
  if (!f.success) return frame({ error: "lighter trade frame without a trades array" });
  const locate = (r: Row): Located | undefined => {
    const inst = lookup.get(String(r.market_id));
    return inst && { r, inst };
  };
  const prints = eachRow(f.data.trades, LighterTradeRow, locate);
  const liqs = eachRow(f.data.liquidation_trades ?? [], LighterTradeRow, locate);
  const trades: Trade[] = [];
  const liquidations: Liquidation[] = [];
  const liqIds = new Set<string>();
  for (const { r, inst } of liqs.out) {
    liqIds.add(idOf(r));
    liquidations.push(lighterLiquidation(inst, r));
  }
  for (const { r, inst } of prints.out) {
    if (!isPrint(r)) continue;
    trades.push(lighterTrade(inst, r));
    if (r.type === "liquidation" && !liqIds.has(idOf(r))) liquidations.push(lighterLiquidation(inst, r));
  }
  // The subscribe replay carries the last prints and, beside them, the market's last liquidations, which may be days
  // older: history, not news. They are neither published as liquidations (a live stream would show them as new) nor
  // counted as trades unless they fall in the window the replay's prints cover.
  const replay = f.data.type.startsWith("subscribed/");
  const oldest = replay && trades.length > 0 ? Math.min(...trades.map((t) => t.time)) : -Infinity;
  for (const { r, inst } of liqs.out) if (isPrint(r) && r.timestamp >= oldest) trades.push(lighterTrade(inst, r));
  if (replay) liquidations.length = 0;
  trades.sort(byTimeThenId);
  liquidations.sort((a, b) => a.time - b.time);
  const error = [prints.error, liqs.error].filter(Boolean).join("; ") || undefined;
  return frame({ trades, liquidations, skipped: prints.skipped + liqs.skipped, error });
}

/** One raw Lighter websocket message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseLighterMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "lighter frame is not an object" });
  const o = v as Record<string, unknown>;
  if ("error" in o) return frame({ control: { type: "venue_error", message: JSON.stringify(o.error) } });
  const type = typeof o.type === "string" ? o.type : "";
  if (type === "pong") return frame({ control: { type: "pong" } });
  if (type === "unsubscribed") return frame({ control: { type: "ack" } });
  if (type === "subscribed/trade" || type === "update/trade") return tradeFrame(o, lookup);
  return frame();
}

const RecentTrades = z.object({ code: z.number().optional(), message: z.string().optional(), trades: z.array(z.unknown()) });

/**
 * A REST `GET /recentTrades?market_id=&limit=` body for `inst` (`{"code":200,"trades":[…]}`, newest first): its prints
 * (rows of another market are skipped). A refusal (`code` ≠ 200) or another shape is an error. Never throws.
 */
export function parseLighterRecentTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const b = RecentTrades.safeParse(raw);
  if (!b.success) return frame({ error: "lighter recentTrades body has no trades array" });
  if (b.data.code !== undefined && b.data.code !== 200)
    return frame({ error: `lighter recentTrades refused (code ${b.data.code}${b.data.message ? `: ${b.data.message.trim()}` : ""})` });
  const id = lighterMarketId(inst);
  const { out, skipped, error } = eachRow(b.data.trades, LighterTradeRow, (r) => (id === undefined || r.market_id === id ? r : undefined));
  const trades = out.filter(isPrint).map((r) => lighterTrade(inst, r));
  return frame({ trades: trades.sort(byTimeThenId), skipped, error });
}
