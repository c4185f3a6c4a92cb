/**
 * Simulated Binance USDⓈ-M futures (`fapi.binance.com`, mounted at `/binance`) and Binance spot
 * (`api.binance.com`, mounted at `/binance-spot`), wire shapes of the Binance docs (https://developers.binance.com/docs/derivatives/usds-margined-futures/market-data/rest-api,
 * https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints).
 *
 * fapi: `GET /fapi/v1/exchangeInfo`, `/fapi/v1/fundingInfo`, `/fapi/v1/premiumIndex`, `/fapi/v1/fundingRate`,
 * `/fapi/v1/openInterest`, `/futures/data/openInterestHist`, `/futures/data/topLongShortPositionRatio`, `/fapi/v1/aggTrades` (the websocket's
 * `aggTrade` tape, see `tape.ts`), `/fapi/v1/klines` (last-price candles of `perp-model.ts`, 1m…1w; `1M` is not
 * simulated and answers -1120). Spot: `GET /api/v3/ticker/price`.
 * Decimals are strings, times are numbers (ms). Unknown symbols → HTTP 400 `{"code":-1121,"msg":"Invalid symbol."}`.
 * `1000PEPEUSDT` / `1000SHIBUSDT` quote prices per 1000 coins and sizes in units of 1000 coins. Besides the
 * USDT perpetuals, exchangeInfo and premiumIndex list BTC/ETH quarterlies (`BTCUSDT_YYMMDD`) like the real venue.
 * All values are simulated (see `perp-model.ts`), except replayed endpoints (see `replay.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, SIM_PERP_BASES, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { venueRecordings } from "../replay.js";
import { binanceAggFields, tapeFor, type TapeTrade } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo, tickOf } from "./wire.js";

const PERPETUAL_DELIVERY_DATE = 4133404800000;

function binanceError(res: Response, status: number, code: number, msg: string): void {
  res.status(status).json({ code, msg });
}

/** HTTP 400 `{"code":-1121,"msg":"Invalid symbol."}` (Binance's and Aster's answer to an unknown symbol). */
export const invalidSymbol = (res: Response): void => binanceError(res, 400, -1121, "Invalid symbol.");
/** HTTP 400 -1102: a required query parameter `name` is missing (Binance's and Aster's body). */
export const mandatory = (res: Response, name: string): void => binanceError(res, 400, -1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`);
const invalidParam = (res: Response, name: string): void => binanceError(res, 400, -1130, `Data sent for parameter '${name}' is not valid.`);

/** Binance-shaped bodies for injected 429s and 5xx. */
export function binanceFaultResponses(weightLimit: number): FaultResponses {
  return {
    rateLimitBody: () => ({
      code: -1003,
      msg: `Too many requests; current limit of IP(127.0.0.1) is ${weightLimit} requests per minute. Please use the websocket for live updates to avoid polling the API.`,
    }),
    serverErrorBody: () => ({ code: -1001, msg: "Internal error; unable to process your request. Please try again." }),
  };
}

/** Periods of the `/futures/data/*` statistics. */
const RATIO_PERIODS: Readonly<Record<string, number>> = {
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1h": HOUR,
  "2h": 2 * HOUR,
  "4h": 4 * HOUR,
  "6h": 6 * HOUR,
  "12h": 12 * HOUR,
  "1d": DAY,
};

/** Kline intervals (`1M`, calendar months, is not simulated). Weekly klines open on Monday 00:00 UTC. */
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
/** Most rows one klines request returns (default 500). */
const MAX_KLINES = 1500;
/** Average notional of one simulated trade, for the klines trade count. */
const AVG_TRADE_USD = 2_500;

/**
 * `limit` (default `def`, at most `max`), `startTime` and `endTime` (ms) of a paged fapi request. The first
 * malformed one is answered with the venue's -1130 error and null is returned.
 */
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

/** Venue price (per venue unit) rounded to the tick. */
const unitPrice = (inst: PerpInstrumentSpec, perCoin: number): number => roundTo(perCoin * inst.multiplier, inst.priceDecimals);

function symbolInfo(inst: PerpInstrumentSpec, perp: PerpModel): Record<string, unknown> {
  const anchor = perp.market.params(inst.base).anchorUsd * inst.multiplier;
  const tick = tickOf(inst.priceDecimals);
  const step = tickOf(inst.qtyDecimals);
  const maxQty = fixed(Math.max(1, Math.round(5e6 / anchor)), inst.qtyDecimals);
  const major = inst.base === "BTC" || inst.base === "ETH";
  return {
    symbol: inst.symbol,
    pair: `${inst.venueBase}USDT`,
    contractType: inst.kind === "perpetual" ? "PERPETUAL" : "CURRENT_QUARTER",
    deliveryDate: inst.kind === "perpetual" ? PERPETUAL_DELIVERY_DATE : inst.deliveryTime,
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
    underlyingSubType: inst.multiplier > 1 || inst.base === "WIF" ? ["Meme"] : major ? ["PoW"] : ["Layer-1"],
    settlePlan: 0,
    triggerProtect: "0.0500",
    liquidationFee: major ? "0.012500" : "0.015000",
    marketTakeBound: major ? "0.05" : "0.10",
    maxMoveOrderLimit: 10000,
    filters: [
      { minPrice: tick, maxPrice: fixed(anchor * 20, inst.priceDecimals), filterType: "PRICE_FILTER", tickSize: tick },
      { stepSize: step, filterType: "LOT_SIZE", maxQty, minQty: step },
      { stepSize: step, filterType: "MARKET_LOT_SIZE", maxQty, minQty: step },
      { limit: 200, filterType: "MAX_NUM_ORDERS" },
      { limit: 10, filterType: "MAX_NUM_ALGO_ORDERS" },
      { notional: major ? "100" : "5", filterType: "MIN_NOTIONAL" },
      { multiplierDown: "0.9500", multiplierUp: "1.0500", multiplierDecimal: "4", filterType: "PERCENT_PRICE" },
    ],
    orderTypes: ["LIMIT", "MARKET", "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"],
    timeInForce: ["GTC", "IOC", "FOK", "GTX", "GTD"],
    permissionSet: ["GRID", "COPY"],
  };
}

/** One `/fapi/v1/premiumIndex` row of `inst` at `now` (prices per venue unit; quarterlies: no funding). */
export function premiumIndexRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const m = inst.multiplier;
  const perpetual = inst.kind === "perpetual";
  const start = perpetual ? perp.intervalStart(inst, now) : now - HOUR;
  let settleSum = 0;
  for (let i = 0; i < 8; i++) settleSum += perp.indexPrice(inst, start + ((now - start) * (i + 0.5)) / 8);
  return {
    symbol: inst.symbol,
    markPrice: fixed(unitPrice(inst, perp.markPrice(inst, now)), 8),
    indexPrice: fixed(perp.indexPrice(inst, now) * m, 8),
    estimatedSettlePrice: fixed((settleSum / 8) * m, 8),
    lastFundingRate: fixed(perpetual ? perp.currentFundingRate(inst, now) : 0, 8),
    interestRate: fixed(perp.interestRate(inst), 8),
    nextFundingTime: perpetual ? perp.nextFundingTime(inst, now) : 0,
    time: now,
  };
}

