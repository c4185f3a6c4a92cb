/**
 * Simulated HTX USDT-margined swaps (`https://api.hbdm.com`, mounted at `/htx`), wire shapes of the HTX API docs
 * (https://www.htx.com/en-us/opend/newApiPages/, the `[General]` USDT-margined pages; src/venues/htx/fixtures/README.md).
 *
 * `GET /linear-swap-api/v1/swap_contract_info`, `/swap_query_elements` (`settle_period` = the funding interval),
 * `/swap_funding_rate` (`contract_code` required) and `/swap_batch_funding_rate` (every swap), `/swap_index`,
 * `/swap_historical_funding_rate` (newest first, `page_index` from 1, `page_size` ≤ 50, one year kept),
 * `/swap_open_interest`, `/swap_his_open_interest` (`period` 60min/4hour/12hour/1day, `size` ≤ 200, newest first,
 * `amount_type` 1 contracts / 2 coins), `/swap_elite_position_ratio` (top traders' positions, `period` 5min…1day,
 * oldest first), `/swap_adjustfactor` (the model's tiers as HTX tables: one per leverage step, `adjust_factor` =
 * mmr × leverage so that "Maintenance Margin Ratio = Adjustment Factor / Leverage" gives the model's mmr, bounds in
 * contracts at the current mark price), `/linear-swap-api/v3/swap_liquidation_orders` (the tape's liquidations of one
 * contract, windows ≤ 2 h, `direct` next|prev, `from_id` = the last page's `query_id`, 20 rows a page — HTX states no
 * page size), `/index/market/history/linear_swap_mark_price_kline`, `/linear-swap-ex/market/history/kline`
 * (last-price candles, oldest first, `size` ≤ 2000) and `/linear-swap-ex/market/history/trade` (the websocket's tape,
 * newest first, one fill per taker order, `size` ≤ 2000).
 * Envelopes `{status: "ok", data | tick, ts}` (v1, market) and `{code: 200, msg: "", data, ts}` (v3); refusals at
 * HTTP 200: `{status: "error", err_code, err_msg, ts}` / `{code, msg, ts}` with 1014 "This contract doesn't exist." for
 * an unknown contract and 1030 "Input error." for a bad parameter (the docs' codes; which endpoint answers which code
 * is not documented). Sizes are CONTRACTS of `contract_size` coins (the tape's `sz` for HTX: whole contracts).
 * All values are simulated (`perp-model.ts`, `tape.ts`).
 */
import { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue } from "../perp-model.js";
import { tapeFor, type TapeLiquidation, type TapeTrade } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, HOUR, MINUTE, fixed, intParam, msParam, qp, roundTo } from "./wire.js";

/** HTX's venue key in the perp model. */
export const HTX_SIM = "htx" as const satisfies PerpSimVenue;

/** HTX-shaped bodies for injected 429s and 5xx ("1032 The number of access exceeded the limit", "1000 System error"). */
export const htxFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ status: "error", err_code: 1032, err_msg: "The number of access exceeded the limit.", ts: Date.now() }),
  serverErrorBody: () => ({ status: "error", err_code: 1000, err_msg: "System error.", ts: Date.now() }),
};

/** Kline and statistic periods of the docs. */
const PERIODS: Readonly<Record<string, number>> = {
  "1min": MINUTE,
  "5min": 5 * MINUTE,
  "15min": 15 * MINUTE,
  "30min": 30 * MINUTE,
  "60min": HOUR,
  "1hour": HOUR,
  "4hour": 4 * HOUR,
  "12hour": 12 * HOUR,
  "1day": DAY,
};
const OI_PERIODS = new Set(["60min", "4hour", "12hour", "1day"]);
const ELITE_PERIODS = new Set(["5min", "15min", "30min", "60min", "4hour", "1day"]);
/** Settled funding kept by `swap_historical_funding_rate`. */
const FUNDING_HISTORY_MS = 365 * DAY;
/** Rows per `swap_liquidation_orders` page (the simulator's choice; HTX documents none). */
const LIQUIDATION_PAGE = 20;
/** Longest `start_time`..`end_time` window of `swap_liquidation_orders`. */
const LIQUIDATION_WINDOW_MS = 2 * HOUR;

