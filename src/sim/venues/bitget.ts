/**
 * Simulated Bitget API v2 mix public market API (`api.bitget.com`, mounted at `/bitget`), wire shapes of the Bitget
 * docs (https://www.bitget.com/api-doc/contract/market/…) and the recorded bodies of `src/venues/bitget/fixtures/`.
 *
 * `GET /api/v2/mix/market/contracts`, `/tickers` (all symbols), `/ticker` (one), `/history-fund-rate` (settled rates,
 * newest first, `pageSize` ≤ 100 and `pageNo` pages), `/account-long-short` (`period` 5m…1d, newest last), `/query-position-lever`
 * (the model's tiers: `startUnit`/`endUnit` USDT value bounds, `keepMarginRate` a fraction), `/candles` (last-price
 * candles, oldest first, `granularity` 1m…1D, ≤ 1000) and `/fills-history` (the websocket's `trade` tape, newest first,
 * ≤ 1000, `startTime`/`endTime` and `idLessThan`; `Buy`/`Sell` capitalised as in the docs' rows). Only
 * `productType=USDT-FUTURES` has instruments (any case accepted, as the docs' own `usdt-futures` examples show).
 * Envelope `{code:"00000", msg:"success", requestTime, data}`, every value a string. An unknown symbol or product type
 * answers HTTP 400 with `{code:"40034", msg:"Parameter <x> does not exist", requestTime, data:null}` (the recorded body).
 * Sizes are in coins of the venue unit (`1000BONKUSDT`-style symbols quote per 1000 coins). All values are simulated
 * (`perp-model.ts`, `tape.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { bitgetTradeId, tapeFor } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo, trimmed } from "./wire.js";

const PRODUCT_TYPE = "USDT-FUTURES";
const PRODUCT_TYPES = new Set(["USDT-FUTURES", "COIN-FUTURES", "USDC-FUTURES", "SUSDT-FUTURES", "SCOIN-FUTURES", "SUSDC-FUTURES"]);
const PERIODS: Readonly<Record<string, number>> = {
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
const GRANULARITIES: Readonly<Record<string, number>> = {
  "1m": MINUTE,
  "3m": 3 * MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1H": HOUR,
  "4H": 4 * HOUR,
  "6H": 6 * HOUR,
  "12H": 12 * HOUR,
  "1D": DAY,
};

/** Bitget-shaped bodies for injected 429s and 5xx (the venue's envelope; `429` is the code its error list gives "Too Many Requests"). */
export const bitgetFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ code: "429", msg: "Too Many Requests", requestTime: Date.now(), data: null }),
  serverErrorBody: () => ({ code: "40010", msg: "Request timed out", requestTime: Date.now(), data: null }),
};

/** Bitget sends funding rates with up to 6 decimals (`"-0.000013"` in ccxt's recording). */
const rateStr = (x: number): string => trimmed(x, 6);

function contractRow(inst: PerpInstrumentSpec): Record<string, unknown> {
  const step = 10 ** -inst.qtyDecimals;
  return {
    symbol: inst.symbol,
    baseCoin: inst.venueBase,
    quoteCoin: inst.quote,
    buyLimitPriceRatio: "0.05",
    sellLimitPriceRatio: "0.05",
    feeRateUpRatio: "0.005",
    makerFeeRate: "0.0002",
    takerFeeRate: "0.0006",
    openCostUpRatio: "0.01",
    supportMarginCoins: [inst.quote],
    minTradeNum: fixed(step, inst.qtyDecimals),
    priceEndStep: "1",
    volumePlace: String(inst.qtyDecimals),
    pricePlace: String(inst.priceDecimals),
    sizeMultiplier: fixed(step, inst.qtyDecimals),
    symbolType: inst.kind === "perpetual" ? "perpetual" : "delivery",
    minTradeUSDT: "5",
    maxSymbolOrderNum: "999999",
    maxProductOrderNum: "999999",
    maxPositionNum: "150",
    symbolStatus: "normal",
    offTime: "-1",
    limitOpenTime: "-1",
    deliveryTime: inst.deliveryTime ? String(inst.deliveryTime) : "",
    deliveryStartTime: "",
    launchTime: String(inst.listTime),
    fundInterval: String(inst.fundingIntervalHours),
    minLever: "1",
    maxLever: String(inst.maxLeverage),
    posLimit: "0.05",
    maintainTime: "",
  };
}

function tickerRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const m = inst.multiplier;
  const d = inst.priceDecimals;
  const px = (perCoin: number) => roundTo(perCoin * m, d);
  const last = px(perp.lastPrice(inst, now));
  const day = perp.dayStats(inst, now, "mark");
  const open24 = px(perp.lastPrice(inst, now - DAY));
  const turnover = perp.turnover24hUsd(inst, now);
  const tick = 10 ** -d;
  return {
    symbol: inst.symbol,
    lastPr: fixed(last, d),
    askPr: fixed(roundTo(last + tick, d), d),
    bidPr: fixed(last, d),
    bidSz: fixed(roundTo(20_000 / (last || 1), inst.qtyDecimals), inst.qtyDecimals),
    askSz: fixed(roundTo(34_000 / (last || 1), inst.qtyDecimals), inst.qtyDecimals),
    high24h: fixed(Math.max(px(day.high), last), d),
    low24h: fixed(Math.min(px(day.low), last), d),
    ts: String(now),
    change24h: fixed(open24 > 0 ? last / open24 - 1 : 0, 5),
    baseVolume: fixed(turnover / (last || 1), inst.qtyDecimals),
    quoteVolume: fixed(turnover, 4),
    usdtVolume: fixed(turnover, 4),
    openUtc: fixed(px(perp.lastPrice(inst, Math.floor(now / DAY) * DAY)), d),
    changeUtc24h: "0",
    indexPrice: fixed(px(perp.indexPrice(inst, now)), d),
    fundingRate: rateStr(perp.currentFundingRate(inst, now)),
    holdingAmount: fixed(roundTo(perp.openInterestCoins(inst, now) / m, inst.qtyDecimals), inst.qtyDecimals),
    deliveryStartTime: "",
    deliveryTime: "",
    deliveryStatus: "",
    open24h: fixed(open24, d),
    markPrice: fixed(px(perp.markPrice(inst, now)), d),
  };
}

