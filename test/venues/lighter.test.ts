import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { FeedInstrument } from "../../src/ingestion/feeds/normalise.js";
import { CAPABILITIES, CAPABILITY_METHOD } from "../../src/venues/define.js";
import { LIGHTER_RECENT_TRADES_LIMIT, LighterTradeBackfill } from "../../src/venues/lighter/backfill.js";
import { LighterPerpClient } from "../../src/venues/lighter/client.js";
import { LighterFeed } from "../../src/venues/lighter/feed.js";
import { parseLighterMessage, parseLighterRecentTrades } from "../../src/venues/lighter/feed-parse.js";
import { lighter } from "../../src/venues/lighter/index.js";
import {
  assertOk,
  fundingSnapshots,
  type LighterInstrument,
  lighterMarketId,
  parseFundingRates,
  parseFundings,
  parseInstruments,
  parseMarginTiers,
  parseOpenInterest,
  parseOrderBookDetails,
} from "../../src/venues/lighter/parse.js";
import type { PerpVenueClient } from "../../src/venues/perp/types.js";
import { expectAppError } from "../helpers/errors.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { collectEvents, waitFor, wsTestKit } from "../helpers/ws-server.js";
import { startStub, type RunningStub } from "./perp-server.js";

/*
 * Lighter: every parser on the recorded payloads (src/venues/lighter/fixtures/README.md), the client and the recentTrades
 * backfill against a local HTTP stub, the websocket parser on recorded frames and the feed against a local ws server.
 */

const HOUR = 3_600_000;
const NOW = 1_785_252_600_000; // a time of the recorded websocket session (the hour after its funding)
const ETH_NAUTILUS = "lighter/orderBookDetails_ETH_2026-05-05_nautilus.json";
const ETH_CCXT = "lighter/orderBookDetails_ETH_2025-11_ccxt.json";
const METAS = "lighter/orderBookDetails_metas_lighter-ts_trimmed.json";

const inst = (venueSymbol: string, base: string, marketId: number, multiplier = 1): LighterInstrument => ({
  venue: "lighter" as LighterInstrument["venue"],
  base,
  venueSymbol,
  multiplier,
  contractSize: 1,
  fundingIntervalHours: 1,
  marketId,
});
const ETH = inst("ETH", "ETH", 0);
const CRV = inst("CRV", "CRV", 36);
const PEPE = inst("1000PEPE", "PEPE", 4, 1000);
const FRAMES = fixtureText("lighter/ws_frames_hftbacktest_2026-07.ndjson").trim().split("\n");
const frameAt = (line: number): string => FRAMES[line - 1]!;
const byMarket = (...list: LighterInstrument[]) => new Map<string, FeedInstrument>(list.map((i) => [String(i.marketId), i]));

/** The nautilus ETH row with a 2026-style `mark_price`/`index_price` (strings) — the fields newer bodies add. */
function withMark(row: Record<string, unknown>, mark: string, index: string): Record<string, unknown> {
  return { ...row, mark_price: mark, index_price: index };
}
const ethRow = () => (fixture(ETH_NAUTILUS) as { order_book_details: Array<Record<string, unknown>> }).order_book_details[0]!;
const pepeRow = () => (fixture(METAS) as { order_book_details: Array<Record<string, unknown>> }).order_book_details[0]!;

