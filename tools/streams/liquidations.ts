import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { formatLiquidation } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES } from "../../src/ingestion/types.js";
import { isoNow, Timestamp, venueList } from "../common.js";
import { ingestion, LiquidationEvent } from "./common.js";

/** How complete each venue's public liquidation feed is (docs/methods/streams.md, "Recent liquidations"). */
const FEEDS: Readonly<Record<string, string>> = {
  binance: "!forceOrder@arr: a snapshot of at most one liquidation per symbol per second, so bursts are undercounted",
  bybit: "allLiquidation.{symbol}: every liquidation, in 500 ms batches, for the streamed symbols only",
  okx: "liquidation-orders: every SWAP liquidation",
  hyperliquid: "no public liquidation feed",
  gate: "futures.public_liquidates (!all): every liquidation of every USDT contract",
  bitget: "no public liquidation feed read (the v2 public websocket has none; the UTA v3 liquidation topic only samples the largest per symbol per second)",
  deribit: "trades.{instrument}.raw: trades flagged as liquidations, for the streamed perpetuals only",
  aster: "!forceOrder@arr: a snapshot of at most one liquidation per symbol per second, as Binance's",
};
/** Venues whose feeds carry liquidations. */
const LIQUIDATION_FEEDS = STREAM_VENUES.filter((v) => !FEEDS[v]?.startsWith("no public"));

/** `GET /liquidation/recent`: liquidations from the venues' public feeds, newest first, with 1h/24h stats (docs/methods/streams.md). */
export const liquidationRecent = defineTool({
  name: "liquidation_recent",
  title: "Recent liquidations",
  method: "GET",
  path: "/liquidation/recent",
  priceUsd: "0.03",
  cacheTtlSec: 15,
  tags: ["streams"],
  summary: `Recent forced liquidations on ${venueList(LIQUIDATION_FEEDS)}, newest first, with 1h and 24h statistics`,
  description: `From the venues' public liquidation feeds (${LIQUIDATION_FEEDS.map((v) => `${v}: ${FEEDS[v]}`).join("; ")}). side long = a long position was liquidated as price fell; short = a short was liquidated as price rose. The buffer holds 24 hours and at most 1,000 events (persisted across restarts); stats cover the buffer, and capped says when the 1,000-event cap dropped events from the last 24h. coverage states how complete each venue's feed is and whether it is connected.`,
  example: { limit: 20 },
  input: z.object({
    limit: z.number().int().min(1).max(1000).default(50).describe("events (default 50, max 1000)"),
    symbol: z.string().max(30).optional().describe("filter, e.g. BTCUSDT or BTC"),
  }),
  output: z.object({
    count: z.number().int(),
    symbol_filter: z.string().nullable(),
    events: z.array(LiquidationEvent),
    stats: z.object({
      last_1h: z.object({ total_events: z.number().int(), long_liquidations: z.number().int(), short_liquidations: z.number().int(), total_value_usd: z.number() }),
      last_24h: z.object({ total_events: z.number().int(), total_value_usd: z.number() }),
      capped: z.boolean(),
    }),
    coverage: z.record(z.string(), z.object({ feed: z.string(), connected: z.boolean() })),
    timestamp: Timestamp,
  }),
  async handler({ limit, symbol }, ctx) {
    const m = ingestion(ctx);
    const events = m.liquidations.recent({ limit, symbol }).map(formatLiquidation);
    const states = new Map(m.states().map((s) => [s.venue, s.connected]));
    return {
      count: events.length,
      symbol_filter: symbol ?? null,
      events,
      stats: m.liquidations.stats(ctx.now()),
      coverage: Object.fromEntries(STREAM_VENUES.map((v) => [v, { feed: FEEDS[v] ?? "no public liquidation feed", connected: states.get(v) ?? false }])),
      timestamp: isoNow(ctx),
    };
  },
});
