/**
 * Simulated Bybit v5 public market API (`api.bybit.com`, mounted at `/bybit`), wire shapes of the Bybit v5 docs
 * (https://bybit-exchange.github.io/docs/v5/intro).
 *
 * `GET /v5/market/time`, `/v5/market/instruments-info`, `/v5/market/tickers`, `/v5/market/funding/history`,
 * `/v5/market/account-ratio`, `/v5/market/recent-trade` (the websocket's `publicTrade` tape, newest first, the most
 * recent `limit` ≤ 1000 only, no time filter, like the real API), `/v5/market/risk-limit` (the model's margin tiers:
 * `riskLimitValue` USDT caps, margins as FRACTIONS like the venue's linear rows, `mmDeduction` "" on the first tier;
 * one symbol, or every linear symbol paged by `cursor`); only `category=linear` has instruments (USDT perps plus the USDC perps `BTCPERP`,
 * `ETHPERP`, as on the real venue). Envelope `{retCode, retMsg, result, retExtInfo:{}, time}`; every value inside
 * `result.list` is a string except `fundingInterval` (number, minutes). Errors are HTTP 200 with a non-zero
 * `retCode` (10001 for invalid parameters / symbols), as Bybit does. `1000PEPEUSDT` / `1000SHIBUSDT` quote per
 * 1000 coins. All values are simulated (`perp-model.ts`), except replayed instruments-info (`replay.ts`).
 */
import { Router, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { venueRecordings } from "../replay.js";
import { bybitExecId, tapeFor } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo, tickOf, trimmed } from "./wire.js";

const CATEGORIES = new Set(["spot", "linear", "inverse", "option"]);
const RATIO_PERIODS: Readonly<Record<string, number>> = {
  "5min": 5 * MINUTE,
  "15min": 15 * MINUTE,
  "30min": 30 * MINUTE,
  "1h": HOUR,
  "4h": 4 * HOUR,
  "1d": DAY,
};

/** Bybit-shaped bodies for injected 429s and 5xx. */
export const bybitFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ retCode: 10006, retMsg: "Too many visits!", result: {}, retExtInfo: {}, time: Date.now() }),
  serverErrorBody: () => ({ retCode: 10016, retMsg: "Internal server error.", result: {}, retExtInfo: {}, time: Date.now() }),
};

/** Bybit sends funding with up to 8 decimals (`"0.00004709"`, `"0.0001"` in the 2026-08-09 recording). */
const fundingRateStr = (x: number): string => trimmed(x, 8);

function encodeCursor(offset: number): string {
  return Buffer.from(`offset=${offset}`).toString("base64url");
}

