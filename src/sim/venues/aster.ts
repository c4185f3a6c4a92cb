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
import { Router } from "express";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { tapeFor } from "../tape.js";
import { addFapiMarketRoutes, binanceFaultResponses, invalidSymbol, mandatory, premiumIndexRow } from "./binance.js";
import type { SimVenue, VenueContext } from "./types.js";
import { HOUR, fixed, qp, tickOf } from "./wire.js";

const VENUE = "aster";
const PERPETUAL_DELIVERY_DATE = 4133404800000;
/** Aster's published request-weight limit per minute (exchangeInfo `rateLimits`). */
const WEIGHT_LIMIT = 2400;

/** Average notional of one simulated trade, for the klines trade count. */
const AVG_TRADE_USD = 1_500;

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

  // Binance's wire: ping, time, fundingRate (rows without markPrice), klines (quote volumes to 4 decimals), aggTrades (under 1 h apart)
  addFapiMarketRoutes(router, { clock, perp, tape }, { lookup, perpetuals, quoteDecimals: 4, avgTradeUsd: AVG_TRADE_USD, maxAggWindowMs: HOUR - 1, fundingMarkPrice: false });

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

  router.get("/fapi/v1/openInterest", (req, res) => {
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return mandatory(res, "symbol");
    const now = clock.now();
    const inst = lookup(symbol, now);
    if (!inst) return invalidSymbol(res);
    res.json({ symbol: inst.symbol, openInterest: fixed(perp.openInterestCoins(inst, now) / inst.multiplier, inst.qtyDecimals), time: now });
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
