/**
 * Simulated Kraken Futures public API (`https://futures.kraken.com`, mounted at `/kraken`), wire shapes of Kraken's
 * OpenAPI (`krakenfx/api-specs` `futures-rest/trading` and `futures-rest/charts`) and the bodies of
 * `src/venues/kraken/fixtures/`:
 *
 * - `GET /derivatives/api/v3/instruments`: the venue's perpetuals (`PF_<COIN>USD`, type `flexible_futures`, USD
 *   `marginLevels` from the model's tiers: `numNonContractUnits` floors, `initialMargin` = 1 ÷ max leverage).
 * - `GET /derivatives/api/v3/tickers` (all) and `/tickers/{symbol}` (one; an unknown symbol answers 404
 *   `{result:"error", error:"notFound"}`): mark, index, `openInterest` in contracts and the ABSOLUTE hourly funding
 *   `fundingRate` = the model's rate × mark × contract size (USD per contract; BTC per USD contract on an inverse one),
 *   `fundingRatePrediction` the same of the model's rate one hour on.
 * - `GET /derivatives/api/v4/historicalfundingrates?symbol=`: `{timestamp (the hour's start), fundingRate,
 *   relativeFundingRate}` ascending; the real venue sends every hour since the listing, the simulator the last 2000
 *   (a simplification). An unknown symbol answers 400 with code 11 "Argument invalid: symbol".
 * - `GET /derivatives/api/v3/history?symbol=&lastTime=`: the 100 trades before `lastTime`, newest first, over the last
 *   7 days: the tape's trades (`type: fill`) and its liquidations (`type: liquidation`, the liquidated side's order as
 *   the taker: a long sells).
 * - Charts `GET /api/charts/v1/{trade|mark|spot}/{symbol}/{resolution}?from=&to=` (seconds; at most 2000 candles, the
 *   newest kept; decimals as strings, `volume` in contracts) and `/api/charts/v1/analytics/{symbol}/{open-interest |
 *   long-short-info}?since=&to=&interval=` (bucket starts in seconds, at most 500 buckets with `more`; open interest
 *   as `[open, high, low, close]` contracts; accounts long and short from the model's ratio).
 * Refusals: `{result:"error", serverTime, error}` (`apiLimitExceeded` for injected 429s, `Server Error` for 5xx); the
 * charts' `{result:null, errors:[{severity:"E", …}]}`. All values are simulated (`perp-model.ts`, `tape.ts`).
 */
import { Router, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue } from "../perp-model.js";
import { tapeFor, type Tape, type TapeLiquidation, type TapeTrade } from "../tape.js";
import { krakenLiquidationUid, krakenTradeUid } from "./kraken-ids.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, qp, roundTo } from "./wire.js";

/** The venue key (cast until "kraken" joins the perp venue ids: src/venues/perp/types.ts). */
export const KRAKEN_SIM = "kraken" as string as PerpSimVenue;
const HISTORY_PAGE = 100;
const MAX_FUNDING_ROWS = 2000;
const MAX_CANDLES = 2000;
const MAX_BUCKETS = 500;
const RESOLUTIONS: Readonly<Record<string, number>> = {
  "1m": MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1h": HOUR,
  "4h": 4 * HOUR,
  "12h": 12 * HOUR,
  "1d": DAY,
  "1w": 7 * DAY,
};
const INTERVALS = new Set([60, 300, 900, 1800, 3600, 14400, 43200, 86400, 604800]);
/** Accounts holding a position in a listed perpetual, the scale of the `long-short-info` counts (illustrative). */
const ACCOUNTS = 5_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const errorBody = (error: string, now: number) => ({ result: "error", serverTime: iso(now), error });

/** Kraken-shaped bodies for injected 429s and 5xx (`apiLimitExceeded` and `Server Error` of the OpenAPI `Error` enum). */
export const krakenFaultResponses: FaultResponses = {
  rateLimitBody: () => errorBody("apiLimitExceeded", Date.now()),
  serverErrorBody: () => errorBody("Server Error", Date.now()),
};

/** Kraken's asset code of a base (bitcoin is `XBT`). */
export const krakenAsset = (inst: PerpInstrumentSpec): string => (inst.base === "BTC" ? "XBT" : inst.venueBase);
/** Venue price of `usdPerCoin` (per venue unit). */
const px = (inst: PerpInstrumentSpec, usdPerCoin: number): number => roundTo(usdPerCoin * inst.multiplier, inst.priceDecimals);
/** Contracts of `coins` at `usdPerCoin`: USD on an inverse perpetual, else coins ÷ (contract size × multiplier). */
const contracts = (inst: PerpInstrumentSpec, coins: number, usdPerCoin: number): number =>
  inst.inverse ? Math.round(coins * usdPerCoin) : roundTo(coins / (inst.ctVal * inst.multiplier), inst.qtyDecimals);
