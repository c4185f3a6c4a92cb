import type { Logger } from "../../lib/log.js";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { FeedInstrument, ParsedFrame } from "../feeds/normalise.js";
import type { StreamVenue } from "../types.js";
import { type BackfillOptions, type BackfillResult, backfillLogger, finish, page, resolveInstrument, restClient, type RestDefaults, type TradeBackfill } from "./common.js";

/**
 * Backfill of a venue whose REST API returns only its latest trades, with no time filter (Bybit
 * `recent-trade`, Hyperliquid `recentTrades`): one request per call, complete only when the oldest
 * returned trade is older than `fromMs`. Subclasses give the request and the parser.
 */
export abstract class LatestTradesBackfill implements TradeBackfill {
  protected readonly http: VenueHttpClient;
  private readonly log: Logger;

  constructor(
    readonly venue: StreamVenue,
    private readonly opts: BackfillOptions,
    defaults: RestDefaults,
  ) {
    this.http = restClient(venue, opts, defaults);
    this.log = backfillLogger(venue, opts);
  }

  /** The venue request for the latest trades of `inst` (raw JSON body). */
  protected abstract request(inst: FeedInstrument): Promise<unknown>;
  /** Parses the body of {@link request}. */
  protected abstract parse(raw: unknown, inst: FeedInstrument): ParsedFrame;

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const p = await page(
      this.venue,
      true,
      this.log,
      () => this.request(inst),
      (raw) => this.parse(raw, inst),
    );
    const trades = p?.parsed.trades ?? [];
    const oldest = Math.min(...trades.map((t) => t.time));
    return finish(trades, fromMs, toMs, p !== null && !p.bad && oldest < fromMs);
  }
}