/** One `/fapi/v1/klines` row of the candle opening at `open`, prices and base volume per venue unit; quote volumes to `quoteDecimals`. */
function klineRow(
  inst: PerpInstrumentSpec,
  perp: PerpModel,
  open: number,
  dur: number,
  now: number,
  { quoteDecimals, avgTradeUsd }: Pick<FapiWire, "quoteDecimals" | "avgTradeUsd">,
): unknown[] {
  const k = perp.candle(inst, open, dur, now);
  const m = inst.multiplier;
  const px = (perCoin: number) => fixed(unitPrice(inst, perCoin), inst.priceDecimals);
  const vwap = (k.open + k.high + k.low + k.close) / 4;
  const units = roundTo(k.volumeUsd / vwap / m, inst.qtyDecimals);
  const quote = units * m * vwap;
  const buyShare = Math.min(0.7, Math.max(0.3, 0.5 + 20 * (k.close / k.open - 1)));
  const buyUnits = roundTo(units * buyShare, inst.qtyDecimals);
  return [
    open,
    px(k.open),
    px(k.high),
    px(k.low),
    px(k.close),
    fixed(units, inst.qtyDecimals),
    open + dur - 1,
    fixed(quote, quoteDecimals),
    Math.round(quote / avgTradeUsd),
    fixed(buyUnits, inst.qtyDecimals),
    fixed(buyUnits * m * vwap, quoteDecimals),
    "0",
  ];
}