describe("lighter REST parsers on recorded bodies", () => {
  it("lists active perpetuals with their market id: nautilus 2026 body, ccxt 2025 body without market_type", () => {
    expect(parseInstruments(fixture(ETH_NAUTILUS))).toEqual([ETH]);
    expect(parseInstruments(fixture(ETH_CCXT))).toEqual([ETH]);
  });

  it("undoes 1000PEPE, skips an inactive market and the spot list; keeps an equity perp (lighter-ts snapshot)", () => {
    const list = parseInstruments(fixture(METAS));
    expect(list).toEqual([PEPE, inst("AAPL", "AAPL", 113)]);
    expect(list.map(lighterMarketId)).toEqual([4, 113]);
    expect(lighterMarketId({ base: "BTC", venueSymbol: "BTC", multiplier: 1, contractSize: 1 })).toBeUndefined();
    // a 2025-style body listing spot rows in the same array: dropped by market_type and by the `/` of their symbol
    const mixed = {
      code: 200,
      order_book_details: [ethRow(), { symbol: "ETH/USDC", market_id: 2048, market_type: "spot", status: "active" }, { symbol: "LIT/USDC", market_id: 2049, status: "active" }],
    };
    expect(parseInstruments(mixed)).toEqual([ETH]);
  });

  it("reads open interest in coins and values it at the last trade (bodies without a mark) or the mark", () => {
    const rows = parseOrderBookDetails(fixture(ETH_NAUTILUS));
    expect(parseOpenInterest(rows, ETH, NOW)).toEqual({ venue: "lighter", base: "ETH", oiCoins: 27350.8981, oiUsd: 64583949.192511, time: NOW });
    expect(parseOpenInterest(parseOrderBookDetails(fixture(ETH_CCXT)), ETH, NOW)).toMatchObject({ oiCoins: 39559.3278, oiUsd: 140462909.626182 });
    const marked = parseOrderBookDetails({
      code: 200,
      order_book_details: [withMark(ethRow(), "2360.00", "2360.50"), { ...pepeRow(), open_interest: 135356889, mark_price: "0.002856", index_price: "0.002857" }],
    });
    expect(parseOpenInterest(marked, ETH, NOW).oiUsd).toBe(64548119.516);
    // 1000PEPE: venue units of 1000 coins, priced per 1000
    expect(parseOpenInterest(marked, PEPE, NOW)).toMatchObject({ base: "PEPE", oiCoins: 135356889000, oiUsd: 386579.274984 });
    // the SDK's static snapshot has no open interest; a market missing from the body is an upstream error
    expectAppError(() => parseOpenInterest(parseOrderBookDetails(fixture(METAS)), PEPE, NOW), "UPSTREAM_ERROR", /no open interest for 1000PEPE/);
    expectAppError(() => parseOpenInterest(rows, CRV, NOW), "UPSTREAM_ERROR", /no market 36/);
  });

  it("derives one margin tier per market from the fractions per 10,000", () => {
    expect(parseMarginTiers(parseOrderBookDetails(fixture(ETH_NAUTILUS)), ETH)).toEqual([
      { venue: "lighter", base: "ETH", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.012 },
    ]);
    const metas = parseOrderBookDetails(fixture(METAS));
    expect(parseMarginTiers(metas, PEPE)).toEqual([{ venue: "lighter", base: "PEPE", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 10, maintenanceMarginRate: 0.06 }]);
    expect(parseMarginTiers(metas, inst("AAPL", "AAPL", 113))[0]).toMatchObject({ maxLeverage: 20, maintenanceMarginRate: 0.03 });
    const toshi = parseMarginTiers(metas, inst("1000TOSHI", "TOSHI", 81, 1000))[0]!;
    expect(toshi.maxLeverage).toBe(3.000300030003);
    const bare = parseOrderBookDetails({ code: 200, order_book_details: [{ symbol: "ETH", market_id: 0, status: "active" }] });
    expectAppError(() => parseMarginTiers(bare, ETH), "UPSTREAM_ERROR", /no margin fractions/);
  });

  it("keeps Lighter's own funding-rates rows and turns their 8-hour fraction into the hourly rate", () => {
    expect([...parseFundingRates(fixture("lighter/funding-rates_ETH_ccxt.json"))]).toEqual([[0, 0.000012]]);
    const body = fixture("lighter/funding-rates_ETH_ccxt.json") as { funding_rates: unknown[] };
    const others = {
      code: 200,
      funding_rates: [
        { market_id: 0, exchange: "binance", symbol: "ETH", rate: 0.0001 },
        ...body.funding_rates,
        { market_id: 4, exchange: "lighter", symbol: "1000PEPE", rate: -0.0008 },
        { market_id: 0, exchange: "hyperliquid", symbol: "ETH", rate: 0.0001 },
      ],
    };
    expect([...parseFundingRates(others)]).toEqual([
      [0, 0.000012],
      [4, -0.0001],
    ]);
  });

  it("agrees on the unit of the three funding reads: funding-rates ÷ 8 is the percent of fundings ÷ 100", () => {
    // ETH's baseline on two recordings: funding-rates 0.000096 per 8 h (ccxt) and fundings "0.0012" % for the hour (nautilus)
    const hourly = parseFundingRates(fixture("lighter/funding-rates_ETH_ccxt.json")).get(0);
    const settled = parseFundings(fixture("lighter/fundings_ETH_1h_nautilus.json"), ETH).find((p) => p.rate > 0)!;
    expect(hourly).toBe(settled.rate);
  });

  it("builds funding snapshots: hourly rate, next full hour, mark and index per coin when the body has them", () => {
    const rates = new Map([
      [0, 0.000012],
      [4, -0.0001],
    ]);
    const plain = fundingSnapshots(rates, [ETH], parseOrderBookDetails(fixture(ETH_NAUTILUS)), NOW);
    expect(plain).toEqual([
      {
        venue: "lighter",
        base: "ETH",
        venueSymbol: "ETH",
        fundingRate: 0.000012,
        fundingIntervalHours: 1,
        nextFundingTime: NOW - (NOW % HOUR) + HOUR,
        markPrice: null,
        indexPrice: null,
        premium: null,
        interestRate: null,
        time: NOW,
      },
    ]);
    const rows = parseOrderBookDetails({
      code: 200,
      order_book_details: [withMark(ethRow(), "2360.00", "2360.50"), { ...pepeRow(), mark_price: "0.002856", index_price: "0.002857" }],
    });
    const [e, p] = fundingSnapshots(rates, [ETH, PEPE, CRV], rows, NOW);
    expect(e).toMatchObject({ markPrice: 2360, indexPrice: 2360.5 });
    expect(p).toMatchObject({ base: "PEPE", fundingRate: -0.0001, markPrice: 0.000002856, indexPrice: 0.000002857 });
  });

  it("reads settled fundings: seconds → ms, percent → fraction signed by the side that paid, newest first", () => {
    expect(parseFundings(fixture("lighter/fundings_ETH_1h_nautilus.json"), ETH)).toEqual([
      { venue: "lighter", base: "ETH", time: 1778706000000, rate: -0.000002, markPrice: null },
      { venue: "lighter", base: "ETH", time: 1778702400000, rate: 0.000012, markPrice: null },
    ]);
    const zero = parseFundings({ code: 200, fundings: [{ timestamp: 1778709600, value: "0", rate: "0.0000", direction: "short" }] }, ETH);
    expect(Object.is(zero[0]!.rate, 0)).toBe(true);
  });

  it("rejects refusals and unexpected shapes with UPSTREAM_ERROR", () => {
    const refusal = { code: 20001, message: "invalid param " };
    expectAppError(() => assertOk(refusal, "fundings"), "UPSTREAM_ERROR", /code 20001: invalid param/);
    expectAppError(() => parseFundings(refusal, ETH), "UPSTREAM_ERROR", /fundings refused/);
    expectAppError(() => parseOrderBookDetails({ code: 200 }));
    expectAppError(() => parseFundingRates({ code: 200, funding_rates: [{ market_id: 0, exchange: "lighter", symbol: "ETH", rate: "x" }] }));
    expectAppError(() => parseFundings({ code: 200, fundings: [{ timestamp: 1778702400, rate: "0.0012", direction: "up" }] }, ETH));
  });
});

