/**
 * Simulated Deribit public API (`https://www.deribit.com/api/v2`, mounted at `/deribit/api/v2`), JSON-RPC over HTTP
 * GET as in Deribit's API reference (https://docs.deribit.com/, Market Data):
 *
 * `GET /public/get_instruments` (`currency` BTC/ETH/USDC/any, `kind` future/any), `/public/ticker?instrument_name=`,
 * `/public/get_book_summary_by_currency?currency=&kind=` (`currency=any` refused, as the real venue does),
 * `/public/get_funding_rate_history?instrument_name=&start_timestamp=&end_timestamp=` (hourly rows, oldest first, at
 * most 744 = 31 days, the newest kept), `/public/get_tradingview_chart_data?…&resolution=` (parallel columns; `volume`
 * coins, `cost` USD; at most 5000 rows, the newest kept; `no_data` when empty),
 * `/public/get_last_trades_by_instrument?instrument_name=&start_timestamp=&end_timestamp=&count=&sorting=` (the tape's
 * trades and its liquidations as trades with a `liquidation` field, `has_more`), `/public/test`, `/public/get_time`.
 *
 * Units: the inverse `BTC-PERPETUAL` / `ETH-PERPETUAL` (contract 10 / 1 USD) quote `amount` and `open_interest` in USD;
 * the USDC linear `<BASE>_USDC-PERPETUAL` in coins. Funding is continuous: `current_funding` is the model's accruing
 * 8 h rate, `funding_8h` / `interest_8h` its rate over the 8 h before (`settledFundingRate(inst, t)`), and the hourly
 * `interest_1h` the 8 h rate at the end of that hour ÷ 8 (an approximation the model allows: the hour's own funding is
 * not modelled separately). Every answer has the envelope `{jsonrpc, result, usIn, usOut, usDiff, testnet}`; refusals
 * are HTTP 400 `{jsonrpc, error:{code, message, data}}` (-32602 `Invalid params` with a `reason`), injected faults
 * 10028 `too_many_requests` (429) and 11094 `internal_server_error` (5xx). All values are simulated (`perp-model.ts`,
 * `tape.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { DERIBIT_TICK_DIRECTION, deribitLiquidationTrade, deribitTradeId, deribitTradeSeq, tapeFor, type Tape, type TapeLiquidation, type TapeTrade } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, intParam, msParam, qp, roundTo } from "./wire.js";

const VENUE = "deribit";
/** `expiration_timestamp` Deribit gives its perpetuals (year 3000). */
const PERPETUAL_EXPIRY = 32503708800000;
const MAX_FUNDING_ROWS = 744;
const MAX_CHART_ROWS = 5000;
const MAX_TRADES = 1000;
const RESOLUTIONS: Readonly<Record<string, number>> = {
  "1": MINUTE,
  "3": 3 * MINUTE,
  "5": 5 * MINUTE,
  "10": 10 * MINUTE,
  "15": 15 * MINUTE,
  "30": 30 * MINUTE,
  "60": HOUR,
  "120": 2 * HOUR,
  "180": 3 * HOUR,
  "360": 6 * HOUR,
  "720": 12 * HOUR,
  "1D": DAY,
};

const envelope = (result: unknown, now: number) => ({ jsonrpc: "2.0", result, usIn: now * 1000, usOut: now * 1000 + 150, usDiff: 150, testnet: false });
const errorBody = (code: number, message: string, data?: Record<string, string>) => ({ jsonrpc: "2.0", error: data ? { message, data, code } : { message, code }, testnet: false });

/** Deribit-shaped bodies for injected 429s and 5xx. */
export const deribitFaultResponses: FaultResponses = {
  rateLimitBody: () => errorBody(10028, "too_many_requests"),
  serverErrorBody: () => errorBody(11094, "internal_server_error"),
};

/** Settlement currency of a perpetual: the coin of an inverse one, USDC for a linear one. */
const settlement = (inst: PerpInstrumentSpec): string => (inst.inverse ? inst.venueBase : "USDC");
/** Venue amount of `coins` of `inst` at `priceUsd`: USD on inverse perpetuals, coins on linear ones. */
const amountOf = (inst: PerpInstrumentSpec, coins: number, priceUsd: number): number => (inst.inverse ? coins * priceUsd : coins);
const px = (inst: PerpInstrumentSpec, usd: number): number => roundTo(Math.round(usd / inst.tickSize) * inst.tickSize, Math.max(inst.priceDecimals, 1));
const rate = (x: number): number => Number(x.toPrecision(8));

