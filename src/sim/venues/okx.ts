/**
 * Simulated OKX v5 public API (`www.okx.com`, mounted at `/okx`), wire shapes of the OKX API v5 docs
 * (https://www.okx.com/docs-v5/en/#public-data-rest-api).
 *
 * `GET /api/v5/public/time`, `/api/v5/public/instruments`, `/api/v5/public/funding-rate` (`instId=…|ANY`),
 * `/api/v5/public/funding-rate-history`, `/api/v5/public/open-interest`, `/api/v5/public/mark-price`,
 * `/api/v5/market/index-tickers`, `/api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader`,
 * `/api/v5/market/trades` (≤ 500 most recent) and `/api/v5/market/history-trades` (`type=1` paginates by `tradeId`,
 * `type=2` by `ts`; `after` = older than, `before` = newer than; ≤ 100; last 3 months), both newest first with `sz` in
 * contracts — the websocket's `trades` tape (`tape.ts`), `/api/v5/market/candles` (last-price candles of
 * `perp-model.ts`, newest first, ≤ 300 of the latest 1440, `confirm` "0" on the open one; bars 1m…1W, HK-time
 * aligned from 6H up unless `…utc`; `1M` is not simulated), and `/api/v5/public/position-tiers` (SWAP; the model's
 * tiers in contracts at the anchor price, fixed per instrument; `tdMode` and `instFamily`/`uly` required).
 * Envelope `{code:"0", msg:"", data:[…]}`; every value is a string. Unknown instruments answer HTTP 200 with
 * `{code:"51001", msg:"Instrument ID does not exist", data:[]}`. Sizes are in contracts: `oi` × `ctVal` = `oiCcy`
 * (coins) for the USDT swaps; the coin-margined `BTC-USD-SWAP` / `ETH-USD-SWAP` (ctVal in USD) are listed too, as
 * on the real venue. `fundingTime` is the next settlement and `nextFundingTime` the one after, so their difference is
 * the interval. All values are simulated (`perp-model.ts`), except replayed instruments (`replay.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { venueRecordings } from "../replay.js";
import { okxTradeId, tapeFor, type TapeTrade } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo, tickOf, trimmed } from "./wire.js";

const INST_TYPES = new Set(["SPOT", "MARGIN", "SWAP", "FUTURES", "OPTION"]);
/** Candle bars: length and alignment offset (HK time, UTC+8, from 6H up unless `…utc`; weeks open on Monday). */
const CANDLE_BARS: Readonly<Record<string, { dur: number; offset: number }>> = (() => {
  const out: Record<string, { dur: number; offset: number }> = {};
  const utc: Array<[string, number]> = [
    ["1m", MINUTE],
    ["3m", 3 * MINUTE],
    ["5m", 5 * MINUTE],
    ["15m", 15 * MINUTE],
    ["30m", 30 * MINUTE],
    ["1H", HOUR],
    ["2H", 2 * HOUR],
    ["4H", 4 * HOUR],
  ];
  for (const [bar, dur] of utc) out[bar] = { dur, offset: 0 };
  const long: Array<[string, number]> = [
    ["6H", 6 * HOUR],
    ["12H", 12 * HOUR],
    ["1D", DAY],
    ["2D", 2 * DAY],
    ["3D", 3 * DAY],
    ["1W", 7 * DAY],
  ];
  for (const [bar, dur] of long) {
    const monday = dur === 7 * DAY ? 4 * DAY : 0; // 1970-01-05 was a Monday
    out[bar] = { dur, offset: monday - 8 * HOUR };
    out[`${bar}utc`] = { dur, offset: monday };
  }
  return out;
})();
/** `/market/candles` serves only the latest this many candles of a bar. */
const CANDLE_HISTORY = 1440;
const RUBIK_PERIODS: Readonly<Record<string, number>> = {
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1H": HOUR,
  "2H": 2 * HOUR,
  "4H": 4 * HOUR,
  "6H": 6 * HOUR,
  "12H": 12 * HOUR,
  "1D": DAY,
};

