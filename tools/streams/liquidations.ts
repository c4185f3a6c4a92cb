import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { formatLiquidation } from "../../src/ingestion/store/liquidation-store.js";
import { STREAM_VENUES } from "../../src/ingestion/types.js";
import { VENUES, venuesWith } from "../../src/venues/index.js";
import { isoNow, Timestamp, venueList } from "../common.js";
import { CursorParam, page, PageFields, pager } from "../paging.js";
import { ingestion, LiquidationEvent } from "./common.js";

/** How complete each venue's public liquidation feed is (its definition's `liquidationFeed`; docs/methods/streams.md, "Recent liquidations"). */
const FEEDS: ReadonlyMap<string, string> = new Map(VENUES.map((v) => [v.id, v.liquidationFeed.description]));
/** Venues whose feeds carry liquidations. */
const LIQUIDATION_FEEDS = venuesWith("liquidations");

/** Most events one MCP answer carries (about 200 characters each; docs/mcp.md, "Result sizes"). */
const MCP_MAX_EVENTS = 250;

/** Pages of the buffer: the next page starts after the last event served (its id, and its time should it have left the buffer). */
const liquidationPager = pager(
  "liquidation_recent",
  (input: { symbol?: string | undefined }) => [input.symbol?.trim().toUpperCase() ?? null],
  z.strictObject({ id: z.string().max(40), time_ms: z.number().int() }),
);

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
  description: `From the venues' public liquidation feeds (${LIQUIDATION_FEEDS.map((v) => `${v}: ${FEEDS.get(v)}`).join("; ")}). side long = a long position was liquidated as price fell; short = a short was liquidated as price rose. The buffer holds 24 hours and at most 1,000 events (persisted across restarts); stats cover the buffer, and capped says when the 1,000-event cap dropped events from the last 24h. coverage states how complete each venue's feed is and whether it is connected. Pages: truncated says more events match; send next_cursor as cursor for the next (older) page. Over MCP limit is at most ${MCP_MAX_EVENTS}.`,
  mcpNote: `At most ${MCP_MAX_EVENTS} events per call; when truncated, call again with cursor = next_cursor for older events`,
  mcpMaxima: { limit: MCP_MAX_EVENTS },
  example: { limit: 20 },
  input: z
    .object({
      limit: z.number().int().min(1).max(1000).default(50).describe("events, newest first (default 50)"),
      symbol: z.string().max(30).optional().describe("filter, e.g. BTCUSDT or BTC"),
      cursor: CursorParam,
    })
    .superRefine(liquidationPager.refine),
  output: z.object({
    count: z.number().int(),
    symbol_filter: z.string().nullable(),
    events: z.array(LiquidationEvent),
    ...PageFields,
    stats: z.object({
      last_1h: z.object({ total_events: z.number().int(), long_liquidations: z.number().int(), short_liquidations: z.number().int(), total_value_usd: z.number() }),
      last_24h: z.object({ total_events: z.number().int(), total_value_usd: z.number() }),
      capped: z.boolean(),
    }),
    coverage: z.record(z.string(), z.object({ feed: z.string(), connected: z.boolean() })),
    timestamp: Timestamp,
  }),
  async handler(input, ctx) {
    const { limit, symbol } = input;
    const m = ingestion(ctx);
    const after = liquidationPager.decode(input);
    // One more than the page, to tell whether more exist.
    const found = m.liquidations.recent({ limit: limit + 1, symbol, before: after && { id: after.id, timeMs: after.time_ms } });
    const { items, truncated, next_cursor } = page(found, limit, (last) => liquidationPager.encode(input, { id: last.id, time_ms: last.time }));
    const events = items.map(formatLiquidation);
    const states = new Map(m.states().map((s) => [s.venue, s.connected]));
    return {
      count: events.length,
      symbol_filter: symbol ?? null,
      events,
      truncated,
      next_cursor,
      stats: m.liquidations.stats(ctx.now()),
      coverage: Object.fromEntries(STREAM_VENUES.map((v) => [v, { feed: FEEDS.get(v) ?? "no public liquidation feed", connected: states.get(v) ?? false }])),
      timestamp: isoNow(ctx),
    };
  },
});
