/**
 * Simulated dYdX v4 indexer REST API (`https://indexer.dydx.trade/v4`, mounted at `/dydx/v4`), wire shapes of the
 * indexer's own response objects (dydxprotocol/v4-chain `indexer/services/comlink`, https://docs.dydx.xyz/indexer-client/http).
 *
 * - `GET /perpetualMarkets` (`ticker` or `market` for one, `limit`): `{"markets":{"BTC-USD":{…}}}`, oracle price =
 *   the model's index, `nextFundingRate` the accruing HOURLY rate, `openInterest` coins, margin fractions by class
 *   (BTC/ETH 5 % / 3 % with no open-interest caps; {@link MID_CAP} 10 % / 5 %, caps $20M-$50M; others 20 % / 10 %,
 *   caps $5M-$10M, as the recorded markets); `trades24H` is illustrative (24h turnover ÷ $2,000).
 * - `GET /historicalFunding/{ticker}` (`limit` ≤ 1000, `effectiveBeforeOrAt`, `effectiveBeforeOrAtHeight`): settled
 *   hourly rates, newest first, `effectiveAt` a second after the hour, `price` the oracle at settlement.
 * - `GET /candles/perpetualMarkets/{ticker}` (`resolution` required, `limit` ≤ 1000, `fromISO`, `toISO`): last-trade
 *   candles, newest first, with `startingOpenInterest` (coins) and order-book mid prices.
 * - `GET /sparklines?timePeriod=ONE_DAY|SEVEN_DAYS`: per ticker the closes of its 1HOUR (4HOURS) candles of the last
 *   day (7 days), newest first.
 * - `GET /trades/perpetualMarket/{ticker}` (`limit` ≤ 1000, `createdBeforeOrAt`, `createdBeforeOrAtHeight`): the
 *   websocket's tape, newest first, tape liquidations as `LIQUIDATED` rows (ids and heights: `dydx-wire.ts`); `page` is
 *   not simulated (ignored).
 * - `GET /height`: `{"height","time"}` of the current block (one block per second).
 * Errors are the indexer's: `{"errors":[{"msg"}]}` with 404 for an unknown market, express-validator rows
 * `{"type":"field","value","msg","path","location"}` with 400 for a bad parameter. Decimals are strings, times ISO.
 * All values are simulated (`perp-model.ts`, `tape.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { Clock } from "../clock.js";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { tapeFor, type Tape } from "../tape.js";
import { dydxRowsBefore } from "./dydx-rows.js";
import { DYDX_SIM, dydxBlockStart, dydxHeight } from "./dydx-wire.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, intParam, qp, roundTo, tickOf, trimmed } from "./wire.js";

/** The indexer's largest `limit` (comlink `API_LIMIT_V4`), also its default. */
const MAX_LIMIT = 1000;
/** Oldest trade the simulated trades endpoint serves (the tape answers at most 7 days). */
const TRADES_LOOKBACK_MS = 6 * DAY;

/** Bases margined like the recorded mid-cap markets (ADA, ATOM, AVAX: IMF 10 %, MMF 5 %). */
export const MID_CAP: ReadonlySet<string> = new Set([
  "SOL",
  "DOGE",
  "XRP",
  "LINK",
  "AVAX",
  "LTC",
  "BNB",
  "ADA",
  "DOT",
  "ATOM",
  "ARB",
  "OP",
  "FIL",
  "APT",
  "NEAR",
  "SUI",
  "BCH",
  "UNI",
  "TRX",
]);

/** Margin fractions and open-notional caps (USDC) of a market, by class (the recorded 2024 liquidity tiers). */
export function dydxMarginClass(base: string): { imf: number; mmf: number; lowerCap: number; upperCap: number } {
  if (base === "BTC" || base === "ETH") return { imf: 0.05, mmf: 0.03, lowerCap: 0, upperCap: 0 };
  if (MID_CAP.has(base)) return { imf: 0.1, mmf: 0.05, lowerCap: 20_000_000, upperCap: 50_000_000 };
  return { imf: 0.2, mmf: 0.1, lowerCap: 5_000_000, upperCap: 10_000_000 };
}

