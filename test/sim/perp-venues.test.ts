import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAssets } from "../../src/assets/catalogue.js";
import { fixedClock, manualClock } from "../../src/sim/clock.js";
import { EXTREME_PREMIUM } from "../../src/sim/perp-model.js";
import { REPLAY_FILES, replayAvailable, loadRecording, DEFAULT_REPLAY_DIR } from "../../src/sim/replay.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { BinancePerpClient } from "../../src/venues/binance/client.js";
import { expectAppError } from "../helpers/errors.js";
import { BybitPerpClient } from "../../src/venues/bybit/client.js";
import { parseRiskLimit } from "../../src/venues/bybit/parse.js";
import { HyperliquidPerpClient } from "../../src/venues/hyperliquid/client.js";
import { OkxPerpClient } from "../../src/venues/okx/client.js";
import { parseCandles, parsePositionTiers } from "../../src/venues/okx/parse.js";
import type { Candle, MarginTier, PerpInstrument } from "../../src/venues/perp/types.js";

/** A fixed "now" that is not aligned to any grid (minute / hour / funding interval). */
const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
const DAY = 86_400_000;
const CATALOGUE = listAssets().map((a) => a.symbol);
const EXTRAS = ["WIF", "TIA", "INJ", "SEI"];
const DEC8 = /^-?\d+\.\d{8}$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
});
afterAll(async () => {
  await sim.close();
});

interface Got<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

async function getJson<T = unknown>(url: string): Promise<Got<T>> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as T };
}

