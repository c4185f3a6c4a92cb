import { gunzipSync } from "node:zlib";
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
import { HTX } from "./venue-id.js";

/*
 * HTX USDT-margined swap websocket frames (https://www.htx.com/en-us/opend/newApiPages/, "Swap WebSocket Reference").
 * Every frame the server sends is GZIP-compressed binary ("Data Compression"); {@link htxFrameText} inflates it.
 *
 * Market endpoint (`/linear-swap-ws`):
 * - `{"sub": "market.BTC-USDT.trade.detail", "id"}` → `{"id", "status": "ok", "subbed", "ts"}`; refusals
 *   `{"status": "error", "err-code", "err-msg"}`.
 * - `market.$contract_code.trade.detail` pushes `{"ch", "ts", "tick": {"id", "ts", "data": [{"id", "ts", "price",
 *   "amount": CONTRACTS, "quantity": coins, "direction": the TAKER side, "trade_turnover"}]}}`.
 * - Heartbeat: the server sends `{"ping": <ts>}` every 5 s and drops a connection that ignores five; the client
 *   answers `{"pong": <the same ts>}`. The client may ping too (`{"ping": <ts>}` → `{"pong": <ts>}`).
 *
 * Notification endpoint (`/linear-swap-notification`, public topics need no authentication):
 * - `{"op": "sub", "cid", "topic": "public.*.liquidation_orders"}` → `{"op": "sub", "cid", "topic", "ts",
 *   "err-code": 0}` (2014 "Repeated subscription" when a wider topic already covers it).
 * - `{"op": "notify", "topic": "public.BTC-USDT.liquidation_orders", "ts", "data": [{"contract_code", "direction",
 *   "offset", "volume": CONTRACTS, "amount": coins, "price": bankruptcy price, "created_at": ms, "trade_turnover"}]}`;
 *   `direction` is the side of the liquidation ORDER and `offset` "close": a sell closes a LONG, a buy a SHORT.
 * - Heartbeat: `{"op": "ping", "ts": "<ms>"}` every 5 s, answered `{"op": "pong", "ts": <the same value>}` (the
 *   docs send `ts` as a string here and as a number elsewhere, so it is echoed verbatim); `{"op": "close"}` before
 *   the server drops the connection; `{"op": "error"}` for a request it could not read.
 *
 * REST: `/linear-swap-ex/market/history/trade` (latest trades, the trade keys nested per taker order) and
 * `/linear-swap-api/v3/swap_liquidation_orders` (liquidation rows with the notification's keys and a `query_id`).
 */

const VENUE = HTX;

/** Control message prefix of a server ping: `ping <ts as JSON>`; the feed answers with that token verbatim. */
export const PING = "ping ";
/** Most bytes one inflated frame may take (a compressed frame can inflate far beyond its size). */
const MAX_FRAME_BYTES = 4 << 20;

/**
 * The text of one HTX websocket frame: inflated when it is gzip (magic bytes 1f 8b), else read as UTF-8 (a text
 * frame). @throws Error when a gzip frame is corrupt or inflates past 4 MiB.
 */
export function htxFrameText(data: Uint8Array): string {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return gunzipSync(buf, { maxOutputLength: MAX_FRAME_BYTES }).toString("utf8");
  return buf.toString("utf8");
}

/** One trade row: WS `trade.detail` `tick.data[]` or REST `history/trade` `data[].data[]`. */
export const HtxTradeRow = z.object({ id: Id, ts: Time, price: Pos, amount: Pos, direction: z.enum(["buy", "sell"]) });

/** A validated trade row → {@link Trade} (taker side, size in coins = contracts × contract_size). */
export function htxTrade(inst: FeedInstrument, r: z.output<typeof HtxTradeRow>): Trade {
  return makeTrade(VENUE, inst, { time: r.ts, price: r.price, size: r.amount, side: r.direction, id: r.id });
}

/** One liquidation row: notification `liquidation_orders` data or REST v3 `swap_liquidation_orders` data. */
export const HtxLiquidationRow = z.object({
  contract_code: z.string(),
  direction: z.enum(["buy", "sell"]),
  volume: Pos,
  price: Pos,
  created_at: Time,
});

/** A validated liquidation row → {@link Liquidation}: the order's `direction` sell closed a long, buy a short; size = contracts × contract_size. */
export function htxLiquidation(inst: FeedInstrument, r: z.output<typeof HtxLiquidationRow>): Liquidation {
  return makeLiquidation(VENUE, inst, { time: r.created_at, price: r.price, size: r.volume, side: r.direction === "sell" ? "long" : "short" });
}

const TradePush = z.object({ ch: z.string(), tick: z.object({ data: z.array(z.unknown()) }) });
const Notify = z.object({ op: z.literal("notify"), topic: z.string(), data: z.array(z.unknown()) });
const TRADE_CH = /^market\.(.+)\.trade\.detail$/;
const LIQUIDATION_TOPIC = /^public\.(.+)\.liquidation_orders$/;

/** A JSON scalar worth echoing (a timestamp sent as a number or a string), else undefined. */
function echoable(v: unknown): string | undefined {
  return (typeof v === "number" && Number.isFinite(v)) || (typeof v === "string" && v !== "" && v.length <= 32) ? JSON.stringify(v) : undefined;
}