/** Candle resolutions of the indexer. */
const RESOLUTIONS: Readonly<Record<string, number>> = {
  "1MIN": MINUTE,
  "5MINS": 5 * MINUTE,
  "15MINS": 15 * MINUTE,
  "30MINS": 30 * MINUTE,
  "1HOUR": HOUR,
  "4HOURS": 4 * HOUR,
  "1DAY": DAY,
};
/** Sparkline periods: candle resolution and lookback. */
const SPARKLINES: Readonly<Record<string, { dur: number; lookback: number }>> = { ONE_DAY: { dur: HOUR, lookback: DAY }, SEVEN_DAYS: { dur: 4 * HOUR, lookback: 7 * DAY } };

/** dYdX-shaped bodies for injected 429s and 5xx. */
export const dydxFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ errors: [{ msg: "Too many requests" }] }),
  serverErrorBody: () => ({ errors: [{ msg: "Internal Server Error" }] }),
};

const iso = (ms: number): string => new Date(ms).toISOString();
const rate = (x: number): string => trimmed(x, 14);
/** Settlement `s` is recorded a little over a second later (the block that applies it). */
const settleJitterMs = (s: number): number => 1000 + ((Math.floor(s / HOUR) * 7919) % 100);

function marketRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number, index: number): Record<string, unknown> {
  const d = inst.priceDecimals;
  const q = inst.qtyDecimals;
  const px = (x: number) => trimmed(roundTo(x, d), d);
  const oracle = perp.indexPrice(inst, now);
  const m = dydxMarginClass(inst.base);
  const oi = trimmed(perp.openInterestCoins(inst, now), q);
  const turnover = perp.turnover24hUsd(inst, now);
  return {
    clobPairId: String(index),
    ticker: inst.symbol,
    status: "ACTIVE",
    oraclePrice: px(oracle),
    priceChange24H: trimmed(roundTo(perp.lastPrice(inst, now) - perp.lastPrice(inst, now - DAY), d), d),
    volume24H: trimmed(turnover, 4),
    trades24H: Math.round(turnover / 2000),
    nextFundingRate: rate(perp.currentFundingRate(inst, now)),
    initialMarginFraction: String(m.imf),
    maintenanceMarginFraction: String(m.mmf),
    openInterest: oi,
    atomicResolution: -q - 6,
    quantumConversionExponent: -9,
    tickSize: tickOf(d),
    stepSize: tickOf(q),
    stepBaseQuantums: 1_000_000,
    subticksPerTick: 1_000_000,
    marketType: "CROSS",
    openInterestLowerCap: String(m.lowerCap),
    openInterestUpperCap: String(m.upperCap),
    baseOpenInterest: oi,
    defaultFundingRate1H: "0",
  };
}

/** Builds the dYdX indexer router (paths relative to the `/v4` mount) over the market's perp model and tape. */
export function createDydxRouter(ctx: VenueContext): Router {
  return dydxRouterOver(perpModelFor(ctx.market), tapeFor(ctx.market), ctx.clock);
}