function instrumentRow(inst: PerpInstrumentSpec, idx: number): Record<string, unknown> {
  const cur = settlement(inst);
  return {
    tick_size: inst.tickSize,
    tick_size_steps: [],
    taker_commission: 0.0005,
    settlement_period: "perpetual",
    settlement_currency: cur,
    quote_currency: inst.quote,
    price_index: `${inst.venueBase.toLowerCase()}_${inst.inverse ? "usd" : "usdc"}`,
    min_trade_amount: inst.inverse ? inst.ctVal : 10 ** -inst.qtyDecimals,
    max_liquidation_commission: 0.0075,
    max_leverage: inst.maxLeverage,
    maker_commission: 0,
    kind: "future",
    is_active: true,
    instrument_name: inst.symbol,
    instrument_id: 124972 + idx,
    instrument_type: inst.inverse ? "reversed" : "linear",
    future_type: inst.inverse ? "reversed" : "linear",
    expiration_timestamp: PERPETUAL_EXPIRY,
    creation_timestamp: inst.listTime,
    counter_currency: inst.quote,
    contract_size: inst.inverse ? inst.ctVal : 10 ** -inst.qtyDecimals,
    base_currency: inst.venueBase,
    state: "open",
  };
}

/** The numbers a ticker and a book-summary row share. */
function marketState(inst: PerpInstrumentSpec, perp: PerpModel, now: number) {
  const mark = perp.markPrice(inst, now);
  const index = perp.indexPrice(inst, now);
  const last = perp.lastPrice(inst, now);
  const day = perp.dayStats(inst, now, "mark");
  const volumeUsd = perp.turnover24hUsd(inst, now);
  return {
    mark,
    index,
    last,
    day,
    volumeUsd,
    openInterest: amountOf(inst, perp.openInterestCoins(inst, now), mark),
    currentFunding: rate(perp.currentFundingRate(inst, now)),
    funding8h: rate(perp.settledFundingRate(inst, now)),
  };
}

function tickerOf(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const s = marketState(inst, perp, now);
  const spread = inst.tickSize;
  return {
    timestamp: now,
    state: "open",
    stats: {
      high: px(inst, s.day.high),
      low: px(inst, s.day.low),
      price_change: roundTo(((s.mark - s.day.open) / s.day.open) * 100, 4),
      volume: roundTo(s.volumeUsd / s.last, 8),
      volume_usd: roundTo(s.volumeUsd, 2),
      volume_notional: roundTo(s.volumeUsd, 2),
    },
    index_price: roundTo(s.index, 2),
    instrument_name: inst.symbol,
    last_price: px(inst, s.last),
    settlement_price: px(inst, perp.markPrice(inst, Math.floor(now / DAY) * DAY + 8 * HOUR - (now % DAY < 8 * HOUR ? DAY : 0))),
    min_price: px(inst, s.index * 0.985),
    max_price: px(inst, s.index * 1.015),
    open_interest: roundTo(s.openInterest, inst.inverse ? 0 : 4),
    mark_price: roundTo(s.mark, 4),
    interest_value: 0,
    best_bid_price: px(inst, s.last - spread / 2),
    best_ask_price: px(inst, s.last + spread / 2),
    best_bid_amount: inst.inverse ? 10 * inst.ctVal * 100 : 10,
    best_ask_amount: inst.inverse ? 10 * inst.ctVal * 100 : 10,
    estimated_delivery_price: roundTo(s.index, 2),
    current_funding: s.currentFunding,
    funding_8h: s.funding8h,
  };
}

function summaryRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const s = marketState(inst, perp, now);
  return {
    volume_usd: roundTo(s.volumeUsd, 2),
    volume_notional: roundTo(s.volumeUsd, 2),
    volume: roundTo(s.volumeUsd / s.last, 8),
    quote_currency: inst.quote,
    price_change: roundTo(((s.mark - s.day.open) / s.day.open) * 100, 4),
    open_interest: roundTo(s.openInterest, inst.inverse ? 0 : 4),
    mid_price: px(inst, s.last),
    mark_price: roundTo(s.mark, 4),
    low: px(inst, s.day.low),
    last: px(inst, s.last),
    instrument_name: inst.symbol,
    high: px(inst, s.day.high),
    estimated_delivery_price: roundTo(s.index, 2),
    current_funding: s.currentFunding,
    funding_8h: s.funding8h,
    creation_timestamp: now,
    bid_price: px(inst, s.last - inst.tickSize / 2),
    base_currency: inst.venueBase,
    ask_price: px(inst, s.last + inst.tickSize / 2),
  };
}