/** What differs between the venues serving Binance's fapi wire (Binance, Aster) on the routes {@link addFapiMarketRoutes} serves. */
export interface FapiWire {
  /** The instrument of a venue symbol at `now`, or undefined (answered -1121 Invalid symbol). */
  lookup: (symbol: string, now: number) => PerpInstrumentSpec | undefined;
  /** The perpetuals listed at `now` (`/fapi/v1/fundingRate` without a symbol). */
  perpetuals: (now: number) => readonly PerpInstrumentSpec[];
  /** Decimals of the klines quote volumes. */
  quoteDecimals: number;
  /** Average notional of one simulated trade (USD), for the klines trade count. */
  avgTradeUsd: number;
  /** Widest `startTime`…`endTime` span of `/fapi/v1/aggTrades` (ms, inclusive); wider → -1127. */
  maxAggWindowMs: number;
  /** Whether `/fapi/v1/fundingRate` rows carry `markPrice` (Binance's do, Aster's do not). */
  fundingMarkPrice: boolean;
}

/**
 * Registers the fapi routes Binance and Aster serve alike: `GET /fapi/v1/ping`, `/fapi/v1/time`, `/fapi/v1/fundingRate`,
 * `/fapi/v1/aggTrades` and `/fapi/v1/klines`, with the venue's differences in `wire`.
 */