/** Builds the Bitget v2 mix router (paths `/api/v2/mix/market/...`). */
export function createBitgetRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const tape = tapeFor(market);
  const router = Router();

  const ok = (res: Response, data: unknown): void => {
    res.json({ code: "00000", msg: "success", requestTime: clock.now(), data });
  };
  const missing = (res: Response, what: string): void => {
    res.status(400).json({ code: "40034", msg: `Parameter ${what} does not exist`, requestTime: clock.now(), data: null });
  };
  /** Validates `productType`: true for USDT-FUTURES, false for another known type (no instruments), null after an error. */
  const usdt = (req: Request, res: Response): boolean | null => {
    const raw = (qp(req, "productType") ?? "").toUpperCase();
    if (!PRODUCT_TYPES.has(raw)) {
      missing(res, raw || "productType");
      return null;
    }
    return raw === PRODUCT_TYPE;
  };
  /** The USDT-FUTURES perpetual named by `symbol`, or undefined after a 40034 answer. */
  const symbolOf = (req: Request, res: Response): PerpInstrumentSpec | undefined => {
    const isUsdt = usdt(req, res);
    if (isUsdt === null) return undefined;
    const symbol = qp(req, "symbol") ?? "";
    const inst = isUsdt && symbol ? perp.instrument("bitget", symbol, clock.now()) : undefined;
    if (!inst) missing(res, symbol || "symbol");
    return inst;
  };
  const all = () => perp.instruments("bitget", clock.now());

  router.get("/api/v2/mix/market/contracts", (req, res) => {
    const isUsdt = usdt(req, res);
    if (isUsdt === null) return;
    const symbol = qp(req, "symbol");
    const rows = isUsdt ? all().filter((i) => symbol === undefined || symbol === "" || i.symbol === symbol) : [];
    ok(res, rows.map(contractRow));
  });

  router.get("/api/v2/mix/market/tickers", (req, res) => {
    const isUsdt = usdt(req, res);
    if (isUsdt === null) return;
    const now = clock.now();
    ok(res, isUsdt ? all().map((i) => tickerRow(i, perp, now)) : []);
  });

  router.get("/api/v2/mix/market/ticker", (req, res) => {
    const inst = symbolOf(req, res);
    if (inst) ok(res, [tickerRow(inst, perp, clock.now())]);
  });

  router.get("/api/v2/mix/market/history-fund-rate", (req, res) => {
    const inst = symbolOf(req, res);
    if (!inst) return;
    const pageSize = intParam(qp(req, "pageSize"), 20, 1, 100);
    const pageNo = intParam(qp(req, "pageNo"), 1, 1, 1_000_000);
    if (pageSize === null || pageNo === null) return missing(res, "pageSize");
    const now = clock.now();
    const iv = inst.fundingIntervalHours * HOUR;
    const skip = (pageNo - 1) * pageSize;
    const times = perp
      .settlementTimes(inst, Math.max(inst.listTime, now - (skip + pageSize + 1) * iv), now)
      .reverse()
      .slice(skip, skip + pageSize);
    ok(
      res,
      times.map((t) => ({ symbol: inst.symbol, fundingRate: rateStr(perp.settledFundingRate(inst, t)), fundingTime: String(t) })),
    );
  });

  router.get("/api/v2/mix/market/account-long-short", (req, res) => {
    const symbol = qp(req, "symbol") ?? "";
    const inst = symbol ? perp.instrument("bitget", symbol, clock.now()) : undefined;
    if (!inst) return missing(res, symbol || "symbol");
    const period = PERIODS[qp(req, "period") ?? "5m"];
    if (period === undefined) return missing(res, "period");
    const now = clock.now();
    const latest = Math.floor(now / period) * period;
    const rows: Array<Record<string, string>> = [];
    for (let t = latest - 29 * period; t <= latest; t += period) {
      if (t < inst.listTime) continue;
      const r = perp.longShortRatio(inst, "account", t);
      const long = roundTo(r / (1 + r), 4);
      rows.push({ longAccountRatio: fixed(long, 4), shortAccountRatio: fixed(roundTo(1 - long, 4), 4), longShortAccountRatio: fixed(r, 2), ts: String(t) });
    }
    ok(res, rows);
  });

  router.get("/api/v2/mix/market/query-position-lever", (req, res) => {
    const inst = symbolOf(req, res);
    if (!inst) return;
    let floor = 0;
    ok(
      res,
      perp.marginTiers(inst).map((t, k) => {
        const row = {
          symbol: inst.symbol,
          level: String(k + 1),
          startUnit: String(floor),
          endUnit: String(t.maxNotionalUsd),
          leverage: String(t.maxLeverage),
          keepMarginRate: trimmed(t.mmr, 4),
        };
        floor = t.maxNotionalUsd;
        return row;
      }),
    );
  });

  router.get("/api/v2/mix/market/candles", (req, res) => {
    const inst = symbolOf(req, res);
    if (!inst) return;
    const dur = GRANULARITIES[qp(req, "granularity") ?? ""];
    if (dur === undefined) return missing(res, "granularity");
    const limit = intParam(qp(req, "limit"), 100, 1, 1000);
    const endTime = msParam(qp(req, "endTime"));
    const startTime = msParam(qp(req, "startTime"));
    if (limit === null || endTime === null || startTime === null) return missing(res, "limit");
    const now = clock.now();
    const lastOpen = Math.floor(Math.min(now, endTime ?? now) / dur) * dur;
    const firstOpen = Math.max(startTime ?? -Infinity, lastOpen - (limit - 1) * dur, Math.floor(inst.listTime / dur) * dur);
    const m = inst.multiplier;
    const d = inst.priceDecimals;
    const rows: string[][] = [];
    for (let open = firstOpen; open <= lastOpen; open += dur) {
      const k = perp.candle(inst, open, dur, now);
      const close = roundTo(k.close * m, d);
      rows.push([
        String(open),
        fixed(roundTo(k.open * m, d), d),
        fixed(roundTo(k.high * m, d), d),
        fixed(roundTo(k.low * m, d), d),
        fixed(close, d),
        fixed(roundTo(k.volumeUsd / (close || 1), inst.qtyDecimals), inst.qtyDecimals),
        fixed(k.volumeUsd, 4),
      ]);
    }
    ok(res, rows);
  });

  router.get("/api/v2/mix/market/fills-history", (req, res) => {
    const inst = symbolOf(req, res);
    if (!inst) return;
    const limit = intParam(qp(req, "limit"), 500, 1, 1000);
    const startTime = msParam(qp(req, "startTime"));
    const endTime = msParam(qp(req, "endTime"));
    if (limit === null || startTime === null || endTime === null) return missing(res, "limit");
    const idLessThan = qp(req, "idLessThan");
    const below = idLessThan !== undefined && /^\d+$/.test(idLessThan) ? BigInt(idLessThan) : undefined;
    const now = clock.now();
    const before = Math.min(now, endTime ?? now) + 1;
    const from = Math.max(startTime ?? -Infinity, now - 90 * DAY);
    const trades = tape.tradesBefore(inst, before, limit, from, below === undefined ? undefined : (t) => BigInt(bitgetTradeId(t)) < below);
    ok(
      res,
      trades.map((t) => ({ tradeId: bitgetTradeId(t), price: t.px, size: t.sz, side: t.side === "buy" ? "Buy" : "Sell", ts: String(t.time), symbol: inst.symbol })),
    );
  });

  return router;
}

/** Bitget as the simulator mounts it (`urls.bitget` replaces `https://api.bitget.com`). */
export const bitgetVenue = {
  name: "bitget",
  mountPath: "/bitget",
  createRouter: createBitgetRouter,
  faultResponses: bitgetFaultResponses,
} as const satisfies SimVenue<"bitget">;