/** OKX-shaped bodies for injected 429s and 5xx. */
export const okxFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ msg: "Too Many Requests", code: "50011" }),
  serverErrorBody: () => ({ code: "50001", msg: "Service temporarily unavailable. Please try again later.", data: [] }),
};

const rateStr = (x: number): string => fixed(x, 16);
const uly = (inst: PerpInstrumentSpec): string => `${inst.base}-${inst.quote}`;

function instrumentRow(inst: PerpInstrumentSpec, idx: number): Record<string, unknown> {
  const lot = tickOf(inst.qtyDecimals);
  const major = inst.base === "BTC" || inst.base === "ETH";
  return {
    alias: "",
    auctionEndTime: "",
    baseCcy: "",
    category: "1",
    contTdSwTime: "",
    ctMult: "1",
    ctType: inst.inverse ? "inverse" : "linear",
    ctVal: inst.ctValStr,
    ctValCcy: inst.inverse ? "USD" : inst.base,
    expTime: "",
    futureSettlement: false,
    instFamily: uly(inst),
    instId: inst.symbol,
    instIdCode: 10400 + idx,
    instType: "SWAP",
    lever: String(inst.maxLeverage),
    listTime: String(inst.listTime),
    lotSz: lot,
    maxIcebergSz: "100000000.0000000000000000",
    maxLmtAmt: "20000000",
    maxLmtSz: "100000000",
    maxMktAmt: "",
    maxMktSz: major ? "12000" : "50000",
    maxPlatOILmt: "",
    maxStopSz: major ? "12000" : "50000",
    maxTriggerSz: "100000000.0000000000000000",
    maxTwapSz: "100000000.0000000000000000",
    minSz: lot,
    openType: "",
    optType: "",
    posLmtAmt: "",
    posLmtPct: "",
    preMktSwTime: "",
    quoteCcy: "",
    ruleType: "normal",
    settleCcy: inst.inverse ? inst.base : inst.quote,
    state: "live",
    stk: "",
    tickSz: tickOf(inst.priceDecimals),
    tradeQuoteCcyList: [],
    uly: uly(inst),
  };
}

/** Open interest row: contracts, coins (`oi` × ctVal for linear swaps) and USD. */
function openInterestRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, string> {
  const mark = roundTo(perp.markPrice(inst, now), inst.priceDecimals);
  const coins = perp.openInterestCoins(inst, now);
  let oi: number;
  let oiCcy: string;
  let oiUsd: number;
  if (inst.inverse) {
    oi = roundTo((coins * mark) / inst.ctVal, inst.qtyDecimals);
    oiUsd = oi * inst.ctVal;
    oiCcy = trimmed(oiUsd / mark, 8);
  } else {
    oi = roundTo(coins / inst.ctVal, inst.qtyDecimals);
    const ccyDecimals = Math.max(0, inst.qtyDecimals - Math.round(Math.log10(inst.ctVal)));
    const ccy = roundTo(oi * inst.ctVal, ccyDecimals);
    oiCcy = trimmed(ccy, ccyDecimals);
    oiUsd = ccy * mark;
  }
  return {
    instType: "SWAP",
    instId: inst.symbol,
    oi: trimmed(oi, inst.qtyDecimals),
    oiCcy,
    oiUsd: trimmed(oiUsd, 4),
    ts: String(now),
  };
}

