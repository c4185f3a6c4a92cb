/**
 * Simulated Lighter public REST API (`mainnet.zklighter.elliot.ai/api/v1`, mounted at `/lighter/api/v1`), wire shapes
 * of the recorded bodies (src/venues/lighter/fixtures/README.md; https://apidocs.lighter.xyz).
 *
 * - `GET /orderBookDetails` (`market_id`, `filter` all|perp|spot): `{"code":200,"order_book_details":[…],
 *   "spot_order_book_details":[]}`, one row per listed perp: integer `market_id`, symbol (`BTC`, `1000PEPE`), margin
 *   fractions per 10,000, 24 h statistics, `open_interest` in venue units (one side), `last_trade_price` a number,
 *   `mark_price` / `index_price` strings. An unknown `market_id` answers empty lists.
 * - `GET /funding-rates`: every listed market's current rate as a FRACTION PER 8 HOURS, Lighter's (its hourly rate,
 *   rounded to 0.0001 % like the venue, × 8) and, where they list the base, Binance's, Bybit's and Hyperliquid's.
 * - `GET /fundings` (`market_id`, `resolution` 1h, `start_timestamp`/`end_timestamp` in seconds, `count_back`): hourly
 *   settlements in the window, oldest first, at most 750: `rate` an unsigned percent (4 decimals), `direction` the side
 *   that paid, `value` what one venue unit paid (USDC). `1d` is not simulated (400).
 * - `GET /recentTrades` (`market_id`, `limit` 1..100): the websocket's tape, newest first, liquidation prints
 *   (`type` "liquidation") among them.
 * Bad parameters → HTTP 400 `{"code":20001,"message":"invalid param "}`. Funding is hourly (`perp-model.ts`); all values
 * are simulated.
 */
import { Router, type Request } from "express";
import { LIGHTER } from "../../venues/lighter/venue-id.js";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { tapeFor, type Tape, type TapeLiquidation, type TapeTrade } from "../tape.js";
import { lighterMarginFractions, lighterMarketIdOf, lighterTradeRow, type LighterPrint } from "./lighter-wire.js";
import type { SimVenue, VenueContext } from "./types.js";
import { HOUR, fixed, intParam, qp, roundTo } from "./wire.js";

/** Rows `fundings` answers at most (open-source readers' measure of the real cap). */
const MAX_FUNDINGS = 750;
/** Largest `recentTrades` limit (a larger one is refused with 20001). */
export const LIGHTER_SIM_RECENT_TRADES_MAX = 100;
/** Average notional of one simulated trade, for `daily_trades_count`. */
const AVG_TRADE_USD = 1_500;

/** Lighter-shaped bodies for injected 429s and 5xx (the `{"code","message"}` envelope). */
export const lighterFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ code: 429, message: "Too Many Requests (simulated)" }),
  serverErrorBody: (status) => ({ code: status, message: "Internal Server Error (simulated)" }),
};

const INVALID_PARAM = { code: 20001, message: "invalid param " };

/** A listed Lighter market of the model: the instrument and its market id. */
export interface SimLighterMarket {
  readonly inst: PerpInstrumentSpec;
  readonly marketId: number;
}

/** The listed (target, not delisted) Lighter perps of the model at `now`, with their market ids. */
export function lighterMarkets(perp: PerpModel, now: number): SimLighterMarket[] {
  // Ids from the position in the whole (static) list, so that a later listing never renumbers a market.
  return perp
    .instruments(LIGHTER, now)
    .map((inst, index) => ({ inst, marketId: lighterMarketIdOf(inst.base, index) }))
    .filter(({ inst }) => inst.target && !inst.delisted && inst.listTime <= now);
}

/** The hourly rate as the venue rounds it: a percent with 4 decimals, i.e. a fraction on a 1e-6 grid. */
export const lighterHourlyRate = (rate: number): number => roundTo(rate, 6);