export function addFapiMarketRoutes(
  router: Router,
  { clock, perp, tape }: { clock: VenueContext["clock"]; perp: PerpModel; tape: ReturnType<typeof tapeFor> },
  wire: FapiWire,
): void {
  router.get("/fapi/v1/ping", (_req, res) => {
    res.json({});
  });

  router.get("/fapi/v1/time", (_req, res) => {
    res.json({ serverTime: clock.now() });
  });

  router.get("/fapi/v1/fundingRate", (req, res) => {
    const now = clock.now();
    const paging = pageParams(req, res, 100, 1000);
    if (!paging) return;
    const { limit, startTime, endTime } = paging;
    const symbol = qp(req, "symbol");
    let insts: readonly PerpInstrumentSpec[];
    if (symbol === undefined || symbol === "") {
      insts = wire.perpetuals(now);
    } else {
      const inst = wire.lookup(symbol, now);
      if (!inst) return invalidSymbol(res);
      insts = [inst];
    }
    const to = Math.min(now, endTime ?? now);
    const rows: Array<{ inst: PerpInstrumentSpec; s: number }> = [];
    for (const inst of insts) {
      const iv = inst.fundingIntervalHours * HOUR;
      if (iv <= 0) continue;
      // Bound the scan: with a startTime take the first `limit`; otherwise the last `limit` before `to`.
      const from = startTime ?? to - limit * iv;
      const times = perp.settlementTimes(inst, from, to);
      const picked = startTime !== undefined ? times.slice(0, limit) : times.slice(-limit);
      for (const s of picked) rows.push({ inst, s });
    }
    rows.sort((a, b) => a.s - b.s || (a.inst.symbol < b.inst.symbol ? -1 : 1));
    const page = startTime !== undefined ? rows.slice(0, limit) : rows.slice(-limit);
    res.json(
      page.map(({ inst, s }) => ({
        symbol: inst.symbol,
        fundingTime: s + perp.settlementJitterMs(inst, s),
        fundingRate: fixed(perp.settledFundingRate(inst, s), 8),
        ...(wire.fundingMarkPrice ? { markPrice: fixed(perp.markPrice(inst, s) * inst.multiplier, 8) } : {}),
      })),
    );
  });

  /**
   * Aggregate trades, oldest first, `T` <= now: `fromId` (a >= fromId), or `startTime`/`endTime` (inclusive, at most
   * 1 h apart; one alone spans 1 h from/to it), or neither (the most recent). `limit` default 500, capped at 1000.
   */
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
    const inst = wire.lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    if (startTime !== undefined && endTime !== undefined && endTime - startTime > wire.maxAggWindowMs) {
      return binanceError(res, 400, -1127, "More than 1 hours between startTime and endTime.");
    }
    let rows: TapeTrade[];
    if (fromId !== undefined) {
      const from = Math.floor(fromId / 16) * 1000;
      rows = tape.tradesFrom(inst, from, limit, now + 1, (t) => t.seq >= fromId);
    } else if (startTime !== undefined || endTime !== undefined) {
      const from = startTime ?? (endTime as number) - HOUR;
      const to = Math.min(now, endTime ?? from + HOUR);
      rows = tape.tradesFrom(inst, from, limit, to + 1);
    } else {
      rows = tape.tradesBefore(inst, now + 1, limit).reverse();
    }
    res.json(rows.map(binanceAggFields));
  });

  /**
   * Klines, oldest first, the open candle last: `startTime` (first `limit` from it), else `endTime` (last `limit` up
   * to it), else the most recent `limit`. `limit` default 500, capped at 1500. Never before the listing.
   */
  router.get("/fapi/v1/klines", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const intervalRaw = qp(req, "interval");
    if (intervalRaw === undefined || intervalRaw === "") return mandatory(res, "interval");
    const dur = KLINE_INTERVALS[intervalRaw];
    if (dur === undefined) return binanceError(res, 400, -1120, "Invalid interval.");
    const paging = pageParams(req, res, 500, MAX_KLINES);
    if (!paging) return;
    const { limit, startTime, endTime } = paging;
    const now = clock.now();
    const inst = wire.lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    const offset = dur === 7 * DAY ? 4 * DAY : 0; // 1970-01-05 was a Monday
    const floorTo = (t: number) => Math.floor((t - offset) / dur) * dur + offset;
    const first = floorTo(inst.listTime) + (floorTo(inst.listTime) < inst.listTime ? dur : 0);
    const last = floorTo(Math.min(now, endTime ?? now));
    let from = startTime !== undefined ? Math.max(first, floorTo(startTime) + (floorTo(startTime) < startTime ? dur : 0)) : Math.max(first, last - (limit - 1) * dur);
    const rows: unknown[][] = [];
    for (; from <= last && rows.length < limit; from += dur) rows.push(klineRow(inst, perp, from, dur, now, wire));
    res.json(rows);
  });
}

interface BinanceReplay {
  premiumIndex?: unknown;
  exchangeInfo?: unknown;
}