/** Position-tier rows of a swap: the model's tiers with bounds in contracts at the anchor price (fixed per instrument). */
function positionTierRows(inst: PerpInstrumentSpec, perp: PerpModel): Array<Record<string, string>> {
  const anchor = perp.market.params(inst.base).anchorUsd;
  // Linear: contracts of ctVal coins; inverse: contracts of ctVal USD.
  const contracts = (usd: number) => Math.max(1, Number((usd / (inst.inverse ? inst.ctVal : inst.ctVal * anchor)).toPrecision(2)));
  let minSz = 0;
  return perp.marginTiers(inst).map((t, k) => {
    const maxSz = Math.max(minSz + 1, contracts(t.maxNotionalUsd));
    const row = {
      baseMaxLoan: "",
      imr: trimmed(1 / t.maxLeverage, 8),
      instFamily: uly(inst),
      instId: "",
      maxLever: String(t.maxLeverage),
      maxSz: String(maxSz),
      minSz: String(minSz),
      mmr: trimmed(t.mmr, 8),
      optMgnFactor: "0",
      quoteMaxLoan: "",
      tier: String(k + 1),
      uly: uly(inst),
    };
    minSz = maxSz;
    return row;
  });
}

function fundingRateRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, string> {
  const next = perp.nextFundingTime(inst, now);
  const iv = inst.fundingIntervalHours * HOUR;
  const lastSettle = perp.intervalStart(inst, now);
  return {
    formulaType: "noRate", // OKX's published formula: Clamp[MA(premium − interest)], interest = 0 (see perp-model.ts)
    fundingRate: rateStr(perp.currentFundingRate(inst, now)),
    fundingTime: String(next),
    impactValue: "",
    instId: inst.symbol,
    instType: "SWAP",
    interestRate: trimmed(perp.interestRate(inst), 16),
    maxFundingRate: trimmed(inst.fundingCap, 8),
    method: "current_period",
    minFundingRate: trimmed(-inst.fundingCap, 8),
    nextFundingRate: "",
    nextFundingTime: String(next + iv),
    premium: rateStr(perp.premium(inst, now)),
    settFundingRate: rateStr(perp.settledFundingRate(inst, lastSettle)),
    settState: "settled",
    ts: String(now),
  };
}

/** One `/market/candles` row `[ts, o, h, l, c, vol (contracts), volCcy (coins), volCcyQuote (USD), confirm]`. */
function candleRow(inst: PerpInstrumentSpec, perp: PerpModel, open: number, dur: number, now: number): string[] {
  const k = perp.candle(inst, open, dur, now);
  const d = inst.priceDecimals;
  const px = (x: number) => trimmed(roundTo(x, d), d);
  const vwap = (k.open + k.high + k.low + k.close) / 4;
  const contracts = roundTo(inst.inverse ? k.volumeUsd / inst.ctVal : k.volumeUsd / vwap / inst.ctVal, inst.qtyDecimals);
  const usd = inst.inverse ? contracts * inst.ctVal : contracts * inst.ctVal * vwap;
  const coins = inst.inverse ? usd / vwap : contracts * inst.ctVal;
  return [String(open), px(k.open), px(k.high), px(k.low), px(k.close), trimmed(contracts, inst.qtyDecimals), trimmed(coins, 8), trimmed(usd, 5), open + dur <= now ? "1" : "0"];
}

