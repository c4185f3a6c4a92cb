import { z } from "zod";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import type { FeedInstrument, InstrumentSource } from "../../ingestion/feeds/normalise.js";
import type { LiquidationBackfillResult } from "../../ingestion/backfill/common.js";
import type { Liquidation } from "../../ingestion/types.js";
import { HOUR_MS } from "../../lib/time.js";
import { parseHtxLiquidationOrders } from "./feed-parse.js";

/** HTX answers at most a two-hour `start_time`..`end_time` window ("maximum query window size is 2 hours"). */
export const HTX_LIQUIDATION_WINDOW_MS = 2 * HOUR_MS;
/** Most requests one backfill makes (about one per listed swap and window, plus one per further page). */
const MAX_REQUESTS = 1000;
/** Contracts read side by side (the client's budget paces them; more would only queue past its wait limit). */
const WORKERS = 2;

const QueryIds = z.object({ data: z.array(z.object({ query_id: z.number() }).partial()) });

/**
 * HTX's liquidations of every listed swap over [fromMs, toMs), from `GET /linear-swap-api/v3/swap_liquidation_orders?
 * contract=&trade_type=0&start_time=&end_time=&direct=next[&from_id=]` (public, one contract per request, rows oldest
 * first, `created_at` in ms, windows of at most two hours within the last 90 days). Each contract is read window by
 * window; a window's next page starts after the largest `query_id` of the last one (`from_id`, as the docs ask) and it
 * ends at a page with no new `query_id` (HTX states no page size, so an empty page is the only sure end). Rows are
 * kept when their time lies in [fromMs, toMs); the live feed's events of the same liquidation are identical (same
 * contract, ms, side, price, size), so the store keeps one. Incomplete when a request fails, a body is refused or
 * malformed, or {@link MAX_REQUESTS} runs out.
 *
 * @param instruments the venue's instrument list (every swap is read; contracts it does not list are skipped).
 * @throws nothing: failures give `complete: false` with what was fetched.
 */
export async function fetchHtxLiquidations(
  http: VenueHttpClient,
  instruments: Pick<InstrumentSource, "instruments">,
  log: Logger,
  fromMs: number,
  toMs: number,
  maxRequests = MAX_REQUESTS,
): Promise<LiquidationBackfillResult> {
  if (!(toMs > fromMs)) return { liquidations: [], complete: true };
  let list: FeedInstrument[];
  try {
    list = (await instruments.instruments?.()) ?? [];
  } catch (err) {
    log.warn({ err: (err as Error).message }, "htx liquidation backfill: instrument list unavailable");
    return { liquidations: [], complete: false };
  }
  const bySymbol = new Map(list.map((i) => [i.venueSymbol, i]));
  const lookup = { get: (s: string) => bySymbol.get(s) };
  const out: Liquidation[] = [];
  let requests = 0;
  let failed = false;

  /** Every page of one contract and window; false when the backfill must stop. */
  const readWindow = async (contract: string, start: number, end: number): Promise<boolean> => {
    let fromId: number | undefined;
    for (;;) {
      if (failed || requests >= maxRequests) return false;
      requests++;
      let raw: unknown;
      try {
        raw = await http.getJson("/linear-swap-api/v3/swap_liquidation_orders", {
          contract,
          trade_type: 0,
          start_time: start,
          end_time: end - 1,
          direct: "next",
          from_id: fromId,
        });
      } catch (err) {
        log.warn({ err: (err as Error).message, contract }, "htx liquidation backfill request failed");
        return false;
      }
      const parsed = parseHtxLiquidationOrders(raw, lookup);
      const ids = QueryIds.safeParse(raw);
      if (!ids.success || (parsed.error && parsed.liquidations.length === 0 && ids.data.data.length > 0)) {
        log.warn({ error: parsed.error, contract }, "htx liquidation backfill page refused or malformed");
        return false;
      }
      if (parsed.error) log.warn({ error: parsed.error, contract }, "htx liquidation backfill page with unusable rows");
      out.push(...parsed.liquidations.filter((l) => l.time >= fromMs && l.time < toMs));
      const maxId = Math.max(...ids.data.data.map((r) => r.query_id ?? -Infinity));
      if (!Number.isFinite(maxId) || (fromId !== undefined && maxId <= fromId)) return true;
      fromId = maxId;
    }
  };

  const contracts = list.map((i) => i.venueSymbol);
  const worker = async () => {
    for (let c = contracts.shift(); c !== undefined && !failed; c = contracts.shift()) {
      for (let start = fromMs; start < toMs; start += HTX_LIQUIDATION_WINDOW_MS) {
        if (!(await readWindow(c, start, Math.min(toMs, start + HTX_LIQUIDATION_WINDOW_MS)))) {
          failed = true;
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return { liquidations: out.sort((a, b) => a.time - b.time), complete: !failed };
}