describe("lighter websocket frames (recorded, hftbacktest)", () => {
  const lookup = byMarket(ETH, CRV);

  it("reads an update/trade: taker side from is_maker_ask, id trade_id, ms timestamp", () => {
    const f = parseLighterMessage(frameAt(2), lookup);
    expect(f).toMatchObject({ liquidations: [], skipped: 0 });
    expect(f.error).toBeUndefined();
    expect(f.trades).toEqual([{ venue: "lighter", base: "ETH", time: 1785252546746, price: 1913.99, size: 0.0008, side: "buy", id: "26280867773" }]);
    expect(parseLighterMessage(frameAt(3), lookup).trades).toEqual([
      { venue: "lighter", base: "CRV", time: 1785358835916, price: 0.20382, size: 0.7, side: "buy", id: "26412422124" },
    ]);
  });

  it("reads the subscribe replay: its prints oldest first; its liquidation, days older, is history: neither a liquidation nor a trade", () => {
    const f = parseLighterMessage(frameAt(4), lookup);
    expect(f.trades.map((t) => [t.id, t.time, t.side])).toEqual([
      ["26412344671", 1785358775942, "buy"],
      ["26412385647", 1785358805929, "buy"],
    ]);
    expect(f.liquidations).toEqual([]);
  });

  it("counts a live liquidation print as a trade too, in time order, and reads a short liquidated by a taker buy", () => {
    const live = JSON.parse(frameAt(4)) as Record<string, unknown> & { liquidation_trades: Array<Record<string, unknown>> };
    live.type = "update/trade";
    const f = parseLighterMessage(live, lookup);
    expect(f.trades.map((t) => t.id)).toEqual(["26218621834", "26412344671", "26412385647"]);
    expect(f.trades[0]).toMatchObject({ side: "sell", size: 8215.3 });
    expect(f.liquidations).toEqual([{ venue: "lighter", base: "CRV", venueSymbol: "CRV", time: 1785193205747, side: "long", price: 0.20039, size: 8215.3, valueUsd: 1646.263967 }]);
    live.liquidation_trades[0]!.is_maker_ask = true;
    expect(parseLighterMessage(live, lookup).liquidations[0]).toMatchObject({ side: "short" });
  });

  it("undoes a 1000× market: the ETH frame read as 1000PEPE (market 0 mapped to it)", () => {
    const [t] = parseLighterMessage(frameAt(2), new Map([["0", PEPE]])).trades;
    expect(t).toMatchObject({ base: "PEPE", price: 1.91399, size: 0.8 });
  });

  it("leaves out ADL and settlement rows, reads liquidation-typed rows of trades, skips unknown markets", () => {
    const base = JSON.parse(frameAt(2)) as { trades: Array<Record<string, unknown>> };
    const row = base.trades[0]!;
    const frame = {
      channel: "trade:0",
      type: "update/trade",
      liquidation_trades: [],
      trades: [
        { ...row, trade_id: 3, trade_id_str: "3", type: "deleverage" },
        { ...row, trade_id: 2, trade_id_str: "2", type: "market-settlement" },
        { ...row, trade_id: 1, trade_id_str: "1", type: "liquidation", is_maker_ask: false },
        { ...row, trade_id: 4, trade_id_str: "4", market_id: 99 },
      ],
    };
    const f = parseLighterMessage(frame, lookup);
    expect(f.trades.map((t) => t.id)).toEqual(["1"]);
    expect(f.liquidations).toEqual([expect.objectContaining({ side: "long", size: 0.0008 })]);
    expect(f.skipped).toBe(1);
  });

  it("reads the control frames and ignores other channels", () => {
    for (const line of [1, 9, 10, 11]) {
      const f = parseLighterMessage(frameAt(line), lookup);
      expect(f).toEqual({ trades: [], liquidations: [], skipped: 0 });
    }
    expect(parseLighterMessage(frameAt(5), lookup).control).toEqual({ type: "pong" });
    expect(parseLighterMessage(frameAt(6), lookup).control).toEqual({ type: "venue_error", message: '{"code":30005,"message":"Invalid Channel:  (marketId)"}' });
    expect(parseLighterMessage(frameAt(7), lookup).control).toMatchObject({ type: "venue_error", message: expect.stringContaining("30003") });
    expect(parseLighterMessage(frameAt(8), lookup).control).toEqual({ type: "ack" });
  });

  it("reports malformed frames without throwing, keeping the good rows", () => {
    expect(parseLighterMessage("not json", lookup).error).toMatch(/not JSON/);
    expect(parseLighterMessage("[1]", lookup).error).toBe("lighter frame is not an object");
    expect(parseLighterMessage('{"type":"update/trade","channel":"trade:0"}', lookup).error).toBe("lighter trade frame without a trades array");
    const two = JSON.parse(frameAt(4)) as { trades: Array<Record<string, unknown>> };
    two.trades[0]!.price = "x";
    const f = parseLighterMessage(two, lookup);
    expect(f.error).toMatch(/1 malformed row\(s\); row 0: price/);
    expect(f.trades.map((t) => t.id)).toEqual(["26412344671"]);
  });

  it("reads the recorded REST recentTrades row (backfill) and rejects a refusal", () => {
    const r = parseLighterRecentTrades(fixture("lighter/recentTrades_ETH_2026-05-05_nautilus.json"), ETH);
    expect(r.trades).toEqual([{ venue: "lighter", base: "ETH", time: 1777945103092, price: 2361.31, size: 0.0005, side: "sell", id: "19211490282" }]);
    expect(parseLighterRecentTrades(fixture("lighter/recentTrades_ETH_2026-05-05_nautilus.json"), CRV)).toMatchObject({ trades: [], skipped: 1 });
    expect(parseLighterRecentTrades({ code: 20001, message: "invalid param " }, ETH).error).toBe("lighter recentTrades body has no trades array");
    expect(parseLighterRecentTrades({ code: 21100, message: "market not found", trades: [] }, ETH).error).toBe("lighter recentTrades refused (code 21100: market not found)");
  });
});

