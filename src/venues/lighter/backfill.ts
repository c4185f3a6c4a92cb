import { AppError } from "../../errors.js";
import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type BackfillOptions, backfillDefaults } from "../../ingestion/backfill/common.js";
import { LatestTradesBackfill } from "../../ingestion/backfill/latest-trades.js";
import { LIGHTER_ENDPOINTS } from "./endpoints.js";
import { parseLighterRecentTrades } from "./feed-parse.js";
import { lighterMarketId } from "./parse.js";
import { LIGHTER } from "./venue-id.js";

/** Rows `recentTrades` returns at most (the REST list endpoints refuse a larger `limit` with code 20001). */
export const LIGHTER_RECENT_TRADES_LIMIT = 100;

/**
 * Lighter trades from `GET /recentTrades?market_id=&limit=100`: the market's latest 100 prints, no time filter (the
 * paged `trades` endpoint is for accounts). Complete only when the oldest returned trade is older than `fromMs`.
 * Lighter publishes no public liquidation history (its `liquidations` endpoint is per account, authenticated), so a
 * stream gap's liquidations are not backfilled.
 */
export class LighterTradeBackfill extends LatestTradesBackfill {
  constructor(opts: BackfillOptions) {
    super(LIGHTER, opts, backfillDefaults(LIGHTER_ENDPOINTS));
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    const id = lighterMarketId(inst);
    if (id === undefined) return Promise.reject(new AppError("NOT_FOUND", `${LIGHTER} lists no market id for ${inst.venueSymbol}`));
    return this.http.getJson("/recentTrades", { market_id: id, limit: LIGHTER_RECENT_TRADES_LIMIT });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseLighterRecentTrades(raw, inst);
  }
}