/** The error code and message of a reply (`err-code` / `err-msg`, or the REST spelling `err_code` / `err_msg`), as one line. */
function refusal(v: Record<string, unknown>): string {
  return [v["err-code"] ?? v.err_code, v["err-msg"] ?? v.err_msg].filter((x) => x !== undefined && x !== null && x !== "").join(" ") || "error";
}

/** A frame of the notification endpoint (`op` set). */
function parseOp(v: Record<string, unknown>, lookup: InstrumentLookup): ParsedFrame {
  switch (v.op) {
    case "ping": {
      const ts = echoable(v.ts);
      return ts ? frame({ control: { type: "ack", message: PING + ts } }) : frame({ error: "htx ping without a ts" });
    }
    case "pong": {
      // "Under abnormal conditions" the server answers a pong with an error code (docs: err-code 2011)
      const code = v["err-code"];
      return code === undefined || code === 0 || code === "0" ? frame({ control: { type: "pong" } }) : frame({ control: { type: "venue_error", message: refusal(v) } });
    }
    case "close":
      return frame({ control: { type: "reconnect", message: "htx op close" } });
    case "error":
      return frame({ control: { type: "venue_error", message: refusal(v) } });
    case "sub":
    case "unsub": {
      const code = v["err-code"];
      // 2014 "Repeated subscription": a wider topic already covers it, nothing is missing
      if (code === undefined || code === 0 || code === "0" || code === 2014) return frame({ control: { type: "ack", message: `${v.op} ${String(v.topic)}` } });
      return frame({ control: { type: "venue_error", message: refusal(v) } });
    }
    case "notify": {
      const n = Notify.safeParse(v);
      if (!n.success) return frame({ error: `htx notify: ${zodIssues(n.error)}` });
      if (!LIQUIDATION_TOPIC.test(n.data.topic)) return frame(); // other public topics are not ours
      const { out, skipped, error } = eachRow(n.data.data, HtxLiquidationRow, (r) => {
        const inst = lookup.get(r.contract_code);
        return inst && htxLiquidation(inst, r);
      });
      return frame({ liquidations: out, skipped, error });
    }
    default:
      return frame(); // auth and order topics are not ours
  }
}

/**
 * One raw HTX websocket message of either endpoint (JSON text, an already inflated value, or the gzip bytes as
 * received) → trades / liquidations / control. A server ping is an `ack` whose message is {@link PING} + the ping's
 * value as JSON (the feed answers it). Never throws.
 */
export function parseHtxMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  let input = raw;
  if (raw instanceof Uint8Array) {
    try {
      input = htxFrameText(raw);
    } catch (err) {
      return frame({ error: `htx frame does not inflate: ${(err as Error).message}` });
    }
  }
  const d = decode(input);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return frame({ error: "htx frame is not an object" });
  if (typeof v.op === "string") return parseOp(v, lookup);
  if ("ping" in v) {
    const ts = echoable(v.ping);
    return ts ? frame({ control: { type: "ack", message: PING + ts } }) : frame({ error: "htx ping without a value" });
  }
  if ("pong" in v) return frame({ control: { type: "pong" } });
  if (v.status === "error") return frame({ control: { type: "venue_error", message: refusal(v) } });
  if (typeof v.subbed === "string" || typeof v.unsubbed === "string") return frame({ control: { type: "ack", message: String(v.subbed ?? v.unsubbed) } });
  if (typeof v.ch !== "string") return frame({ error: "htx frame has neither op nor ch" });
  const contract = TRADE_CH.exec(v.ch)?.[1];
  if (contract === undefined) return frame(); // depth, kline, bbo… are not ours
  const push = TradePush.safeParse(v);
  if (!push.success) return frame({ error: `htx trade.detail: ${zodIssues(push.error)}` });
  const inst = lookup.get(contract);
  if (!inst) return frame({ skipped: push.data.tick.data.length });
  const { out, error } = eachRow(push.data.tick.data, HtxTradeRow, (r) => htxTrade(inst, r));
  return frame({ trades: out, error });
}

const TradesBody = z.object({ status: z.literal("ok"), data: z.array(z.object({ data: z.array(z.unknown()) })) });

/** A REST `GET /linear-swap-ex/market/history/trade?contract_code=&size=` body for `inst` (orders newest first, their fills inside). Never throws. */
export function parseHtxTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  const body = TradesBody.safeParse(raw);
  if (!body.success) return frame({ error: `htx history/trade body: ${zodIssues(body.error)}` });
  const { out, skipped, error } = eachRow(
    body.data.data.flatMap((o) => o.data),
    HtxTradeRow,
    (r) => htxTrade(inst, r),
  );
  return frame({ trades: out, skipped, error });
}

const LiquidationsBody = z.object({ code: z.union([z.literal(200), z.literal("200")]), data: z.array(z.unknown()) });

/**
 * A REST `GET /linear-swap-api/v3/swap_liquidation_orders` body (`{code: 200, msg, data: [rows], ts}`) → liquidations
 * of known contracts (rows of other contracts counted as skipped). Never throws: a refusal or another shape is an
 * `error`.
 */
export function parseHtxLiquidationOrders(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const body = LiquidationsBody.safeParse(raw);
  if (!body.success) return frame({ error: `htx swap_liquidation_orders body: ${zodIssues(body.error)}` });
  const { out, skipped, error } = eachRow(body.data.data, HtxLiquidationRow, (r) => {
    const inst = lookup.get(r.contract_code);
    return inst && htxLiquidation(inst, r);
  });
  return frame({ liquidations: out, skipped, error });
}