describe("lighter definition", () => {
  it("gives a reason for every capability it lacks, and the client has each capability's method", () => {
    const c: PerpVenueClient = new LighterPerpClient("http://127.0.0.1:9", { timeoutMs: 100, retries: 0 });
    for (const cap of CAPABILITIES) {
      if (lighter.capabilities[cap]) expect(lighter.missing[cap]).toBeUndefined();
      else expect(lighter.missing[cap]?.trim()).toBeTruthy();
      const method = CAPABILITY_METHOD[cap];
      if (lighter.capabilities[cap] && method) expect(typeof c[method]).toBe("function");
    }
    expect(lighter.liquidationFeed.kind).toBe("per_symbol");
    expect(lighter.doctor[0]!.needs).toBeUndefined();
  });
});

/** A stub Lighter REST API under `/api/v1`: the nautilus ETH row and a 1000PEPE row, funding-rates, hourly fundings, recentTrades. */
async function lighterStub(over: Partial<Record<string, Parameters<typeof startStub>[0][string]>> = {}): Promise<RunningStub> {
  const details = { code: 200, order_book_details: [ethRow(), { ...pepeRow(), last_trade_price: 0.002856, open_interest: 135356889 }] };
  const rates = fixture("lighter/funding-rates_ETH_ccxt.json") as { funding_rates: unknown[] };
  return startStub({
    "GET /api/v1/orderBookDetails": () => ({ body: details }),
    "GET /api/v1/funding-rates": () => ({
      body: {
        code: 200,
        funding_rates: [
          { market_id: 0, exchange: "binance", symbol: "ETH", rate: 0.0001 },
          ...rates.funding_rates,
          { market_id: 4, exchange: "lighter", symbol: "1000PEPE", rate: 0.0002 },
        ],
      },
    }),
    "GET /api/v1/fundings": (req) => {
      const q = req.query as Record<string, string>;
      const rows = [];
      for (let t = Number(q.start_timestamp); t <= Number(q.end_timestamp) && t * 1000 <= Date.now() && rows.length < 750; t += 3600) {
        rows.push({ timestamp: t, value: "0.01", rate: "0.0012", direction: rows.length % 2 ? "short" : "long" });
      }
      return { body: { code: 200, resolution: q.resolution, fundings: rows } };
    },
    ...over,
  });
}

