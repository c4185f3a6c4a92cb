import type { FeedInstrument, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type BackfillOptions, backfillDefaults, backfillLogger, type LiquidationBackfillResult, restClient } from "../../ingestion/backfill/common.js";
import { LatestTradesBackfill } from "../../ingestion/backfill/latest-trades.js";
import type { Logger } from "../../lib/log.js";
import type { VenueHttpClient } from "../../lib/venue-http.js";
import { HTX_ENDPOINTS, HTX_LIQUIDATION_BACKFILL } from "./endpoints.js";
import { parseHtxTrades } from "./feed-parse.js";
import { fetchHtxLiquidations } from "./liquidation-backfill.js";
import { HTX } from "./venue-id.js";

/** Trades `/linear-swap-ex/market/history/trade` returns at most ("[1, 2000]"). */
export const HTX_MAX_TRADES = 2000;

/**
 * HTX swap trades from `GET /linear-swap-ex/market/history/trade?contract_code=&size=2000`: the latest 2000 trades
 * (grouped by taker order, newest first), no time filter or paging, so a call is complete only when the oldest
 * returned trade is older than `fromMs`. Sizes are contracts × contract_size.
 * Also the all-swap liquidation backfill ({@link fetchLiquidations}), on its own budget.
 */
export class HtxTradeBackfill extends LatestTradesBackfill {
  private readonly liquidationHttp: VenueHttpClient;
  private readonly liquidationLog: Logger;

  constructor(private readonly options: BackfillOptions) {
    super(HTX, options, backfillDefaults(HTX_ENDPOINTS));
    this.liquidationHttp = restClient(HTX, options, { baseUrl: HTX_ENDPOINTS.rest.api.url, ...HTX_LIQUIDATION_BACKFILL });
    this.liquidationLog = backfillLogger(HTX, options);
  }

  protected request(inst: FeedInstrument): Promise<unknown> {
    return this.http.getJson("/linear-swap-ex/market/history/trade", { contract_code: inst.venueSymbol, size: HTX_MAX_TRADES });
  }

  protected parse(raw: unknown, inst: FeedInstrument): ParsedFrame {
    return parseHtxTrades(raw, inst);
  }

  /** Every listed swap's liquidations over [fromMs, toMs) from `/linear-swap-api/v3/swap_liquidation_orders` (see {@link fetchHtxLiquidations}). */
  fetchLiquidations(fromMs: number, toMs: number): Promise<LiquidationBackfillResult> {
    return fetchHtxLiquidations(this.liquidationHttp, this.options.instruments, this.liquidationLog, fromMs, toMs);
  }
}