/** The ABSOLUTE rate of a relative one: currency per contract (USD per contract; coin per USD contract when inverse). */
const absolute = (inst: PerpInstrumentSpec, relative: number, markPerCoin: number): number =>
  Number((inst.inverse ? relative / markPerCoin : relative * markPerCoin * inst.ctVal * inst.multiplier).toPrecision(12));
const rate = (x: number): number => Number(x.toPrecision(12));

function instrumentRow(inst: PerpInstrumentSpec, perp: PerpModel): Record<string, unknown> {
  let floor = 0;
  const levels = perp.marginTiers(inst).map((t) => {
    const row = { numNonContractUnits: floor, initialMargin: roundTo(1 / t.maxLeverage, 6), maintenanceMargin: t.mmr };
    floor = t.maxNotionalUsd;
    return row;
  });
  const asset = krakenAsset(inst);
  return {
    symbol: inst.symbol,
    pair: `${asset}:USD`,
    base: asset,
    quote: "USD",
    type: inst.inverse ? "futures_inverse" : "flexible_futures",
    tickSize: inst.tickSize,
    contractSize: inst.ctVal,
    tradeable: true,
    impactMidSize: 1,
    maxPositionSize: 1_000_000,
    openingDate: iso(inst.listTime),
    marginLevels: levels,
    fundingRateCoefficient: 24,
    maxRelativeFundingRate: inst.fundingCap,
    contractValueTradePrecision: inst.qtyDecimals,
    postOnly: false,
    retailMarginLevels: levels.slice(0, 1),
    category: "Layer 1",
    tags: [],
    tradfi: false,
    mtf: true,
  };
}

function tickerRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const mark = perp.markPrice(inst, now);
  const last = perp.lastPrice(inst, now);
  const open = perp.lastPrice(inst, now - DAY);
  const day = perp.dayStats(inst, now, "mark");
  const turnover = perp.turnover24hUsd(inst, now);
  const size = contracts(inst, 20_000 / last, last);
  return {
    tag: "perpetual",
    pair: `${krakenAsset(inst)}:USD`,
    symbol: inst.symbol,
    markPrice: px(inst, mark),
    bid: px(inst, last - inst.tickSize / inst.multiplier),
    bidSize: size,
    ask: px(inst, last),
    askSize: size,
    vol24h: contracts(inst, turnover / last, last),
    volumeQuote: roundTo(turnover, 4),
    openInterest: contracts(inst, perp.openInterestCoins(inst, now), mark),
    open24h: px(inst, open),
    high24h: px(inst, Math.max(day.high, last)),
    low24h: px(inst, Math.min(day.low, last)),
    last: px(inst, last),
    lastTime: iso(now - 1_000),
    lastSize: size,
    fundingRate: absolute(inst, perp.currentFundingRate(inst, now), mark),
    fundingRatePrediction: absolute(inst, perp.currentFundingRate(inst, now + HOUR), mark),
    suspended: false,
    indexPrice: px(inst, perp.indexPrice(inst, now)),
    postOnly: false,
    change24h: roundTo((last / open - 1) * 100, 4),
  };
}

/** A tape trade as a Kraken history row and trade frame share it (`qty`/`size` in contracts). */
export function krakenTradeFields(t: TapeTrade): { uid: string; side: "buy" | "sell"; type: "fill"; time: number; qty: number; price: number; seq: number } {
  return { uid: krakenTradeUid(t.seq, t.h, t.inst.stream), side: t.side, type: "fill", time: t.time, qty: Number(t.sz), price: Number(t.px), seq: t.seq };
}

/** A tape liquidation as the fill carrying it: `type: liquidation`, the liquidation order taking liquidity (a long sells). */
export function krakenLiquidationFields(l: TapeLiquidation): { uid: string; side: "buy" | "sell"; type: "liquidation"; time: number; qty: number; price: number; seq: number } {
  return {
    uid: krakenLiquidationUid(l.seq, l.inst.stream),
    side: l.side === "long" ? "sell" : "buy",
    type: "liquidation",
    time: l.time,
    qty: Number(l.sz),
    price: Number(l.px),
    seq: l.seq,
  };
}

/** Trades and liquidation fills of `inst` in [fromMs, toMs), ascending (by time, then seq). */
export function krakenEvents(tape: Tape, inst: PerpInstrumentSpec, fromMs: number, toMs: number): ReturnType<typeof krakenTradeFields | typeof krakenLiquidationFields>[] {
  const rows = [...tape.tradesOf(inst, fromMs, toMs).map(krakenTradeFields), ...tape.liquidationsOf(inst, fromMs, toMs).map(krakenLiquidationFields)];
  return rows.sort((a, b) => a.time - b.time || a.seq - b.seq);
}

