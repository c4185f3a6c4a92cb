import { z } from "zod";
import { venueList } from "../common.js";
import { STREAM_VENUES } from "../../src/ingestion/types.js";
import { defineStream } from "../../src/registry/stream.js";

const Flow = z.object({ cvd: z.number().describe("buy - sell taker volume, USD"), buy_volume: z.number().describe("USD"), sell_volume: z.number().describe("USD") });

const Bucket = Flow.extend({
  symbol: z.string(),
  bucket_start: z.string().describe("ISO start of the 5-minute bucket (UTC aligned)"),
  bucket_end: z.string().describe("ISO end (exclusive)"),
  exchanges: z.record(z.string(), Flow).describe("per venue that traded in the bucket"),
  data_complete: z.boolean().describe("false when part of the bucket fell in a stream gap that REST could not backfill"),
});

/** `GET /stream/cvd/:symbol`: one event per closed 5-minute bucket and a running update at most once a second. */
export const cvdStream = defineStream({
  topic: "cvd",
  title: "CVD stream",
  path: "/stream/cvd/:symbol",
  symbol: "required",
  pricePerMinuteUsd: "0.002",
  summary: `Taker buy minus sell volume of a perpetual across ${venueList(STREAM_VENUES)}, per 5-minute bucket and live`,
  description:
    "cvd_bucket: a closed 5-minute bucket (sent 5 s after it ends, so late trades are in it), with the same fields as /cvd per venue. cvd_update: the open bucket's running sums, at most once a second and only when they changed (no id: it is not replayed). Symbols other than BTC ETH SOL XRP BNB DOGE LINK ARB are subscribed on first use and have data about 10 s later.",
  resumable:
    "Last-Event-ID (cvd_<SYMBOL>_<bucket start ms>) replays the closed buckets after it that ended in the last LIVE_RESUME_WINDOW_SEC (10 minutes); an older id gets replay_truncated first (older buckets: /cvd/history)",
  events: { cvd_bucket: Bucket, cvd_update: Bucket.extend({ as_of: z.string().describe("ISO time of the sums") }) },
  exampleSymbol: "BTC",
});