const rate = (x: number): string => fixed(x, 18);
const sec = (ms: number): number => Math.floor(ms / 1000);
const coinsOf = (inst: PerpInstrumentSpec, contracts: number): number => roundTo(contracts * inst.ctVal, 10);
const contractsOf = (inst: PerpInstrumentSpec, coins: number): number => Math.round(coins / inst.ctVal);
const price = (inst: PerpInstrumentSpec, x: number): number => roundTo(x, inst.priceDecimals);
const yyyymmdd = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replace(/-/g, "");

function contractRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  return {
    symbol: inst.base,
    contract_code: inst.symbol,
    contract_size: inst.ctVal,
    price_tick: Number(`1e-${inst.priceDecimals}`),
    delivery_date: "",
    delivery_time: "",
    create_date: yyyymmdd(inst.listTime),
    contract_status: 1,
    settlement_date: String(perp.nextFundingTime(inst, now)),
    support_margin_mode: "all",
    business_type: "swap",
    pair: inst.symbol,
    contract_type: "swap",
  };
}

function elementsRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  return {
    contract_code: inst.symbol,
    funding_rate_cap: rate(inst.fundingCap),
    funding_rate_floor: rate(-inst.fundingCap),
    mode_type: 2,
    swap_delivery_type: 1,
    settle_period: inst.fundingIntervalHours,
    instrument_index_code: inst.symbol,
    real_time_settlement: 1,
    instrument_type: [0],
    price_tick: fixed(Number(`1e-${inst.priceDecimals}`), 18),
    instrument_value: fixed(inst.ctVal, 18),
    trade_partition: "USDT",
    min_level: "1",
    max_level: String(inst.maxLeverage),
    contract_infos: [
      {
        contract_code: inst.symbol,
        instrument_type: 0,
        settlement_date: String(perp.nextFundingTime(inst, now)),
        delivery_time: "",
        create_date: yyyymmdd(inst.listTime),
        contract_status: 1,
        delivery_date: "",
      },
    ],
  };
}

function fundingRow(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  return {
    funding_rate: rate(perp.currentFundingRate(inst, now)),
    contract_code: inst.symbol,
    symbol: inst.base,
    fee_asset: "USDT",
    funding_time: String(perp.nextFundingTime(inst, now)),
    estimated_rate: null,
    next_funding_time: null,
  };
}

/** One fill of the tape as `history/trade` and the websocket's `trade.detail` carry it (`amount` contracts). */
export function htxTradeRow(t: TapeTrade): Record<string, unknown> {
  const contracts = Number(t.sz);
  const coins = coinsOf(t.inst, contracts);
  return { amount: contracts, ts: t.time, id: t.seq, price: Number(t.px), direction: t.side, quantity: coins, trade_turnover: roundTo(coins * Number(t.px), 6) };
}

/** One liquidation of the tape as `swap_liquidation_orders` and the `liquidation_orders` topic carry it (`direction` = the order side). */
export function htxLiquidationRow(l: TapeLiquidation): Record<string, unknown> {
  const contracts = Number(l.sz);
  const coins = coinsOf(l.inst, contracts);
  return {
    symbol: l.inst.base,
    contract_code: l.inst.symbol,
    direction: l.side === "long" ? "sell" : "buy",
    offset: "close",
    volume: contracts,
    price: Number(l.px),
    created_at: l.time,
    amount: coins,
    trade_turnover: roundTo(coins * Number(l.px), 6),
    contract_type: "swap",
    pair: l.inst.symbol,
    business_type: "swap",
  };
}

