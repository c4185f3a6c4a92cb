/**
 * Simulated Gate API v4 USDT-margined futures (`https://api.gateio.ws/api/v4`, mounted at `/gate/api/v4`), wire
 * shapes of the Gate API v4 docs (https://www.gate.com/docs/developers/apiv4/en/#futures).
 *
 * `GET /futures/usdt/contracts` (and `/contracts/{contract}`), `/futures/usdt/tickers`, `/futures/usdt/funding_rate`
 * (`{t: s, r}`, newest first, ≤ 1000), `/futures/usdt/contract_stats` (`interval` 5m…1d, oldest first, ≤ 2000;
 * `open_interest` in contracts, `open_interest_usd`, `lsr_account` = all accounts, `top_lsr_size` = top traders'
 * positions), `/futures/usdt/risk_limit_tiers` (the model's tiers: `risk_limit` = USDT cap, `deduction` =
 * cumulative Σ cap × Δmmr), `/futures/usdt/candlesticks` (last-price candles, oldest first, `v` contracts, `sum`
 * USDT, ≤ 2000; `limit` excludes `from`/`to`), `/futures/usdt/trades` (the websocket's tape, newest first, ≤ 1000;
 * `to`/`from` in seconds, `last_id` = older than that id) and `/futures/usdt/liq_orders` (the tape's
 * liquidations; `from`/`to` seconds, at most 3600 apart). Bodies are bare JSON (no envelope); decimals are strings,
 * times Unix seconds. Sizes are contracts of `quanto_multiplier` coins (`ctVal`). Errors are `{label, message}`:
 * HTTP 400 `MISSING_REQUIRED_PARAM` / `INVALID_PARAM_VALUE`, and `CONTRACT_NOT_FOUND` for an unknown contract (the
 * label of the docs' error list; its real HTTP status is not documented, 400 here). All values are simulated.
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { gateSignedSize, gateTradeId, tapeFor, type TapeTrade } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, intParam, qp, roundTo, tickOf, trimmed } from "./wire.js";

/** Gate-shaped bodies for injected 429s and 5xx. */
export const gateFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ label: "TOO_MANY_REQUESTS", message: "Request Rate limit Exceeded" }),
  serverErrorBody: () => ({ label: "SERVER_ERROR", message: "Internal server error" }),
};

/** Candle and statistic intervals of the docs. */
const INTERVALS: Readonly<Record<string, number>> = {
  "10s": 10_000,
  "1m": MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1h": HOUR,
  "4h": 4 * HOUR,
  "8h": 8 * HOUR,
  "1d": DAY,
  "7d": 7 * DAY,
};
const STATS_INTERVALS = new Set(["5m", "15m", "30m", "1h", "4h", "1d"]);

const sec = (ms: number): number => Math.floor(ms / 1000);
const rate = (x: number): string => trimmed(x, 8);

/** Contracts of `coins` (whole contracts, as Gate counts them without `X-Gate-Size-Decimal`). */
const contractsOf = (inst: PerpInstrumentSpec, coins: number): number => Math.round(coins / inst.ctVal);

function contractRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const d = inst.priceDecimals;
  const px = (x: number) => trimmed(roundTo(x, d), d);
  const tiers = perp.marginTiers(inst);
  const funding = rate(perp.currentFundingRate(inst, now));
  return {
    name: inst.symbol,
    type: "direct",
    quanto_multiplier: inst.ctValStr,
    ref_discount_rate: "0",
    order_price_deviate: "0.5",
    maintenance_rate: trimmed(tiers[0]?.mmr ?? 0.005, 8),
    mark_type: "index",
    last_price: px(perp.lastPrice(inst, now)),
    mark_price: px(perp.markPrice(inst, now)),
    index_price: px(perp.indexPrice(inst, now)),
    // Gate marks `funding_rate_indicative` deprecated in favour of `funding_rate`; the simulator sends the same value.
    funding_rate_indicative: funding,
    mark_price_round: tickOf(d),
    funding_offset: 0,
    in_delisting: false,
    risk_limit_base: String(tiers[0]?.maxNotionalUsd ?? 1_000_000),
    interest_rate: trimmed(perp.interestRate(inst), 8),
    order_price_round: tickOf(d),
    order_size_min: "1",
    enable_decimal: false,
    ref_rebate_rate: "0.2",
    funding_interval: inst.fundingIntervalHours * 3600,
    leverage_min: "1",
    leverage_max: String(inst.maxLeverage),
    risk_limit_max: String(tiers[tiers.length - 1]?.maxNotionalUsd ?? 1_000_000),
    maker_fee_rate: "-0.0001",
    taker_fee_rate: "0.00075",
    funding_rate: funding,
    order_size_max: "1000000",
    funding_next_apply: sec(perp.nextFundingTime(inst, now)),
    position_size: String(contractsOf(inst, perp.openInterestCoins(inst, now))),
    orders_limit: 50,
    create_time: sec(inst.listTime),
    launch_time: sec(inst.listTime),
    funding_cap_ratio: "0.75",
    funding_rate_limit: trimmed(inst.fundingCap, 8),
    status: "trading",
  };
}

function tickerRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, string> {
  const d = inst.priceDecimals;
  const px = (x: number) => trimmed(roundTo(x, d), d);
  const funding = rate(perp.currentFundingRate(inst, now));
  return {
    contract: inst.symbol,
    last: px(perp.lastPrice(inst, now)),
    total_size: String(contractsOf(inst, perp.openInterestCoins(inst, now))),
    volume_24h_quote: trimmed(perp.turnover24hUsd(inst, now), 2),
    mark_price: px(perp.markPrice(inst, now)),
    funding_rate: funding,
    funding_rate_indicative: funding,
    index_price: px(perp.indexPrice(inst, now)),
  };
}

/** Builds the Gate router (paths `/futures/usdt/...`, relative to the `/api/v4` mount). */
export function createGateRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const tape = tapeFor(market);
  const router = Router();

  const fail = (res: Response, label: string, message: string, status = 400): void => {
    res.status(status).json({ label, message });
  };
  const contracts = () => perp.instruments("gate", clock.now()).filter((i) => i.kind === "perpetual" && !i.inverse);
  /** The contract named by `contract` (required); undefined after answering the error. */
  const contractOf = (req: Request, res: Response): PerpInstrumentSpec | undefined => {
    const name = qp(req, "contract");
    if (name === undefined || name === "") {
      fail(res, "MISSING_REQUIRED_PARAM", "Missing required parameter: contract");
      return undefined;
    }
    const inst = contracts().find((i) => i.symbol === name);
    if (!inst) fail(res, "CONTRACT_NOT_FOUND", `Contract ${name} not found`);
    return inst;
  };
  /** Integer query value in [min, max] (default `dflt`); null after answering INVALID_PARAM_VALUE. */
  const intOf = (req: Request, res: Response, name: string, dflt: number, min: number, max: number): number | null => {
    const v = intParam(qp(req, name), dflt, min, max);
    if (v === null) fail(res, "INVALID_PARAM_VALUE", `Invalid parameter ${name} with value: ${qp(req, name) ?? ""}`);
    return v;
  };

  router.get("/futures/usdt/contracts", (req, res) => {
    const limit = intOf(req, res, "limit", 10_000, 1, 10_000);
    const offset = limit === null ? null : intOf(req, res, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || offset === null) return;
    const now = clock.now();
    res.json(
      contracts()
        .slice(offset, offset + limit)
        .map((i) => contractRow(i, perp, now)),
    );
  });

  router.get("/futures/usdt/contracts/:contract", (req, res) => {
    const inst = contracts().find((i) => i.symbol === req.params.contract);
    if (!inst) return fail(res, "CONTRACT_NOT_FOUND", `Contract ${req.params.contract} not found`);
    res.json(contractRow(inst, perp, clock.now()));
  });

  router.get("/futures/usdt/tickers", (req, res) => {
    const name = qp(req, "contract");
    const now = clock.now();
    if (name === undefined || name === "") return res.json(contracts().map((i) => tickerRow(i, perp, now)));
    const inst = contractOf(req, res);
    if (inst) res.json([tickerRow(inst, perp, now)]);
  });

  router.get("/futures/usdt/funding_rate", (req, res) => {
    const inst = contractOf(req, res);
    if (!inst) return;
    const limit = intOf(req, res, "limit", 100, 1, 1000);
    const from = limit === null ? null : intOf(req, res, "from", 0, 0, Number.MAX_SAFE_INTEGER);
    const to = from === null ? null : intOf(req, res, "to", sec(clock.now()), 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || from === null || to === null) return;
    const toMs = Math.min(clock.now(), to * 1000);
    const fromMs = Math.max(from * 1000, toMs - limit * inst.fundingIntervalHours * HOUR);
    const times = perp.settlementTimes(inst, fromMs, toMs).reverse().slice(0, limit);
    res.json(times.map((t) => ({ t: sec(t), r: rate(perp.settledFundingRate(inst, t)) })));
  });

  router.get("/futures/usdt/contract_stats", (req, res) => {
    const inst = contractOf(req, res);
    if (!inst) return;
    const name = qp(req, "interval") ?? "5m";
    if (!STATS_INTERVALS.has(name)) return fail(res, "INVALID_PARAM_VALUE", `Invalid parameter interval with value: ${name}`);
    const period = INTERVALS[name]!;
    const limit = intOf(req, res, "limit", 30, 1, 2000);
    const from = limit === null ? null : intOf(req, res, "from", 0, 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || from === null) return;
    const now = clock.now();
    const latest = Math.floor(now / period) * period;
    const oldest = Math.max(inst.listTime, from * 1000, latest - (limit - 1) * period);
    const rows: Record<string, unknown>[] = [];
    for (let t = Math.ceil(oldest / period) * period; t <= latest; t += period) {
      const mark = perp.markPrice(inst, t);
      const contracts = contractsOf(inst, perp.openInterestCoins(inst, t));
      rows.push({
        time: sec(t),
        lsr_taker: Number(perp.longShortRatio(inst, "account", t).toFixed(4)),
        lsr_account: Number(perp.longShortRatio(inst, "account", t).toFixed(4)),
        long_liq_size: "0",
        short_liq_size: "0",
        long_liq_amount: 0,
        short_liq_amount: 0,
        long_liq_usd: 0,
        short_liq_usd: 0,
        open_interest: String(contracts),
        open_interest_usd: Number((contracts * inst.ctVal * mark).toFixed(4)),
        mark_price: trimmed(roundTo(mark, inst.priceDecimals), inst.priceDecimals),
        top_lsr_account: Number(perp.longShortRatio(inst, "top_position", t).toFixed(4)),
        top_lsr_size: trimmed(perp.longShortRatio(inst, "top_position", t), 4),
      });
    }
    res.json(rows);
  });

  router.get("/futures/usdt/risk_limit_tiers", (req, res) => {
    const name = qp(req, "contract");
    const sel = name === undefined || name === "" ? contracts().slice(0, 100) : [contractOf(req, res)];
    if (sel.some((i) => i === undefined)) return;
    res.json(
      (sel as PerpInstrumentSpec[]).flatMap((inst) => {
        let prevCap = 0;
        let prevMmr = 0;
        let deduction = 0;
        return perp.marginTiers(inst).map((t, k) => {
          deduction += prevCap * (t.mmr - prevMmr);
          prevCap = t.maxNotionalUsd;
          prevMmr = t.mmr;
          return {
            tier: k + 1,
            risk_limit: String(t.maxNotionalUsd),
            initial_rate: trimmed(1 / t.maxLeverage, 5),
            maintenance_rate: trimmed(t.mmr, 8),
            leverage_max: String(t.maxLeverage),
            contract: inst.symbol,
            deduction: trimmed(deduction, 4),
          };
        });
      }),
    );
  });

  router.get("/futures/usdt/candlesticks", (req, res) => {
    const inst = contractOf(req, res);
    if (!inst) return;
    const dur = INTERVALS[qp(req, "interval") ?? "5m"];
    if (dur === undefined) return fail(res, "INVALID_PARAM_VALUE", `Invalid parameter interval with value: ${qp(req, "interval")}`);
    const rawLimit = qp(req, "limit");
    const hasRange = qp(req, "from") !== undefined || qp(req, "to") !== undefined;
    if (rawLimit !== undefined && hasRange) return fail(res, "INVALID_PARAM_VALUE", "limit conflicts with from and to");
    const limit = intOf(req, res, "limit", 100, 1, 2000);
    const to = limit === null ? null : intOf(req, res, "to", sec(clock.now()), 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || to === null) return;
    const now = clock.now();
    const latest = Math.floor(Math.min(now, to * 1000) / dur) * dur;
    const fromRaw = intOf(req, res, "from", sec(latest - (limit - 1) * dur), 0, Number.MAX_SAFE_INTEGER);
    if (fromRaw === null) return;
    const first = Math.max(Math.ceil((fromRaw * 1000) / dur) * dur, Math.floor(inst.listTime / dur) * dur, latest - 1999 * dur);
    const rows: Record<string, unknown>[] = [];
    for (let t = first; t <= latest; t += dur) {
      const k = perp.candle(inst, t, dur, now);
      const d = inst.priceDecimals;
      const px = (x: number) => trimmed(roundTo(x, d), d);
      const vwap = (k.open + k.high + k.low + k.close) / 4;
      rows.push({ t: sec(t), v: String(contractsOf(inst, k.volumeUsd / vwap)), c: px(k.close), h: px(k.high), l: px(k.low), o: px(k.open), sum: trimmed(k.volumeUsd, 2) });
    }
    res.json(rows);
  });

  const tradeRow = (t: TapeTrade) => ({
    id: gateTradeId(t),
    create_time: t.time / 1000,
    create_time_ms: t.time / 1000,
    contract: t.inst.symbol,
    size: String(gateSignedSize(t)),
    price: t.px,
  });

  router.get("/futures/usdt/trades", (req, res) => {
    const inst = contractOf(req, res);
    if (!inst) return;
    const limit = intOf(req, res, "limit", 100, 1, 1000);
    const lastId = limit === null ? null : intOf(req, res, "last_id", 0, 0, Number.MAX_SAFE_INTEGER);
    const from = lastId === null ? null : intOf(req, res, "from", 0, 0, Number.MAX_SAFE_INTEGER);
    const to = from === null ? null : intOf(req, res, "to", sec(clock.now()), 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || lastId === null || from === null || to === null) return;
    const now = clock.now();
    // `to` is a whole second: trades of that second are included. `last_id`: strictly older ids (seq = slot × 16 + k).
    let before = Math.min(now + 1, (to + 1) * 1000);
    if (lastId > 0) before = Math.min(before, (Math.floor(lastId / 16) + 1) * 1000);
    const keep = lastId > 0 ? (t: TapeTrade) => gateTradeId(t) < lastId : undefined;
    const minMs = Math.max(from * 1000, now - 7 * DAY);
    res.json(tape.tradesBefore(inst, before, limit, minMs, keep).map(tradeRow));
  });

  router.get("/futures/usdt/liq_orders", (req, res) => {
    const name = qp(req, "contract");
    const sel = name === undefined || name === "" ? contracts().filter((i) => i.target) : [contractOf(req, res)];
    if (sel.some((i) => i === undefined)) return;
    const limit = intOf(req, res, "limit", 100, 1, 1000);
    const to = limit === null ? null : intOf(req, res, "to", sec(clock.now()), 0, Number.MAX_SAFE_INTEGER);
    const from = to === null ? null : intOf(req, res, "from", to - 3600, 0, Number.MAX_SAFE_INTEGER);
    if (limit === null || to === null || from === null) return;
    if (to - from > 3600) return fail(res, "INVALID_PARAM_VALUE", "The time interval between from and to is maximum 3600");
    const toMs = Math.min(clock.now() + 1, (to + 1) * 1000);
    const rows = (sel as PerpInstrumentSpec[])
      .flatMap((inst) => tape.liquidationsOf(inst, from * 1000, toMs))
      .sort((a, b) => b.time - a.time)
      .slice(0, limit)
      .map((l) => {
        const contracts = Number(l.sz);
        const signed = l.side === "long" ? contracts : -contracts;
        return { time: sec(l.time), contract: l.inst.symbol, size: String(signed), order_size: String(-signed), order_price: l.px, fill_price: l.px, left: "0" };
      });
    res.json(rows);
  });

  return router;
}

/** Gate as the simulator mounts it (`urls.gate` replaces `https://api.gateio.ws/api/v4`). */
export const gateVenue = {
  name: "gate",
  mountPath: "/gate/api/v4",
  createRouter: createGateRouter,
  faultResponses: gateFaultResponses,
} as const satisfies SimVenue<"gate">;
