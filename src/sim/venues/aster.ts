/**
 * Simulated Aster futures (`fapi.asterdex.com`, mounted at `/aster`), wire shapes of Aster's docs
 * (https://github.com/asterdex/api-docs, aster-finance-futures-api.md; Binance-compatible).
 *
 * `GET /fapi/v1/ping`, `/fapi/v1/time`, `/fapi/v1/exchangeInfo`, `/fapi/v1/fundingInfo` (Aster's rows: `symbol`,
 * `interestRate`, `time`, `fundingIntervalHours`, `fundingFeeCap`, `fundingFeeFloor`), `/fapi/v1/premiumIndex`,
 * `/fapi/v1/fundingRate` (rows WITHOUT `markPrice`, as Aster sends them), `/fapi/v1/openInterest`, `/fapi/v1/klines`
 * (last-price candles of `perp-model.ts`, 1m…1w), `/fapi/v1/aggTrades` (the websocket's `aggTrade` tape, `tape.ts`).
 * Aster has no `/futures/data/*` statistics, so none are served (404). Decimals are strings, times numbers (ms).
 * Unknown symbols → HTTP 400 `{"code":-1121,"msg":"Invalid symbol."}`; other refusals use Binance's codes
 * (-1102 missing parameter, -1130 invalid parameter, -1127 window over 1 h, -1120 interval). Multiplier symbols
 * (`1000<COIN>USDT`, when the model lists them) quote prices per 1000 coins and sizes in units of 1000 coins.
 * All values are simulated (see `perp-model.ts`).
 */
import { Router, type Request, type Response } from "express";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { asterAggFields, tapeFor, type TapeTrade } from "../tape.js";
import { binanceFaultResponses } from "./binance.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo, tickOf } from "./wire.js";

const VENUE = "aster";
const PERPETUAL_DELIVERY_DATE = 4133404800000;
/** Aster's published request-weight limit per minute (exchangeInfo `rateLimits`). */
const WEIGHT_LIMIT = 2400;