/** One `order_book_details` row of `m`. */
function detailsRow(m: SimLighterMarket, perp: PerpModel, now: number): Record<string, unknown> {
  const { inst } = m;
  const unit = inst.multiplier;
  const pd = inst.priceDecimals;
  const qd = inst.qtyDecimals;
  const px = (perCoin: number) => fixed(perCoin * unit, pd);
  const last = perp.lastPrice(inst, now) * unit;
  const day = perp.dayStats(inst, now, "mark");
  const turnover = perp.turnover24hUsd(inst, now);
  const f = lighterMarginFractions(inst.maxLeverage);
  return {
    symbol: inst.symbol,
    market_id: m.marketId,
    market_type: "perp",
    base_asset_id: 0,
    quote_asset_id: 0,
    status: "active",
    taker_fee: "0.0000",
    is_taker_fee_enabled: true,
    maker_fee: "0.0000",
    is_maker_fee_enabled: true,
    liquidation_fee: "1.0000",
    min_base_amount: fixed(Math.max(10 ** -qd, roundTo(10 / last, qd)), qd),
    min_quote_amount: "10.000000",
    order_quote_limit: "281474976.710655",
    supported_size_decimals: qd,
    supported_price_decimals: pd,
    supported_quote_decimals: 6,
    size_decimals: qd,
    price_decimals: pd,
    quote_multiplier: 1,
    default_initial_margin_fraction: f.default,
    min_initial_margin_fraction: f.min,
    maintenance_margin_fraction: f.maintenance,
    closeout_margin_fraction: f.closeout,
    last_trade_price: roundTo(last, pd),
    daily_trades_count: Math.round(turnover / AVG_TRADE_USD),
    daily_base_token_volume: roundTo(turnover / last, qd),
    daily_quote_token_volume: roundTo(turnover, 6),
    daily_price_low: roundTo(day.low * unit, pd),
    daily_price_high: roundTo(day.high * unit, pd),
    daily_price_change: (last / (day.open * unit) - 1) * 100,
    open_interest: roundTo(perp.openInterestCoins(inst, now) / unit, qd),
    mark_price: px(perp.markPrice(inst, now)),
    index_price: px(perp.indexPrice(inst, now)),
    daily_chart: {},
    market_config: { market_margin_mode: 0, insurance_fund_account_index: 281474976710655, liquidation_mode: 0, force_reduce_only: false, trading_hours: "" },
  };
}

/** The other venues `funding-rates` republishes, by their label there. */
const REPUBLISHED = [
  ["binance", "binance"],
  ["bybit", "bybit"],
  ["hyperliquid", "hyperliquid"],
] as const;

/** One `funding-rates` row: `rate` a fraction per 8 hours. */
const rateRow = (marketId: number, exchange: string, symbol: string, rate8h: number) => ({ market_id: marketId, exchange, symbol, rate: Number(rate8h.toPrecision(12)) });

/** A tape trade as a {@link LighterPrint}. */
export const tradePrint = (t: TapeTrade): LighterPrint => ({ time: t.time, seq: t.seq, px: t.px, sz: t.sz, takerBought: t.side === "buy", liquidation: false });
/** A tape liquidation as the print of the liquidated account's order: a long sells into the bid (`is_maker_ask` false). */
export const liquidationPrint = (l: TapeLiquidation): LighterPrint => ({ time: l.time, seq: l.seq, px: l.px, sz: l.sz, takerBought: l.side === "short", liquidation: true });

/** Tape trades and liquidation prints of `inst` in [fromMs, toMs) as {@link LighterPrint}s, each list newest first. */
export function lighterPrints(tape: Tape, inst: PerpInstrumentSpec, fromMs: number, toMs: number): { trades: LighterPrint[]; liquidations: LighterPrint[] } {
  return { trades: tape.tradesOf(inst, fromMs, toMs).map(tradePrint).reverse(), liquidations: tape.liquidationsOf(inst, fromMs, toMs).map(liquidationPrint).reverse() };
}

/** Parses an integer market id; null when malformed. */
function marketParam(req: Request): number | null | undefined {
  const raw = qp(req, "market_id");
  if (raw === undefined) return undefined;
  return intParam(raw, 0, 0, 1_000_000);
}

/**
 * Builds the Lighter router (`/orderBookDetails`, `/funding-rates`, `/fundings`, `/recentTrades`) over the market's
 * perp model and tape (`perp` and `tape` are for tests that list other instruments under Lighter's id).
 */