/** A tape trade as a Deribit trade row (`amount` USD on inverse perpetuals, coins on linear ones). */
export function deribitTradeRow(t: TapeTrade, perp: PerpModel, tickDirection?: string): Record<string, unknown> {
  const amount = Number(t.sz);
  return {
    trade_seq: deribitTradeSeq(t),
    trade_id: deribitTradeId(t),
    timestamp: t.time,
    tick_direction: DERIBIT_TICK_DIRECTION[tickDirection ?? "ZeroPlusTick"] ?? 1,
    price: Number(t.px),
    mark_price: roundTo(perp.markPrice(t.inst, t.time), 4),
    instrument_name: t.inst.symbol,
    index_price: roundTo(perp.indexPrice(t.inst, t.time), 2),
    direction: t.side,
    contracts: t.inst.inverse ? amount / t.inst.ctVal : amount,
    amount,
  };
}

/** A tape liquidation as the Deribit trade that carries it (`liquidation` "T", "M" or "MT"). */
export function deribitLiquidationRow(l: TapeLiquidation, perp: PerpModel): Record<string, unknown> {
  const amount = Number(l.sz);
  const { trade_id, trade_seq, liquidation, direction } = deribitLiquidationTrade(l);
  return {
    trade_seq,
    trade_id,
    timestamp: l.time,
    tick_direction: 2,
    price: Number(l.px),
    mark_price: roundTo(perp.markPrice(l.inst, l.time), 4),
    liquidation,
    instrument_name: l.inst.symbol,
    index_price: roundTo(perp.indexPrice(l.inst, l.time), 2),
    direction,
    contracts: l.inst.inverse ? amount / l.inst.ctVal : amount,
    amount,
  };
}

/** Trades and liquidation trades of `inst` in [fromMs, toMs), as rows sorted by (time, seq) ascending. */
export function deribitRows(tape: Tape, perp: PerpModel, inst: PerpInstrumentSpec, trades: readonly TapeTrade[], fromMs: number, toMs: number) {
  const dirs = tape.tickDirections(trades);
  const rows = trades.map((t, i) => ({ time: t.time, seq: t.seq, row: deribitTradeRow(t, perp, dirs[i]) }));
  for (const l of tape.liquidationsOf(inst, fromMs, toMs)) rows.push({ time: l.time, seq: l.seq, row: deribitLiquidationRow(l, perp) });
  return rows.sort((a, b) => a.time - b.time || a.seq - b.seq);
}