const asterError = (res: Response, status: number, code: number, msg: string): void => void res.status(status).json({ code, msg });
const invalidSymbol = (res: Response): void => asterError(res, 400, -1121, "Invalid symbol.");
const mandatory = (res: Response, name: string): void => asterError(res, 400, -1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`);
const invalidParam = (res: Response, name: string): void => asterError(res, 400, -1130, `Data sent for parameter '${name}' is not valid.`);

/** Kline intervals served (calendar months are not simulated). Weekly klines open on Monday 00:00 UTC. */
const KLINE_INTERVALS: Readonly<Record<string, number>> = {
  "1m": MINUTE,
  "3m": 3 * MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1h": HOUR,
  "2h": 2 * HOUR,
  "4h": 4 * HOUR,
  "6h": 6 * HOUR,
  "8h": 8 * HOUR,
  "12h": 12 * HOUR,
  "1d": DAY,
  "3d": 3 * DAY,
  "1w": 7 * DAY,
};
/** Average notional of one simulated trade, for the klines trade count. */
const AVG_TRADE_USD = 1_500;

/** `limit` (default `def`, at most `max`), `startTime`, `endTime`; a malformed one is answered (-1130) and null returned. */
function pageParams(req: Request, res: Response, def: number, max: number): { limit: number; startTime?: number; endTime?: number } | null {
  const limit = intParam(qp(req, "limit"), def, 1, Number.MAX_SAFE_INTEGER);
  const startTime = msParam(qp(req, "startTime"));
  const endTime = msParam(qp(req, "endTime"));
  if (limit === null || startTime === null || endTime === null) {
    invalidParam(res, limit === null ? "limit" : startTime === null ? "startTime" : "endTime");
    return null;
  }
  return { limit: Math.min(limit, max), startTime, endTime };
}

/** Venue price (per venue unit) of a per-coin price, rounded to the tick. */
const unitPrice = (inst: PerpInstrumentSpec, perCoin: number): number => roundTo(perCoin * inst.multiplier, inst.priceDecimals);

/** One `symbols` entry of exchangeInfo, in the docs' field set. */
function symbolInfo(inst: PerpInstrumentSpec, perp: PerpModel): Record<string, unknown> {
  const anchor = perp.market.params(inst.base).anchorUsd * inst.multiplier;
  const tick = tickOf(inst.priceDecimals);
  const step = tickOf(inst.qtyDecimals);
  const maxQty = fixed(Math.max(1, Math.round(2e6 / anchor)), inst.qtyDecimals);
  return {
    symbol: inst.symbol,
    pair: inst.symbol,
    contractType: "PERPETUAL",
    deliveryDate: PERPETUAL_DELIVERY_DATE,
    onboardDate: inst.listTime,
    status: "TRADING",
    maintMarginPercent: "2.5000",
    requiredMarginPercent: "5.0000",
    baseAsset: inst.venueBase,
    quoteAsset: "USDT",
    marginAsset: "USDT",
    pricePrecision: inst.priceDecimals,
    quantityPrecision: inst.qtyDecimals,
    baseAssetPrecision: 8,
    quotePrecision: 8,
    underlyingType: "COIN",
    underlyingSubType: [],
    settlePlan: 0,
    triggerProtect: "0.1500",
    filters: [
      { filterType: "PRICE_FILTER", maxPrice: fixed(anchor * 20, inst.priceDecimals), minPrice: tick, tickSize: tick },
      { filterType: "LOT_SIZE", maxQty, minQty: step, stepSize: step },
      { filterType: "MARKET_LOT_SIZE", maxQty, minQty: step, stepSize: step },
      { filterType: "MAX_NUM_ORDERS", limit: 200 },
      { filterType: "MAX_NUM_ALGO_ORDERS", limit: 100 },
      { filterType: "MIN_NOTIONAL", notional: "5" },
      { filterType: "PERCENT_PRICE", multiplierUp: "1.1500", multiplierDown: "0.8500", multiplierDecimal: 4 },
    ],
    OrderType: ["LIMIT", "MARKET", "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"],
    timeInForce: ["GTC", "IOC", "FOK", "GTX", "HIDDEN"],
    liquidationFee: "0.010000",
    marketTakeBound: "0.30",
  };
}

function premiumIndexRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const m = inst.multiplier;
  const start = perp.intervalStart(inst, now);
  let settleSum = 0;
  for (let i = 0; i < 8; i++) settleSum += perp.indexPrice(inst, start + ((now - start) * (i + 0.5)) / 8);
  return {
    symbol: inst.symbol,
    markPrice: fixed(unitPrice(inst, perp.markPrice(inst, now)), 8),
    indexPrice: fixed(perp.indexPrice(inst, now) * m, 8),
    estimatedSettlePrice: fixed((settleSum / 8) * m, 8),
    lastFundingRate: fixed(perp.currentFundingRate(inst, now), 8),
    interestRate: fixed(perp.interestRate(inst), 8),
    nextFundingTime: perp.nextFundingTime(inst, now),
    time: now,
  };
}

/** One `/fapi/v1/klines` row of the candle opening at `open`: prices and base volume per venue unit. */
function klineRow(inst: PerpInstrumentSpec, perp: PerpModel, open: number, dur: number, now: number): unknown[] {
  const k = perp.candle(inst, open, dur, now);
  const m = inst.multiplier;
  const px = (perCoin: number) => fixed(unitPrice(inst, perCoin), inst.priceDecimals);
  const vwap = (k.open + k.high + k.low + k.close) / 4;
  const units = roundTo(k.volumeUsd / vwap / m, inst.qtyDecimals);
  const quote = units * m * vwap;
  const buyUnits = roundTo(units * Math.min(0.7, Math.max(0.3, 0.5 + 20 * (k.close / k.open - 1))), inst.qtyDecimals);
  return [
    open,
    px(k.open),
    px(k.high),
    px(k.low),
    px(k.close),
    fixed(units, inst.qtyDecimals),
    open + dur - 1,
    fixed(quote, 4),
    Math.round(quote / AVG_TRADE_USD),
    fixed(buyUnits, inst.qtyDecimals),
    fixed(buyUnits * m * vwap, 4),
    "0",
  ];
}

/** Builds the Aster futures router (paths `/fapi/v1/...`). */
export function createAsterRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const tape = tapeFor(market);
  const router = Router();
  const perpetuals = (now: number) => perp.instruments(VENUE, now).filter((i) => i.kind === "perpetual");
  const lookup = (symbol: string, now: number) => {
    const inst = perp.instrument(VENUE, symbol, now);
    return inst?.kind === "perpetual" ? inst : undefined;
  };

  router.get("/fapi/v1/ping", (_req, res) => void res.json({}));
  router.get("/fapi/v1/time", (_req, res) => void res.json({ serverTime: clock.now() }));

  router.get("/fapi/v1/exchangeInfo", (_req, res) => {
    const now = clock.now();
    res.json({
      exchangeFilters: [],
      rateLimits: [
        { interval: "MINUTE", intervalNum: 1, limit: WEIGHT_LIMIT, rateLimitType: "REQUEST_WEIGHT" },
        { interval: "MINUTE", intervalNum: 1, limit: 1200, rateLimitType: "ORDERS" },
      ],
      serverTime: now,
      assets: [{ asset: "USDT", marginAvailable: true, autoAssetExchange: "-10000" }],
      symbols: perpetuals(now).map((i) => symbolInfo(i, perp)),
      timezone: "UTC",
    });
  });

  router.get("/fapi/v1/fundingInfo", (_req, res) => {
    const now = clock.now();
    res.json(
      perpetuals(now)
        .filter((i) => i.fundingInfoListed)
        .map((i) => ({
          symbol: i.symbol,
          interestRate: fixed(perp.interestRate(i), 8),
          time: now,
          fundingIntervalHours: i.fundingIntervalHours,
          fundingFeeCap: i.fundingCap,
          fundingFeeFloor: -i.fundingCap,
        })),
    );
  });

  router.get("/fapi/v1/premiumIndex", (req, res) => {
    const now = clock.now();
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return void res.json(perpetuals(now).map((i) => premiumIndexRow(i, perp, now)));
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    res.json(premiumIndexRow(inst, perp, now));
  });

  /** Settled funding, oldest first: `startTime` (first `limit` from it), else the last `limit` up to `endTime`/now. */
  router.get("/fapi/v1/fundingRate", (req, res) => {
    const now = clock.now();
    const paging = pageParams(req, res, 100, 1000);
    if (!paging) return;
    const { limit, startTime, endTime } = paging;
    const symbol = qp(req, "symbol");
    let insts: readonly PerpInstrumentSpec[];
    if (symbol === undefined || symbol === "") insts = perpetuals(now);
    else {
      const inst = lookup(symbol, now);
      if (!inst) return invalidSymbol(res);
      insts = [inst];
    }
    const to = Math.min(now, endTime ?? now);
    const rows: Array<{ inst: PerpInstrumentSpec; s: number }> = [];
    for (const inst of insts) {
      const times = perp.settlementTimes(inst, startTime ?? to - limit * inst.fundingIntervalHours * HOUR, to);
      for (const s of startTime !== undefined ? times.slice(0, limit) : times.slice(-limit)) rows.push({ inst, s });
    }
    rows.sort((a, b) => a.s - b.s || (a.inst.symbol < b.inst.symbol ? -1 : 1));
    const page = startTime !== undefined ? rows.slice(0, limit) : rows.slice(-limit);
    res.json(page.map(({ inst, s }) => ({ symbol: inst.symbol, fundingTime: s + perp.settlementJitterMs(inst, s), fundingRate: fixed(perp.settledFundingRate(inst, s), 8) })));
  });

  router.get("/fapi/v1/openInterest", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const now = clock.now();
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    res.json({ symbol: inst.symbol, openInterest: fixed(perp.openInterestCoins(inst, now) / inst.multiplier, inst.qtyDecimals), time: now });
  });

  /** Klines, oldest first, the open candle last: `startTime` (first `limit`), else the last `limit` up to `endTime`/now; ≤ 1500. */
  router.get("/fapi/v1/klines", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const intervalRaw = qp(req, "interval");
    if (intervalRaw === undefined || intervalRaw === "") return mandatory(res, "interval");
    const dur = KLINE_INTERVALS[intervalRaw];
    if (dur === undefined) return asterError(res, 400, -1120, "Invalid interval.");
    const paging = pageParams(req, res, 500, 1500);
    if (!paging) return;
    const { limit, startTime, endTime } = paging;
    const now = clock.now();
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    const offset = dur === 7 * DAY ? 4 * DAY : 0; // 1970-01-05 was a Monday
    const floorTo = (t: number) => Math.floor((t - offset) / dur) * dur + offset;
    const ceilTo = (t: number) => floorTo(t) + (floorTo(t) < t ? dur : 0);
    const first = ceilTo(inst.listTime);
    const last = floorTo(Math.min(now, endTime ?? now));
    const rows: unknown[][] = [];
    for (let t = startTime !== undefined ? Math.max(first, ceilTo(startTime)) : Math.max(first, last - (limit - 1) * dur); t <= last && rows.length < limit; t += dur) {
      rows.push(klineRow(inst, perp, t, dur, now));
    }
    res.json(rows);
  });

  /** Aggregate trades, oldest first, `T` <= now: `fromId`, or `startTime`/`endTime` (under 1 h apart), or the most recent; ≤ 1000. */
  router.get("/fapi/v1/aggTrades", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const paging = pageParams(req, res, 500, 1000);
    if (!paging) return;
    const { limit, startTime, endTime } = paging;
    const fromIdRaw = qp(req, "fromId");
    const fromId = fromIdRaw === undefined || fromIdRaw === "" ? undefined : msParam(fromIdRaw);
    if (fromId === null) return invalidParam(res, "fromId");
    const now = clock.now();
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    if (startTime !== undefined && endTime !== undefined && endTime - startTime >= HOUR) return asterError(res, 400, -1127, "More than 1 hours between startTime and endTime.");
    let rows: TapeTrade[];
    if (fromId !== undefined) rows = tape.tradesFrom(inst, Math.floor(fromId / 16) * 1000, limit, now + 1, (t) => t.seq >= fromId);
    else if (startTime !== undefined || endTime !== undefined) {
      const from = startTime ?? (endTime as number) - HOUR;
      rows = tape.tradesFrom(inst, from, limit, Math.min(now, endTime ?? from + HOUR) + 1);
    } else rows = tape.tradesBefore(inst, now + 1, limit).reverse();
    res.json(rows.map(asterAggFields));
  });

  return router;
}

/** Aster futures as the simulator mounts it (`urls.aster` replaces `https://fapi.asterdex.com`). */
export const asterVenue = {
  name: "aster",
  mountPath: "/aster",
  createRouter: createAsterRouter,
  // Aster answers with Binance's `{code,msg}` bodies (-1003 too many requests, -1001 internal error).
  faultResponses: binanceFaultResponses(WEIGHT_LIMIT),
} as const satisfies SimVenue<"aster">;
