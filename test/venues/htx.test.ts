import { gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { logger } from "../../src/lib/log.js";
import { VenueHttpClient } from "../../src/lib/venue-http.js";
import { HtxTradeBackfill } from "../../src/venues/htx/backfill.js";
import { HTX_FUNDING_PAGE, HtxPerpClient } from "../../src/venues/htx/client.js";
import { htxFrameText, parseHtxLiquidationOrders, parseHtxMessage, parseHtxTrades, PING } from "../../src/venues/htx/feed-parse.js";
import { fetchHtxLiquidations, HTX_LIQUIDATION_WINDOW_MS } from "../../src/venues/htx/liquidation-backfill.js";
import {
  fromHtxSymbol,
  htxRefusal,
  parseAdjustFactor,
  parseContractInfo,
  parseElitePositionRatio,
  parseFunding,
  parseFundingHistory,
  parseHtxError,
  parseIndexPrices,
  parseKlines,
  parseMarkPriceKline,
  parseOpenInterest,
  parseOpenInterestHistory,
  parseSettlePeriods,
  toHtxSymbol,
} from "../../src/venues/htx/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { appError, expectAppError } from "../helpers/errors.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { type RunningStub, startStub, type StubRoute } from "./perp-server.js";

/*
 * HTX USDT-margined swaps: every parser on the documented payloads (src/venues/htx/fixtures/README.md), the client
 * against a stub venue (paths, parameters, error mapping), the websocket frame parser on the documented frames (as
 * text and gzip-compressed, as HTX sends them), and the two REST backfills' paging.
 */

const contractInfo = () => fixture("htx/swap_contract_info_BTC-USDT_docs_example.json");
const elements = () => fixture("htx/swap_query_elements_BTC-USDT_docs_example_trimmed.json");
const btc = (): PerpInstrument => parseContractInfo(contractInfo(), parseSettlePeriods(elements()))[0]!;
const bySymbol = (...list: PerpInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
/** The batch funding example names ETC-USDT and ADA-USDT; their contract rows are not in the docs (sizes assumed 1 here). */
const etc: PerpInstrument = { venue: "htx" as PerpInstrument["venue"], base: "ETC", venueSymbol: "ETC-USDT", multiplier: 1, contractSize: 1, fundingIntervalHours: 4 };
const errorBody = (code: number | string) => ({ ...(fixture("htx/error_1030_docs_example.json") as object), err_code: code });

describe("htx symbols", () => {
  it("maps contract codes both ways; dated futures and coin-margined codes are not swaps", () => {
    expect(fromHtxSymbol("BTC-USDT")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromHtxSymbol("1000PEPE-USDT")).toEqual({ base: "PEPE", multiplier: 1000 });
    expect(fromHtxSymbol("BTC-USDT-211210")).toBeUndefined();
    expect(fromHtxSymbol("BTC-USD")).toBeUndefined();
    expect(toHtxSymbol("eth")).toBe("ETH-USDT");
    expect(toHtxSymbol("PEPE", 1000)).toBe("1000PEPE-USDT");
  });
});

describe("htx parsers on the documented payloads", () => {
  it("reads swap_contract_info: the swap only (dated futures dropped), contract_size coins, interval from settle_period", () => {
    expect(parseSettlePeriods(elements())).toEqual(new Map([["BTC-USDT", 8]]));
    expect(btc()).toEqual({ venue: "htx", base: "BTC", venueSymbol: "BTC-USDT", multiplier: 1, contractSize: 0.001, fundingIntervalHours: 8 });
    expect(parseContractInfo(contractInfo())[0]?.fundingIntervalHours).toBeUndefined();
    const suspended = { status: "ok", data: [{ ...(contractInfo() as { data: object[] }).data[3], contract_status: 3 }] };
    expect(parseContractInfo(suspended)).toEqual([]);
  });

  it("reads swap_funding_rate and swap_batch_funding_rate: current rate settling at funding_time, the body's ts", () => {
    expect(
      parseFunding(fixture("htx/swap_funding_rate_BTC-USDT_docs_example.json"), bySymbol(btc()), {
        indexes: parseIndexPrices(fixture("htx/swap_index_BTC-USDT_docs_example.json")),
      }),
    ).toEqual([
      {
        venue: "htx",
        base: "BTC",
        venueSymbol: "BTC-USDT",
        fundingRate: 0.0001,
        fundingIntervalHours: 8,
        nextFundingTime: 1603699200000,
        markPrice: null,
        indexPrice: 13076.32986568,
        premium: null,
        interestRate: null,
        time: 1603696494714,
      },
    ]);
    const batch = parseFunding(fixture("htx/swap_batch_funding_rate_docs_example.json"), bySymbol(etc));
    expect(batch.map((f) => [f.venueSymbol, f.fundingRate, f.fundingIntervalHours, f.nextFundingTime, f.time])).toEqual([["ETC-USDT", -0.0075, 4, 1613976000000, 1614045373795]]);
  });

  it("reads the mark price kline (newest close) and swap_index", () => {
    expect(parseMarkPriceKline(fixture("htx/linear_swap_mark_price_kline_BTC-USDT_5min_docs_example.json"))).toBe(31078.68);
    expect(parseMarkPriceKline({ status: "ok", data: [], ts: 1 })).toBeNull();
    expect(parseIndexPrices(fixture("htx/swap_index_BTC-USDT_docs_example.json"))).toEqual(new Map([["BTC-USDT", 13076.32986568]]));
  });

  it("reads swap_historical_funding_rate: settlement time and rate, page count", () => {
    expect(parseFundingHistory(fixture("htx/swap_historical_funding_rate_BTC-USDT_docs_example.json"), btc())).toEqual({
      points: [{ venue: "htx", base: "BTC", time: 1603670400000, rate: 0.0001, markPrice: null }],
      totalPages: 14,
    });
  });

  it("reads swap_open_interest: the swap's row (amount coins, value USDT), not the futures'", () => {
    expect(parseOpenInterest(fixture("htx/swap_open_interest_BTC-USDT_docs_example.json"), btc())).toEqual({
      venue: "htx",
      base: "BTC",
      oiCoins: 78.696,
      oiUsd: 3823138.2456,
      time: 1638754059540,
    });
    expectAppError(() => parseOpenInterest({ status: "ok", data: [], ts: 1 }, btc()), "NOT_FOUND");
  });

  it("reads swap_his_open_interest: contracts × contract_size, oldest first", () => {
    expect(parseOpenInterestHistory(fixture("htx/swap_his_open_interest_docs_example.json"), btc())).toEqual([
      { venue: "htx", base: "BTC", time: 1638720000000, oiCoins: 27.112, oiUsd: 1321498.5264 },
    ]);
    const coins = { status: "ok", data: { tick: [{ volume: 3, amount_type: 2, ts: 2, value: 9 }] }, ts: 3 };
    expect(parseOpenInterestHistory(coins, btc())[0]?.oiCoins).toBe(3);
  });

  it("reads swap_elite_position_ratio: top traders' positions, long = buy share", () => {
    expect(parseElitePositionRatio(fixture("htx/swap_elite_position_ratio_docs_example.json"), btc(), "5m")).toEqual({
      venue: "htx",
      base: "BTC",
      longRatio: 0.5,
      shortRatio: 0.5,
      lsRatio: 1,
      source: "top_traders_positions",
      period: "5m",
      time: 1638460800000,
    });
    expect(parseElitePositionRatio({ status: "ok", data: { list: [] }, ts: 1 }, btc(), "5m")).toBeNull();
  });

  it("reads swap_adjustfactor: rate = adjust_factor / leverage at the highest leverage, bounds contracts × size × price", () => {
    const tiers = parseAdjustFactor(fixture("htx/swap_adjustfactor_BTC-USDT_docs_example.json"), btc(), 50_000);
    expect(tiers.map((t) => [t.minNotionalUsd, t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual([
      [0, 450_000, 125, 0.0052],
      [450_000, 4_500_000, 125, 0.0064],
      [4_500_000, null, 125, 0.0068],
    ]);
    expect(parseAdjustFactor({ status: "ok", data: [], ts: 1 }, btc(), 50_000)).toEqual([]);
  });

  it("reads history/kline: id seconds → ms, amount coins, trade_turnover USDT", () => {
    expect(parseKlines(fixture("htx/history_kline_BTC-USDT_1min_docs_example.json"), btc())).toEqual([
      { venue: "htx", base: "BTC", openTime: 1603695060000, open: 13076.8, high: 13076.8, low: 13076.8, close: 13076.8, volumeCoins: 0.004, volumeUsd: 52.3072 },
    ]);
  });

  it("undoes a multiplier prefix on prices and sizes", () => {
    const pepe: PerpInstrument = { venue: btc().venue, base: "PEPE", venueSymbol: "1000PEPE-USDT", multiplier: 1000, contractSize: 1 };
    const [k] = parseKlines(fixture("htx/history_kline_BTC-USDT_1min_docs_example.json"), pepe);
    expect([k!.close, k!.volumeCoins]).toEqual([13.0768, 4]);
  });

  it("maps refusals: unknown contract → NOT_FOUND, 1032 → UPSTREAM_UNAVAILABLE, others and odd shapes → UPSTREAM_ERROR", () => {
    expect(htxRefusal(fixture("htx/error_1030_docs_example.json"))).toEqual({ code: "1030", message: "Abnormal service. Please try again later." });
    expect(htxRefusal({ status: "error", "err-code": "invalid-parameter", "err-msg": "invalid contract code" })).toEqual({
      code: "invalid-parameter",
      message: "invalid contract code",
    });
    expect(htxRefusal({ code: 1014, msg: "This contract doesn't exist." })).toEqual({ code: "1014", message: "This contract doesn't exist." });
    expect(htxRefusal(fixture("htx/swap_liquidation_orders_v3_docs_example.json"))).toBeUndefined();
    expect(parseHtxError("<html>")).toBeUndefined();
    expectAppError(() => parseFundingHistory(errorBody(1014), btc()), "NOT_FOUND", /BTC-USDT/);
    expectAppError(() => parseOpenInterest(errorBody(1032), btc()), "UPSTREAM_UNAVAILABLE");
    expectAppError(() => parseOpenInterest(fixture("htx/error_1030_docs_example.json"), btc()), "UPSTREAM_ERROR", /1030/);
    expectAppError(() => parseContractInfo({ status: "ok", data: {} }), "UPSTREAM_ERROR");
    expectAppError(() => parseContractInfo([]), "UPSTREAM_ERROR");
  });
});

const lookup = (...list: FeedInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));
const lines = (file: string) => fixtureText(`htx/${file}`).trim().split("\n");
const o3: FeedInstrument = { base: "O3", venueSymbol: "O3-USDT", multiplier: 1, contractSize: 1 };

describe("htx websocket frames (documented, as text and as gzip)", () => {
  it("reads the market socket: subscribe ack, trade.detail (taker side, contracts × size), ping, ignored kline, refusal", () => {
    const [ack, trades, ping, kline, refused] = lines("ws_market_frames_docs_example.ndjson").map((f) => parseHtxMessage(f, lookup(btc())));
    expect(ack!.control).toEqual({ type: "ack", message: "market.BTC-USDT.trade.detail" });
    expect(trades!.trades).toEqual([{ venue: "htx", base: "BTC", time: 1603708208335, price: 13073.3, size: 0.002, side: "buy", id: "1316022650000" }]);
    expect(ping!.control).toEqual({ type: "ack", message: `${PING}18212558000` });
    expect(kline).toEqual({ trades: [], liquidations: [], skipped: 0 });
    expect(refused!.control).toEqual({ type: "venue_error", message: "1030 Abnormal service. Please try again later." });
    expect(parseHtxMessage({ status: "error", "err-code": "bad-request", "err-msg": "invalid topic" }, lookup()).control).toEqual({
      type: "venue_error",
      message: "bad-request invalid topic",
    });
  });

  it("reads the notification socket: ack, liquidation (a sell closed a long), ping with a string ts echoed as such, error pong", () => {
    const [ack, liq, ping, badPong] = lines("ws_notification_frames_docs_example.ndjson").map((f) => parseHtxMessage(f, lookup(o3)));
    expect(ack!.control).toEqual({ type: "ack", message: "sub public.BTC-USDT.liquidation_orders" });
    expect(liq!.liquidations).toEqual([{ venue: "htx", base: "O3", venueSymbol: "O3-USDT", time: 1639122193172, side: "long", price: 0.7858, size: 432, valueUsd: 339.4656 }]);
    expect(ping!.control).toEqual({ type: "ack", message: `${PING}"1492420473058"` });
    expect(badPong!.control).toEqual({ type: "venue_error", message: "2011 detailed error message" });
    expect(parseHtxMessage({ op: "sub", topic: "public.BTC-USDT.liquidation_orders", "err-code": 2014, "err-msg": "Repeated subscription" }, lookup()).control?.type).toBe("ack");
    expect(parseHtxMessage({ op: "sub", topic: "public.X.liquidation_orders", "err-code": 2011, "err-msg": "Contract doesn't exist" }, lookup()).control?.type).toBe("venue_error");
    expect(parseHtxMessage({ op: "close", ts: 1 }, lookup()).control?.type).toBe("reconnect");
  });

  it("inflates gzip frames, counts unknown contracts as skipped, and never throws", () => {
    const [, trade] = lines("ws_market_frames_docs_example.ndjson");
    const gz = gzipSync(Buffer.from(trade!));
    expect(htxFrameText(gz)).toBe(trade);
    expect(htxFrameText(Buffer.from(trade!))).toBe(trade);
    expect(parseHtxMessage(gz, lookup(btc())).trades).toHaveLength(1);
    expect(parseHtxMessage(new Uint8Array(gz), lookup(btc())).trades).toHaveLength(1);
    expect(parseHtxMessage(gz, lookup()).skipped).toBe(1);
    expect(parseHtxMessage(lines("ws_notification_frames_docs_example.ndjson")[1]!, lookup()).skipped).toBe(1);
    expect(parseHtxMessage(Buffer.from([0x1f, 0x8b, 1, 2, 3]), lookup()).error).toMatch(/inflate/);
    expect(parseHtxMessage("not json", lookup()).error).toMatch(/not JSON/);
    expect(parseHtxMessage("[]", lookup()).error).toBeDefined();
    expect(parseHtxMessage({ ping: { x: 1 } }, lookup()).error).toBeDefined();
  });

  it("reads the REST trades (fills nested per order) and v3 liquidation rows", () => {
    expect(parseHtxTrades(fixture("htx/history_trade_BTC-USDT_docs_example.json"), btc()).trades).toEqual([
      { venue: "htx", base: "BTC", time: 1603695383124, price: 13081.3, size: 0.002, side: "buy", id: "1314767870000" },
    ]);
    expect(parseHtxTrades(fixture("htx/error_1030_docs_example.json"), btc()).error).toBeDefined();
    const future: FeedInstrument = { base: "BTC", venueSymbol: "BTC-USDT-211210", multiplier: 1, contractSize: 0.001 };
    const liq = parseHtxLiquidationOrders(fixture("htx/swap_liquidation_orders_v3_docs_example.json"), lookup(future));
    // 479 contracts × 0.001 = the row's amount 0.479 BTC; price × size = its trade_turnover
    expect(liq.liquidations).toEqual([
      { venue: "htx", base: "BTC", venueSymbol: "BTC-USDT-211210", time: 1638593647864, side: "long", price: 51441.7, size: 0.479, valueUsd: 24640.5743 },
    ]);
    expect(parseHtxLiquidationOrders(fixture("htx/swap_liquidation_orders_v3_docs_example.json"), lookup()).skipped).toBe(1);
    expect(parseHtxLiquidationOrders({ code: 1014, msg: "This contract doesn't exist.", data: null }, lookup()).error).toBeDefined();
  });
});

describe("htx client against a stub venue", () => {
  let stub: RunningStub;
  let fail: { status: number; body: unknown } | null = null;
  const answer = (body: () => unknown) => () => (fail ? { status: fail.status, body: fail.body } : { body: body() });
  beforeAll(async () => {
    stub = await startStub({
      "GET /linear-swap-api/v1/swap_contract_info": () => ({ body: contractInfo() }),
      "GET /linear-swap-api/v1/swap_query_elements": () => ({ body: elements() }),
      "GET /linear-swap-api/v1/swap_batch_funding_rate": () => ({
        body: {
          ...(fixture("htx/swap_funding_rate_BTC-USDT_docs_example.json") as object),
          data: [(fixture("htx/swap_funding_rate_BTC-USDT_docs_example.json") as { data: object }).data],
        },
      }),
      "GET /linear-swap-api/v1/swap_index": () => ({ body: fixture("htx/swap_index_BTC-USDT_docs_example.json") }),
      "GET /index/market/history/linear_swap_mark_price_kline": answer(() => fixture("htx/linear_swap_mark_price_kline_BTC-USDT_5min_docs_example.json")),
      "GET /linear-swap-api/v1/swap_historical_funding_rate": answer(() => fixture("htx/swap_historical_funding_rate_BTC-USDT_docs_example.json")),
      "GET /linear-swap-api/v1/swap_open_interest": answer(() => fixture("htx/swap_open_interest_BTC-USDT_docs_example.json")),
      "GET /linear-swap-api/v1/swap_his_open_interest": answer(() => fixture("htx/swap_his_open_interest_docs_example.json")),
      "GET /linear-swap-api/v1/swap_elite_position_ratio": answer(() => fixture("htx/swap_elite_position_ratio_docs_example.json")),
      "GET /linear-swap-api/v1/swap_adjustfactor": answer(() => fixture("htx/swap_adjustfactor_BTC-USDT_docs_example.json")),
      "GET /linear-swap-ex/market/history/kline": answer(() => fixture("htx/history_kline_BTC-USDT_1min_docs_example.json")),
    });
  });
  afterAll(() => stub.close());
  const client = () => new HtxPerpClient(`${stub.url}/`, { timeoutMs: 2000, retries: 0 });

  it("serves every method from the right path and parameters", async () => {
    const c = client();
    stub.calls.length = 0;
    expect((await c.instruments()).map((i) => [i.venueSymbol, i.contractSize, i.fundingIntervalHours])).toEqual([["BTC-USDT", 0.001, 8]]);
    const f = await c.funding("btc");
    expect([f.fundingRate, f.markPrice, f.indexPrice]).toEqual([0.0001, 31078.68, 13076.32986568]);
    expect((await c.fundingAll()).map((x) => x.markPrice)).toEqual([null]);
    expect(await c.fundingHistory("BTC", 120)).toHaveLength(1);
    expect((await c.openInterest("BTC")).oiCoins).toBe(78.696);
    expect(await c.openInterestHistory("BTC", 500)).toHaveLength(1);
    expect((await c.longShort("BTC"))?.source).toBe("top_traders_positions");
    // the tiers' USD bounds are read at the mark price (31078.68): 9000 contracts × 0.001 × mark
    expect((await c.marginTiers("BTC")).map((t) => t.maxNotionalUsd)).toEqual([279708.12, 2797081.2, null]);
    expect((await c.hourlyCandles("BTC", 24))[0]?.volumeUsd).toBe(52.3072);
    const calls = stub.calls.filter((x) => !x.includes("/swap_batch_funding_rate") && !x.includes("/swap_index") && !x.includes("mark_price_kline"));
    expect(calls.sort()).toEqual(
      [
        "GET /linear-swap-api/v1/swap_contract_info?business_type=swap",
        "GET /linear-swap-api/v1/swap_query_elements",
        `GET /linear-swap-api/v1/swap_historical_funding_rate?contract_code=BTC-USDT&page_index=1&page_size=${HTX_FUNDING_PAGE}`,
        `GET /linear-swap-api/v1/swap_historical_funding_rate?contract_code=BTC-USDT&page_index=2&page_size=${HTX_FUNDING_PAGE}`,
        `GET /linear-swap-api/v1/swap_historical_funding_rate?contract_code=BTC-USDT&page_index=3&page_size=${HTX_FUNDING_PAGE}`,
        "GET /linear-swap-api/v1/swap_open_interest?contract_code=BTC-USDT&business_type=swap",
        "GET /linear-swap-api/v1/swap_his_open_interest?contract_code=BTC-USDT&period=60min&amount_type=1&size=200",
        "GET /linear-swap-api/v1/swap_elite_position_ratio?contract_code=BTC-USDT&period=5min",
        "GET /linear-swap-api/v1/swap_adjustfactor?contract_code=BTC-USDT",
        "GET /linear-swap-ex/market/history/kline?contract_code=BTC-USDT&period=60min&size=24",
      ].sort(),
    );
    expect(stub.calls).toContain("GET /index/market/history/linear_swap_mark_price_kline?contract_code=BTC-USDT&period=1min&size=1");
  });

  it("maps errors: unlisted base and code 1014 → NOT_FOUND, 1032 and HTTP 403 → UPSTREAM_UNAVAILABLE, others → UPSTREAM_ERROR", async () => {
    const c = client();
    expect((await appError(() => c.funding("NOPE"))).code).toBe("NOT_FOUND");
    try {
      fail = { status: 200, body: errorBody(1014) };
      expect((await appError(() => c.fundingHistory("BTC", 10))).code).toBe("NOT_FOUND");
      fail = { status: 200, body: errorBody(1032) };
      expect((await appError(() => c.openInterest("BTC"))).code).toBe("UPSTREAM_UNAVAILABLE");
      fail = { status: 403, body: errorBody(1030) };
      expect((await appError(() => c.longShort("BTC"))).code).toBe("UPSTREAM_UNAVAILABLE");
      fail = { status: 400, body: errorBody(1030) };
      expect((await appError(() => c.hourlyCandles("BTC", 5))).code).toBe("UPSTREAM_ERROR");
      fail = { status: 200, body: { status: "ok", data: "nope", ts: 1 } };
      expect((await appError(() => c.openInterestHistory("BTC", 5))).code).toBe("UPSTREAM_ERROR");
      // the mark price is best effort: funding still answers, without it
      fail = { status: 200, body: errorBody(1030) };
      expect((await c.funding("BTC")).markPrice).toBeNull();
    } finally {
      fail = null;
    }
  });
});

const stubs: RunningStub[] = [];
afterEach(async () => {
  for (const s of stubs.splice(0)) await s.close();
});
async function stubOf(routes: Record<string, StubRoute>): Promise<RunningStub> {
  const s = await startStub(routes);
  stubs.push(s);
  return s;
}

const T0 = 1_700_000_000_000;
const eth: FeedInstrument = { base: "ETH", venueSymbol: "ETH-USDT", multiplier: 1, contractSize: 0.01 };
const btcFeed: FeedInstrument = { base: "BTC", venueSymbol: "BTC-USDT", multiplier: 1, contractSize: 0.001 };
const source = (...list: FeedInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b), instruments: async () => list });

describe("htx trade backfill (latest 2000 trades)", () => {
  /** A history/trade body of `n` fills one second apart ending at `end`, newest order first. */
  const tape = (n: number, end: number) => ({
    ch: "market.BTC-USDT.trade.detail",
    status: "ok",
    ts: end,
    data: Array.from({ length: n }, (_, k) => ({
      id: 1000 + n - k,
      ts: end - k * 1000,
      data: [{ id: (1000 + n - k) * 10000, ts: end - k * 1000, price: 65000, amount: 3, direction: k % 2 ? "sell" : "buy", quantity: 0.003 }],
    })),
  });

  it("asks for the latest 2000 trades and is complete only when they reach back past the gap", async () => {
    const s = await stubOf({ "GET /linear-swap-ex/market/history/trade": () => ({ body: tape(120, T0) }) });
    const bf = new HtxTradeBackfill({ baseUrl: s.url, instruments: source(btcFeed), timeoutMs: 2000, retries: 0 });
    const inside = await bf.fetchTrades("btc", T0 - 60_000, T0 + 1);
    expect(inside.complete).toBe(true);
    expect(inside.trades).toHaveLength(61);
    expect(inside.trades[0]).toMatchObject({ venue: "htx", base: "BTC", size: 0.003, time: T0 - 60_000 });
    const older = await bf.fetchTrades("btc", T0 - 600_000, T0);
    expect(older.complete).toBe(false);
    expect(s.calls).toEqual([
      "GET /linear-swap-ex/market/history/trade?contract_code=BTC-USDT&size=2000",
      "GET /linear-swap-ex/market/history/trade?contract_code=BTC-USDT&size=2000",
    ]);
    expect((await appError(() => bf.fetchTrades("NOPE", T0 - 1000, T0))).code).toBe("NOT_FOUND");
  });
});

describe("htx liquidation backfill (v3 swap_liquidation_orders, per contract)", () => {
  type Row = { query_id: number; contract_code: string; direction: "buy" | "sell"; offset: string; volume: number; price: number; created_at: number; amount: number };
  const row = (query_id: number, contract: FeedInstrument, created_at: number, direction: "buy" | "sell" = "sell"): Row => ({
    query_id,
    contract_code: contract.venueSymbol,
    direction,
    offset: "close",
    volume: 10,
    price: 100,
    created_at,
    amount: 10 * contract.contractSize,
  });
  /** A venue holding `rows`: filters by contract and window, pages two rows at a time after `from_id` (direct next). */
  function venue(rows: Row[], opts: { failOn?: string } = {}): StubRoute {
    return (req) => {
      const q = req.query as Record<string, string>;
      if (opts.failOn === q.contract) return { status: 200, body: { code: 1014, msg: "This contract doesn't exist.", data: null, ts: 1 } };
      if (Number(q.end_time) - Number(q.start_time) >= HTX_LIQUIDATION_WINDOW_MS) return { status: 200, body: { code: 1030, msg: "window too large", data: null, ts: 1 } };
      const sel = rows
        .filter((r) => r.contract_code === q.contract && r.created_at >= Number(q.start_time) && r.created_at <= Number(q.end_time))
        .filter((r) => q.from_id === undefined || r.query_id > Number(q.from_id))
        .sort((a, b) => a.query_id - b.query_id);
      return { body: { code: 200, msg: "", data: sel.slice(0, 2), ts: 1 } };
    };
  }
  const http = (url: string) => new VenueHttpClient({ venue: "htx", baseUrl: url, timeoutMs: 2000, callsPerMin: 100_000, retries: 0 });

  it("reads every contract, pages by query_id, splits windows at two hours, keeps [from, to)", async () => {
    const rows = [
      row(1, btcFeed, T0 + 1000),
      row(5, btcFeed, T0 + 2000, "buy"),
      row(7, btcFeed, T0 + 3000),
      row(9, btcFeed, T0 + 3 * 3_600_000),
      row(3, eth, T0 + 5000),
      row(4, eth, T0 - 1), // before the gap: not asked for
    ];
    const s = await stubOf({ "GET /linear-swap-api/v3/swap_liquidation_orders": venue(rows) });
    const r = await fetchHtxLiquidations(http(s.url), source(btcFeed, eth), logger, T0, T0 + 3 * 3_600_000 + 1);
    expect(r.complete).toBe(true);
    expect(r.liquidations.map((l) => [l.venueSymbol, l.time, l.side, l.size])).toEqual([
      ["BTC-USDT", T0 + 1000, "long", 0.01],
      ["BTC-USDT", T0 + 2000, "short", 0.01],
      ["BTC-USDT", T0 + 3000, "long", 0.01],
      ["ETH-USDT", T0 + 5000, "long", 0.1],
      ["BTC-USDT", T0 + 3 * 3_600_000, "long", 0.01],
    ]);
    const btcCalls = s.calls.filter((c) => c.includes("contract=BTC-USDT"));
    // window 1: ids 1, 5 → after 5: id 7 → after 7: empty; window 2: id 9 → after 9: empty
    expect(btcCalls.map((c) => new URL(c.slice(4), "http://x").searchParams.get("from_id"))).toEqual([null, "5", "7", null, "9"]);
    expect(s.calls.every((c) => c.includes("trade_type=0") && c.includes("direct=next"))).toBe(true);
  });

  it("is incomplete when a contract is refused or the request cap runs out, keeping what it read", async () => {
    const rows = [row(1, btcFeed, T0 + 1000), row(2, eth, T0 + 2000)];
    const s = await stubOf({ "GET /linear-swap-api/v3/swap_liquidation_orders": venue(rows, { failOn: "ETH-USDT" }) });
    const refused = await fetchHtxLiquidations(http(s.url), source(btcFeed, eth), logger, T0, T0 + 60_000);
    expect(refused.complete).toBe(false);
    expect(refused.liquidations.map((l) => l.venueSymbol)).toEqual(["BTC-USDT"]);
    const capped = await fetchHtxLiquidations(http(s.url), source(btcFeed), logger, T0, T0 + 60_000, 1);
    expect(capped).toMatchObject({ complete: false, liquidations: [{ venueSymbol: "BTC-USDT" }] });
    expect(await fetchHtxLiquidations(http(s.url), source(btcFeed), logger, T0, T0)).toEqual({ liquidations: [], complete: true });
  });

  it("runs from the trade backfill on its own client", async () => {
    const s = await stubOf({ "GET /linear-swap-api/v3/swap_liquidation_orders": venue([row(1, btcFeed, T0 + 10)]) });
    const bf = new HtxTradeBackfill({ baseUrl: s.url, instruments: source(btcFeed), timeoutMs: 2000, retries: 0 });
    const r = await bf.fetchLiquidations(T0, T0 + 1000);
    expect(r).toMatchObject({ complete: true, liquidations: [{ venue: "htx", venueSymbol: "BTC-USDT", side: "long" }] });
  });
});