/** Builds the OKX v5 router (paths `/api/v5/...`). */
export function createOkxRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const replay = venueRecordings(ctx.replay, "okx");
  const tape = tapeFor(market);
  const router = Router();

  const ok = (res: Response, data: unknown[]): void => {
    res.json({ code: "0", msg: "", data });
  };
  const fail = (res: Response, code: string, msg: string): void => {
    res.json({ code, msg, data: [] });
  };
  const noInstrument = (res: Response): void => fail(res, "51001", "Instrument ID does not exist");
  const empty = (res: Response, name: string): void => fail(res, "50014", `Parameter ${name} can not be empty`);

  /** `limit` (default 100) capped at `cap`: larger values are clamped, not refused; null after an error. */
  const limitOf = (req: Request, res: Response, cap: number): number | null => {
    const raw = intParam(qp(req, "limit"), 100, 1, Number.MAX_SAFE_INTEGER);
    if (raw === null) fail(res, "51000", "Parameter limit error");
    return raw === null ? null : Math.min(raw, cap);
  };
  /** `limit` (capped at `cap`, default 100) and the epoch-ms cursors `before` / `after` of a paged endpoint; null after an error. */
  const pageOf = (req: Request, res: Response, cap = 100): { limit: number; before?: number; after?: number } | null => {
    const limit = limitOf(req, res, cap);
    if (limit === null) return null;
    const before = msParam(qp(req, "before"));
    const after = msParam(qp(req, "after"));
    const bad = before === null ? "before" : after === null ? "after" : undefined;
    if (bad) {
      fail(res, "51000", `Parameter ${bad} error`);
      return null;
    }
    return { limit, before: before ?? undefined, after: after ?? undefined };
  };

  const swaps = () => perp.instruments("okx", clock.now());
  const lookup = (instId: string) => perp.instrument("okx", instId, clock.now());

  /** Validates `instType` (required); returns "SWAP", "other" (valid, nothing simulated) or null after an error. */
  const instType = (res: Response, raw: string | undefined): "SWAP" | "other" | null => {
    if (raw === undefined || raw === "") {
      empty(res, "instType");
      return null;
    }
    if (!INST_TYPES.has(raw)) {
      fail(res, "51000", "Parameter instType error");
      return null;
    }
    return raw === "SWAP" ? "SWAP" : "other";
  };

  /** Instruments selected by instId / instFamily / uly among the swaps; null after answering 51001. */
  const select = (res: Response, instId: string | undefined, family: string | undefined): PerpInstrumentSpec[] | null => {
    if (instId !== undefined && instId !== "") {
      const inst = lookup(instId);
      if (!inst) {
        noInstrument(res);
        return null;
      }
      return [inst];
    }
    if (family !== undefined && family !== "") return swaps().filter((i) => uly(i) === family);
    return [...swaps()];
  };

  router.get("/api/v5/public/time", (_req, res) => {
    ok(res, [{ ts: String(clock.now()) }]);
  });

  router.get("/api/v5/public/instruments", (req, res) => {
    const type = instType(res, qp(req, "instType"));
    if (type === null) return;
    if (type !== "SWAP") return ok(res, []);
    const instId = qp(req, "instId");
    const family = qp(req, "instFamily") ?? qp(req, "uly");
    if (replay) {
      const rows = (replay.instruments as { data: Array<Record<string, unknown>> }).data.filter(
        (r) => (instId === undefined || instId === "" || r.instId === instId) && (family === undefined || family === "" || r.uly === family || r.instFamily === family),
      );
      return ok(res, rows);
    }
    const sel = select(res, instId, family);
    if (sel === null) return;
    ok(
      res,
      sel.map((i) => instrumentRow(i, swaps().indexOf(i))),
    );
  });

  router.get("/api/v5/public/funding-rate", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const now = clock.now();
    const sel = instId === "ANY" ? [...swaps()] : select(res, instId, undefined);
    if (sel === null) return;
    ok(
      res,
      sel.map((i) => fundingRateRow(i, perp, now)),
    );
  });

  router.get("/api/v5/public/funding-rate-history", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const page = pageOf(req, res);
    if (!page) return;
    const { limit, before, after } = page;
    const inst = lookup(instId);
    if (!inst) return noInstrument(res);
    const now = clock.now();
    const iv = inst.fundingIntervalHours * HOUR;
    // Newest first; `after` = strictly earlier than, `before` = strictly newer than; the last 3 months only.
    const to = Math.min(now, after !== undefined ? after - 1 : now);
    const from = Math.max(now - 92 * DAY, before !== undefined ? before + 1 : -Infinity, to - limit * iv);
    const times = perp.settlementTimes(inst, from, to).reverse().slice(0, limit);
    ok(
      res,
      times.map((s) => {
        const rate = perp.settledFundingRate(inst, s);
        return {
          formulaType: "noRate", // OKX's published formula: Clamp[MA(premium − interest)], interest = 0 (see perp-model.ts)
          fundingRate: rateStr(rate),
          fundingTime: String(s),
          instId: inst.symbol,
          instType: "SWAP",
          method: "next_period",
          realizedRate: trimmed(rate, 8),
        };
      }),
    );
  });

  router.get("/api/v5/public/open-interest", (req, res) => {
    const type = instType(res, qp(req, "instType"));
    if (type === null) return;
    if (type !== "SWAP") return ok(res, []);
    const sel = select(res, qp(req, "instId"), qp(req, "instFamily") ?? qp(req, "uly"));
    if (sel === null) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => openInterestRow(i, perp, now)),
    );
  });

  router.get("/api/v5/public/mark-price", (req, res) => {
    const type = instType(res, qp(req, "instType"));
    if (type === null) return;
    if (type !== "SWAP") return ok(res, []);
    const sel = select(res, qp(req, "instId"), qp(req, "instFamily") ?? qp(req, "uly"));
    if (sel === null) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => ({
        instType: "SWAP",
        instId: i.symbol,
        markPx: trimmed(roundTo(perp.markPrice(i, now), i.priceDecimals), i.priceDecimals),
        ts: String(now),
      })),
    );
  });

  router.get("/api/v5/market/index-tickers", (req, res) => {
    const instId = qp(req, "instId");
    const quoteCcy = qp(req, "quoteCcy");
    const linear = swaps().filter((i) => !i.inverse);
    let sel: PerpInstrumentSpec[];
    if (instId !== undefined && instId !== "") {
      const inst = linear.find((i) => uly(i) === instId);
      if (!inst) return noInstrument(res);
      sel = [inst];
    } else if (quoteCcy !== undefined && quoteCcy !== "") {
      sel = quoteCcy === "USDT" ? linear : [];
    } else return empty(res, "instId");
    const now = clock.now();
    ok(
      res,
      sel.map((i) => {
        const d = i.priceDecimals;
        const px = (x: number) => trimmed(roundTo(x, d), d);
        const day = perp.dayStats(i, now, "index");
        const idx = perp.indexPrice(i, now);
        const sod0 = Math.floor(now / DAY) * DAY;
        const sod8 = Math.floor((now + 8 * HOUR) / DAY) * DAY - 8 * HOUR;
        return {
          instId: uly(i),
          idxPx: px(idx),
          high24h: px(Math.max(day.high, idx)),
          sodUtc0: px(perp.indexPrice(i, sod0)),
          open24h: px(day.open),
          low24h: px(Math.min(day.low, idx)),
          sodUtc8: px(perp.indexPrice(i, sod8)),
          ts: String(now),
        };
      }),
    );
  });

  const tradeRow = (t: TapeTrade) => ({ instId: t.inst.symbol, side: t.side, sz: t.sz, px: t.px, tradeId: okxTradeId(t), ts: String(t.time) });

  router.get("/api/v5/market/trades", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const limit = limitOf(req, res, 500);
    if (limit === null) return;
    const inst = lookup(instId);
    if (!inst) return noInstrument(res);
    ok(res, tape.tradesBefore(inst, clock.now() + 1, limit).map(tradeRow));
  });

  router.get("/api/v5/market/history-trades", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const typeRaw = qp(req, "type") ?? "1";
    if (typeRaw !== "1" && typeRaw !== "2") return fail(res, "51000", "Parameter type error");
    const page = pageOf(req, res);
    if (!page) return;
    const { limit, before, after } = page;
    const inst = lookup(instId);
    if (!inst) return noInstrument(res);
    const now = clock.now();
    const oldest = now - 92 * DAY;
    // type 2: cursors are timestamps; type 1: trade ids (slot × 16 + index, so their slot is known).
    const byTs = typeRaw === "2";
    const slotStart = (id: number): number => Math.floor(id / 16) * 1000;
    const newerThan = (t: TapeTrade): boolean => before === undefined || (byTs ? t.time > before : t.seq > before);
    const olderThan = (t: TapeTrade): boolean => after === undefined || (byTs ? t.time < after : t.seq < after);
    let rows: TapeTrade[];
    if (after === undefined && before !== undefined) {
      // Only `before`: the page right after the cursor (oldest `limit` newer trades), newest first.
      const from = Math.max(oldest, byTs ? before + 1 : slotStart(before));
      rows = tape.tradesFrom(inst, from, limit, now + 1, newerThan).reverse();
    } else {
      const upper = after === undefined ? now + 1 : Math.min(now + 1, byTs ? after : slotStart(after) + 1000);
      const lower = before === undefined ? oldest : Math.max(oldest, byTs ? before + 1 : slotStart(before));
      rows = tape.tradesBefore(inst, upper, limit, lower, (t) => olderThan(t) && newerThan(t));
    }
    ok(res, rows.map(tradeRow));
  });

  router.get("/api/v5/public/position-tiers", (req, res) => {
    const type = instType(res, qp(req, "instType"));
    if (type === null) return;
    const tdMode = qp(req, "tdMode");
    if (tdMode === undefined || tdMode === "") return empty(res, "tdMode");
    if (tdMode !== "cross" && tdMode !== "isolated") return fail(res, "51000", "Parameter tdMode error");
    if (type !== "SWAP") return ok(res, []);
    const family = qp(req, "instFamily") ?? qp(req, "uly");
    if (family === undefined || family === "") return empty(res, "instFamily");
    const families = family.split(",");
    const sel = swaps().filter((i) => families.includes(uly(i)));
    if (sel.length === 0) return noInstrument(res);
    ok(
      res,
      sel.flatMap((i) => positionTierRows(i, perp)),
    );
  });

  router.get("/api/v5/market/candles", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const bar = CANDLE_BARS[qp(req, "bar") ?? "1m"];
    if (bar === undefined) return fail(res, "51000", "Parameter bar error");
    const page = pageOf(req, res, 300);
    if (!page) return;
    const inst = lookup(instId);
    if (!inst) return noInstrument(res);
    const now = clock.now();
    const { dur, offset } = bar;
    const floorTo = (t: number) => Math.floor((t - offset) / dur) * dur + offset;
    const latest = floorTo(now);
    const oldest = Math.max(latest - (CANDLE_HISTORY - 1) * dur, floorTo(inst.listTime));
    // Newest first; `after` = opened strictly before, `before` = opened strictly after.
    let t = page.after !== undefined ? Math.min(latest, floorTo(page.after - 1)) : latest;
    const rows: string[][] = [];
    for (; t >= oldest && rows.length < page.limit; t -= dur) {
      if (page.before !== undefined && t <= page.before) break;
      rows.push(candleRow(inst, perp, t, dur, now));
    }
    ok(res, rows);
  });

  router.get("/api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader", (req, res) => {
    const instId = qp(req, "instId");
    if (instId === undefined || instId === "") return empty(res, "instId");
    const periodRaw = qp(req, "period") ?? "5m";
    const period = RUBIK_PERIODS[periodRaw];
    if (period === undefined) return fail(res, "51000", "Parameter period error");
    const limit = limitOf(req, res, 100);
    if (limit === null) return;
    const begin = msParam(qp(req, "begin"));
    const end = msParam(qp(req, "end"));
    if (begin === null || end === null) return fail(res, "51000", "Parameter begin/end error");
    const inst = lookup(instId);
    if (!inst) return noInstrument(res);
    const now = clock.now();
    const latest = Math.floor(Math.min(now, end ?? now) / period) * period;
    const oldest = Math.max(inst.listTime, begin ?? -Infinity);
    const rows: Array<[string, string]> = [];
    for (let t = latest; t >= oldest && rows.length < limit; t -= period) {
      rows.push([String(t), String(perp.longShortRatio(inst, "top_position", t))]);
    }
    ok(res, rows);
  });

  return router;
}

/** OKX as the simulator mounts it (`urls.okx` replaces `https://www.okx.com`). */
export const okxVenue = {
  name: "okx",
  mountPath: "/okx",
  createRouter: createOkxRouter,
  faultResponses: okxFaultResponses,
} as const satisfies SimVenue<"okx">;
