import { z } from "zod";
import { venueList } from "../common.js";
import { STREAM_VENUES } from "../../src/ingestion/types.js";
import type { ToolContext } from "../../src/core/context.js";
import { AppError } from "../../src/errors.js";
import type { CallerInfo, InterimAnswer, UnpaidCaller } from "../../src/registry/tool.js";
import type { IngestionService } from "../../src/ingestion/service.js";

/** The venue ingestion (one process, or a replica of the ingest leader), or 503 when this instance runs without it (`STREAMS=off`). */
export function ingestion(ctx: ToolContext): IngestionService {
  if (!ctx.ingestion) throw new AppError("UPSTREAM_UNAVAILABLE", "live trade streams are disabled on this instance (STREAMS=off)");
  return ctx.ingestion;
}

/** The warm-up body (docs/methods/streams.md, "Symbols"). */
export const WarmupBody = z.object({
  symbol: z.string(),
  status: z.literal("warming_up"),
  message: z.string(),
});

/**
 * The interim answer of the CVD tools: pre-subscribed symbols are ready; another symbol is subscribed on its first
 * request and answered with the warm-up body (HTTP 202, Retry-After 10), free of charge, until its
 * streams have run for the warm-up time. Subscribing a new symbol spends one of the caller's warm-ups.
 * @throws AppError RATE_LIMITED (429) over the client's `STREAM_WARMUPS_PER_MIN`; UPSTREAM_UNAVAILABLE (503,
 *   Retry-After) when every on-demand stream is in paid use. Neither is charged.
 */
export async function warmup(symbol: string, ctx: ToolContext, caller: UnpaidCaller): Promise<InterimAnswer<z.infer<typeof WarmupBody>> | undefined> {
  if ((await ingestion(ctx).ensure(symbol, caller)) === "ready") return undefined;
  return {
    status: 202,
    retryAfterSec: 10,
    body: { symbol, status: "warming_up", message: `Subscribing to ${symbol} trade streams on ${venueList(STREAM_VENUES)}; retry in 10 seconds (not charged).` },
  };
}

/**
 * Records that `caller` paid for CVD of `symbol` (a paid or credit-paid call: `payer` is set; with payments
 * off nobody pays), so its on-demand stream is not evicted for a free warm-up.
 */
export function notePaidUse(symbol: string, ctx: ToolContext, caller: CallerInfo): void {
  if (caller.payer) ingestion(ctx).markPaid?.(symbol);
}

/** CVD periods and their lengths (docs/methods/streams.md, "CVD"). */
export const CvdPeriod = z.enum(["1h", "4h", "24h", "7d"]);

/** One liquidation as `/liquidation/recent` and the liquidation stream publish it (docs/methods/streams.md). */
export const LiquidationEvent = z.object({
  id: z.string().describe("liq_<unix_seconds>_<sequence>"),
  symbol: z.string(),
  side: z.enum(["long", "short"]).describe("long: a long position was liquidated as price fell; short: a short as price rose"),
  size: z.number().describe("base coins"),
  price: z.number(),
  value_usd: z.number(),
  timestamp: z.string(),
  exchange: z.string().describe("BINANCE, BYBIT or OKX"),
});
