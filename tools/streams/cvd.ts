import { z } from "zod";
import { venueList } from "../common.js";
import { clean } from "../../src/analytics/funding.js";
import { defineTool } from "../../src/registry/tool.js";
import { cvdSignal, periodMs } from "../../src/ingestion/store/cvd-math.js";
import { STREAM_VENUES } from "../../src/ingestion/types.js";
import { isoNow, Timestamp } from "../common.js";
import { PerpSymbol, requireListed } from "../perp/common.js";
import { CvdPeriod, ingestion, notePaidUse, warmup, WarmupBody } from "./common.js";

const Flow = z.object({ cvd: z.number().describe("buy - sell taker volume in the period, USD"), buy_volume: z.number(), sell_volume: z.number() });

const CvdBody = z.object({
  symbol: z.string(),
  cvd: z.number().describe("cumulative volume delta since tracking started (at most 7 days), USD"),
  period_cvd: z.number().describe("buy - sell taker volume in the period, USD"),
  buy_volume: z.number().describe("taker buy volume in the period, USD"),
  sell_volume: z.number().describe("taker sell volume in the period, USD"),
  period_cvd_base: z.number().describe("the same delta in base coins"),
  signal: z.enum(["strong_bullish_pressure", "bullish_pressure", "neutral", "bearish_pressure", "strong_bearish_pressure", "insufficient_data"]),
  period: z.string(),
  active_ws_connections: z.number().int(),
  exchanges: z.record(z.string(), Flow),
  window_start: z
    .string()
    .describe(
      "ISO time the period's sums start: the 5-minute boundary at or before now - period, so the window is period to period + 5 min long; later when tracking or the symbol's first recorded trade came later (never before the first data; with no data yet, the current 5-minute boundary)",
    ),
  window_end: z.string().describe("ISO time the period's sums end: now (the current 5-minute bucket counts up to its latest trade)"),
  data_complete: z.boolean().describe("false when part of the period fell in a stream gap that REST could not backfill"),
  tracking_since: z.string().nullable(),
  timestamp: Timestamp,
  cached: z.boolean(),
});

/** `GET /cvd/:symbol`: Cumulative Volume Delta from the venues' trade streams (docs/methods/streams.md), or the warm-up body. */
export const cvd = defineTool({
  name: "cvd",
  title: "Cumulative volume delta",
  method: "GET",
  path: "/cvd/:symbol",
  priceUsd: "0.02",
  cacheTtlSec: 5,
  tags: ["streams"],
  summary: `Taker buy minus sell volume of a perpetual across ${venueList(STREAM_VENUES)}, live`,
  mcpNote: "A symbol not streamed yet first answers a free warm-up body (marketgate/interim in _meta); call again in about 10 s",
  description:
    "From the venues' websocket trade streams (taker side as each venue flags it; sizes in contracts converted to coins: OKX ctVal, Gate quanto_multiplier, Deribit inverse contracts in USD; each trade counted once by its trade id), in 5-minute buckets: the period (1h, 4h, 24h, 7d) sums whole buckets, from the one containing now - period through the current one, so 1h covers 60 to 65 minutes; window_start and window_end state the exact span summed (window_start is later when tracking started within the period). signal from period CVD / total volume: > 15% strong_bullish_pressure, 5-15% bullish_pressure, within ±5% neutral, -5 to -15% bearish_pressure, < -15% strong_bearish_pressure, no trades insufficient_data. BTC ETH SOL XRP BNB DOGE LINK ARB are always streamed; another symbol answers 202 with the warm-up body on its first request (free) and is ready about 10 s later. Warming up a symbol not streamed yet is budgeted per client (429 beyond STREAM_WARMUPS_PER_MIN) and refused with 503 and Retry-After while every on-demand stream is in paid use.",
  example: { symbol: "BTC", period: "1h" },
  input: z.object({ symbol: PerpSymbol, period: CvdPeriod.default("1h").describe("1h, 4h, 24h or 7d (default 1h)") }),
  output: z.union([CvdBody, WarmupBody]),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  interimAnswer: ({ symbol }, ctx, caller) => warmup(symbol, ctx, caller),
  async handler({ symbol, period }, ctx, caller) {
    const m = ingestion(ctx);
    notePaidUse(symbol, ctx, caller);
    const now = ctx.now();
    // Whole 5-min buckets from the one holding now − period through the current one: fromMs is where the sums start.
    const sum = m.cvd.cvd(symbol, now - periodMs(period), now + 1);
    const all = m.cvd.cumulative(symbol);
    const exchanges: Record<string, z.infer<typeof Flow>> = {};
    for (const v of STREAM_VENUES) {
      const f = sum.venues[v];
      if (f) exchanges[v] = { cvd: clean(f.buyUsd - f.sellUsd), buy_volume: clean(f.buyUsd), sell_volume: clean(f.sellUsd) };
    }
    const t = sum.total;
    return {
      symbol,
      cvd: clean(all.total.buyUsd - all.total.sellUsd),
      period_cvd: clean(t.buyUsd - t.sellUsd),
      buy_volume: clean(t.buyUsd),
      sell_volume: clean(t.sellUsd),
      period_cvd_base: clean(t.buyBase - t.sellBase),
      signal: cvdSignal(t.buyUsd - t.sellUsd, t.buyUsd + t.sellUsd, t.trades),
      period,
      active_ws_connections: m.activeConnections(),
      exchanges,
      window_start: new Date(sum.fromMs).toISOString(),
      window_end: new Date(now).toISOString(),
      data_complete: !sum.unfilled,
      tracking_since: sum.trackedSince === null ? null : new Date(sum.trackedSince).toISOString(),
      timestamp: isoNow(ctx),
      cached: false,
    };
  },
});