/** Builds the Binance USDⓈ-M futures router (paths `/fapi/v1/...`, `/futures/data/...`). */
export function createBinanceFapiRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const replay: BinanceReplay | undefined = venueRecordings(ctx.replay, "binance");
  const tape = tapeFor(market);
  const router = Router();

  const lookup = (symbol: string, now: number) => perp.instrument("binance", symbol, now);
  addFapiMarketRoutes(
    router,
    { clock, perp, tape },
    {
      lookup,
      perpetuals: (now) => perp.instruments("binance", now).filter((i) => i.kind === "perpetual"),
      quoteDecimals: 5,
      avgTradeUsd: AVG_TRADE_USD,
      maxAggWindowMs: HOUR,
      fundingMarkPrice: true,
    },
  );

  router.get("/fapi/v1/exchangeInfo", (_req, res) => {
    if (replay?.exchangeInfo !== undefined) return void res.json(replay.exchangeInfo);
    const now = clock.now();
    res.json({
      timezone: "UTC",
      serverTime: now,
      futuresType: "U_MARGINED",
      rateLimits: [
        { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: 2400 },
        { rateLimitType: "ORDERS", interval: "MINUTE", intervalNum: 1, limit: 1200 },
        { rateLimitType: "ORDERS", interval: "SECOND", intervalNum: 10, limit: 300 },
      ],
      exchangeFilters: [],
      assets: [
        { asset: "USDT", marginAvailable: true, autoAssetExchange: "-10000" },
        { asset: "BTC", marginAvailable: true, autoAssetExchange: "-0.10000000" },
        { asset: "USDC", marginAvailable: true, autoAssetExchange: "-10000" },
      ],
      symbols: perp.instruments("binance", now).map((i) => symbolInfo(i, perp)),
    });
  });

  router.get("/fapi/v1/fundingInfo", (_req, res) => {
    const now = clock.now();
    res.json(
      perp
        .instruments("binance", now)
        .filter((i) => i.fundingInfoListed)
        .map((i) => ({
          symbol: i.symbol,
          adjustedFundingRateCap: fixed(i.fundingCap, 8),
          adjustedFundingRateFloor: fixed(-i.fundingCap, 8),
          fundingIntervalHours: i.fundingIntervalHours,
          disclaimer: false,
        })),
    );
  });

  router.get("/fapi/v1/premiumIndex", (req, res) => {
    const symbol = qp(req, "symbol");
    if (replay?.premiumIndex !== undefined) {
      const rows = replay.premiumIndex as Array<{ symbol: string }>;
      if (symbol === undefined || symbol === "") return void res.json(rows);
      const row = rows.find((r) => r.symbol === symbol);
      return row ? void res.json(row) : invalidSymbol(res);
    }
    const now = clock.now();
    if (symbol === undefined || symbol === "") {
      return void res.json(perp.instruments("binance", now).map((i) => premiumIndexRow(i, perp, now)));
    }
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    res.json(premiumIndexRow(inst, perp, now));
  });

  router.get("/fapi/v1/openInterest", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const now = clock.now();
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    res.json({
      openInterest: fixed(perp.openInterestCoins(inst, now) / inst.multiplier, inst.qtyDecimals),
      symbol: inst.symbol,
      time: now,
    });
  });

  /**
   * The `/futures/data/*` statistics: rows at period boundaries, oldest first, the latest 30 days only
   * (like the real venue); `limit` default 30, max 500; `rowAt` builds one row of a perpetual at `t`.
   */
  type Inst = NonNullable<ReturnType<typeof lookup>>;
  const periodStats = (path: string, rowAt: (inst: Inst, t: number) => Record<string, unknown>) =>
    router.get(path, (req: Request, res: Response) => {
      const symbol = qp(req, "symbol");
      if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
      const periodRaw = qp(req, "period");
      if (periodRaw === undefined || periodRaw === "") return mandatory(res, "period");
      const period = RATIO_PERIODS[periodRaw];
      if (period === undefined) return invalidParam(res, "period");
      const paging = pageParams(req, res, 30, 500);
      if (!paging) return;
      const { limit, startTime, endTime } = paging;
      const now = clock.now();
      const inst = lookup(symbol, now);
      if (!inst) return invalidSymbol(res);
      if (inst.kind !== "perpetual") return void res.json([]);
      const oldest = Math.ceil((now - 30 * DAY) / period) * period;
      const latest = Math.floor(Math.min(now, endTime ?? now) / period) * period;
      const first = startTime !== undefined ? Math.max(oldest, Math.ceil(startTime / period) * period) : Math.max(oldest, latest - (limit - 1) * period);
      const rows: Array<Record<string, unknown>> = [];
      for (let t = first; t <= latest && rows.length < limit; t += period) rows.push({ symbol: inst.symbol, ...rowAt(inst, t), timestamp: t });
      res.json(rows);
    });

  // Open interest: `sumOpenInterest` in venue units, `sumOpenInterestValue` in USDT at the mark price.
  periodStats("/futures/data/openInterestHist", (inst, t) => {
    const coins = perp.openInterestCoins(inst, t);
    return { sumOpenInterest: fixed(coins / inst.multiplier, 8), sumOpenInterestValue: fixed(coins * perp.markPrice(inst, t), 8) };
  });

  periodStats("/futures/data/topLongShortPositionRatio", (inst, t) => {
    const r = perp.longShortRatio(inst, "top_position", t);
    return { longShortRatio: fixed(r, 4), longAccount: fixed(r / (1 + r), 4), shortAccount: fixed(1 / (1 + r), 4) };
  });

  return router;
}

