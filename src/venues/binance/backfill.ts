import { BINANCE_ENDPOINTS } from "./endpoints.js";
import { parseBinanceAggTrades } from "./feed-parse.js";
import type { StreamVenue } from "../../ingestion/types.js";
import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { VenueEndpoints } from "../endpoint-types.js";
import type { BackfillOptions } from "../../ingestion/backfill/common.js";
import { type BackfillPage, type NextPage, PagedTradeBackfill } from "../../ingestion/backfill/paged.js";

const LIMIT = 1000;
/** `startTime`/`endTime` may span at most one hour. */
const WINDOW_MS = 3_600_000;

/** The venue a {@link BinanceTradeBackfill} reads: Binance itself, or a venue serving the same `aggTrades` wire (Aster). */
export interface AggTradesVenue {
  venue: StreamVenue;
  endpoints: Required<Pick<VenueEndpoints, "rest" | "backfill">>;
  parse: (raw: unknown, inst: FeedInstrument) => ParsedFrame;
}

const BINANCE: AggTradesVenue = { venue: "binance", endpoints: BINANCE_ENDPOINTS, parse: (raw, inst) => parseBinanceAggTrades(raw, inst) };

/** `aggTrades` paging: a one-hour window from `start` (ms), or, after a full page, by aggregate id (`fromId`). */
type AggTradesCursor = { start: number; fromId?: number };

/**
 * Binance USDⓈ-M trades from `GET /fapi/v1/aggTrades` (weight 20): one-hour `startTime`/`endTime`
 * windows; a full page (1000 rows) continues by `fromId` (aggregate ids are contiguous) until a trade at
 * or after `toMs`. Complete when the interval was walked to its end within `maxPages` (default 30).
 * `v` (default Binance) names another venue of the same wire: its key, endpoints and row parser.
 */
export class BinanceTradeBackfill extends PagedTradeBackfill<StreamVenue, AggTradesCursor> {
  private readonly parseRows: AggTradesVenue["parse"];

  constructor(opts: BackfillOptions, v: AggTradesVenue = BINANCE) {
    super(v.venue, opts, v.endpoints, 30);
    this.parseRows = v.parse;
  }

  protected firstCursor(fromMs: number): AggTradesCursor {
    return { start: fromMs };
  }

  protected request(inst: FeedInstrument, { start, fromId }: AggTradesCursor, _fromMs: number, toMs: number): Promise<unknown> {
    const symbol = inst.venueSymbol;
    const query = fromId === undefined ? { symbol, startTime: start, endTime: Math.min(toMs, start + WINDOW_MS) - 1, limit: LIMIT } : { symbol, fromId, limit: LIMIT };
    return this.http.getJson("/fapi/v1/aggTrades", query);
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return this.parseRows(raw, inst);
  }

  protected next({ rows, raw }: BackfillPage, cursor: AggTradesCursor, _fromMs: number, toMs: number): NextPage<AggTradesCursor> {
    const full = Array.isArray(raw) && raw.length >= LIMIT;
    const last = rows.at(-1);
    if (full && last) return last.time >= toMs ? null : { cursor: { ...cursor, fromId: Number(last.id) + 1 } };
    if (cursor.fromId !== undefined) return null; // reached the newest trade
    const start = Math.min(toMs, cursor.start + WINDOW_MS);
    return start >= toMs ? null : { cursor: { start } };
  }
}
