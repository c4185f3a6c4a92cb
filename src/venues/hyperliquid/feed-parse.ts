import { z } from "zod";
import type { Trade } from "../../ingestion/types.js";
import { decode, eachRow, type FeedInstrument, frame, Id, type InstrumentLookup, makeTrade, type ParsedFrame, Pos, Time, zodIssues } from "../../ingestion/feeds/normalise.js";

/*
 * Hyperliquid WS frames (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions):
 * `{"channel":"trades","data":[WsTrade…]}` with `side` B (buy aggressor) / A (sell aggressor), `px`/`sz`
 * strings, `time` ms and `tid` (50-bit hash id); `kPEPE`-style
 * coins are per 1000 coins. Control: `subscriptionResponse`, `pong`, `error`. Hyperliquid publishes no
 * public liquidation stream. The REST `{"type":"recentTrades"}` answer is an array of the same rows.
 */

const VENUE = "hyperliquid";

/** One trade row, WS `trades` or REST `recentTrades`. */
export const HyperliquidTradeRow = z.object({ coin: z.string(), side: z.enum(["B", "A"]), px: Pos, sz: Pos, time: Time, tid: Id });

/** A validated trade row → {@link Trade}. */
export function hyperliquidTrade(inst: FeedInstrument, r: z.output<typeof HyperliquidTradeRow>): Trade {
  return makeTrade(VENUE, inst, { time: r.time, price: r.px, size: r.sz, side: r.side === "B" ? "buy" : "sell", id: r.tid });
}

const Envelope = z.object({ channel: z.string(), data: z.unknown().optional() });

/** One raw Hyperliquid WS message (text or parsed JSON) → trades / control. Never throws. */
export function parseHyperliquidMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const env = Envelope.safeParse(d.value);
  if (!env.success) return frame({ error: `hyperliquid frame: ${zodIssues(env.error)}` });
  const { channel, data } = env.data;
  if (channel === "pong") return frame({ control: { type: "pong" } });
  if (channel === "subscriptionResponse") return frame({ control: { type: "ack" } });
  if (channel === "error") return frame({ control: { type: "venue_error", message: typeof data === "string" ? data : JSON.stringify(data) } });
  if (channel !== "trades") return frame();
  if (!Array.isArray(data)) return frame({ error: "hyperliquid trades data is not an array" });
  const { out, skipped, error } = eachRow(data, HyperliquidTradeRow, (r) => {
    const inst = lookup.get(r.coin);
    return inst && hyperliquidTrade(inst, r);
  });
  return frame({ trades: out, skipped, error });
}

/** A REST `POST /info {"type":"recentTrades","coin"}` answer for `inst` (array of rows). Never throws. */
export function parseHyperliquidRecentTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  if (!Array.isArray(raw)) return frame({ error: "hyperliquid recentTrades body is not an array" });
  const { out, skipped, error } = eachRow(raw, HyperliquidTradeRow, (r) => (r.coin === inst.venueSymbol ? hyperliquidTrade(inst, r) : undefined));
  return frame({ trades: out, skipped, error });
}