/** Spot symbols: `<BASE>USDT` for every simulated base (no multipliers on spot: `PEPEUSDT`). */
function spotSymbols(): Map<string, string> {
  return new Map(SIM_PERP_BASES.map((b) => [`${b}USDT`, b]));
}

/** Builds the Binance spot router (`/api/v3/ticker/price`). */
export function createBinanceSpotRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const router = Router();
  const symbols = spotSymbols();

  const row = (symbol: string, base: string, now: number) => {
    const p = market.priceAt(base, now);
    const d = Math.min(8, Math.max(0, Math.ceil(6 - Math.log10(p))));
    return { symbol, price: fixed(roundTo(p, d), 8) };
  };

  router.get("/api/v3/ping", (_req, res) => {
    res.json({});
  });

  router.get("/api/v3/ticker/price", (req, res) => {
    const now = clock.now();
    const symbol = qp(req, "symbol");
    const list = qp(req, "symbols");
    if (symbol !== undefined && symbol !== "") {
      const base = symbols.get(symbol);
      if (!base) return invalidSymbol(res);
      return void res.json(row(symbol, base, now));
    }
    if (list !== undefined && list !== "") {
      let wanted: unknown;
      try {
        wanted = JSON.parse(list) as unknown;
      } catch {
        wanted = undefined;
      }
      if (!Array.isArray(wanted) || !wanted.every((s) => typeof s === "string")) {
        return binanceError(res, 400, -1100, "Illegal characters found in parameter 'symbols'; legal range is '^\\[(\"[A-Z0-9-_.]{1,20}\"(,\"[A-Z0-9-_.]{1,20}\"){0,}){0,1}\\]$'.");
      }
      const out: Array<{ symbol: string; price: string }> = [];
      for (const s of wanted as string[]) {
        const base = symbols.get(s);
        if (!base) return invalidSymbol(res);
        out.push(row(s, base, now));
      }
      return void res.json(out);
    }
    res.json([...symbols].map(([s, b]) => row(s, b, now)));
  });

  return router;
}

/** Binance USDⓈ-M futures as the simulator mounts it (`urls.binance` replaces `https://fapi.binance.com`). */
export const binanceVenue = {
  name: "binance",
  mountPath: "/binance",
  createRouter: createBinanceFapiRouter,
  faultResponses: binanceFaultResponses(2400),
} as const satisfies SimVenue<"binance">;

/** Binance spot as the simulator mounts it (`urls.binance_spot` replaces `https://api.binance.com`). */
export const binanceSpotVenue = {
  name: "binance_spot",
  mountPath: "/binance-spot",
  createRouter: createBinanceSpotRouter,
  faultResponses: binanceFaultResponses(6000),
} as const satisfies SimVenue<"binance_spot">;