function decodeCursor(cursor: string): number | null {
  const m = /^offset=(\d+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  return m ? Number(m[1]) : null;
}

function instrumentInfo(inst: PerpInstrumentSpec, perp: PerpModel, symbolId: number): Record<string, unknown> {
  const anchor = perp.market.params(inst.base).anchorUsd * inst.multiplier;
  const major = inst.base === "BTC" || inst.base === "ETH";
  const step = tickOf(inst.qtyDecimals);
  const maxQty = Math.max(1, Math.round(1e7 / anchor));
  return {
    symbol: inst.symbol,
    contractType: "LinearPerpetual",
    status: "Trading",
    baseCoin: inst.venueBase,
    quoteCoin: inst.quote,
    launchTime: String(inst.listTime),
    deliveryTime: "0",
    deliveryFeeRate: "",
    priceScale: String(inst.priceDecimals),
    leverageFilter: { minLeverage: "1", maxLeverage: fixed(inst.maxLeverage, 2), leverageStep: "0.01" },
    priceFilter: {
      minPrice: tickOf(inst.priceDecimals),
      maxPrice: fixed(anchor * 20, inst.priceDecimals),
      tickSize: tickOf(inst.priceDecimals),
    },
    lotSizeFilter: {
      maxOrderQty: fixed(maxQty, inst.qtyDecimals),
      minOrderQty: step,
      qtyStep: step,
      postOnlyMaxOrderQty: fixed(maxQty, inst.qtyDecimals),
      maxMktOrderQty: fixed(Math.max(1, Math.round(maxQty / 10)), inst.qtyDecimals),
      minNotionalValue: "5",
    },
    unifiedMarginTrade: true,
    fundingInterval: inst.fundingIntervalHours * 60,
    settleCoin: inst.quote,
    copyTrading: inst.quote === "USDT" ? "both" : "none",
    upperFundingRate: trimmed(inst.fundingCap, 6),
    lowerFundingRate: trimmed(-inst.fundingCap, 6),
    isPreListing: false,
    preListingInfo: null,
    riskParameters: { priceLimitRatioX: major ? "0.01" : "0.05", priceLimitRatioY: major ? "0.02" : "0.1" },
    displayName: inst.quote === "USDC" ? `${inst.venueBase}USDC` : "",
    symbolType: "",
    forbidUplWithdrawal: false,
    symbolId,
  };
}

/**
 * Risk-limit rows of a symbol (`listIndex` = its position in the instrument list, for stable ids): the model's tiers,
 * margins as fractions (`maintenanceMargin` "0.005", `initialMargin` "0.01" at 100x), as the venue sends for linear
 * contracts (recorded BTCUSDT rows; the docs' percent example is an inverse contract); deduction = Σ cap × Δmmr of the
 * tiers below.
 */
function riskLimitRows(inst: PerpInstrumentSpec, perp: PerpModel, listIndex: number): Array<Record<string, unknown>> {
  let deduction = 0;
  let prev: { cap: number; mmr: number } | undefined;
  return perp.marginTiers(inst).map((t, k) => {
    if (prev) deduction += prev.cap * (t.mmr - prev.mmr);
    prev = { cap: t.maxNotionalUsd, mmr: t.mmr };
    return {
      id: listIndex * 100 + k + 1,
      symbol: inst.symbol,
      riskLimitValue: String(t.maxNotionalUsd),
      maintenanceMargin: trimmed(t.mmr, 4),
      initialMargin: trimmed(1 / t.maxLeverage, 4),
      isLowestRisk: k === 0 ? 1 : 0,
      maxLeverage: fixed(t.maxLeverage, 2),
      mmDeduction: k === 0 ? "" : trimmed(deduction, 4),
    };
  });
}

function tickerRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const m = inst.multiplier;
  const d = inst.priceDecimals;
  const px = (perCoin: number) => roundTo(perCoin * m, d);
  const last = px(perp.lastPrice(inst, now));
  const mark = px(perp.markPrice(inst, now));
  const prev24 = px(perp.lastPrice(inst, now - DAY));
  const day = perp.dayStats(inst, now, "mark");
  const oi = roundTo(perp.openInterestCoins(inst, now) / m, inst.qtyDecimals);
  const turnover = perp.turnover24hUsd(inst, now);
  const tick = 10 ** -d;
  const bid = roundTo(last - tick, d);
  const sizeUnit = Math.max(10 ** -inst.qtyDecimals, roundTo(20_000 / (last || 1), inst.qtyDecimals));
  return {
    symbol: inst.symbol,
    lastPrice: fixed(last, d),
    indexPrice: fixed(px(perp.indexPrice(inst, now)), d),
    markPrice: fixed(mark, d),
    prevPrice24h: fixed(prev24, d),
    price24hPcnt: fixed(prev24 > 0 ? last / prev24 - 1 : 0, 6),
    highPrice24h: fixed(Math.max(px(day.high), last), d),
    lowPrice24h: fixed(Math.min(px(day.low), last), d),
    prevPrice1h: fixed(px(perp.lastPrice(inst, now - HOUR)), d),
    openInterest: fixed(oi, inst.qtyDecimals),
    openInterestValue: fixed(oi * mark, 2),
    turnover24h: fixed(turnover, 4),
    volume24h: fixed(turnover / (last || 1), inst.qtyDecimals),
    fundingRate: fundingRateStr(perp.currentFundingRate(inst, now)),
    nextFundingTime: String(perp.nextFundingTime(inst, now)),
    predictedDeliveryPrice: "",
    basisRate: "",
    deliveryFeeRate: "",
    deliveryTime: "0",
    ask1Size: fixed(sizeUnit * 1.7, inst.qtyDecimals),
    bid1Price: fixed(bid, d),
    ask1Price: fixed(last, d),
    bid1Size: fixed(sizeUnit, inst.qtyDecimals),
    basis: "",
    preOpenPrice: "",
    preQty: "",
    curPreListingPhase: "",
    fundingIntervalHour: String(inst.fundingIntervalHours),
    fundingCap: trimmed(inst.fundingCap, 6),
  };
}