export function createLighterRouter(ctx: VenueContext, perp: PerpModel = perpModelFor(ctx.market), tape: Tape = tapeFor(ctx.market)): Router {
  const { clock } = ctx;
  const router = Router();
  const find = (id: number, now: number) => lighterMarkets(perp, now).find((m) => m.marketId === id);

  router.get("/orderBookDetails", (req, res) => {
    const now = clock.now();
    const id = marketParam(req);
    const filter = qp(req, "filter") ?? "all";
    if (id === null || !["all", "perp", "spot"].includes(filter)) return void res.status(400).json(INVALID_PARAM);
    const rows = filter === "spot" ? [] : lighterMarkets(perp, now).filter((m) => id === undefined || m.marketId === id);
    res.json({ code: 200, order_book_details: rows.map((m) => detailsRow(m, perp, now)), spot_order_book_details: [] });
  });

  router.get("/funding-rates", (_req, res) => {
    const now = clock.now();
    const rows = [];
    for (const m of lighterMarkets(perp, now)) {
      rows.push(rateRow(m.marketId, LIGHTER, m.inst.symbol, lighterHourlyRate(perp.currentFundingRate(m.inst, now)) * 8));
      for (const [venue, label] of REPUBLISHED) {
        const other = perp.perpOf(venue, m.inst.base);
        if (other) rows.push(rateRow(m.marketId, label, m.inst.symbol, (perp.currentFundingRate(other, now) * 8) / other.fundingIntervalHours));
      }
    }
    res.json({ code: 200, funding_rates: rows });
  });

  router.get("/fundings", (req, res) => {
    const now = clock.now();
    const id = marketParam(req);
    const start = intParam(qp(req, "start_timestamp"), -1, 0, 1e11);
    const end = intParam(qp(req, "end_timestamp"), -1, 0, 1e11);
    const countBack = intParam(qp(req, "count_back"), 0, 0, 1e6);
    if (id === undefined || id === null || start === null || start < 0 || end === null || end < 0 || countBack === null || qp(req, "resolution") !== "1h") {
      return void res.status(400).json(INVALID_PARAM);
    }
    const m = find(id, now);
    if (!m) return void res.json({ code: 200, resolution: "1h", fundings: [] });
    let rows = perp.settlementTimes(m.inst, start * 1000, Math.min(end * 1000, now)).map((s) => {
      const rate = lighterHourlyRate(perp.settledFundingRate(m.inst, s));
      const mark = perp.markPrice(m.inst, s) * m.inst.multiplier;
      return { timestamp: s / 1000, value: fixed(Math.abs(rate) * mark, 8), rate: fixed(Math.abs(rate) * 100, 4), direction: rate >= 0 ? "long" : "short" };
    });
    if (countBack > 0) rows = rows.slice(-countBack);
    res.json({ code: 200, resolution: "1h", fundings: rows.slice(-MAX_FUNDINGS) });
  });

  router.get("/recentTrades", (req, res) => {
    const now = clock.now();
    const id = marketParam(req);
    const limit = intParam(qp(req, "limit"), -1, 1, LIGHTER_SIM_RECENT_TRADES_MAX);
    if (id === undefined || id === null || limit === null || limit < 1) return void res.status(400).json(INVALID_PARAM);
    const m = find(id, now);
    if (!m) return void res.json({ code: 200, trades: [] });
    const latest = tape.tradesBefore(m.inst, now + 1, limit).map(tradePrint);
    // Liquidation prints of the span the trades cover (at most the last hour: the tape is computed per second).
    const from = Math.max(latest.at(-1)?.time ?? 0, now - HOUR);
    const liquidations = tape.liquidationsOf(m.inst, from, now + 1).map(liquidationPrint);
    const prints = [...latest, ...liquidations].sort((a, b) => b.time - a.time || Number(b.liquidation) - Number(a.liquidation) || b.seq - a.seq).slice(0, limit);
    res.json({ code: 200, trades: prints.map((p) => lighterTradeRow(m.marketId, p)) });
  });

  return router;
}

/** Lighter as the simulator mounts it (`urls.lighter` replaces `https://mainnet.zklighter.elliot.ai/api/v1`). */
export const lighterVenue = {
  name: "lighter",
  mountPath: "/lighter/api/v1",
  createRouter: createLighterRouter,
  faultResponses: lighterFaultResponses,
} as const satisfies SimVenue<"lighter">;
