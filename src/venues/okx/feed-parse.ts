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
  zodIssues,
} from "../../ingestion/feeds/normalise.js";

/*
 * OKX v5 public frames (https://www.okx.com/docs-v5/en/, WebSocket public channels): `trades` (`side` = TAKER side, `sz` in CONTRACTS for swaps →
 * × ctVal, `tradeId`, `ts` string ms) and `liquidation-orders` (instType SWAP, all instruments; each row
 * has `details[]` with `posSide` long/short = the liquidated position, else the order `side`: sell → a long
 * was liquidated; `sz` contracts; `bkPx` bankruptcy price). Control: the text `pong`, `event` subscribe /
 * unsubscribe / error, and `event: notice` code 64008 (connection closes soon for an upgrade → reconnect).
 * The REST `/api/v5/market/history-trades` rows have the trade keys.
 */

const VENUE = "okx";

/** One trade row, WS `trades` or REST `history-trades`/`trades`. */
export const OkxTradeRow = z.object({ instId: z.string(), tradeId: Id, px: Pos, sz: Pos, side: z.enum(["buy", "sell"]), ts: Time });

/** A validated trade row → {@link Trade}. */
export function okxTrade(inst: FeedInstrument, r: z.output<typeof OkxTradeRow>): Trade {
  return makeTrade(VENUE, inst, { time: r.ts, price: r.px, size: r.sz, side: r.side, id: r.tradeId });
}

const Detail = z.object({ bkPx: Pos, sz: Pos, side: z.string().optional(), posSide: z.string().optional(), ts: Time });
const LiquidationRow = z.object({ instId: z.string(), details: z.array(z.unknown()) });
const Envelope = z.object({ arg: z.object({ channel: z.string() }), data: z.unknown() });
const OURS = new Set(["trades", "trades-all", "liquidation-orders"]);

/** `posSide` long/short, else the order side (sell closes a long). */
function liquidatedSide(d: z.output<typeof Detail>): "long" | "short" | undefined {
  if (d.posSide === "long" || d.posSide === "short") return d.posSide;
  if (d.side === "sell") return "long";
  if (d.side === "buy") return "short";
  return undefined;
}

/** One raw OKX v5 public WS message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseOkxMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  if (raw === "pong") return frame({ control: { type: "pong" } });
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "okx frame is not an object" });
  if (typeof v.event === "string") {
    const message = [v.code, v.msg].filter((x) => typeof x === "string" && x !== "").join(" ") || undefined;
    if (v.event === "error") return frame({ control: { type: "venue_error", message } });
    if (v.event === "notice") return frame({ control: { type: v.code === "64008" ? "reconnect" : "ack", message } });
    return frame({ control: { type: "ack", message } });
  }
  const env = Envelope.safeParse(v);
  if (!env.success) return frame({ error: `okx frame: ${zodIssues(env.error)}` });
  const { arg, data } = env.data;
  if (!OURS.has(arg.channel)) return frame(); // tickers, books, funding… are not ours
  if (!Array.isArray(data)) return frame({ error: `okx ${arg.channel}: data is not an array` });
  if (arg.channel === "trades" || arg.channel === "trades-all") {
    const { out, skipped, error } = eachRow(data, OkxTradeRow, (r) => {
      const inst = lookup.get(r.instId);
      return inst && okxTrade(inst, r);
    });
    return frame({ trades: out, skipped, error });
  }
  if (arg.channel === "liquidation-orders") {
    const liquidations: Liquidation[] = [];
    let skipped = 0;
    const errors: string[] = [];
    const rows = eachRow(data, LiquidationRow, (r) => r);
    if (rows.error) errors.push(rows.error);
    for (const row of rows.out) {
      const inst = lookup.get(row.instId);
      if (!inst) {
        skipped += row.details.length;
        continue;
      }
      const details = eachRow(row.details, Detail, (dt) => {
        const side = liquidatedSide(dt);
        return side && makeLiquidation(VENUE, inst, { time: dt.ts, price: dt.bkPx, size: dt.sz, side });
      });
      liquidations.push(...details.out);
      if (details.error) errors.push(`${row.instId}: ${details.error}`);
      if (details.skipped) errors.push(`${row.instId}: ${details.skipped} detail(s) without side`);
    }
    return frame({ liquidations, skipped, error: errors.length ? errors.join("; ") : undefined });
  }
  return frame();
}

/** A REST `GET /api/v5/market/history-trades` (or `/market/trades`) body for `inst` (rows newest first). Never throws. */
export function parseOkxTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = z.object({ code: z.string(), msg: z.string().optional(), data: z.array(z.unknown()) }).safeParse(raw);
  if (!body.success) return frame({ error: "okx trades body has an unexpected shape" });
  if (body.data.code !== "0") return frame({ error: `okx code ${body.data.code}: ${body.data.msg ?? ""}` });
  const { out, skipped, error } = eachRow(body.data.data, OkxTradeRow, (r) => (r.instId === inst.venueSymbol ? okxTrade(inst, r) : undefined));
  return frame({ trades: out, skipped, error });
}