/** The dYdX router over a given perp model, tape and clock (tests give it a model that lists dYdX markets). */
export function dydxRouterOver(perp: PerpModel, tape: Tape, clock: Clock): Router {
  const router = Router();
  const markets = () => perp.instruments(DYDX_SIM, clock.now()).filter((i) => i.kind === "perpetual" && i.target);

  const notFound = (res: Response, ticker: string): void => void res.status(404).json({ errors: [{ msg: `${ticker} not found in markets of type PERPETUAL` }] });
  const invalid = (res: Response, path: string, value: unknown, msg: string, location = "query"): void =>
    void res.status(400).json({ errors: [{ type: "field", value, msg, path, location }] });
  /** `limit` in [1, 1000] (default 1000); null after answering 400. */
  const limitOf = (req: Request, res: Response): number | null => {
    const v = intParam(qp(req, "limit"), MAX_LIMIT, 1, MAX_LIMIT);
    if (v === null) invalid(res, "limit", qp(req, "limit"), `limit must be a positive integer that is not greater than max: ${MAX_LIMIT}`);
    return v;
  };
  /** An optional ISO time parameter: undefined when absent, null after answering 400. */
  const isoOf = (req: Request, res: Response, name: string): number | undefined | null => {
    const raw = qp(req, name);
    if (raw === undefined || raw === "") return undefined;
    const t = Date.parse(raw);
    if (!Number.isFinite(t)) {
      invalid(res, name, raw, `${name} must be a valid ISO string`);
      return null;
    }
    return t;
  };
  /** An optional block height parameter: undefined when absent, null after answering 400. */
  const heightOf = (req: Request, res: Response, name: string): number | undefined | null => {
    const raw = qp(req, name);
    if (raw === undefined || raw === "") return undefined;
    const h = intParam(raw, 0, 0, Number.MAX_SAFE_INTEGER);
    if (h === null) invalid(res, name, raw, `${name} must be a non-negative integer`);
    return h;
  };

  router.get("/perpetualMarkets", (req, res) => {
    const ticker = qp(req, "ticker");
    const name = qp(req, "market");
    if (ticker && name) return void res.status(400).json({ errors: [{ msg: "Only one of ticker or market may be provided" }] });
    const limit = limitOf(req, res);
    if (limit === null) return;
    const now = clock.now();
    const list = markets();
    const id = ticker || name;
    if (id) {
      const i = list.findIndex((m) => m.symbol === id);
      if (i < 0) return notFound(res, id);
      return void res.json({ markets: { [id]: marketRow(list[i]!, perp, now, i) } });
    }
    res.json({ markets: Object.fromEntries(list.slice(0, limit).map((m, i) => [m.symbol, marketRow(m, perp, now, i)])) });
  });

  router.get("/historicalFunding/:ticker", (req, res) => {
    const inst = markets().find((m) => m.symbol === req.params.ticker);
    if (!inst) return notFound(res, req.params.ticker);
    const limit = limitOf(req, res);
    const before = limit === null ? null : isoOf(req, res, "effectiveBeforeOrAt");
    const beforeHeight = before === null ? null : heightOf(req, res, "effectiveBeforeOrAtHeight");
    if (limit === null || before === null || beforeHeight === null) return;
    const now = clock.now();
    const end = Math.min(now, before ?? Infinity, beforeHeight === undefined ? Infinity : dydxBlockStart(beforeHeight + 1) - 1);
    const rows = perp
      .settlementTimes(inst, end - (limit + 1) * HOUR, end)
      .map((s) => ({ s, at: s + settleJitterMs(s) }))
      .filter((r) => r.at <= end)
      .reverse()
      .slice(0, limit)
      .map(({ s, at }) => ({
        ticker: inst.symbol,
        rate: rate(perp.settledFundingRate(inst, s)),
        price: trimmed(roundTo(perp.indexPrice(inst, s), inst.priceDecimals), inst.priceDecimals),
        effectiveAtHeight: String(dydxHeight(at)),
        effectiveAt: iso(at),
      }));
    res.json({ historicalFunding: rows });
  });

  router.get("/candles/perpetualMarkets/:ticker", (req, res) => {
    const inst = markets().find((m) => m.symbol === req.params.ticker);
    if (!inst) return notFound(res, req.params.ticker);
    const resolution = qp(req, "resolution") ?? "";
    const dur = RESOLUTIONS[resolution];
    if (dur === undefined) return invalid(res, "resolution", resolution, `resolution must be a valid Candle Resolution, one of ${Object.keys(RESOLUTIONS).join(",")}`);
    const limit = limitOf(req, res);
    const from = limit === null ? null : isoOf(req, res, "fromISO");
    const to = from === null ? null : isoOf(req, res, "toISO");
    if (limit === null || from === null || to === null) return;
    const now = clock.now();
    const d = inst.priceDecimals;
    const px = (x: number) => trimmed(roundTo(x, d), d);
    const rows: Record<string, unknown>[] = [];
    const oldest = Math.max(inst.listTime, from ?? -Infinity);
    for (let t = Math.floor(Math.min(now, to ?? Infinity) / dur) * dur; t >= oldest && rows.length < limit; t -= dur) {
      const k = perp.candle(inst, t, dur, now);
      const vwap = (k.open + k.high + k.low + k.close) / 4;
      rows.push({
        startedAt: iso(t),
        ticker: inst.symbol,
        resolution,
        low: px(k.low),
        high: px(k.high),
        open: px(k.open),
        close: px(k.close),
        baseTokenVolume: trimmed(k.volumeUsd / vwap, inst.qtyDecimals),
        usdVolume: trimmed(k.volumeUsd, 4),
        trades: Math.round(k.volumeUsd / 2000),
        startingOpenInterest: trimmed(perp.openInterestCoins(inst, t), inst.qtyDecimals),
        orderbookMidPriceOpen: px(perp.lastPrice(inst, t)),
        orderbookMidPriceClose: px(perp.lastPrice(inst, Math.min(now, t + dur))),
      });
    }
    res.json({ candles: rows });
  });

  router.get("/sparklines", (req, res) => {
    const period = qp(req, "timePeriod") ?? "";
    const spec = SPARKLINES[period];
    if (!spec) return invalid(res, "timePeriod", period, `timePeriod must be a valid Time Period, one of ${Object.keys(SPARKLINES).join(",")}`);
    const now = clock.now();
    const out: Record<string, string[]> = {};
    for (const inst of markets()) {
      const closes: string[] = [];
      for (let t = Math.floor(now / spec.dur) * spec.dur; t >= now - spec.lookback && t >= Math.floor(inst.listTime / spec.dur) * spec.dur; t -= spec.dur) {
        closes.push(trimmed(roundTo(perp.candle(inst, t, spec.dur, now).close, inst.priceDecimals), inst.priceDecimals));
      }
      out[inst.symbol] = closes;
    }
    res.json(out);
  });

  router.get("/trades/perpetualMarket/:ticker", (req, res) => {
    const inst = markets().find((m) => m.symbol === req.params.ticker);
    if (!inst) return invalid(res, "ticker", req.params.ticker, "ticker must be a valid ticker (BTC-USD, etc)", "params");
    const limit = limitOf(req, res);
    const before = limit === null ? null : isoOf(req, res, "createdBeforeOrAt");
    const beforeHeight = before === null ? null : heightOf(req, res, "createdBeforeOrAtHeight");
    if (limit === null || before === null || beforeHeight === null) return;
    const now = clock.now();
    // Both bounds are inclusive: before the next millisecond, before the next block.
    const end = Math.min(now + 1, before === undefined ? Infinity : before + 1, beforeHeight === undefined ? Infinity : dydxBlockStart(beforeHeight + 1));
    res.json({ trades: dydxRowsBefore(tape, inst, end, limit, Math.max(inst.listTime, now - TRADES_LOOKBACK_MS)) });
  });

  router.get("/height", (_req, res) => {
    const now = clock.now();
    res.json({ height: String(dydxHeight(now)), time: iso(Math.floor(now / 1000) * 1000) });
  });

  return router;
}

/** dYdX as the simulator mounts it (`urls.dydx` replaces `https://indexer.dydx.trade/v4`). */
export const dydxVenue = {
  name: "dydx",
  mountPath: "/dydx/v4",
  createRouter: createDydxRouter,
  faultResponses: dydxFaultResponses,
} as const satisfies SimVenue<"dydx">;
