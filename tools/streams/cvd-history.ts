import { z } from "zod";
import { clean } from "../../src/analytics/funding.js";
import { defineTool } from "../../src/registry/tool.js";
import { bucketSizeFor, periodMs } from "../../src/ingestion/store/cvd-math.js";
import { isoNow, Timestamp } from "../common.js";
import { PerpSymbol, requireListed } from "../perp/common.js";
import { CvdPeriod, ingestion, notePaidUse, warmup, WarmupBody } from "./common.js";

/** History bucket sizes as words (docs/methods/streams.md, "CVD"). */
const BUCKET_WORDS: Record<string, string> = { "1h": "5 minutes", "4h": "15 minutes", "24h": "1 hour", "7d": "1 hour" };

const HistoryBody = z.object({
  symbol: z.string(),
  period: z.string(),
  bucket_size: z.string().describe("5 minutes (1h), 15 minutes (4h), 1 hour (24h, 7d)"),
  data_points: z.number().int(),
  history: z.array(
    z.object({
      timestamp: z.string().describe("bucket start, ISO 8601 with milliseconds"),
      cvd_delta: z.number().describe("taker buy - sell volume in the bucket, USD; positive is net buying"),
      buy_volume: z.number(),
      sell_volume: z.number(),
      missing: z.boolean().describe("true when the bucket lies in a stream gap REST could not fill, or no data arrived"),
    }),
  ),
  timestamp: Timestamp,
  cached: z.boolean(),
});

/** `GET /cvd/history/:symbol`: bucketed CVD history from the stream store (docs/methods/streams.md), or the warm-up body. */
export const cvdHistory = defineTool({
  name: "cvd_history",
  title: "CVD history",
  method: "GET",
  path: "/cvd/history/:symbol",
  priceUsd: "0.03",
  cacheTtlSec: 30,
  tags: ["streams"],
  summary: "Bucketed taker buy/sell volume and CVD delta of a perpetual over 1h, 4h, 24h or 7d",
  description:
    "Oldest first. Buckets: 5 minutes for 1h, 15 minutes for 4h, 1 hour for 24h and 7d. History is kept 7 days in SQLite and survives restarts; it starts when the symbol is first streamed. Buckets in a stream gap that REST could not backfill (or with no data at all) are marked missing.",
  example: { symbol: "ETH", period: "24h" },
  input: z.object({ symbol: PerpSymbol, period: CvdPeriod.default("24h").describe("1h, 4h, 24h or 7d (default 24h)") }),
  output: z.union([HistoryBody, WarmupBody]),
  checkBeforePayment: ({ symbol }, ctx) => requireListed(symbol, ctx),
  interimAnswer: ({ symbol }, ctx, caller) => warmup(symbol, ctx, caller),
  async handler({ symbol, period }, ctx, caller) {
    notePaidUse(symbol, ctx, caller);
    const now = ctx.now();
    const points = ingestion(ctx).cvd.history(symbol, now - periodMs(period), now + 1, bucketSizeFor(period));
    return {
      symbol,
      period,
      bucket_size: BUCKET_WORDS[period]!,
      data_points: points.length,
      history: points.map((p) => ({
        timestamp: new Date(p.start).toISOString(),
        cvd_delta: clean(p.cvdDelta),
        buy_volume: clean(p.buyUsd),
        sell_volume: clean(p.sellUsd),
        missing: p.missing,
      })),
      timestamp: isoNow(ctx),
      cached: false,
    };
  },
});