/** Builds the Bybit v5 router (paths `/v5/market/...`). */
export function createBybitRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const replay = venueRecordings(ctx.replay, "bybit");
  const tape = tapeFor(market);
  const router = Router();

  const ok = (res: Response, result: unknown): void => {
    res.json({ retCode: 0, retMsg: "OK", result, retExtInfo: {}, time: clock.now() });
  };
  const fail = (res: Response, retCode: number, retMsg: string): void => {
    res.json({ retCode, retMsg, result: {}, retExtInfo: {}, time: clock.now() });
  };

  /** Validates `category`; returns "linear", "other" (valid, nothing simulated) or null after answering an error. */
  const category = (res: Response, raw: string | undefined): "linear" | "other" | null => {
    if (raw === undefined || raw === "") {
      fail(res, 10001, "params error: category is required");
      return null;
    }
    if (!CATEGORIES.has(raw)) {
      fail(res, 10001, "Illegal category");
      return null;
    }
    return raw === "linear" ? "linear" : "other";
  };

  const all = () => perp.instruments("bybit", clock.now());
  const lookup = (symbol: string) => perp.instrument("bybit", symbol, clock.now());

  router.get("/v5/market/time", (_req, res) => {
    const now = clock.now();
    ok(res, { timeSecond: String(Math.floor(now / 1000)), timeNano: `${now}000000` });
  });

  router.get("/v5/market/instruments-info", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    const limit = intParam(qp(req, "limit"), 500, 1, 1000);
    if (limit === null) return fail(res, 10001, "params error: limit invalid");
    const cursor = qp(req, "cursor");
    const offset = cursor === undefined || cursor === "" ? 0 : decodeCursor(cursor);
    if (offset === null) return fail(res, 10001, "params error: cursor invalid");
    const symbol = qp(req, "symbol");
    const baseCoin = qp(req, "baseCoin");
    const status = qp(req, "status");
    let rows: Array<Record<string, unknown>>;
    if (cat !== "linear") rows = [];
    else if (replay) {
      const rec = replay.instrumentsInfo as { result: { list: Array<Record<string, unknown>> } };
      rows = rec.result.list;
    } else rows = all().map((i, k) => instrumentInfo(i, perp, k + 1));
    rows = rows.filter(
      (r) =>
        (symbol === undefined || symbol === "" || r.symbol === symbol) &&
        (baseCoin === undefined || baseCoin === "" || r.baseCoin === baseCoin) &&
        (status === undefined || status === "" || r.status === status),
    );
    const page = rows.slice(offset, offset + limit);
    const next = offset + limit < rows.length ? encodeCursor(offset + limit) : "";
    ok(res, { category: cat === "linear" ? "linear" : qp(req, "category"), list: page, nextPageCursor: next });
  });

  router.get("/v5/market/tickers", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    const now = clock.now();
    const symbol = qp(req, "symbol");
    if (cat !== "linear") return ok(res, { category: qp(req, "category"), list: [] });
    if (symbol !== undefined && symbol !== "") {
      const inst = lookup(symbol);
      if (!inst) return fail(res, 10001, "params error: symbol invalid");
      return ok(res, { category: "linear", list: [tickerRow(inst, perp, now)] });
    }
    ok(res, { category: "linear", list: all().map((i) => tickerRow(i, perp, now)) });
  });

  router.get("/v5/market/funding/history", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return fail(res, 10001, "params error: symbol is required");
    const limit = intParam(qp(req, "limit"), 200, 1, 200);
    if (limit === null) return fail(res, 10001, "params error: limit invalid");
    const startTime = msParam(qp(req, "startTime"));
    const endTime = msParam(qp(req, "endTime"));
    if (startTime === null || endTime === null) return fail(res, 10001, "params error: invalid time");
    if (startTime !== undefined && endTime === undefined) {
      return fail(res, 10001, "params error: endTime is required when startTime is set");
    }
    const inst = cat === "linear" ? lookup(symbol) : undefined;
    if (!inst) return fail(res, 10001, "params error: symbol invalid");
    const now = clock.now();
    const to = Math.min(now, endTime ?? now);
    const iv = inst.fundingIntervalHours * HOUR;
    const times = perp
      .settlementTimes(inst, startTime ?? to - limit * iv, to)
      .reverse()
      .slice(0, limit);
    ok(res, {
      category: "linear",
      list: times.map((s) => ({
        symbol: inst.symbol,
        fundingRate: fundingRateStr(perp.settledFundingRate(inst, s)),
        fundingRateTimestamp: String(s),
      })),
    });
  });

  router.get("/v5/market/recent-trade", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    const symbol = qp(req, "symbol");
    if ((symbol === undefined || symbol === "") && cat === "linear") return fail(res, 10001, "params error: symbol is required");
    const limit = intParam(qp(req, "limit"), 500, 1, 1000);
    if (limit === null) return fail(res, 10001, "params error: limit invalid");
    if (cat !== "linear") return ok(res, { category: qp(req, "category"), list: [] });
    const inst = lookup(symbol as string);
    if (!inst) return fail(res, 10001, "params error: symbol invalid");
    const now = clock.now();
    ok(res, {
      category: "linear",
      list: tape.tradesBefore(inst, now + 1, limit).map((t) => ({
        execId: bybitExecId(t),
        symbol: inst.symbol,
        price: t.px,
        size: t.sz,
        side: t.side === "buy" ? "Buy" : "Sell",
        time: String(t.time),
        isBlockTrade: false,
        isRPITrade: false,
      })),
    });
  });

  router.get("/v5/market/risk-limit", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    if (cat !== "linear") return ok(res, { category: qp(req, "category"), list: [], nextPageCursor: "" });
    const symbol = qp(req, "symbol");
    if (symbol !== undefined && symbol !== "") {
      const inst = lookup(symbol);
      if (!inst) return fail(res, 10001, "params error: symbol invalid");
      return ok(res, { category: "linear", list: riskLimitRows(inst, perp, all().indexOf(inst)), nextPageCursor: "" });
    }
    // Every symbol: pages of whole symbols, at least 200 rows each, like the real cursor pages.
    const cursor = qp(req, "cursor");
    const offset = cursor === undefined || cursor === "" ? 0 : decodeCursor(cursor);
    if (offset === null) return fail(res, 10001, "params error: cursor invalid");
    const insts = all();
    const list: Array<Record<string, unknown>> = [];
    let i = offset;
    for (; i < insts.length && list.length < 200; i++) list.push(...riskLimitRows(insts[i] as PerpInstrumentSpec, perp, i));
    ok(res, { category: "linear", list, nextPageCursor: i < insts.length ? encodeCursor(i) : "" });
  });

  router.get("/v5/market/account-ratio", (req, res) => {
    const cat = category(res, qp(req, "category"));
    if (cat === null) return;
    const symbol = qp(req, "symbol");
    if (symbol === undefined || symbol === "") return fail(res, 10001, "params error: symbol is required");
    const periodRaw = qp(req, "period");
    const period = periodRaw === undefined ? undefined : RATIO_PERIODS[periodRaw];
    if (period === undefined) return fail(res, 10001, "params error: period invalid");
    const limit = intParam(qp(req, "limit"), 50, 1, 500);
    if (limit === null) return fail(res, 10001, "params error: limit invalid");
    const startTime = msParam(qp(req, "startTime"));
    const endTime = msParam(qp(req, "endTime"));
    if (startTime === null || endTime === null) return fail(res, 10001, "params error: invalid time");
    const inst = cat === "linear" ? lookup(symbol) : undefined;
    if (!inst) return fail(res, 10001, "params error: symbol invalid");
    const now = clock.now();
    const latest = Math.floor(Math.min(now, endTime ?? now) / period) * period;
    const oldest = Math.max(inst.listTime, startTime ?? -Infinity);
    const list: Array<Record<string, string>> = [];
    for (let t = latest; t >= oldest && list.length < limit; t -= period) {
      const r = perp.longShortRatio(inst, "account", t);
      const buy = roundTo(r / (1 + r), 4);
      list.push({ symbol: inst.symbol, buyRatio: fixed(buy, 4), sellRatio: fixed(1 - buy, 4), timestamp: String(t) });
    }
    ok(res, { list, nextPageCursor: "" });
  });

  return router;
}

/** Bybit as the simulator mounts it (`urls.bybit` replaces `https://api.bybit.com`). */
export const bybitVenue = {
  name: "bybit",
  mountPath: "/bybit",
  createRouter: createBybitRouter,
  faultResponses: bybitFaultResponses,
} as const satisfies SimVenue<"bybit">;