/** A whole-number query value in seconds, or undefined when absent, or null when malformed. */
function seconds(raw: string | undefined): number | undefined | null {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : null;
}

/** Builds the Kraken Futures router over a perp model and tape (the simulator's own by default; tests pass others). */
export function createKrakenRouterWith(ctx: VenueContext, perp: PerpModel, tape: Tape): Router {
  const { clock } = ctx;
  const router = Router();
  const perps = () => perp.instruments(KRAKEN_SIM, clock.now()).filter((i) => i.kind === "perpetual" && !i.delisted);
  const named = (symbol: string | undefined) => {
    const inst = symbol ? perp.instrument(KRAKEN_SIM, symbol.toUpperCase(), clock.now()) : undefined;
    return inst && inst.kind === "perpetual" && !inst.delisted ? inst : undefined;
  };
  const ok = (res: Response, body: Record<string, unknown>): void => void res.json({ result: "success", ...body, serverTime: iso(clock.now()) });
  const chartsError = (res: Response, field: string, value: string | null): void =>
    void res.status(400).json({ result: null, errors: [{ severity: "E", error_class: "General", type: "Invalid arguments", msg: null, value, field }] });

  router.get("/derivatives/api/v3/instruments", (_req, res) => ok(res, { instruments: perps().map((i) => instrumentRow(i, perp)) }));

  router.get("/derivatives/api/v3/tickers", (_req, res) => {
    const now = clock.now();
    ok(res, { tickers: perps().map((i) => tickerRow(i, perp, now)) });
  });

  router.get("/derivatives/api/v3/tickers/:symbol", (req, res) => {
    const inst = named(req.params.symbol);
    if (!inst) return void res.status(404).json(errorBody("notFound", clock.now()));
    ok(res, { ticker: tickerRow(inst, perp, clock.now()) });
  });

  router.get("/derivatives/api/v4/historicalfundingrates", (req, res) => {
    const inst = named(qp(req, "symbol"));
    const now = clock.now();
    if (!inst) return void res.status(400).json({ status: "BAD_REQUEST", result: "error", errors: [{ code: 11, message: "Argument invalid: symbol" }], serverTime: iso(now) });
    // Each row is the hour settling at `t`; the running hour's row (settling next) is already published.
    const settles = perp.settlementTimes(inst, Math.max(inst.listTime, now - MAX_FUNDING_ROWS * HOUR), perp.nextFundingTime(inst, now));
    const rates = settles.slice(-MAX_FUNDING_ROWS).map((t) => {
      const start = t - inst.fundingIntervalHours * HOUR;
      const relative = rate(t > now ? perp.currentFundingRate(inst, now) : perp.settledFundingRate(inst, t));
      return { timestamp: iso(start), fundingRate: absolute(inst, relative, perp.markPrice(inst, start)), relativeFundingRate: relative };
    });
    ok(res, { rates });
  });

  router.get("/derivatives/api/v3/history", (req, res) => {
    const inst = named(qp(req, "symbol"));
    const now = clock.now();
    if (!inst) return void res.json(errorBody("invalidArgument", now));
    const lastTime = qp(req, "lastTime");
    const before = lastTime === undefined ? now + 1 : Date.parse(lastTime);
    if (!Number.isFinite(before)) return void res.json(errorBody("invalidArgument", now));
    const from = now - 7 * DAY;
    const to = Math.min(before, now + 1);
    // Enough of the tape to hold a page: the newest trades before `to`, and the liquidations among them.
    const trades = tape.tradesBefore(inst, to, HISTORY_PAGE + 1, from);
    const lo = trades.length > HISTORY_PAGE ? trades[trades.length - 1]!.time : from;
    const rows = [...trades.map(krakenTradeFields), ...tape.liquidationsOf(inst, lo, to).map(krakenLiquidationFields)]
      .sort((a, b) => b.time - a.time || b.seq - a.seq)
      .slice(0, HISTORY_PAGE);
    ok(res, {
      history: rows.map((r) => ({ time: iso(r.time), trade_id: r.seq, price: r.price, size: String(r.qty), side: r.side, type: r.type, uid: r.uid })),
    });
  });

  // Before the candles' route, whose first segment would take `analytics`.
  router.get("/api/charts/v1/analytics/:symbol/:kind", (req, res) => {
    const inst = named(req.params.symbol);
    if (!inst)
      return void res
        .status(404)
        .json({ result: null, errors: [{ severity: "E", error_class: "General", type: "Not found", msg: null, value: req.params.symbol, field: "symbol" }] });
    const since = seconds(qp(req, "since"));
    const to = seconds(qp(req, "to"));
    const interval = Number(qp(req, "interval"));
    if (since === undefined || since === null) return chartsError(res, "since", qp(req, "since") ?? null);
    if (to === null) return chartsError(res, "to", qp(req, "to") ?? null);
    if (!INTERVALS.has(interval)) return chartsError(res, "interval", qp(req, "interval") ?? null);
    const now = clock.now();
    const step = interval * 1000;
    const end = Math.min(now, (to ?? now / 1000) * 1000);
    const all: number[] = [];
    for (let t = Math.ceil((since * 1000) / step) * step; t <= end; t += step) if (t >= inst.listTime) all.push(t);
    const buckets = all.slice(0, MAX_BUCKETS);
    const timestamp = buckets.map((t) => t / 1000);
    const result = (data: unknown) => res.json({ result: { timestamp, data, more: all.length > buckets.length }, errors: [] });
    if (req.params.kind === "open-interest") {
      const oi = (t: number) => contracts(inst, perp.openInterestCoins(inst, t), perp.markPrice(inst, t));
      return void result(
        buckets.map((t) => {
          const close = Math.min(t + step, now);
          const [o, m, c] = [oi(t), oi((t + close) / 2), oi(close)];
          return [o, Math.max(o, m, c), Math.min(o, m, c), c];
        }),
      );
    }
    if (req.params.kind === "long-short-info") {
      const shares = buckets.map((t) => perp.longShortRatio(inst, "account", t));
      const longCount = shares.map((r) => Math.round((ACCOUNTS * r) / (1 + r)));
      const shortCount = longCount.map((l) => ACCOUNTS - l);
      return void result({
        longCount,
        shortCount,
        longPercent: longCount.map((l) => (l / 50).toFixed(2)),
        shortPercent: shortCount.map((s) => (s / 50).toFixed(2)),
        ratio: longCount.map((l) => (l / ACCOUNTS).toFixed(2)),
      });
    }
    res.status(404).json({ result: null, errors: [{ severity: "E", error_class: "General", type: "Unknown method", msg: null, value: req.params.kind, field: "analytics_type" }] });
  });

  router.get("/api/charts/v1/:tickType/:symbol/:resolution", (req, res) => {
    const { tickType, symbol, resolution } = req.params;
    if (!["trade", "mark", "spot"].includes(tickType)) return void res.status(404).json({ error: "not found" });
    const inst = named(symbol);
    const dur = RESOLUTIONS[resolution];
    if (!inst || dur === undefined) return void res.json({ candles: [], more_candles: false });
    const from = seconds(qp(req, "from"));
    const to = seconds(qp(req, "to"));
    if (from === null || to === null) return void res.status(400).json({ error: "invalid from/to" });
    const now = clock.now();
    const last = Math.floor(Math.min(now, (to ?? now / 1000) * 1000) / dur) * dur;
    const first = Math.max(Math.ceil(((from ?? 0) * 1000) / dur) * dur, Math.floor(inst.listTime / dur) * dur);
    const start = Math.max(first, last - (MAX_CANDLES - 1) * dur);
    const candles = [];
    for (let t = start; t <= last; t += dur) {
      const c = perp.candle(inst, t, dur, now);
      const ref = tickType === "trade" ? c : { ...c, volumeUsd: 0 };
      const shift = tickType === "mark" ? perp.markPrice(inst, t) / perp.lastPrice(inst, t) : tickType === "spot" ? perp.indexPrice(inst, t) / perp.lastPrice(inst, t) : 1;
      candles.push({
        time: t,
        open: String(px(inst, ref.open * shift)),
        high: String(px(inst, ref.high * shift)),
        low: String(px(inst, ref.low * shift)),
        close: String(px(inst, ref.close * shift)),
        volume: contracts(inst, ref.volumeUsd / c.close, c.close),
      });
    }
    res.json({ candles, more_candles: start > first });
  });

  return router;
}

/** The Kraken Futures router over the simulator's perp model and tape. */
export function createKrakenRouter(ctx: VenueContext): Router {
  return createKrakenRouterWith(ctx, perpModelFor(ctx.market), tapeFor(ctx.market));
}

/** Kraken Futures as the simulator mounts it (`urls.kraken` replaces `https://futures.kraken.com`). */
export const krakenVenue = {
  name: "kraken",
  mountPath: "/kraken",
  createRouter: createKrakenRouter,
  faultResponses: krakenFaultResponses,
} as const satisfies SimVenue<"kraken">;