export function createDeribitRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const tape = tapeFor(market);
  const router = Router();

  const ok = (res: Response, result: unknown): void => void res.json(envelope(result, clock.now()));
  const invalid = (res: Response, reason: string, param: string): void => void res.status(400).json(errorBody(-32602, "Invalid params", { reason, param }));
  const perps = () => perp.instruments(VENUE, clock.now()).filter((i) => i.kind === "perpetual" && !i.delisted);
  /** The perpetual named by `instrument_name`, or null after answering the venue's error. */
  const named = (req: Request, res: Response): PerpInstrumentSpec | null => {
    const name = qp(req, "instrument_name");
    if (name === undefined || name === "") {
      invalid(res, "value is required", "instrument_name");
      return null;
    }
    const inst = perp.instrument(VENUE, name, clock.now());
    if (!inst || inst.kind !== "perpetual") {
      invalid(res, "instrument not found", "instrument_name");
      return null;
    }
    return inst;
  };
  /** `start_timestamp` and `end_timestamp` (both required), or null after the error. */
  const window = (req: Request, res: Response, required = true): { start: number; end: number } | null => {
    const start = msParam(qp(req, "start_timestamp"));
    const end = msParam(qp(req, "end_timestamp"));
    for (const [v, name] of [
      [start, "start_timestamp"],
      [end, "end_timestamp"],
    ] as const) {
      if (v === null || (required && v === undefined)) {
        invalid(res, v === null ? "wrong format" : "value is required", name);
        return null;
      }
    }
    return { start: start ?? 0, end: end ?? clock.now() };
  };

  router.get("/public/test", (_req, res) => ok(res, { version: "1.2.26" }));
  router.get("/public/get_time", (_req, res) => ok(res, clock.now()));

  router.get("/public/get_instruments", (req, res) => {
    const currency = qp(req, "currency") ?? "any";
    const kind = qp(req, "kind") ?? "any";
    if (!["BTC", "ETH", "USDC", "USDT", "EURR", "any"].includes(currency)) return invalid(res, "invalid currency", "currency");
    if (!["future", "option", "spot", "future_combo", "option_combo", "any"].includes(kind)) return invalid(res, "invalid kind", "kind");
    const rows = kind === "future" || kind === "any" ? perps().filter((i) => currency === "any" || settlement(i) === currency) : [];
    ok(
      res,
      rows.map((i, idx) => instrumentRow(i, idx)),
    );
  });

  router.get("/public/ticker", (req, res) => {
    const inst = named(req, res);
    if (inst) ok(res, tickerOf(inst, perp, clock.now()));
  });

  router.get("/public/get_book_summary_by_currency", (req, res) => {
    const currency = qp(req, "currency");
    if (currency === undefined || currency === "") return invalid(res, "value is required", "currency");
    if (!["BTC", "ETH", "USDC", "USDT", "EURR"].includes(currency)) return invalid(res, "invalid currency", "currency");
    const kind = qp(req, "kind");
    const now = clock.now();
    const rows = kind === undefined || kind === "future" ? perps().filter((i) => settlement(i) === currency) : [];
    ok(
      res,
      rows.map((i) => summaryRow(i, perp, now)),
    );
  });

  router.get("/public/get_funding_rate_history", (req, res) => {
    const inst = named(req, res);
    if (!inst) return;
    const w = window(req, res);
    if (!w) return;
    const now = clock.now();
    const end = Math.min(w.end, now);
    const first = Math.max(Math.ceil(w.start / HOUR) * HOUR, inst.listTime + 8 * HOUR, Math.floor(end / HOUR) * HOUR - (MAX_FUNDING_ROWS - 1) * HOUR);
    const rows: Record<string, number>[] = [];
    for (let t = first; t <= end; t += HOUR) {
      const r8 = rate(perp.settledFundingRate(inst, t));
      rows.push({
        timestamp: t,
        index_price: roundTo(perp.indexPrice(inst, t), 2),
        prev_index_price: roundTo(perp.indexPrice(inst, t - HOUR), 2),
        interest_8h: r8,
        interest_1h: rate(r8 / 8),
      });
    }
    ok(res, rows);
  });

  router.get("/public/get_tradingview_chart_data", (req, res) => {
    const inst = named(req, res);
    if (!inst) return;
    const w = window(req, res);
    if (!w) return;
    const resolution = qp(req, "resolution") ?? "";
    const dur = RESOLUTIONS[resolution];
    if (dur === undefined) return invalid(res, "invalid resolution", "resolution");
    const now = clock.now();
    const end = Math.min(w.end, now);
    const first = Math.max(Math.ceil(w.start / dur) * dur, Math.floor(inst.listTime / dur) * dur, Math.floor(end / dur) * dur - (MAX_CHART_ROWS - 1) * dur);
    const cols = { ticks: [] as number[], open: [] as number[], high: [] as number[], low: [] as number[], close: [] as number[], volume: [] as number[], cost: [] as number[] };
    for (let t = first; t <= end; t += dur) {
      const c = perp.candle(inst, t, dur, now);
      cols.ticks.push(t);
      cols.open.push(px(inst, c.open));
      cols.high.push(px(inst, c.high));
      cols.low.push(px(inst, c.low));
      cols.close.push(px(inst, c.close));
      cols.volume.push(roundTo(c.volumeUsd / c.close, 8));
      cols.cost.push(roundTo(c.volumeUsd, inst.inverse ? 0 : 2));
    }
    ok(res, { ...cols, status: cols.ticks.length ? "ok" : "no_data" });
  });

  router.get("/public/get_last_trades_by_instrument", (req, res) => {
    const inst = named(req, res);
    if (!inst) return;
    const w = window(req, res, false);
    if (!w) return;
    const count = intParam(qp(req, "count"), 10, 1, MAX_TRADES);
    if (count === null) return invalid(res, "must be between 1 and 1000", "count");
    const sorting = qp(req, "sorting") ?? "desc";
    if (!["asc", "desc", "default"].includes(sorting)) return invalid(res, "invalid value", "sorting");
    const now = clock.now();
    const from = Math.max(w.start, now - 7 * DAY);
    const to = Math.min(w.end, now) + 1;
    if (to <= from) return ok(res, { trades: [], has_more: false });
    const asc = sorting === "asc";
    const trades = asc ? tape.tradesFrom(inst, from, count + 1, to) : tape.tradesBefore(inst, to, count + 1, from).reverse();
    const lo = asc ? from : (trades[0]?.time ?? from);
    const hi = asc ? (trades.length > count ? trades[trades.length - 1]!.time + 1 : to) : to;
    let rows = deribitRows(tape, perp, inst, trades, lo, hi);
    const hasMore = rows.length > count || trades.length > count;
    rows = asc ? rows.slice(0, count) : rows.slice(-count).reverse();
    ok(res, { trades: rows.map((r) => r.row), has_more: hasMore });
  });

  return router;
}

/** Deribit as the simulator mounts it (`urls.deribit` replaces `https://www.deribit.com/api/v2`). */
export const deribitVenue = {
  name: "deribit",
  mountPath: "/deribit/api/v2",
  createRouter: createDeribitRouter,
  faultResponses: deribitFaultResponses,
} as const satisfies SimVenue<"deribit">;
