import { z } from "zod";
import { venueList } from "../common.js";
import type { ToolContext } from "../../src/core/context.js";
import { optionalRead } from "../../src/core/fanout.js";
import { defineStream } from "../../src/registry/stream.js";
import { isoNow } from "../common.js";
import { iso, MissingExchanges, perVenue } from "../perp/common.js";

const VenueFunding = z.object({
  funding_rate: z.number().describe("the venue's current rate, fraction per funding interval (as /futures/funding-compare)"),
  predicted_funding_rate: z.number().nullable().describe("Hyperliquid's predictedFundings for this venue, when it publishes one"),
  funding_interval_hours: z.number(),
  next_funding_time: z.string().nullable(),
  mark_price: z.number().nullable(),
});

/** One `funding` event's data. */
export type FundingState = z.infer<typeof FundingEvent>;

const FundingEvent = z.object({ symbol: z.string(), timestamp: z.string(), exchanges: z.record(z.string(), VenueFunding), missing_exchanges: MissingExchanges });

/**
 * The funding state of `symbol` now: every listed venue's current rate (`funding()` of each perp client,
 * as /futures/funding-compare) and Hyperliquid's `predictedFundings` per venue (null where it has none).
 * Venues that fail are named in `missing_exchanges`.
 */
export async function readFundingState(ctx: ToolContext, symbol: string): Promise<FundingState> {
  const [{ results, answered, missing_exchanges }, predicted] = await Promise.all([
    perVenue(ctx, symbol, (c) => c.funding(symbol)),
    optionalRead(ctx.venues.predictions.predictedFundings()).then((p) => p ?? []),
  ]);
  const exchanges: FundingState["exchanges"] = {};
  for (const v of answered) {
    const f = results[v]!;
    const p = predicted.find((x) => x.base === symbol && x.venue === v);
    exchanges[v] = {
      funding_rate: f.fundingRate,
      predicted_funding_rate: p ? p.rate : null,
      funding_interval_hours: f.fundingIntervalHours,
      next_funding_time: iso(f.nextFundingTime),
      mark_price: f.markPrice,
    };
  }
  return { symbol, timestamp: isoNow(ctx), exchanges, missing_exchanges };
}

/** `GET /stream/funding/:symbol`: each venue's current and predicted rate when it changes, and each settlement. */
export const fundingStream = defineStream({
  topic: "funding",
  title: "Funding stream",
  path: "/stream/funding/:symbol",
  symbol: "required",
  pricePerMinuteUsd: "0.001",
  summary: `Funding of one perpetual on ${venueList()}, pushed when a rate changes and at each settlement`,
  description:
    "funding: every venue's current rate, Hyperliquid's prediction and the next settlement time, sent on connect and whenever any of them changes (the venues are polled every LIVE_FUNDING_POLL_SEC, 15 s by default). funding_settlement: a venue's settlement time passed; funding_rate is the last rate the venue published before it (the settled value is in /futures/funding-history once the venue lists it).",
  resumable: "Last-Event-ID is accepted but funding keeps no history: a reconnecting client gets the current state at once",
  events: {
    funding: FundingEvent,
    funding_settlement: z.object({
      symbol: z.string(),
      exchange: z.string(),
      settled_at: z.string().describe("ISO settlement time"),
      funding_rate: z.number().describe("the last rate published before the settlement"),
      funding_interval_hours: z.number(),
    }),
  },
  exampleSymbol: "BTC",
});