async function info<T = unknown>(body: unknown, base = sim.urls.hyperliquid): Promise<Got<T>> {
  const res = await fetch(`${base}/info`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain-text error bodies stay strings
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

const num = (s: unknown): number => {
  expect(typeof s).toBe("string");
  expect(s as string).toMatch(DECIMAL);
  return Number(s);
};

/** Base of a venue symbol, multiplier undone. */
function baseOf(venueSymbol: string): { base: string; mult: number } {
  let m = /^1000(.+)$/.exec(venueSymbol);
  if (m) return { base: m[1] as string, mult: 1000 };
  m = /^k([A-Z]+)$/.exec(venueSymbol);
  if (m) return { base: m[1] as string, mult: 1000 };
  m = /^([A-Z]+)1000$/.exec(venueSymbol);
  if (m) return { base: m[1] as string, mult: 1000 };
  return { base: venueSymbol, mult: 1 };
}

// ---------------------------------------------------------------- wire types

type BinancePremium = {
  symbol: string;
  markPrice: string;
  indexPrice: string;
  estimatedSettlePrice: string;
  lastFundingRate: string;
  interestRate: string;
  nextFundingTime: number;
  time: number;
};
type BinanceSymbol = {
  symbol: string;
  pair: string;
  contractType: string;
  status: string;
  baseAsset: string;
  quoteAsset: string;
  marginAsset: string;
  pricePrecision: number;
  quantityPrecision: number;
  filters: Array<Record<string, unknown>>;
};
type BybitEnvelope<R> = { retCode: number; retMsg: string; result: R; retExtInfo: Record<string, never>; time: number };
type BybitList<T> = { category?: string; list: T[]; nextPageCursor?: string };
type OkxEnvelope<T> = { code: string; msg: string; data: T[] };
type HlMeta = {
  universe: Array<{ name: string; szDecimals: number; maxLeverage: number; marginTableId: number; isDelisted?: boolean }>;
  marginTables: Array<[number, { description: string; marginTiers: unknown[] }]>;
  collateralToken: number;
};
type HlCtx = Record<string, string | string[] | null>;

describe("perp venues: mounting", () => {
  it("exposes urls for every venue key, each answering with X-Simulated", async () => {
    expect(sim.urls.binance).toBe(`${sim.baseUrl}/binance`);
    expect(sim.urls.binance_spot).toBe(`${sim.baseUrl}/binance-spot`);
    expect(sim.urls.bybit).toBe(`${sim.baseUrl}/bybit`);
    expect(sim.urls.okx).toBe(`${sim.baseUrl}/okx`);
    expect(sim.urls.hyperliquid).toBe(`${sim.baseUrl}/hyperliquid`);
    const checks = [
      fetch(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`),
      fetch(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=BTCUSDT`),
      fetch(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=BTCUSDT`),
      fetch(`${sim.urls.okx}/api/v5/public/mark-price?instType=SWAP&instId=BTC-USDT-SWAP`),
      fetch(`${sim.urls.hyperliquid}/info`, { method: "POST", body: JSON.stringify({ type: "allMids" }) }),
    ];
    for (const r of await Promise.all(checks)) {
      expect(r.status).toBe(200);
      expect(r.headers.get("x-simulated")).toBe("true");
      await r.arrayBuffer();
    }
    const nope = await getJson(`${sim.urls.binance}/fapi/v1/nope`);
    expect(nope.status).toBe(404);
  });
});

describe("binance fapi", () => {
  it("exchangeInfo: every catalogue base and the extras as USDT perpetuals, plus quarterlies", async () => {
    const r = await getJson<{ timezone: string; serverTime: number; symbols: BinanceSymbol[] }>(`${sim.urls.binance}/fapi/v1/exchangeInfo`);
    expect(r.status).toBe(200);
    expect(r.body.serverTime).toBe(NOW);
    const perps = r.body.symbols.filter((s) => s.contractType === "PERPETUAL" && s.quoteAsset === "USDT");
    const bases = perps.map((s) => baseOf(s.baseAsset).base).sort();
    expect(bases).toEqual([...CATALOGUE, ...EXTRAS].sort());
    for (const s of perps) {
      expect(s.status).toBe("TRADING");
      expect(s.marginAsset).toBe("USDT");
      expect(s.pair).toBe(s.symbol);
      expect(typeof s.pricePrecision).toBe("number");
      expect(typeof s.quantityPrecision).toBe("number");
      const pf = s.filters.find((f) => f.filterType === "PRICE_FILTER");
      expect(typeof pf?.tickSize).toBe("string");
    }
    expect(perps.map((s) => s.symbol)).toEqual(expect.arrayContaining(["1000PEPEUSDT", "1000SHIBUSDT"]));
    expect(perps.find((s) => s.symbol === "1000PEPEUSDT")?.baseAsset).toBe("1000PEPE");
    const quarterly = r.body.symbols.filter((s) => s.contractType !== "PERPETUAL");
    expect(quarterly.map((s) => s.symbol)).toEqual(["BTCUSDT_261225", "ETHUSDT_261225"]);
  });

  it("fundingInfo lists only adjusted symbols, and their intervals show in premiumIndex and history", async () => {
    const info = await getJson<Array<Record<string, unknown>>>(`${sim.urls.binance}/fapi/v1/fundingInfo`);
    expect(info.status).toBe(200);
    for (const row of info.body) {
      expect(Object.keys(row)).toEqual(["symbol", "adjustedFundingRateCap", "adjustedFundingRateFloor", "fundingIntervalHours", "disclaimer"]);
      expect(row.adjustedFundingRateCap).toMatch(DEC8);
      expect(row.disclaimer).toBe(false);
    }
    const intervals = new Map(info.body.map((r) => [r.symbol as string, r.fundingIntervalHours as number]));
    expect(Object.fromEntries(intervals)).toEqual({ OPUSDT: 4, "1000PEPEUSDT": 8, SEIUSDT: 4, TIAUSDT: 4, WIFUSDT: 4 });

    const all = await getJson<BinancePremium[]>(`${sim.urls.binance}/fapi/v1/premiumIndex`);
    for (const p of all.body.filter((x) => !x.symbol.includes("_"))) {
      const h = intervals.get(p.symbol) ?? 8;
      expect(p.interestRate, p.symbol).toBe(h === 4 ? "0.00005000" : "0.00010000");
      expect(p.nextFundingTime % (h * HOUR), p.symbol).toBe(0);
      expect(p.nextFundingTime).toBeGreaterThan(NOW);
      expect(p.nextFundingTime - NOW).toBeLessThanOrEqual(h * HOUR);
    }
    for (const [symbol, h] of [
      ["WIFUSDT", 4],
      ["BTCUSDT", 8],
      ["1000PEPEUSDT", 8],
    ] as const) {
      const hist = await getJson<Array<{ fundingTime: number }>>(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=${symbol}&limit=6`);
      const times = hist.body.map((r) => r.fundingTime);
      for (let i = 1; i < times.length; i++) {
        expect(Math.abs((times[i] as number) - (times[i - 1] as number) - h * HOUR), symbol).toBeLessThan(20);
      }
    }
  });

  it("premiumIndex: array without symbol, object with one; decimals as 8-dp strings, times as numbers", async () => {
    const all = await getJson<BinancePremium[]>(`${sim.urls.binance}/fapi/v1/premiumIndex`);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body).toHaveLength(29); // 27 USDT perpetuals + the BTC/ETH quarterlies
    const one = await getJson<BinancePremium>(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(Object.keys(one.body)).toEqual(["symbol", "markPrice", "indexPrice", "estimatedSettlePrice", "lastFundingRate", "interestRate", "nextFundingTime", "time"]);
    for (const k of ["markPrice", "indexPrice", "estimatedSettlePrice", "lastFundingRate", "interestRate"] as const) {
      expect(one.body[k]).toMatch(DEC8);
    }
    expect(one.body.time).toBe(NOW);
    expect(all.body.find((p) => p.symbol === "BTCUSDT")).toEqual(one.body);
    const q = all.body.find((p) => p.symbol === "BTCUSDT_261225");
    expect(q?.nextFundingTime).toBe(0);
    expect(q?.lastFundingRate).toBe("0.00000000");
    const bad = await getJson(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=NOPEUSDT`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: -1121, msg: "Invalid symbol." });
  });

  it("premium, mark/index and funding agree: extreme markets have funding beyond the clamp with the premium's sign", async () => {
    const all = await getJson<BinancePremium[]>(`${sim.urls.binance}/fapi/v1/premiumIndex`);
    const perps = all.body.filter((p) => !p.symbol.includes("_"));
    for (const p of perps) {
      const { base } = baseOf(p.symbol.replace(/USDT$/, ""));
      const f = Number(p.lastFundingRate);
      const basis = Number(p.markPrice) / Number(p.indexPrice) - 1;
      const extreme = EXTREME_PREMIUM[base];
      if (extreme !== undefined) {
        expect(Math.sign(f), p.symbol).toBe(Math.sign(extreme));
        expect(Math.sign(basis), p.symbol).toBe(Math.sign(extreme));
        expect(Math.abs(f)).toBeGreaterThanOrEqual(0.0005);
      } else {
        // Regular markets: F = P̄ + clamp(I − P̄, ±0.05 %) — pinned at I or dispersed just beyond it (calibrated to
        // the real premiumIndex snapshot, test/sim/calibration.test.ts), never extreme.
        const inst = sim.perp.instrument("binance", p.symbol, NOW);
        if (!inst) throw new Error(`${p.symbol} not listed`);
        const pbar = sim.perp.avgPremium(inst, sim.perp.intervalStart(inst, NOW), NOW);
        const interest = Number(p.interestRate);
        expect(f, p.symbol).toBeCloseTo(pbar + Math.min(0.0005, Math.max(-0.0005, interest - pbar)), 8);
        expect(Math.abs((f * 8) / inst.fundingIntervalHours), p.symbol).toBeLessThan(0.0005);
        expect(Math.abs(basis), p.symbol).toBeLessThan(0.002);
      }
    }
    // Not all pinned: the real snapshot pins 74 % of 8h symbols, the rest sit mostly just above.
    const regular = perps.filter((p) => EXTREME_PREMIUM[baseOf(p.symbol.replace(/USDT$/, "")).base] === undefined);
    expect(regular.some((p) => p.lastFundingRate !== p.interestRate)).toBe(true);
    // The model's formula holds exactly: F = P̄ + clamp(I − P̄, ±0.05 %).
    const wif = sim.perp.perpOf("binance", "WIF");
    if (!wif) throw new Error("WIF not listed");
    const pbar = sim.perp.avgPremium(wif, sim.perp.intervalStart(wif, NOW), NOW);
    const expected = pbar + Math.min(0.0005, Math.max(-0.0005, 0.00005 - pbar));
    expect(Number(perps.find((p) => p.symbol === "WIFUSDT")?.lastFundingRate)).toBeCloseTo(expected, 8);
  });

  it("fundingRate: oldest first, default 100, max 1000, startTime/endTime windows, markPrice per venue unit", async () => {
    type Row = { symbol: string; fundingTime: number; fundingRate: string; markPrice: string };
    const d = await getJson<Row[]>(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=BTCUSDT`);
    expect(d.body).toHaveLength(100);
    expect(Object.keys(d.body[0] ?? {})).toEqual(["symbol", "fundingTime", "fundingRate", "markPrice"]);
    const times = d.body.map((r) => r.fundingTime);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(times.at(-1)).toBeLessThanOrEqual(NOW);
    expect(NOW - (times.at(-1) as number)).toBeLessThan(8 * HOUR);
    for (const r of d.body) {
      expect(r.fundingRate).toMatch(DEC8);
      expect(r.fundingTime % (8 * HOUR)).toBeLessThan(10); // ms jitter like the real venue
    }
    const big = await getJson<Row[]>(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=BTCUSDT&limit=5000`);
    expect(big.body).toHaveLength(1000);
    const start = NOW - 10 * DAY;
    const win = await getJson<Row[]>(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=BTCUSDT&startTime=${start}&endTime=${start + 2 * DAY}&limit=100`);
    expect(win.body).toHaveLength(6);
    expect((win.body[0] as Row).fundingTime).toBeGreaterThanOrEqual(start);
    const pepe = await getJson<Row[]>(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=1000PEPEUSDT&limit=1`);
    const pepeMark = Number((pepe.body[0] as Row).markPrice);
    const spotPepe = sim.perp.spotPrice("PEPE", (pepe.body[0] as Row).fundingTime);
    expect(pepeMark / (spotPepe * 1000)).toBeGreaterThan(0.99);
    expect(pepeMark / (spotPepe * 1000)).toBeLessThan(1.01);
    const bad = await getJson(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=NOPE`);
    expect(bad.status).toBe(400);
  });

  it("settled history matches the accruing rate just before each settlement", async () => {
    const clock = manualClock(NOW);
    const twin = await startSimulator({ seed: 42, clock });
    try {
      for (const symbol of ["BTCUSDT", "WIFUSDT", "SEIUSDT"]) {
        const p = await getJson<BinancePremium>(`${twin.urls.binance}/fapi/v1/premiumIndex?symbol=${symbol}`);
        const settle = p.body.nextFundingTime;
        clock.set(settle - 1);
        const before = await getJson<BinancePremium>(`${twin.urls.binance}/fapi/v1/premiumIndex?symbol=${symbol}`);
        clock.set(settle + HOUR);
        const hist = await getJson<Array<{ fundingTime: number; fundingRate: string }>>(`${twin.urls.binance}/fapi/v1/fundingRate?symbol=${symbol}&startTime=${settle}&limit=1`);
        const row = hist.body[0];
        expect(row?.fundingTime ?? 0).toBeGreaterThanOrEqual(settle);
        expect(row?.fundingTime ?? Infinity).toBeLessThan(settle + 10);
        expect(Number(row?.fundingRate)).toBeCloseTo(Number(before.body.lastFundingRate), 6);
        clock.set(NOW);
      }
    } finally {
      await twin.close();
    }
  });

  it("openInterest in venue units (coins, or thousands for 1000PEPE), Binance the largest venue", async () => {
    const r = await getJson<{ openInterest: string; symbol: string; time: number }>(`${sim.urls.binance}/fapi/v1/openInterest?symbol=BTCUSDT`);
    expect(Object.keys(r.body)).toEqual(["openInterest", "symbol", "time"]);
    expect(r.body.openInterest).toMatch(/^\d+\.\d{3}$/);
    expect(r.body.time).toBe(NOW);
    const pepe = await getJson<{ openInterest: string }>(`${sim.urls.binance}/fapi/v1/openInterest?symbol=1000PEPEUSDT`);
    const pepeInst = sim.perp.perpOf("binance", "PEPE");
    if (!pepeInst) throw new Error("PEPE not listed");
    expect((Number(pepe.body.openInterest) * 1000) / sim.perp.openInterestCoins(pepeInst, NOW)).toBeCloseTo(1, 6);
    const missing = await getJson(`${sim.urls.binance}/fapi/v1/openInterest`);
    expect(missing.status).toBe(400);
    expect((missing.body as { code: number }).code).toBe(-1102);
  });

  it("topLongShortPositionRatio: oldest first, numeric period-aligned timestamps, ratios around 1", async () => {
    type Row = { symbol: string; longShortRatio: string; longAccount: string; shortAccount: string; timestamp: number };
    const r = await getJson<Row[]>(`${sim.urls.binance}/futures/data/topLongShortPositionRatio?symbol=ETHUSDT&period=1h&limit=48`);
    expect(r.body).toHaveLength(48);
    for (const [i, row] of r.body.entries()) {
      expect(Object.keys(row)).toEqual(["symbol", "longShortRatio", "longAccount", "shortAccount", "timestamp"]);
      expect(typeof row.timestamp).toBe("number");
      expect(row.timestamp % HOUR).toBe(0);
      if (i > 0) expect(row.timestamp - (r.body[i - 1] as Row).timestamp).toBe(HOUR);
      const ratio = num(row.longShortRatio);
      expect(ratio).toBeGreaterThanOrEqual(0.6);
      expect(ratio).toBeLessThanOrEqual(2.5);
      expect(num(row.longAccount) + num(row.shortAccount)).toBeCloseTo(1, 3);
      expect(Number(row.longAccount) / Number(row.shortAccount)).toBeCloseTo(ratio, 2);
    }
    expect(r.body.at(-1)?.timestamp).toBe(Math.floor(NOW / HOUR) * HOUR);
    const badPeriod = await getJson(`${sim.urls.binance}/futures/data/topLongShortPositionRatio?symbol=ETHUSDT&period=3m`);
    expect(badPeriod.status).toBe(400);
    const badSymbol = await getJson(`${sim.urls.binance}/futures/data/topLongShortPositionRatio?symbol=NOPE&period=5m`);
    expect(badSymbol.body).toEqual({ code: -1121, msg: "Invalid symbol." });
  });
});

describe("binance spot", () => {
  it("ticker/price: {symbol, price} strings near the perp index; no multiplier on spot", async () => {
    const r = await getJson<{ symbol: string; price: string }>(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=BTCUSDT`);
    expect(Object.keys(r.body)).toEqual(["symbol", "price"]);
    expect(r.body.price).toMatch(DEC8);
    const idx = await getJson<BinancePremium>(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(Number(r.body.price) / Number(idx.body.indexPrice)).toBeCloseTo(1, 3);
    const pepe = await getJson<{ price: string }>(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=PEPEUSDT`);
    const pepeIdx = await getJson<BinancePremium>(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=1000PEPEUSDT`);
    expect((Number(pepe.body.price) * 1000) / Number(pepeIdx.body.indexPrice)).toBeCloseTo(1, 1);
    const list = await getJson<unknown[]>(`${sim.urls.binance_spot}/api/v3/ticker/price?symbols=${encodeURIComponent('["BTCUSDT","ETHUSDT"]')}`);
    expect(list.body).toHaveLength(2);
    const bad = await getJson(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=1000PEPEUSDT`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: -1121, msg: "Invalid symbol." });
  });
});

describe("bybit v5", () => {
  type Instrument = {
    symbol: string;
    contractType: string;
    status: string;
    baseCoin: string;
    quoteCoin: string;
    settleCoin: string;
    fundingInterval: number;
    priceFilter: Record<string, string>;
    lotSizeFilter: Record<string, string>;
  };
  type Ticker = Record<string, string>;

  it("instruments-info: envelope, cursor pages, fundingInterval in minutes, partial listing, multipliers", async () => {
    const seen: Instrument[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const r = await getJson<BybitEnvelope<BybitList<Instrument>>>(
        `${sim.urls.bybit}/v5/market/instruments-info?category=linear&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(Object.keys(r.body)).toEqual(["retCode", "retMsg", "result", "retExtInfo", "time"]);
      expect(r.body.retCode).toBe(0);
      expect(r.body.retMsg).toBe("OK");
      expect(r.body.retExtInfo).toEqual({});
      expect(r.body.time).toBe(NOW);
      seen.push(...r.body.result.list);
      cursor = r.body.result.nextPageCursor ?? "";
      if (cursor === "") break;
    }
    const symbols = seen.map((s) => s.symbol);
    expect(new Set(symbols).size).toBe(symbols.length);
    expect([...symbols].sort()).toEqual(symbols);
    const usdt = seen.filter((s) => s.quoteCoin === "USDT");
    expect(usdt.map((s) => baseOf(s.baseCoin).base).sort()).toEqual([...CATALOGUE.filter((b) => b !== "MATIC"), ...EXTRAS].sort());
    expect(symbols).toEqual(expect.arrayContaining(["1000PEPEUSDT", "SHIB1000USDT", "BTCPERP", "ETHPERP"]));
    expect(symbols).not.toContain("MATICUSDT");
    for (const s of seen) {
      expect(s.contractType).toBe("LinearPerpetual");
      expect(s.status).toBe("Trading");
      expect(typeof s.fundingInterval).toBe("number");
      expect(typeof s.priceFilter.tickSize).toBe("string");
    }
    const interval = Object.fromEntries(seen.map((s) => [s.symbol, s.fundingInterval]));
    expect(interval).toMatchObject({ SEIUSDT: 60, WIFUSDT: 240, TIAUSDT: 240, ARBUSDT: 240, BTCUSDT: 480 });
    expect(seen.find((s) => s.symbol === "BTCPERP")).toMatchObject({ quoteCoin: "USDC", settleCoin: "USDC" });
  });

  it("tickers: every value a string; OI value = OI × mark; nextFundingTime on the symbol's interval", async () => {
    const r = await getJson<BybitEnvelope<BybitList<Ticker>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear`);
    expect(r.body.result.category).toBe("linear");
    for (const t of r.body.result.list) {
      for (const [k, v] of Object.entries(t)) expect(typeof v, `${t.symbol}.${k}`).toBe("string");
      for (const k of [
        "lastPrice",
        "indexPrice",
        "markPrice",
        "openInterest",
        "openInterestValue",
        "turnover24h",
        "volume24h",
        "fundingRate",
        "nextFundingTime",
        "bid1Price",
        "ask1Price",
        "fundingCap",
      ]) {
        expect(t[k], `${t.symbol}.${k}`).toMatch(DECIMAL);
      }
      const oiValue = Number(t.openInterest) * Number(t.markPrice);
      expect(Math.abs(Number(t.openInterestValue) - oiValue)).toBeLessThanOrEqual(0.005 + oiValue * 1e-12);
      const h = Number(t.fundingIntervalHour);
      expect(Number(t.nextFundingTime) % (h * HOUR)).toBe(0);
      expect(Number(t.nextFundingTime) - NOW).toBeLessThanOrEqual(h * HOUR);
      expect(Number(t.nextFundingTime)).toBeGreaterThan(NOW);
      expect(Number(t.bid1Price)).toBeLessThan(Number(t.ask1Price));
    }
    const one = await getJson<BybitEnvelope<BybitList<Ticker>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=SEIUSDT`);
    expect(one.body.result.list).toHaveLength(1);
    expect(one.body.result.list[0]?.fundingIntervalHour).toBe("1");
    expect(Number(one.body.result.list[0]?.fundingRate)).toBeLessThan(-0.0004); // extreme, per hour
  });

  it("invalid symbol: HTTP 200 with retCode 10001 (MATIC is not listed on Bybit)", async () => {
    for (const path of [
      "/v5/market/tickers?category=linear&symbol=MATICUSDT",
      "/v5/market/funding/history?category=linear&symbol=NOPEUSDT",
      "/v5/market/account-ratio?category=linear&symbol=NOPEUSDT&period=1h",
    ]) {
      const r = await getJson<BybitEnvelope<unknown>>(sim.urls.bybit + path);
      expect(r.status, path).toBe(200);
      expect(r.body.retCode, path).toBe(10001);
      expect(r.body.result).toEqual({});
    }
  });

  it("funding/history: newest first, ≤ 200, spacing = the symbol's interval, string fields", async () => {
    type Row = { symbol: string; fundingRate: string; fundingRateTimestamp: string };
    const r = await getJson<BybitEnvelope<BybitList<Row>>>(`${sim.urls.bybit}/v5/market/funding/history?category=linear&symbol=WIFUSDT`);
    const list = r.body.result.list;
    expect(list).toHaveLength(200);
    for (const [i, row] of list.entries()) {
      expect(Object.keys(row)).toEqual(["symbol", "fundingRate", "fundingRateTimestamp"]);
      num(row.fundingRate);
      if (i > 0) expect(Number((list[i - 1] as Row).fundingRateTimestamp) - Number(row.fundingRateTimestamp)).toBe(4 * HOUR);
      expect(Number(row.fundingRate)).toBeGreaterThan(0.0005); // WIF: extreme positive
    }
    const tooMany = await getJson<BybitEnvelope<unknown>>(`${sim.urls.bybit}/v5/market/funding/history?category=linear&symbol=BTCUSDT&limit=201`);
    expect(tooMany.body.retCode).toBe(10001);
    const onlyStart = await getJson<BybitEnvelope<unknown>>(`${sim.urls.bybit}/v5/market/funding/history?category=linear&symbol=BTCUSDT&startTime=${NOW - DAY}`);
    expect(onlyStart.body.retCode).toBe(10001);
    const win = await getJson<BybitEnvelope<BybitList<Row>>>(
      `${sim.urls.bybit}/v5/market/funding/history?category=linear&symbol=BTCUSDT&startTime=${NOW - 2 * DAY}&endTime=${NOW}`,
    );
    expect(win.body.result.list).toHaveLength(6);
  });

  it("account-ratio: buy + sell = 1, newest first, period-aligned string timestamps", async () => {
    type Row = { symbol: string; buyRatio: string; sellRatio: string; timestamp: string };
    const r = await getJson<BybitEnvelope<BybitList<Row>>>(`${sim.urls.bybit}/v5/market/account-ratio?category=linear&symbol=BTCUSDT&period=4h&limit=10`);
    const list = r.body.result.list;
    expect(list).toHaveLength(10);
    expect(list[0]?.timestamp).toBe(String(Math.floor(NOW / (4 * HOUR)) * 4 * HOUR));
    for (const [i, row] of list.entries()) {
      expect(num(row.buyRatio) + num(row.sellRatio)).toBeCloseTo(1, 10);
      const lsr = Number(row.buyRatio) / Number(row.sellRatio);
      expect(lsr).toBeGreaterThan(0.59);
      expect(lsr).toBeLessThan(2.51);
      if (i > 0) expect(Number((list[i - 1] as Row).timestamp) - Number(row.timestamp)).toBe(4 * HOUR);
    }
  });
});

describe("okx v5", () => {
  type Inst = Record<string, unknown> & { instId: string; ctVal: string; ctValCcy: string; settleCcy: string; ctType: string; uly: string; state: string };
  type Funding = Record<string, string>;
  type Oi = { instType: string; instId: string; oi: string; oiCcy: string; oiUsd: string; ts: string };

  it("instruments: USDT swaps with real-like ctVal, plus coin-margined swaps; strings except flags/ids/lists", async () => {
    const r = await getJson<OkxEnvelope<Inst>>(`${sim.urls.okx}/api/v5/public/instruments?instType=SWAP`);
    expect(Object.keys(r.body)).toEqual(["code", "msg", "data"]);
    expect(r.body.code).toBe("0");
    expect(r.body.msg).toBe("");
    const usdt = r.body.data.filter((i) => i.settleCcy === "USDT");
    expect(usdt.map((i) => i.uly.replace(/-USDT$/, "")).sort()).toEqual([...CATALOGUE, ...EXTRAS].sort());
    const ctVal = Object.fromEntries(usdt.map((i) => [i.instId, i.ctVal]));
    expect(ctVal).toMatchObject({
      "BTC-USDT-SWAP": "0.01",
      "ETH-USDT-SWAP": "0.1",
      "SOL-USDT-SWAP": "1",
      "XRP-USDT-SWAP": "100",
      "DOGE-USDT-SWAP": "1000",
      "PEPE-USDT-SWAP": "10000000",
      "SHIB-USDT-SWAP": "1000000",
    });
    for (const i of r.body.data) {
      expect(i.state).toBe("live");
      expect(i.ctMult).toBe("1");
      for (const [k, v] of Object.entries(i)) {
        if (k === "futureSettlement") expect(typeof v).toBe("boolean");
        else if (k === "instIdCode") expect(typeof v).toBe("number");
        else if (k === "tradeQuoteCcyList") expect(Array.isArray(v)).toBe(true);
        else expect(typeof v, `${i.instId}.${k}`).toBe("string");
      }
    }
    const inverse = r.body.data.filter((i) => i.ctType === "inverse").map((i) => i.instId);
    expect(inverse).toEqual(["BTC-USD-SWAP", "ETH-USD-SWAP"]);
    const one = await getJson<OkxEnvelope<Inst>>(`${sim.urls.okx}/api/v5/public/instruments?instType=SWAP&instId=PEPE-USDT-SWAP`);
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0]?.ctValCcy).toBe("PEPE");
  });

  it("funding-rate ANY: fundingTime = next settlement, nextFundingTime − fundingTime = interval", async () => {
    const r = await getJson<OkxEnvelope<Funding>>(`${sim.urls.okx}/api/v5/public/funding-rate?instId=ANY`);
    expect(r.body.data.length).toBe(29);
    const intervals: Record<string, number> = {};
    for (const f of r.body.data) {
      for (const [k, v] of Object.entries(f)) expect(typeof v, `${f.instId}.${k}`).toBe("string");
      expect(f.nextFundingRate).toBe("");
      expect(f.method).toBe("current_period");
      expect(f.instType).toBe("SWAP");
      num(f.fundingRate);
      num(f.premium);
      num(f.settFundingRate);
      const ft = Number(f.fundingTime);
      const h = (Number(f.nextFundingTime) - ft) / HOUR;
      intervals[f.instId as string] = h;
      expect(ft % (h * HOUR)).toBe(0);
      expect(ft).toBeGreaterThan(NOW);
      expect(ft - NOW).toBeLessThanOrEqual(h * HOUR);
      expect(Math.abs(Number(f.fundingRate))).toBeLessThanOrEqual(Number(f.maxFundingRate));
    }
    expect(intervals).toMatchObject({ "WIF-USDT-SWAP": 4, "SEI-USDT-SWAP": 4, "NEAR-USDT-SWAP": 4, "BTC-USDT-SWAP": 8, "PEPE-USDT-SWAP": 8 });
    expect(Object.values(intervals).filter((h) => h === 4)).toHaveLength(3);
    const bad = await getJson<OkxEnvelope<unknown>>(`${sim.urls.okx}/api/v5/public/funding-rate?instId=NOPE-USDT-SWAP`);
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({ code: "51001", msg: "Instrument ID does not exist", data: [] });
  });

  it("funding-rate-history: newest first, ≤ 100, realizedRate, next_period; latest = settFundingRate", async () => {
    const r = await getJson<OkxEnvelope<Funding>>(`${sim.urls.okx}/api/v5/public/funding-rate-history?instId=SEI-USDT-SWAP&limit=500`);
    expect(r.body.code).toBe("0");
    expect(r.body.data).toHaveLength(100);
    const times = r.body.data.map((f) => Number(f.fundingTime));
    for (let i = 1; i < times.length; i++) expect((times[i - 1] as number) - (times[i] as number)).toBe(4 * HOUR);
    for (const f of r.body.data) {
      expect(f.method).toBe("next_period");
      expect(Number(f.realizedRate)).toBeCloseTo(Number(f.fundingRate), 7);
      expect(Number(f.fundingRate) * 2).toBeLessThan(-0.0005); // SEI: extreme negative (per 8h; the interval is 4h)
    }
    const cur = await getJson<OkxEnvelope<Funding>>(`${sim.urls.okx}/api/v5/public/funding-rate?instId=SEI-USDT-SWAP`);
    expect(cur.body.data[0]?.settFundingRate).toBe(r.body.data[0]?.fundingRate);
    const page = await getJson<OkxEnvelope<Funding>>(`${sim.urls.okx}/api/v5/public/funding-rate-history?instId=SEI-USDT-SWAP&limit=5&after=${times[1]}`);
    expect(page.body.data.map((f) => Number(f.fundingTime))).toEqual(times.slice(2, 7));
  });

  it("open-interest: oi (contracts) × ctVal = oiCcy (coins); oiUsd = oiCcy × mark; inverse swaps in USD contracts", async () => {
    const insts = await getJson<OkxEnvelope<Inst>>(`${sim.urls.okx}/api/v5/public/instruments?instType=SWAP`);
    const ctVal = new Map(insts.body.data.map((i) => [i.instId, Number(i.ctVal)]));
    const marks = await getJson<OkxEnvelope<{ instId: string; markPx: string }>>(`${sim.urls.okx}/api/v5/public/mark-price?instType=SWAP`);
    const mark = new Map(marks.body.data.map((m) => [m.instId, Number(m.markPx)]));
    const r = await getJson<OkxEnvelope<Oi>>(`${sim.urls.okx}/api/v5/public/open-interest?instType=SWAP`);
    expect(r.body.data).toHaveLength(insts.body.data.length);
    for (const o of r.body.data) {
      expect(Object.keys(o)).toEqual(["instType", "instId", "oi", "oiCcy", "oiUsd", "ts"]);
      const cv = ctVal.get(o.instId) as number;
      const m = mark.get(o.instId) as number;
      if (o.instId.endsWith("-USD-SWAP")) {
        expect(num(o.oiUsd)).toBeCloseTo(num(o.oi) * cv, 6);
        expect((num(o.oiCcy) * m) / num(o.oiUsd)).toBeCloseTo(1, 6);
      } else {
        expect((num(o.oi) * cv) / num(o.oiCcy), o.instId).toBeCloseTo(1, 9);
        expect(num(o.oiUsd) / (num(o.oiCcy) * m), o.instId).toBeCloseTo(1, 6);
      }
    }
    const pepe = r.body.data.find((o) => o.instId === "PEPE-USDT-SWAP") as Oi;
    const pepeInst = sim.perp.perpOf("okx", "PEPE");
    if (!pepeInst) throw new Error("PEPE not on okx");
    expect(Number(pepe.oiCcy) / sim.perp.openInterestCoins(pepeInst, NOW)).toBeCloseTo(1, 4);
  });

  it("mark-price, index-tickers and the premium field agree (mark = index × (1 + premium))", async () => {
    for (const base of ["BTC", "ETH", "SOL"]) {
      const m = await getJson<OkxEnvelope<Record<string, string>>>(`${sim.urls.okx}/api/v5/public/mark-price?instType=SWAP&instId=${base}-USDT-SWAP`);
      expect(Object.keys(m.body.data[0] ?? {})).toEqual(["instType", "instId", "markPx", "ts"]);
      const idx = await getJson<OkxEnvelope<Record<string, string>>>(`${sim.urls.okx}/api/v5/market/index-tickers?instId=${base}-USDT`);
      const row = idx.body.data[0] ?? {};
      expect(Object.keys(row)).toEqual(["instId", "idxPx", "high24h", "sodUtc0", "open24h", "low24h", "sodUtc8", "ts"]);
      for (const v of Object.values(row)) expect(typeof v).toBe("string");
      expect(num(row.high24h)).toBeGreaterThanOrEqual(num(row.low24h));
      const f = await getJson<OkxEnvelope<Funding>>(`${sim.urls.okx}/api/v5/public/funding-rate?instId=${base}-USDT-SWAP`);
      const premium = Number(f.body.data[0]?.premium);
      expect(Number(m.body.data[0]?.markPx) / Number(row.idxPx) - 1 - premium).toBeCloseTo(0, 4);
    }
    const bad = await getJson<OkxEnvelope<unknown>>(`${sim.urls.okx}/api/v5/market/index-tickers?instId=NOPE-USDT`);
    expect(bad.body.code).toBe("51001");
  });

  it("rubik top-trader position ratio: [ts, ratio] strings, newest first", async () => {
    const r = await getJson<OkxEnvelope<[string, string]>>(
      `${sim.urls.okx}/api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader?instId=BTC-USDT-SWAP&period=1H&limit=24`,
    );
    expect(r.body.data).toHaveLength(24);
    expect(r.body.data[0]?.[0]).toBe(String(Math.floor(NOW / HOUR) * HOUR));
    for (const [i, row] of r.body.data.entries()) {
      expect(row).toHaveLength(2);
      expect(typeof row[0]).toBe("string");
      const ratio = num(row[1]);
      expect(ratio).toBeGreaterThanOrEqual(0.6);
      expect(ratio).toBeLessThanOrEqual(2.5);
      if (i > 0) expect(Number(r.body.data[i - 1]?.[0]) - Number(row[0])).toBe(HOUR);
    }
  });
});

describe("hyperliquid info", () => {
  it("metaAndAssetCtxs: [meta, ctxs] aligned by index; k-prefixed multipliers; delisted MATIC; TON absent", async () => {
    const r = await info<[HlMeta, HlCtx[]]>({ type: "metaAndAssetCtxs" });
    expect(r.status).toBe(200);
    const [meta, ctxs] = r.body;
    expect(meta.collateralToken).toBe(0);
    expect(ctxs).toHaveLength(meta.universe.length);
    const names = meta.universe.map((u) => u.name);
    expect(names.slice(0, 2)).toEqual(["BTC", "ETH"]);
    expect(names).toEqual(expect.arrayContaining(["kPEPE", "kSHIB", ...EXTRAS]));
    expect(names).not.toContain("TON");
    expect(names).not.toContain("PEPE");
    const tableIds = new Set(meta.marginTables.map(([id]) => id));
    for (const u of meta.universe) {
      expect(typeof u.szDecimals).toBe("number");
      expect(typeof u.maxLeverage).toBe("number");
      expect(tableIds.has(u.marginTableId)).toBe(true);
    }
    const maticIdx = names.indexOf("MATIC");
    expect(meta.universe[maticIdx]?.isDelisted).toBe(true);
    expect(ctxs[maticIdx]).toMatchObject({ premium: null, midPx: null, impactPxs: null, openInterest: "0.0" });
    const keys = ["funding", "openInterest", "prevDayPx", "dayNtlVlm", "premium", "oraclePx", "markPx", "midPx", "impactPxs", "dayBaseVlm"];
    for (const [i, c] of ctxs.entries()) {
      expect(Object.keys(c)).toEqual(keys);
      if (i === maticIdx) continue;
      for (const k of keys) {
        if (k === "impactPxs") expect((c[k] as string[]).every((x) => typeof x === "string")).toBe(true);
        else num(c[k]);
      }
      // Hourly funding: the 8h formula on the same premium family, divided by 8.
      expect(Math.abs(Number(c.funding))).toBeLessThan(0.0005);
    }
    const btc = ctxs[0] as HlCtx;
    // Hyperliquid's mark is not oracle × (1 + premium) (real 2026 ctxs: ETH −4.2 bp vs premium −2.8 bp, ATOM −14 vs
    // −5.6 bp); the simulator adds a mark-only deviation (HL_MARK_ONLY_SD), so the two agree within a few bp.
    expect(Math.abs(Number(btc.markPx) / Number(btc.oraclePx) - 1 - Number(btc.premium))).toBeLessThan(0.003);
    const kpepe = ctxs[names.indexOf("kPEPE")] as HlCtx;
    const okxPepe = await getJson<OkxEnvelope<{ markPx: string }>>(`${sim.urls.okx}/api/v5/public/mark-price?instType=SWAP&instId=PEPE-USDT-SWAP`);
    expect(Number(kpepe.markPx) / 1000 / Number(okxPepe.body.data[0]?.markPx)).toBeCloseTo(1, 2);
  });

  it("fundingHistory: hourly, oldest first, ≤ 500 rows, funding = (P + clamp(0.01 % − P, ±0.05 %)) / 8", async () => {
    type Row = { coin: string; fundingRate: string; premium: string; time: number };
    const r = await info<Row[]>({ type: "fundingHistory", coin: "ETH", startTime: NOW - 30 * DAY });
    expect(r.body).toHaveLength(500);
    for (const [i, row] of r.body.entries()) {
      expect(Object.keys(row)).toEqual(["coin", "fundingRate", "premium", "time"]);
      expect(typeof row.time).toBe("number");
      expect(row.time % HOUR).toBeLessThan(1000);
      if (i > 0) expect(Math.round((row.time - (r.body[i - 1] as Row).time) / HOUR)).toBe(1);
      const p = num(row.premium);
      expect(num(row.fundingRate)).toBeCloseTo((p + Math.min(0.0005, Math.max(-0.0005, 0.0001 - p))) / 8, 9);
    }
    const win = await info<Row[]>({ type: "fundingHistory", coin: "kPEPE", startTime: NOW - 5 * HOUR, endTime: NOW - 2 * HOUR });
    expect(win.body).toHaveLength(3);
    for (const row of win.body) expect(Number(row.fundingRate) * 8).toBeGreaterThan(0.0005); // PEPE: extreme
    const unknown = await info<Row[]>({ type: "fundingHistory", coin: "NOPE", startTime: NOW - DAY });
    expect(unknown.body).toEqual([]);
    const missing = await info<string>({ type: "fundingHistory", coin: "BTC" });
    expect(missing.status).toBe(422);
  });

  it("predictedFundings: Binance, Hyperliquid and Bybit rates agree with each venue's own endpoints", async () => {
    type Entry = [string, Array<[string, { fundingRate: string; nextFundingTime: number; fundingIntervalHours: number }]>];
    const r = await info<Entry[]>({ type: "predictedFundings" });
    const byCoin = new Map(r.body);
    expect(byCoin.has("MATIC")).toBe(false); // delisted on HL
    const pepe = new Map(byCoin.get("kPEPE"));
    expect([...pepe.keys()]).toEqual(["BinPerp", "HlPerp", "BybitPerp"]);
    const bin = await getJson<BinancePremium>(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=1000PEPEUSDT`);
    expect(Number(pepe.get("BinPerp")?.fundingRate)).toBeCloseTo(Number(bin.body.lastFundingRate), 8);
    expect(pepe.get("BinPerp")?.nextFundingTime).toBe(bin.body.nextFundingTime);
    const by = await getJson<BybitEnvelope<BybitList<Record<string, string>>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=1000PEPEUSDT`);
    expect(Number(pepe.get("BybitPerp")?.fundingRate)).toBeCloseTo(Number(by.body.result.list[0]?.fundingRate), 6);
    const hl = pepe.get("HlPerp");
    expect(hl?.fundingIntervalHours).toBe(1);
    expect(hl?.nextFundingTime).toBe(Math.ceil(NOW / HOUR) * HOUR);
    const sei = new Map(byCoin.get("SEI"));
    expect(sei.get("BybitPerp")?.fundingIntervalHours).toBe(1);
    expect(sei.get("BinPerp")?.fundingIntervalHours).toBe(4);
  });

  it("unknown or malformed requests answer 422 plain text, like the real API", async () => {
    const r = await info<string>({ type: "nope" });
    expect(r.status).toBe(422);
    expect(r.body).toMatch(/^Failed to deserialize the JSON body into the target type: unknown variant `nope`/);
    const res = await fetch(`${sim.urls.hyperliquid}/info`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(422);
    await res.arrayBuffer();
  });
});

describe("cross-venue consistency", () => {
  it("every venue has extreme funding markets (|8h-equivalent| ≥ 0.05 %) exactly on the configured bases", async () => {
    const eightH = new Map<string, Map<string, number>>();
    const put = (venue: string, base: string, rate8h: number) => {
      const m = eightH.get(venue) ?? new Map<string, number>();
      m.set(base, rate8h);
      eightH.set(venue, m);
    };
    type Funding2 = Record<string, string>;
    const [bin, fi, by, okx, hl] = await Promise.all([
      getJson<BinancePremium[]>(`${sim.urls.binance}/fapi/v1/premiumIndex`),
      getJson<Array<{ symbol: string; fundingIntervalHours: number }>>(`${sim.urls.binance}/fapi/v1/fundingInfo`),
      getJson<BybitEnvelope<BybitList<Record<string, string>>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear`),
      getJson<OkxEnvelope<Funding2>>(`${sim.urls.okx}/api/v5/public/funding-rate?instId=ANY`),
      info<[HlMeta, HlCtx[]]>({ type: "metaAndAssetCtxs" }),
    ]);
    const binH = new Map(fi.body.map((f) => [f.symbol, f.fundingIntervalHours]));
    for (const p of bin.body) {
      if (p.symbol.includes("_")) continue;
      put("binance", baseOf(p.symbol.replace(/USDT$/, "")).base, (Number(p.lastFundingRate) * 8) / (binH.get(p.symbol) ?? 8));
    }
    for (const t of by.body.result.list) {
      if (!t.symbol?.endsWith("USDT")) continue;
      put("bybit", baseOf((t.symbol as string).replace(/USDT$/, "")).base, (Number(t.fundingRate) * 8) / Number(t.fundingIntervalHour));
    }
    for (const f of okx.body.data) {
      if (!f.instId?.endsWith("-USDT-SWAP")) continue;
      const h = (Number(f.nextFundingTime) - Number(f.fundingTime)) / HOUR;
      put("okx", (f.instId as string).replace("-USDT-SWAP", ""), (Number(f.fundingRate) * 8) / h);
    }
    const [meta, ctxs] = hl.body;
    meta.universe.forEach((u, i) => {
      if (!u.isDelisted) put("hyperliquid", baseOf(u.name).base, Number(ctxs[i]?.funding) * 8);
    });
    for (const [venue, rates] of eightH) {
      const extreme = [...rates]
        .filter(([, r]) => Math.abs(r) >= 0.0005)
        .map(([b]) => b)
        .sort();
      expect(extreme, venue).toEqual(Object.keys(EXTREME_PREMIUM).sort());
      for (const b of extreme) expect(Math.sign(rates.get(b) as number), `${venue} ${b}`).toBe(Math.sign(EXTREME_PREMIUM[b] as number));
    }
  });

  it("multiplier symbols price per 1000 coins; OI in coins ranks Binance > Hyperliquid > Bybit > OKX", async () => {
    const bin = await getJson<BinancePremium>(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=1000SHIBUSDT`);
    const by = await getJson<BybitEnvelope<BybitList<Record<string, string>>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=SHIB1000USDT`);
    const okx = await getJson<OkxEnvelope<{ markPx: string }>>(`${sim.urls.okx}/api/v5/public/mark-price?instType=SWAP&instId=SHIB-USDT-SWAP`);
    const spot = sim.perp.spotPrice("SHIB", NOW);
    expect(Number(bin.body.markPrice) / 1000 / spot).toBeCloseTo(1, 2);
    expect(Number(by.body.result.list[0]?.markPrice) / 1000 / spot).toBeCloseTo(1, 2);
    expect(Number(okx.body.data[0]?.markPx) / spot).toBeCloseTo(1, 2);

    for (const base of ["BTC", "ETH", "PEPE"]) {
      const binSym = base === "PEPE" ? "1000PEPEUSDT" : `${base}USDT`;
      const hlName = base === "PEPE" ? "kPEPE" : base;
      const mult = base === "PEPE" ? 1000 : 1;
      const b = await getJson<{ openInterest: string }>(`${sim.urls.binance}/fapi/v1/openInterest?symbol=${binSym}`);
      const y = await getJson<BybitEnvelope<BybitList<Record<string, string>>>>(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=${binSym}`);
      const o = await getJson<OkxEnvelope<{ oiCcy: string }>>(`${sim.urls.okx}/api/v5/public/open-interest?instType=SWAP&instId=${base}-USDT-SWAP`);
      const h = await info<[HlMeta, HlCtx[]]>({ type: "metaAndAssetCtxs" });
      const hi = h.body[0].universe.findIndex((u) => u.name === hlName);
      const coins = [
        Number(b.body.openInterest) * mult,
        Number(h.body[1][hi]?.openInterest) * mult,
        Number(y.body.result.list[0]?.openInterest) * mult,
        Number(o.body.data[0]?.oiCcy),
      ];
      expect(
        [...coins].sort((x, z) => z - x),
        base,
      ).toEqual(coins);
    }
  });
});

describe("perp clients against the simulator: margin tiers and hourly candles", () => {
  const opts = { timeoutMs: 5000, retries: 0 };
  const clients = () => ({
    binance: new BinancePerpClient(sim.urls.binance, { ...opts, spotBaseUrl: sim.urls.binance_spot }),
    bybit: new BybitPerpClient(sim.urls.bybit, opts),
    okx: new OkxPerpClient(sim.urls.okx, opts),
    hyperliquid: new HyperliquidPerpClient(sim.urls.hyperliquid, opts),
  });

  /** Sorted and contiguous from 0; leverage falling and mmr rising, each mmr positive and below the initial margin 1/leverage. */
  function expectWellFormedTiers(tiers: MarginTier[], label: string): void {
    expect(tiers.length, label).toBeGreaterThan(0);
    expect(tiers[0]?.minNotionalUsd, label).toBe(0);
    for (const [i, t] of tiers.entries()) {
      expect(t.maintenanceMarginRate, label).toBeGreaterThan(0);
      expect(t.maintenanceMarginRate, label).toBeLessThan(1 / t.maxLeverage);
      if (t.maxNotionalUsd !== null) expect(t.maxNotionalUsd, label).toBeGreaterThan(t.minNotionalUsd);
      const prev = tiers[i - 1];
      if (!prev) continue;
      expect(t.minNotionalUsd, label).toBeCloseTo(prev.maxNotionalUsd as number, 6);
      expect(t.maintenanceMarginRate, label).toBeGreaterThan(prev.maintenanceMarginRate);
      expect(t.maxLeverage, label).toBeLessThan(prev.maxLeverage);
    }
  }

  it("OKX, Bybit and Hyperliquid tiers are sorted with rising MMR; first-tier leverage matches each venue's instrument list", async () => {
    const c = clients();
    const okxInsts = await getJson<OkxEnvelope<{ instId: string; lever: string }>>(`${sim.urls.okx}/api/v5/public/instruments?instType=SWAP`);
    const okxLever = new Map(okxInsts.body.data.map((i) => [i.instId, Number(i.lever)]));
    const bybitInsts = await getJson<BybitEnvelope<BybitList<{ symbol: string; leverageFilter: { maxLeverage: string } }>>>(
      `${sim.urls.bybit}/v5/market/instruments-info?category=linear&limit=1000`,
    );
    const bybitLever = new Map(bybitInsts.body.result.list.map((i) => [i.symbol, Number(i.leverageFilter.maxLeverage)]));
    const hlMeta = (await info<[HlMeta, HlCtx[]]>({ type: "metaAndAssetCtxs" })).body[0];
    for (const base of ["BTC", "ETH", "SOL", "PEPE"]) {
      const okx = await c.okx.marginTiers(base);
      expectWellFormedTiers(okx, `okx ${base}`);
      expect(okx[0]?.maxLeverage).toBe(okxLever.get(`${base}-USDT-SWAP`));
      const bybit = await c.bybit.marginTiers(base);
      expectWellFormedTiers(bybit, `bybit ${base}`);
      expect(bybit[0]?.maxLeverage).toBe(bybitLever.get(base === "PEPE" ? "1000PEPEUSDT" : `${base}USDT`));
      expect(bybit.at(-1)?.maxNotionalUsd).not.toBeNull();
      const hl = await c.hyperliquid.marginTiers(base);
      expectWellFormedTiers(hl, `hyperliquid ${base}`);
      expect(hl[0]?.maxLeverage).toBe(hlMeta.universe.find((u) => u.name === (base === "PEPE" ? "kPEPE" : base))?.maxLeverage);
      expect(hl.at(-1)?.maxNotionalUsd).toBeNull();
      for (const t of [...okx, ...bybit, ...hl]) expect(t.base).toBe(base);
    }
    // majors: 100x at 0.4 % (OKX) / 0.5 % (Bybit) first; alts: lower leverage, higher first-tier MMR
    expect((await c.okx.marginTiers("BTC"))[0]).toMatchObject({ maxLeverage: 100, maintenanceMarginRate: 0.004 });
    expect((await c.bybit.marginTiers("BTC"))[0]).toMatchObject({ maxLeverage: 100, maintenanceMarginRate: 0.005 });
    expect((await c.okx.marginTiers("SOL"))[0]?.maxLeverage).toBeLessThan(100);
    expect((await c.okx.marginTiers("SOL"))[0]?.maintenanceMarginRate).toBeGreaterThan(0.004);
    // Hyperliquid BTC: the tiered table (40x, then 20x above 150M) with mmr = 1 / (2 × leverage)
    expect((await c.hyperliquid.marginTiers("BTC")).map((t) => [t.minNotionalUsd, t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual([
      [0, 150_000_000, 40, 0.0125],
      [150_000_000, null, 20, 0.025],
    ]);
  });

  it("OKX tier bounds are contracts × ctVal × mark; Bybit rows come from risk-limit as sent", async () => {
    const c = clients();
    const raw = await getJson<OkxEnvelope<{ tier: string; minSz: string; maxSz: string; mmr: string; instFamily: string }>>(
      `${sim.urls.okx}/api/v5/public/position-tiers?instType=SWAP&tdMode=cross&instFamily=ETH-USDT`,
    );
    expect(raw.body.data.every((r) => r.instFamily === "ETH-USDT")).toBe(true);
    const mark = (await c.okx.funding("ETH")).markPrice as number;
    const tiers = await c.okx.marginTiers("ETH");
    expect(tiers).toHaveLength(raw.body.data.length);
    for (const [i, t] of tiers.entries()) {
      const r = raw.body.data[i]!;
      expect(t.maxNotionalUsd! / (Number(r.maxSz) * 0.1 * mark)).toBeCloseTo(1, 9);
      expect(t.maintenanceMarginRate).toBe(Number(r.mmr));
    }
    const by = await getJson<BybitEnvelope<BybitList<Record<string, unknown>>>>(`${sim.urls.bybit}/v5/market/risk-limit?category=linear&symbol=1000PEPEUSDT`);
    const pepe = await c.bybit.marginTiers("PEPE");
    expect(pepe.map((t) => t.maxNotionalUsd)).toEqual(by.body.result.list.map((r) => Number(r.riskLimitValue)));
    expect(pepe.map((t) => t.maintenanceMarginRate)).toEqual(by.body.result.list.map((r) => Number(r.maintenanceMargin))); // fractions, as the venue sends for linear
    expect(by.body.result.list[0]).toMatchObject({ isLowestRisk: 1, mmDeduction: "" });
    // the same table every time (fixed per instrument)
    expect(await c.bybit.marginTiers("PEPE")).toEqual(pepe);
  });

  it("unknown symbols: NOT_FOUND from the clients; the venues answer 51001 / retCode 10001 / -1121 as the real ones do", async () => {
    const c = clients();
    const calls = [
      () => c.okx.marginTiers("NOPE"),
      () => c.bybit.marginTiers("MATIC"),
      () => c.hyperliquid.marginTiers("TON"),
      () => c.binance.hourlyCandles("NOPE", 5),
      () => c.okx.hourlyCandles("NOPE", 5),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ code: "NOT_FOUND" });
    const nope: PerpInstrument = { venue: "okx", base: "NOPE", venueSymbol: "NOPE-USDT-SWAP", multiplier: 1, contractSize: 1 };
    const tiers = await getJson(`${sim.urls.okx}/api/v5/public/position-tiers?instType=SWAP&tdMode=cross&instFamily=NOPE-USDT`);
    expect(tiers.body).toEqual({ code: "51001", msg: "Instrument ID does not exist", data: [] });
    expectAppError(() => parsePositionTiers(tiers.body, nope, 1), "NOT_FOUND");
    const candles = await getJson(`${sim.urls.okx}/api/v5/market/candles?instId=NOPE-USDT-SWAP&bar=1H`);
    expect(candles.body).toEqual({ code: "51001", msg: "Instrument ID does not exist", data: [] });
    expectAppError(() => parseCandles(candles.body, nope), "NOT_FOUND");
    const risk = await getJson<BybitEnvelope<unknown>>(`${sim.urls.bybit}/v5/market/risk-limit?category=linear&symbol=MATICUSDT`);
    expect(risk.body).toMatchObject({ retCode: 10001, retMsg: "params error: symbol invalid" });
    expectAppError(() => parseRiskLimit(risk.body, { ...nope, venue: "bybit", venueSymbol: "MATICUSDT" }), "NOT_FOUND");
    const klines = await getJson(`${sim.urls.binance}/fapi/v1/klines?symbol=NOPEUSDT&interval=1h`);
    expect(klines.status).toBe(400);
    expect(klines.body).toEqual({ code: -1121, msg: "Invalid symbol." });
  });

  /** Oldest first, hourly spaced, ending with the open hour; high/low bound open and close; VWAP inside the range. */
  function expectHourlyCandles(candles: Candle[], n: number, label: string): void {
    expect(candles, label).toHaveLength(n);
    expect(candles.at(-1)?.openTime, label).toBe(Math.floor(NOW / HOUR) * HOUR);
    for (const [i, k] of candles.entries()) {
      if (i > 0) expect(k.openTime - (candles[i - 1] as Candle).openTime, label).toBe(HOUR);
      expect(k.high, label).toBeGreaterThanOrEqual(Math.max(k.open, k.close));
      expect(k.low, label).toBeLessThanOrEqual(Math.min(k.open, k.close));
      expect(k.low, label).toBeGreaterThan(0);
      expect(k.volumeCoins, label).toBeGreaterThan(0);
      const vwap = k.volumeUsd / k.volumeCoins;
      expect(vwap, label).toBeGreaterThanOrEqual(k.low * 0.999);
      expect(vwap, label).toBeLessThanOrEqual(k.high * 1.001);
      // consecutive candles join: this open ≈ the previous close (1 ms apart on the price path)
      if (i > 0) expect(Math.abs(k.open / (candles[i - 1] as Candle).close - 1), label).toBeLessThan(5e-4);
    }
  }

  it("Binance and OKX hourly candles follow the model's last price, per ONE coin, oldest first", async () => {
    const c = clients();
    for (const base of ["BTC", "PEPE", "SOL"]) {
      const bin = await c.binance.hourlyCandles(base, 48);
      const okx = await c.okx.hourlyCandles(base, 48);
      expectHourlyCandles(bin, 48, `binance ${base}`);
      expectHourlyCandles(okx, 48, `okx ${base}`);
      for (const k of [...bin, ...okx]) expect(k.base).toBe(base);
      // prices per ONE coin on both venues (1000PEPEUSDT undone), near the shared spot model
      const spot = sim.perp.spotPrice(base, NOW);
      expect(bin.at(-1)!.close / spot).toBeCloseTo(1, 2);
      expect(okx.at(-1)!.close / spot).toBeCloseTo(1, 2);
      // the close of a complete hour is the model's last price at its last millisecond
      const inst = sim.perp.perpOf("binance", base)!;
      const done = bin.at(-2)!;
      expect(done.close / sim.perp.lastPrice(inst, done.openTime + HOUR - 1)).toBeCloseTo(1, 3);
    }
  });

  it("limits are clamped to 1500 (Binance) and 300 (OKX); limit < 1 → []", async () => {
    const c = clients();
    const bin = await c.binance.hourlyCandles("ETH", 5000);
    expect(bin).toHaveLength(1500);
    expect(bin.at(-1)!.openTime - bin[0]!.openTime).toBe(1499 * HOUR);
    const okx = await c.okx.hourlyCandles("ETH", 1000);
    expect(okx).toHaveLength(300);
    expect(okx[0]!.openTime).toBe(bin.at(-300)!.openTime);
    expect(await c.binance.hourlyCandles("ETH", 0)).toEqual([]);
    expect(await c.okx.hourlyCandles("ETH", -3)).toEqual([]);
    // the same hour on both venues: OKX reports its open candle with confirm "0", complete ones "1"
    const raw = await getJson<OkxEnvelope<string[]>>(`${sim.urls.okx}/api/v5/market/candles?instId=ETH-USDT-SWAP&bar=1H&limit=3`);
    expect(raw.body.data.map((r) => r[8])).toEqual(["0", "1", "1"]);
    expect(raw.body.data.map((r) => Number(r[0]))).toEqual([0, 1, 2].map((k) => Math.floor(NOW / HOUR) * HOUR - k * HOUR));
  });

  it("keeps tier tables an hour and candles a minute per symbol: a second read asks the venue nothing", async () => {
    const c = clients();
    await Promise.all([c.okx.marginTiers("SOL"), c.bybit.marginTiers("SOL"), c.binance.hourlyCandles("SOL", 72), c.okx.hourlyCandles("SOL", 72)]);
    const counts = () => ["okx", "bybit", "binance"].map((v) => sim.faults.requestCount(v));
    const before = counts();
    expect(await c.okx.marginTiers("sol")).toEqual(await c.okx.marginTiers("SOL"));
    await Promise.all([c.bybit.marginTiers("SOL"), c.binance.hourlyCandles("SOL", 72), c.okx.hourlyCandles("SOL", 72)]);
    expect(counts()).toEqual(before);
    await c.binance.hourlyCandles("SOL", 24); // another limit is another read
    expect(sim.faults.requestCount("binance")).toBe(before[2]! + 1);
  });
});

describe("determinism", () => {
  const paths = (u: RunningSimulator["urls"]) => [
    `${u.binance}/fapi/v1/premiumIndex`,
    `${u.binance}/fapi/v1/fundingRate?symbol=ETHUSDT&limit=50`,
    `${u.binance}/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=5m`,
    `${u.bybit}/v5/market/tickers?category=linear`,
    `${u.okx}/api/v5/public/funding-rate?instId=ANY`,
    `${u.okx}/api/v5/public/open-interest?instType=SWAP`,
    `${u.binance}/fapi/v1/klines?symbol=1000PEPEUSDT&interval=1h&limit=24`,
    `${u.okx}/api/v5/market/candles?instId=ETH-USDT-SWAP&bar=1H&limit=24`,
  ];

  it("same seed + clock gives identical bodies; another seed differs", async () => {
    const twin = await startSimulator({ seed: 42, clock: fixedClock(NOW) });
    const other = await startSimulator({ seed: 43, clock: fixedClock(NOW) });
    try {
      const [a, b, c] = await Promise.all([sim, twin, other].map(async (s) => Promise.all(paths(s.urls).map(async (p) => (await fetch(p)).text()))));
      expect(b).toEqual(a);
      for (let i = 0; i < (a as string[]).length; i++) expect((c as string[])[i]).not.toBe((a as string[])[i]);
      const hl = await Promise.all([sim, twin].map(async (s) => (await info({ type: "metaAndAssetCtxs" }, s.urls.hyperliquid)).body));
      expect(hl[1]).toEqual(hl[0]);
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });
});

describe("faults per venue key", () => {
  it("rate_limit on binance answers Binance's 429 body; other venues (and binance_spot) unaffected", async () => {
    sim.faults.clear();
    const before = sim.faults.requestCount("binance");
    sim.faults.inject("binance", { kind: "rate_limit", retryAfterSec: 7 });
    const spot = await fetch(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=BTCUSDT`);
    expect(spot.status).toBe(200);
    await spot.arrayBuffer();
    const limited = await fetch(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(((await limited.json()) as { code: number }).code).toBe(-1003);
    const ok = await fetch(`${sim.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect(sim.faults.requestCount("binance") - before).toBe(2);
  });

  it("server_error / malformed / rate_limit on bybit, okx, hyperliquid, binance_spot use venue-shaped bodies", async () => {
    sim.faults.inject("okx", { kind: "server_error" });
    const o = await fetch(`${sim.urls.okx}/api/v5/public/funding-rate?instId=BTC-USDT-SWAP`);
    expect(o.status).toBe(503);
    expect(((await o.json()) as { code: string }).code).toBe("50001");

    sim.faults.inject("bybit", { kind: "rate_limit", retryAfterSec: 1 });
    const b = await fetch(`${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=BTCUSDT`);
    expect(b.status).toBe(429);
    expect(((await b.json()) as { retCode: number }).retCode).toBe(10006);

    sim.faults.inject("binance_spot", { kind: "server_error", status: 502 });
    const s = await fetch(`${sim.urls.binance_spot}/api/v3/ticker/price?symbol=BTCUSDT`);
    expect(s.status).toBe(502);
    expect(((await s.json()) as { code: number }).code).toBe(-1001);

    sim.faults.inject("hyperliquid", { kind: "malformed" });
    const h = await fetch(`${sim.urls.hyperliquid}/info`, { method: "POST", body: JSON.stringify({ type: "allMids" }) });
    expect(h.status).toBe(200);
    const text = await h.text();
    expect(text.startsWith("{")).toBe(true);
    expect(() => JSON.parse(text) as unknown).toThrow();
    const again = await info<Record<string, string>>({ type: "allMids" });
    expect(typeof again.body.BTC).toBe("string");
    expect(sim.faults.pending("okx")).toEqual([]);
  });
});

describe.skipIf(!replayAvailable())("replay mode", () => {
  let rp: RunningSimulator;
  beforeAll(async () => {
    rp = await startSimulator({ seed: 42, clock: fixedClock(NOW), replay: true });
  });
  afterAll(async () => {
    await rp.close();
  });

  it("serves the recorded Binance premiumIndex and exchangeInfo; other endpoints stay simulated", async () => {
    const rec = loadRecording(DEFAULT_REPLAY_DIR, REPLAY_FILES.binance.premiumIndex) as BinancePremium[];
    const all = await getJson<BinancePremium[]>(`${rp.urls.binance}/fapi/v1/premiumIndex`);
    expect(all.body).toEqual(rec);
    const btc = await getJson<BinancePremium>(`${rp.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
    expect(btc.body.markPrice).toBe("93951.80000000");
    expect(btc.headers.get("x-simulated")).toBe("true");
    const bad = await getJson(`${rp.urls.binance}/fapi/v1/premiumIndex?symbol=NOPEUSDT`);
    expect(bad.status).toBe(400);
    const ei = await getJson<{ serverTime: number; symbols: unknown[] }>(`${rp.urls.binance}/fapi/v1/exchangeInfo`);
    expect(ei.body.serverTime).toBe(1626858243909);
    const oi = await getJson<{ time: number }>(`${rp.urls.binance}/fapi/v1/openInterest?symbol=BTCUSDT`);
    expect(oi.body.time).toBe(NOW);
  });

  it("serves the recorded Bybit instruments (paged), OKX instruments and Hyperliquid meta/allMids/BTC funding", async () => {
    let count = 0;
    let cursor = "";
    do {
      const r = await getJson<BybitEnvelope<BybitList<{ symbol: string }>>>(
        `${rp.urls.bybit}/v5/market/instruments-info?category=linear&limit=300${cursor ? `&cursor=${cursor}` : ""}`,
      );
      count += r.body.result.list.length;
      cursor = r.body.result.nextPageCursor ?? "";
    } while (cursor !== "");
    expect(count).toBe(800);
    const okx = await getJson<OkxEnvelope<{ instId: string }>>(`${rp.urls.okx}/api/v5/public/instruments?instType=SWAP`);
    expect(okx.body.data).toHaveLength(166);
    const meta = await info<HlMeta>({ type: "meta" }, rp.urls.hyperliquid);
    expect(meta.body.universe).toHaveLength(28);
    const fh = await info<Array<{ time: number }>>({ type: "fundingHistory", coin: "BTC", startTime: 0 }, rp.urls.hyperliquid);
    expect(fh.body).toHaveLength(500);
    expect(fh.body[0]?.time).toBe(1683849600048);
    const eth = await info<unknown[]>({ type: "fundingHistory", coin: "ETH", startTime: NOW - 3 * HOUR }, rp.urls.hyperliquid);
    expect(eth.body).toHaveLength(3); // not recorded: simulated
  });

  it("per-venue replay switches only the named venues", async () => {
    const one = await startSimulator({ seed: 42, clock: fixedClock(NOW), replay: { venues: ["okx"] } });
    try {
      const okx = await getJson<OkxEnvelope<unknown>>(`${one.urls.okx}/api/v5/public/instruments?instType=SWAP`);
      expect(okx.body.data).toHaveLength(166);
      const bin = await getJson<BinancePremium>(`${one.urls.binance}/fapi/v1/premiumIndex?symbol=BTCUSDT`);
      expect(bin.body.time).toBe(NOW);
    } finally {
      await one.close();
    }
  });

  it("a missing recordings directory fails at start", async () => {
    await expect(startSimulator({ replay: { dir: "/nonexistent-replay-dir", venues: ["bybit"] } })).rejects.toThrow(/cannot load/);
  });
});