/** Builds the HTX router (paths relative to the `/htx` mount, which stands for `https://api.hbdm.com`). */
export function createHtxRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const tape = tapeFor(market);
  const router = Router();

  const swaps = () => perp.instruments(HTX_SIM, clock.now()).filter((i) => i.kind === "perpetual" && !i.inverse);
  const ok = (res: Response, data: unknown, field: "data" | "tick" = "data"): void => void res.json({ status: "ok", [field]: data, ts: clock.now() });
  const fail = (res: Response, code: number, msg: string): void => void res.json({ status: "error", err_code: code, err_msg: msg, ts: clock.now() });
  const noContract = (res: Response) => fail(res, 1014, "This contract doesn't exist.");
  const badParam = (res: Response) => fail(res, 1030, "Input error.");
  /** The swap named by `name` (case-insensitive, as the docs say), or undefined. */
  const swapOf = (name: string | undefined) => (name === undefined ? undefined : swaps().find((i) => i.symbol === name.toUpperCase()));
  /** The swap of a required `contract_code`; undefined after answering the refusal. */
  const required = (req: Request, res: Response, param = "contract_code"): PerpInstrumentSpec | undefined => {
    const name = qp(req, param);
    if (name === undefined || name === "") return void badParam(res);
    const inst = swapOf(name);
    if (!inst) noContract(res);
    return inst;
  };
  /** The swaps of an optional `contract_code` (every one when absent); undefined after answering the refusal. */
  const selected = (req: Request, res: Response): PerpInstrumentSpec[] | undefined => {
    const name = qp(req, "contract_code");
    if (name === undefined || name === "") return swaps();
    const inst = swapOf(name);
    if (!inst) return void noContract(res);
    return [inst];
  };
  const intOf = (req: Request, res: Response, name: string, dflt: number, min: number, max: number): number | null => {
    const v = intParam(qp(req, name), dflt, min, max);
    if (v === null) badParam(res);
    return v;
  };

  router.get("/linear-swap-api/v1/swap_contract_info", (req, res) => {
    const business = qp(req, "business_type") ?? "swap";
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(res, business === "futures" ? [] : sel.map((i) => contractRow(i, perp, now)));
  });

  router.get("/linear-swap-api/v1/swap_query_elements", (req, res) => {
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => elementsRow(i, perp, now)),
    );
  });

  router.get("/linear-swap-api/v1/swap_funding_rate", (req, res) => {
    const inst = required(req, res);
    if (inst) ok(res, fundingRow(inst, perp, clock.now()));
  });

  router.get("/linear-swap-api/v1/swap_batch_funding_rate", (req, res) => {
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => fundingRow(i, perp, now)),
    );
  });

  router.get("/linear-swap-api/v1/swap_index", (req, res) => {
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => ({ index_price: price(i, perp.indexPrice(i, now)), index_ts: now, contract_code: i.symbol })),
    );
  });

  router.get("/linear-swap-api/v1/swap_historical_funding_rate", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    const page = intOf(req, res, "page_index", 1, 1, 1_000_000);
    const size = page === null ? null : intOf(req, res, "page_size", 20, 1, 50);
    if (page === null || size === null) return;
    const now = clock.now();
    const times = perp.settlementTimes(inst, Math.max(inst.listTime, now - FUNDING_HISTORY_MS), now).reverse();
    const rows = times.slice((page - 1) * size, page * size).map((t) => ({
      avg_premium_index: fixed(perp.settledPremium(inst, t), 18),
      funding_rate: rate(perp.settledFundingRate(inst, t)),
      funding_time: String(t),
      realized_rate: null,
      contract_code: inst.symbol,
      symbol: inst.base,
      fee_asset: "USDT",
    }));
    ok(res, { total_page: Math.max(1, Math.ceil(times.length / size)), current_page: page, total_size: times.length, data: rows });
  });

  router.get("/linear-swap-api/v1/swap_open_interest", (req, res) => {
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(
      res,
      sel.map((i) => {
        const contracts = contractsOf(i, perp.openInterestCoins(i, now));
        const coins = coinsOf(i, contracts);
        const turnover = perp.turnover24hUsd(i, now);
        const mark = perp.markPrice(i, now);
        return {
          volume: contracts,
          amount: coins,
          symbol: i.base,
          value: roundTo(coins * mark, 4),
          contract_code: i.symbol,
          trade_amount: roundTo(turnover / mark, 4),
          trade_volume: contractsOf(i, turnover / mark),
          trade_turnover: roundTo(turnover, 4),
          business_type: "swap",
          pair: i.symbol,
          contract_type: "swap",
        };
      }),
    );
  });

  router.get("/linear-swap-api/v1/swap_his_open_interest", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    const name = qp(req, "period") ?? "";
    const amountType = qp(req, "amount_type");
    if (!OI_PERIODS.has(name) || (amountType !== "1" && amountType !== "2")) return badParam(res);
    const size = intOf(req, res, "size", 48, 1, 200);
    if (size === null) return;
    const period = PERIODS[name]!;
    const latest = Math.floor(clock.now() / period) * period;
    const tick: Record<string, unknown>[] = [];
    for (let t = latest; t >= Math.max(inst.listTime, latest - (size - 1) * period); t -= period) {
      const contracts = contractsOf(inst, perp.openInterestCoins(inst, t));
      const coins = coinsOf(inst, contracts);
      tick.push({ volume: amountType === "1" ? contracts : coins, amount_type: Number(amountType), ts: t, value: roundTo(coins * perp.markPrice(inst, t), 4) });
    }
    ok(res, { symbol: inst.base, tick, contract_code: inst.symbol, business_type: "swap", pair: inst.symbol, contract_type: "swap" });
  });

  router.get("/linear-swap-api/v1/swap_elite_position_ratio", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    const name = qp(req, "period") ?? "";
    if (!ELITE_PERIODS.has(name)) return badParam(res);
    const period = PERIODS[name]!;
    const latest = Math.floor(clock.now() / period) * period;
    const list: Record<string, unknown>[] = [];
    for (let t = Math.max(Math.ceil(inst.listTime / period) * period, latest - 47 * period); t <= latest; t += period) {
      const r = perp.longShortRatio(inst, "top_position", t);
      list.push({ buy_ratio: roundTo(r / (1 + r), 4), sell_ratio: roundTo(1 - roundTo(r / (1 + r), 4), 4), ts: t });
    }
    ok(res, { list, symbol: inst.base, contract_code: inst.symbol, business_type: "swap", pair: inst.symbol });
  });

  router.get("/linear-swap-api/v1/swap_adjustfactor", (req, res) => {
    const sel = selected(req, res);
    if (!sel) return;
    const now = clock.now();
    ok(
      res,
      sel.slice(0, 100).map((inst) => {
        const tiers = perp.marginTiers(inst);
        const perContract = inst.ctVal * perp.markPrice(inst, now);
        let lower = 0;
        const bounds = tiers.map((t) => {
          const b = { min: lower, max: Math.max(lower, Math.round(t.maxNotionalUsd / perContract) - 1) };
          lower = b.max + 1;
          return b;
        });
        const levers = [...new Set(tiers.map((t) => t.maxLeverage))].sort((a, b) => b - a);
        return {
          symbol: inst.base,
          contract_code: inst.symbol,
          margin_mode: "isolated",
          list: levers.map((lever) => ({
            lever_rate: lever,
            ladders: tiers.map((t, k) => ({
              ladder: k,
              min_size: bounds[k]!.min,
              max_size: k === tiers.length - 1 ? null : bounds[k]!.max,
              adjust_factor: roundTo(t.mmr * lever, 6),
            })),
          })),
        };
      }),
    );
  });

  router.get("/linear-swap-api/v3/swap_liquidation_orders", (req, res) => {
    const v3fail = (code: number, msg: string) => res.json({ code, msg, ts: clock.now() });
    const name = qp(req, "contract") ?? qp(req, "pair");
    if (name === undefined || name === "" || qp(req, "trade_type") === undefined) return v3fail(1030, "Input error.");
    const inst = swapOf(name);
    if (!inst) return v3fail(1014, "This contract doesn't exist.");
    const now = clock.now();
    const end = msParam(qp(req, "end_time"));
    const start = msParam(qp(req, "start_time"));
    const fromId = msParam(qp(req, "from_id"));
    const direct = qp(req, "direct") ?? "prev";
    if (end === null || start === null || fromId === null || (direct !== "next" && direct !== "prev")) return v3fail(1030, "Input error.");
    const endMs = Math.min(end ?? now, now);
    const startMs = start ?? endMs - LIQUIDATION_WINDOW_MS;
    if (endMs - startMs > LIQUIDATION_WINDOW_MS || startMs < now - 90 * DAY || startMs > endMs) return v3fail(1030, "Input error.");
    const all = tape.liquidationsOf(inst, startMs, endMs + 1);
    const rows = direct === "next" ? all.filter((l) => fromId === undefined || l.seq > fromId) : all.filter((l) => fromId === undefined || l.seq < fromId).reverse();
    res.json({ code: 200, msg: "", data: rows.slice(0, LIQUIDATION_PAGE).map((l) => ({ query_id: l.seq, ...htxLiquidationRow(l) })), ts: now });
  });

  router.get("/index/market/history/linear_swap_mark_price_kline", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    const dur = PERIODS[qp(req, "period") ?? ""];
    if (dur === undefined || qp(req, "size") === undefined) return badParam(res);
    const size = intOf(req, res, "size", 1, 1, 2000);
    if (size === null) return;
    const now = clock.now();
    const latest = Math.floor(now / dur) * dur;
    const data: Record<string, unknown>[] = [];
    for (let t = Math.max(Math.floor(inst.listTime / dur) * dur, latest - (size - 1) * dur); t <= latest; t += dur) {
      const px = (at: number) => String(price(inst, perp.markPrice(inst, Math.min(at, now))));
      data.push({ amount: "0", close: px(t + dur), count: "0", high: px(t + dur), id: sec(t), low: px(t), open: px(t), trade_turnover: "0", vol: "0" });
    }
    res.json({ ch: `market.${inst.symbol}.mark_price.${qp(req, "period")}`, data, status: "ok", ts: now });
  });

  router.get("/linear-swap-ex/market/history/kline", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    const period = qp(req, "period") ?? "";
    const dur = PERIODS[period];
    if (dur === undefined) return badParam(res);
    const size = intOf(req, res, "size", 150, 1, 2000);
    if (size === null) return;
    const now = clock.now();
    const latest = Math.floor(now / dur) * dur;
    const data: Record<string, unknown>[] = [];
    for (let t = Math.max(Math.floor(inst.listTime / dur) * dur, latest - (size - 1) * dur); t <= latest; t += dur) {
      const k = perp.candle(inst, t, dur, now);
      const vwap = (k.open + k.high + k.low + k.close) / 4;
      const contracts = contractsOf(inst, k.volumeUsd / vwap);
      data.push({
        amount: coinsOf(inst, contracts),
        close: price(inst, k.close),
        count: contracts === 0 ? 0 : Math.max(1, Math.round(contracts / 10)),
        high: price(inst, k.high),
        id: sec(t),
        low: price(inst, k.low),
        open: price(inst, k.open),
        trade_turnover: roundTo(k.volumeUsd, 4),
        vol: contracts,
      });
    }
    res.json({ ch: `market.${inst.symbol}.kline.${period}`, data, status: "ok", ts: now });
  });

  router.get("/linear-swap-ex/market/history/trade", (req, res) => {
    const inst = required(req, res);
    if (!inst) return;
    if (qp(req, "size") === undefined) return badParam(res);
    const size = intOf(req, res, "size", 1, 1, 2000);
    if (size === null) return;
    const now = clock.now();
    const trades = tape.tradesBefore(inst, now + 1, size, now - DAY);
    res.json({ ch: `market.${inst.symbol}.trade.detail`, data: trades.map((t) => ({ data: [htxTradeRow(t)], id: t.seq, ts: t.time })), status: "ok", ts: now });
  });

  return router;
}

/** HTX as the simulator mounts it (`urls.htx` replaces `https://api.hbdm.com`). */
export const htxVenue = {
  name: "htx",
  mountPath: "/htx",
  createRouter: createHtxRouter,
  faultResponses: htxFaultResponses,
} as const satisfies SimVenue<"htx">;
