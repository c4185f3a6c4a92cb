import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import type { FeedInstrument, InstrumentSource } from "../../ingestion/feeds/normalise.js";
import type { LiquidationBackfillResult } from "../../ingestion/backfill/common.js";
import type { Liquidation } from "../../ingestion/types.js";
import { parseGateLiqOrders } from "./feed-parse.js";

/** Rows per `/futures/usdt/liq_orders` page (Gate's maximum). */
const LIMIT = 1000;
/** Gate refuses a `from`..`to` span over 3600 s. */
const MAX_SPAN_S = 3600;
/** Most requests per gap: 24 one-hour windows, beyond which the result is incomplete. */
const MAX_PAGES = 24;

/**
 * Gate's all-market liquidations over a stream gap, from `GET /futures/usdt/liq_orders?from=&to=&limit=1000` (no
 * `contract`: every contract; rows newest first, `time` in Unix SECONDS, `to` inclusive; spans of at most 3600 s).
 * Only whole seconds inside [fromMs, toMs) are kept: the websocket's `futures.public_liquidates` carries
 * millisecond times, so an event of a second the stream partly covered cannot be told apart from one it
 * delivered, and is left out rather than counted twice. A full page is followed by one ending at its oldest
 * second, whose rows are taken from that next page only. Incomplete when a request fails, a single second
 * holds more than 1000 rows, or {@link MAX_PAGES} runs out.
 *
 * @param instruments the venue's instrument list (contracts it does not list are skipped).
 * @throws nothing: failures give `complete: false` with what was fetched.
 */
export async function fetchGateLiquidations(
  http: VenueHttpClient,
  instruments: Pick<InstrumentSource, "instruments">,
  log: Logger,
  fromMs: number,
  toMs: number,
): Promise<LiquidationBackfillResult> {
  const firstSecond = Math.ceil(fromMs / 1000);
  const endSecond = Math.floor(toMs / 1000); // exclusive
  if (endSecond <= firstSecond) return { liquidations: [], complete: true };
  let list: FeedInstrument[];
  try {
    list = (await instruments.instruments?.()) ?? [];
  } catch (err) {
    log.warn({ err: (err as Error).message }, "gate liquidation backfill: instrument list unavailable");
    return { liquidations: [], complete: false };
  }
  const bySymbol = new Map(list.map((i) => [i.venueSymbol, i]));
  const lookup = { get: (s: string) => bySymbol.get(s) };
  const out: Liquidation[] = [];
  let to = endSecond - 1; // inclusive
  for (let n = 0; n < MAX_PAGES; n++) {
    if (to < firstSecond) return { liquidations: sortByTime(out), complete: true };
    const from = Math.max(firstSecond, to - MAX_SPAN_S + 1);
    let raw: unknown;
    try {
      raw = await http.getJson("/futures/usdt/liq_orders", { from, to, limit: LIMIT });
    } catch (err) {
      log.warn({ err: (err as Error).message, from, to }, "gate liquidation backfill page failed");
      return { liquidations: sortByTime(out), complete: false };
    }
    const parsed = parseGateLiqOrders(raw, lookup);
    if (parsed.error) log.warn({ error: parsed.error }, "gate liquidation backfill page with unusable rows");
    const rows = Array.isArray(raw) ? raw.length : 0;
    if (rows < LIMIT) {
      out.push(...parsed.liquidations);
      to = from - 1;
      continue;
    }
    // A full page: its oldest second may hold more rows; read that second again with the next page.
    const oldestSecond = Math.min(...(raw as Array<{ time?: unknown } | null>).map((r) => Number(r?.time)).filter(Number.isFinite));
    if (!Number.isFinite(oldestSecond) || oldestSecond >= to) return { liquidations: sortByTime(out), complete: false };
    out.push(...parsed.liquidations.filter((l) => Math.floor(l.time / 1000) > oldestSecond));
    to = oldestSecond;
  }
  return { liquidations: sortByTime(out), complete: to < firstSecond };
}

function sortByTime(l: Liquidation[]): Liquidation[] {
  return l.sort((a, b) => a.time - b.time);
}
