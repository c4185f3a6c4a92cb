import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { Logger } from "../../lib/log.js";
import { BINANCE_ENDPOINTS } from "./endpoints.js";
import { parseBinanceAggTrades } from "./feed-parse.js";
import type { StreamVenue, Trade } from "../../ingestion/types.js";
import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { VenueEndpoints } from "../endpoint-types.js";
import {
  type BackfillOptions,
  type BackfillResult,
  backfillDefaults,
  backfillLogger,
  finish,
  page,
  resolveInstrument,
  restClient,
  type TradeBackfill,
} from "../../ingestion/backfill/common.js";

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

/**
 * Binance USDⓈ-M trades from `GET /fapi/v1/aggTrades` (weight 20): one-hour `startTime`/`endTime`
 * windows; a full page (1000 rows) continues by `fromId` (aggregate ids are contiguous) until a trade at
 * or after `toMs`. Complete when the interval was walked to its end within `maxPages` (default 30).
 * `v` (default Binance) names another venue of the same wire: its key, endpoints and row parser.
 */
export class BinanceTradeBackfill implements TradeBackfill {
  readonly venue: StreamVenue;
  private readonly http: VenueHttpClient;
  private readonly log: Logger;
  private readonly parseRows: AggTradesVenue["parse"];

  constructor(
    private readonly opts: BackfillOptions,
    v: AggTradesVenue = BINANCE,
  ) {
    this.venue = v.venue;
    this.parseRows = v.parse;
    this.http = restClient(this.venue, opts, backfillDefaults(v.endpoints));
    this.log = backfillLogger(this.venue, opts);
  }

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const symbol = inst.venueSymbol;
    const trades: Trade[] = [];
    let cursor = fromMs;
    let fromId: number | undefined;
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? 30); n++) {
      const query = fromId === undefined ? { symbol, startTime: cursor, endTime: Math.min(toMs, cursor + WINDOW_MS) - 1, limit: LIMIT } : { symbol, fromId, limit: LIMIT };
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.http.getJson("/fapi/v1/aggTrades", query),
        (raw) => this.parseRows(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      trades.push(...p.parsed.trades);
      const full = Array.isArray(p.raw) && p.raw.length >= LIMIT;
      const last = p.parsed.trades.at(-1);
      if (full && last) fromId = Number(last.id) + 1;
      else if (fromId !== undefined)
        return finish(trades, fromMs, toMs, clean); // reached the newest trade
      else cursor = Math.min(toMs, cursor + WINDOW_MS);
      if (fromId === undefined ? cursor >= toMs : last !== undefined && last.time >= toMs) return finish(trades, fromMs, toMs, clean);
    }
    return finish(trades, fromMs, toMs, false);
  }
}
