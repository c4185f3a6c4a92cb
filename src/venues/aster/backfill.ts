import { BinanceTradeBackfill } from "../binance/backfill.js";
import type { BackfillOptions } from "../../ingestion/backfill/common.js";
import { ASTER_ENDPOINTS } from "./endpoints.js";
import { parseAsterAggTrades } from "./feed-parse.js";

/**
 * Aster trades from `GET /fapi/v1/aggTrades` (weight 20; docs: `startTime`/`endTime` less than 1 h apart, limit ≤ 1000,
 * `fromId` inclusive): Binance's paging (one-hour windows, a full page continues by `fromId`) on Aster's REST base,
 * with Aster's budget (`ASTER_ENDPOINTS.backfill`). Complete when the interval was walked to its end within `maxPages`.
 */
export class AsterTradeBackfill extends BinanceTradeBackfill {
  constructor(opts: BackfillOptions) {
    super(opts, { venue: "aster", endpoints: ASTER_ENDPOINTS, parse: parseAsterAggTrades });
  }
}