describe("lighter client against a local stub", () => {
  let stub: RunningStub;
  beforeAll(async () => {
    stub = await lighterStub();
  });
  afterAll(() => stub.close());
  const client = (url = stub.url) => new LighterPerpClient(`${url}/api/v1`, { timeoutMs: 2000, retries: 0 });

  it("serves instruments, funding, open interest, tiers and a null long/short ratio from two shared reads", async () => {
    const c = client();
    const before = stub.calls.length;
    const [list, f] = await Promise.all([c.instruments(), c.funding("eth")]);
    expect(list.map((i) => [i.base, i.multiplier, lighterMarketId(i)])).toEqual([
      ["ETH", 1, 0],
      ["PEPE", 1000, 4],
    ]);
    expect(f).toMatchObject({ base: "ETH", fundingRate: 0.000012, fundingIntervalHours: 1, markPrice: null });
    expect((await c.fundingAll()).map((s) => [s.base, s.fundingRate])).toEqual([
      ["ETH", 0.000012],
      ["PEPE", 0.000025],
    ]);
    expect(await c.openInterest("PEPE")).toMatchObject({ oiCoins: 135356889000, oiUsd: 386579.274984 });
    expect(await c.marginTiers("eth")).toEqual([{ venue: "lighter", base: "ETH", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.012 }]);
    expect(await c.longShort("ETH")).toBeNull();
    const sent = stub.calls.slice(before);
    expect(sent.filter((u) => u === "GET /api/v1/orderBookDetails")).toHaveLength(1);
    expect(sent.filter((u) => u === "GET /api/v1/funding-rates")).toHaveLength(1);
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("pages fundings back in 500-hour windows on the hour, newest first, contiguous", async () => {
    const c = client();
    await c.instruments();
    const before = stub.calls.length;
    const hist = await c.fundingHistory("ETH", 600);
    const calls = stub.calls.slice(before);
    expect(calls).toHaveLength(2);
    const last = Math.floor(Date.now() / HOUR) * HOUR;
    const s = (ms: number) => ms / 1000;
    expect(calls[0]).toBe(`GET /api/v1/fundings?market_id=0&resolution=1h&start_timestamp=${s(last - 499 * HOUR)}&end_timestamp=${s(last + HOUR) - 1}&count_back=500`);
    expect(calls[1]).toBe(`GET /api/v1/fundings?market_id=0&resolution=1h&start_timestamp=${s(last - 599 * HOUR)}&end_timestamp=${s(last - 499 * HOUR) - 1}&count_back=100`);
    expect(hist).toHaveLength(600);
    expect(hist[0]!.time).toBe(last);
    expect(hist[599]!.time).toBe(last - 599 * HOUR);
    expect(Math.abs(hist[0]!.rate)).toBe(0.000012);
    expect(await c.fundingHistory("ETH", 0)).toEqual([]);
  });

  it("stops when a window comes back short (a market listed later)", async () => {
    const young = await lighterStub({
      "GET /api/v1/fundings": () => ({
        body: { code: 200, resolution: "1h", fundings: [{ timestamp: Math.floor(Date.now() / HOUR) * 3600, value: "0", rate: "0.0012", direction: "long" }] },
      }),
    });
    try {
      const c = client(young.url);
      const hist = await c.fundingHistory("ETH", 900);
      expect(hist).toHaveLength(1);
      expect(young.calls.filter((u) => u.startsWith("GET /api/v1/fundings"))).toHaveLength(1);
    } finally {
      await young.close();
    }
  });

  it("maps a regional block to UPSTREAM_UNAVAILABLE and a refusal to UPSTREAM_ERROR with its code", async () => {
    const blocked = await lighterStub({ "GET /api/v1/orderBookDetails": () => ({ status: 403, body: { code: 403, message: "restricted" } }) });
    const refusing = await lighterStub({
      "GET /api/v1/fundings": () => ({ status: 400, body: { code: 20001, message: "invalid param " } }),
      "GET /api/v1/funding-rates": () => ({ body: { code: 20001, message: "invalid param " } }),
    });
    try {
      await expect(client(blocked.url).instruments()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      const c = client(refusing.url);
      await expect(c.fundingHistory("ETH", 3)).rejects.toMatchObject({ code: "UPSTREAM_ERROR", message: expect.stringContaining("code 20001: invalid param") });
      await expect(c.fundingAll()).rejects.toMatchObject({ code: "UPSTREAM_ERROR", message: expect.stringContaining("funding-rates refused") });
    } finally {
      await blocked.close();
      await refusing.close();
    }
  });
});

describe("lighter recentTrades backfill (local HTTP stub)", () => {
  const T0 = 1_785_000_000_000;
  /** A synthetic tape in the recorded row layout: `count` prints `stepMs` apart ending at T0, newest first like the venue. */
  const tape = (count: number, stepMs: number) => {
    const row = (fixture("lighter/recentTrades_ETH_2026-05-05_nautilus.json") as { trades: Array<Record<string, unknown>> }).trades[0]!;
    return Array.from({ length: count }, (_, i) => ({ ...row, trade_id: 5000 - i, trade_id_str: String(5000 - i), timestamp: T0 - i * stepMs, is_maker_ask: i % 2 === 0 }));
  };
  const source = { instrument: async (b: string) => (b === "ETH" ? ETH : undefined) };

  it("asks for the market's latest 100 prints; complete only when they reach back past the gap", async () => {
    const s = await startStub({ "GET /api/v1/recentTrades": () => ({ body: { code: 200, trades: tape(100, 1000) } }) });
    try {
      const b = new LighterTradeBackfill({ baseUrl: `${s.url}/api/v1`, instruments: source, timeoutMs: 2000, retries: 0 });
      const within = await b.fetchTrades("eth", T0 - 50_000, T0 + 1);
      expect(s.calls).toEqual([`GET /api/v1/recentTrades?market_id=0&limit=${LIGHTER_RECENT_TRADES_LIMIT}`]);
      expect(within.complete).toBe(true);
      expect(within.trades).toHaveLength(51);
      expect(within.trades[0]).toMatchObject({ venue: "lighter", id: "4950", time: T0 - 50_000 });
      expect(within.trades.at(-1)).toMatchObject({ id: "5000", side: "buy" });
      const beyond = await b.fetchTrades("ETH", T0 - 500_000, T0 + 1);
      expect(beyond).toMatchObject({ complete: false });
      expect(beyond.trades).toHaveLength(100);
      await expect(b.fetchTrades("DOGE", T0 - 1000, T0)).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await s.close();
    }
  });

  it("fails the first page on a refusal body", async () => {
    const s = await startStub({ "GET /api/v1/recentTrades": () => ({ body: { code: 20001, message: "invalid param " } }) });
    try {
      const b = new LighterTradeBackfill({ baseUrl: `${s.url}/api/v1`, instruments: source, timeoutMs: 2000, retries: 0 });
      await expect(b.fetchTrades("ETH", T0 - 1000, T0)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    } finally {
      await s.close();
    }
  });
});

const { cleanup, server: wsServer } = wsTestKit();

/** The recorded frame of `line` with its rows moved to `time` (the feed's replay guard and clocks want the present). */
function liveFrame(line: number, time: number): string {
  const f = JSON.parse(frameAt(line)) as { trades: Array<Record<string, unknown>>; liquidation_trades: Array<Record<string, unknown>> };
  for (const r of [...f.trades, ...f.liquidation_trades]) r.timestamp = time;
  return JSON.stringify(f);
}

describe("lighter feed lifecycle (local ws server)", () => {
  const source = (...list: LighterInstrument[]) => ({ instrument: async (b: string) => list.find((i) => i.base === b), instruments: async () => list });

  it("subscribes trade/{market_id} on /stream?readonly=true, emits trades and liquidations, pings, resubscribes after a drop", async () => {
    const srv = await wsServer((c) => c.ws.send(frameAt(1)));
    const feed = new LighterFeed({ baseUrl: srv.url, instruments: source(ETH, CRV), heartbeatMs: 400, backoffMinMs: 10, backoffMaxMs: 20 });
    cleanup(() => feed.stop());
    const got = collectEvents(feed);
    expect(await feed.subscribe(["crv", "NOPE"])).toEqual({ subscribed: ["CRV"], unknown: ["NOPE"], rejected: [] });
    feed.start();
    const c1 = await waitFor(() => srv.conns[0]);
    expect(c1.url).toBe("/stream?readonly=true");
    await waitFor(() => c1.received.length >= 1);
    expect(JSON.parse(c1.received[0]!)).toEqual({ type: "subscribe", channel: "trade/36" });
    const now = Date.now();
    c1.ws.send(liveFrame(4, now).replace('"type":"subscribed/trade"', '"type":"update/trade"'));
    await waitFor(() => got.trades.length === 3 && got.liqs.length === 1);
    expect(got.liqs[0]).toMatchObject({ venue: "lighter", base: "CRV", side: "long", size: 8215.3 });
    await waitFor(() => c1.received.some((m) => m === '{"type":"ping"}'));
    await feed.subscribe(["ETH"]);
    await waitFor(() => c1.received.some((m) => m === '{"type":"subscribe","channel":"trade/0"}'));
    feed.unsubscribe(["CRV"]);
    await waitFor(() => c1.received.some((m) => m === '{"type":"unsubscribe","channel":"trade/36"}'));
    c1.ws.terminate();
    const c2 = await waitFor(() => srv.conns[1]);
    await waitFor(() => c2.received.length >= 1);
    expect(c2.received.filter((m) => m.includes("subscribe"))).toEqual(['{"type":"subscribe","channel":"trade/0"}']);
    expect(feed.state().reconnects).toBeGreaterThanOrEqual(1);
  });

  it("does not subscribe an instrument without a market id", async () => {
    const srv = await wsServer();
    const { marketId: _id, ...plain } = ETH;
    const feed = new LighterFeed({ baseUrl: srv.url, instruments: { instrument: async () => plain } });
    cleanup(() => feed.stop());
    await feed.subscribe(["ETH"]);
    feed.start();
    const c = await waitFor(() => srv.conns[0]);
    await waitFor(() => c.ws.readyState === WebSocket.OPEN);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.received).toEqual([]);
  });
});
