import type { Logger } from "../../lib/log.js";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import type { BackfillBudget, VenueEndpoints } from "../../venues/endpoint-types.js";
import type { FeedInstrument, ParsedFrame } from "../feeds/normalise.js";
import type { StreamVenue, Trade } from "../types.js";
import { type BackfillOptions, type BackfillResult, backfillDefaults, backfillLogger, finish, page, resolveInstrument, restClient, type TradeBackfill } from "./common.js";

/** What follows a page: the cursor of the next one (`lossy` when trades are knowingly skipped), or `null` when the interval is covered. */
export type NextPage<C> = { cursor: C; lossy?: boolean } | null;

/** One parsed page handed to {@link PagedTradeBackfill.next}: its trades and the raw body (for row counts and venue flags). */
export interface BackfillPage {
  rows: Trade[];
  raw: unknown;
}

/**
 * A cursor-paged REST trade backfill: resolves the instrument, asks the first page at the venue's
 * {@link firstCursor}, then each next page by the cursor {@link next} derives from the last one, until `next`
 * says the interval is covered (complete), `maxPages` runs out (incomplete) or a later page fails (incomplete,
 * see {@link page}). Trades are clipped to [fromMs, toMs), de-duplicated by id and sorted by {@link finish}.
 * A venue supplies its cursor rule, request and row parser; `C` is its cursor (query fields).
 */
export abstract class PagedTradeBackfill<V extends StreamVenue, C> implements TradeBackfill {
  protected readonly http: VenueHttpClient;
  protected readonly log: Logger;

  /** @param defaultMaxPages the venue's page limit when `opts.maxPages` is unset. */
  constructor(
    readonly venue: V,
    protected readonly opts: BackfillOptions,
    endpoints: { rest: VenueEndpoints["rest"]; backfill: BackfillBudget },
    private readonly defaultMaxPages: number,
  ) {
    this.http = restClient(venue, opts, backfillDefaults(endpoints));
    this.log = backfillLogger(venue, opts);
  }

  /** The cursor of the first page. */
  protected abstract firstCursor(fromMs: number, toMs: number): C;
  /** Requests one page (the raw JSON body). */
  protected abstract request(inst: FeedInstrument, cursor: C, fromMs: number, toMs: number): Promise<unknown>;
  /** Parses a page body into trades. */
  protected abstract parse(raw: unknown, inst: FeedInstrument): ParsedFrame;
  /** The cursor after a page, or `null` when the interval [fromMs, toMs) is covered. */
  protected abstract next(p: BackfillPage, cursor: C, fromMs: number, toMs: number): NextPage<C>;

  async fetchTrades(base: string, fromMs: number, toMs: number): Promise<BackfillResult> {
    if (!(toMs > fromMs)) return { trades: [], complete: true };
    const inst = await resolveInstrument(this.venue, this.opts, base);
    const trades: Trade[] = [];
    let cursor = this.firstCursor(fromMs, toMs);
    let clean = true;
    for (let n = 0; n < (this.opts.maxPages ?? this.defaultMaxPages); n++) {
      const at = cursor;
      const p = await page(
        this.venue,
        n === 0,
        this.log,
        () => this.request(inst, at, fromMs, toMs),
        (raw) => this.parse(raw, inst),
      );
      if (!p) return finish(trades, fromMs, toMs, false);
      clean &&= !p.bad;
      trades.push(...p.parsed.trades);
      const step = this.next({ rows: p.parsed.trades, raw: p.raw }, cursor, fromMs, toMs);
      if (!step) return finish(trades, fromMs, toMs, clean);
      if (step.lossy) clean = false;
      cursor = step.cursor;
    }
    return finish(trades, fromMs, toMs, false);
  }
}

/** The oldest of `rows` by the venue's order `before(a, b)` (true when `a` precedes `b`); undefined when empty. */
export function oldestTrade(rows: Trade[], before: (a: Trade, b: Trade) => boolean): Trade | undefined {
  return rows.reduce<Trade | undefined>((o, t) => (o === undefined || before(t, o) ? t : o), undefined);
}
