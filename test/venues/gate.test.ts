import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appError, expectAppError } from "../helpers/errors.js";
import { GatePerpClient, GATE_MAX_FUNDING_HISTORY } from "../../src/venues/gate/client.js";
import {
  fromGateSymbol,
  gateBackoffMs,
  gateTimeMs,
  parseCandlesticks,
  parseContractFunding,
  parseContracts,
  parseContractStatsHistory,
  parseContractStatsLongShort,
  parseContractStatsOi,
  parseFundingRateHistory,
  parseGateError,
  parseGateRateLimit,
  parsePredictedFunding,
  parseRiskLimitTiers,
  toGateSymbol,
} from "../../src/venues/gate/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const contracts = () => fixture("gate/contracts_usdt_docs_example.json");
const btc = (): PerpInstrument => parseContracts(contracts())[0]!;
/** The docs' tier example is for ZTX_USDT; its instrument row is not in the docs, so only its name matters here. */
const ztx: PerpInstrument = { venue: "gate", base: "ZTX", venueSymbol: "ZTX_USDT", multiplier: 1, contractSize: 1 };

describe("gate symbol normalisation", () => {
  it("maps contract names both ways and reads seconds or ms", () => {
    expect(fromGateSymbol("BTC_USDT")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromGateSymbol("1000PEPE_USDT")).toEqual({ base: "PEPE", multiplier: 1000 });
    expect(fromGateSymbol("BTC_USD")).toBeUndefined();
    expect(fromGateSymbol("BTC_USDT_20241227")).toBeUndefined();
    expect(toGateSymbol("eth")).toBe("ETH_USDT");
    expect(toGateSymbol("PEPE", 1000)).toBe("1000PEPE_USDT");
    expect(gateTimeMs(1610035200)).toBe(1610035200000);
    expect(gateTimeMs(1514764800.123)).toBe(1514764800123);
    expect(gateTimeMs(1545136464123)).toBe(1545136464123);
  });
});

describe("gate parsers on recorded payloads", () => {
  it("reads /contracts (docs example): contractSize = quanto_multiplier, interval = funding_interval / 3600", () => {
    expect(parseContracts(contracts())).toEqual([{ venue: "gate", base: "BTC", venueSymbol: "BTC_USDT", multiplier: 1, contractSize: 0.0001, fundingIntervalHours: 8 }]);
  });

  it("drops a real inverse row (ccxt: type inverse, quanto_multiplier 0)", () => {
    expect(parseContracts(fixture("gate/contracts_btc_BTC_USD_ccxt_2025-03-07.json"))).toEqual([]);
    expect(parseContractFunding(fixture("gate/contracts_btc_BTC_USD_ccxt_2025-03-07.json"), 1)).toEqual([]);
  });

  it("reads funding from /contracts: rate per interval, next settlement in ms, mark and index", () => {
    expect(parseContractFunding(contracts(), 1_700_000_000_000)).toEqual([
      {
        venue: "gate",
        base: "BTC",
        venueSymbol: "BTC_USDT",
        fundingRate: 0.002053,
        fundingIntervalHours: 8,
        nextFundingTime: 1610035200000,
        markPrice: 37985.6,
        indexPrice: 37954.92,
        premium: null,
        interestRate: 0.0003,
        time: 1_700_000_000_000,
      },
    ]);
  });

  it("reads the predicted rate from funding_rate_indicative", () => {
    expect(parsePredictedFunding(contracts(), btc())).toEqual({ venue: "gate", base: "BTC", rate: 0.000219, nextFundingTime: 1610035200000, fundingIntervalHours: 8 });
    expect(parsePredictedFunding(contracts(), ztx)).toBeNull();
  });

  it("reads /funding_rate: t seconds → ms, r fraction", () => {
    expect(parseFundingRateHistory(fixture("gate/funding_rate_BTC_USDT_docs_example.json"), btc())).toEqual([
      { venue: "gate", base: "BTC", time: 1543968000000, rate: 0.000157, markPrice: null },
    ]);
  });

  it("reads /contract_stats: OI contracts × quanto, USD as sent; long/short from top_lsr_size", () => {
    const raw = fixture("gate/contract_stats_BTC_USDT_docs_example.json");
    expect(parseContractStatsOi(raw, btc())).toEqual({ venue: "gate", base: "BTC", oiCoins: 12.4724, oiUsd: 1511, time: 1603865400000 });
    expect(parseContractStatsHistory(raw, btc())).toEqual([{ venue: "gate", base: "BTC", time: 1603865400000, oiCoins: 12.4724, oiUsd: 1511 }]);
    expect(parseContractStatsLongShort(raw, btc(), "5m")).toEqual({
      venue: "gate",
      base: "BTC",
      longRatio: 0.504950495049505,
      shortRatio: 0.495049504950495,
      lsRatio: 1.02,
      source: "top_traders_positions",
      period: "5m",
      time: 1603865400000,
    });
    expect(parseContractStatsLongShort([], btc(), "5m")).toBeNull();
    expectAppError(() => parseContractStatsOi([], btc()), "UPSTREAM_ERROR");
    expectAppError(() => parseContractStatsOi({ label: "INVALID_PARAM_VALUE" }, btc()), "UPSTREAM_ERROR");
  });

  it("reads /risk_limit_tiers: each tier from the previous risk_limit to its own, USDT", () => {
    const raw = fixture("gate/risk_limit_tiers_ZTX_USDT_docs_example.json");
    expect(parseRiskLimitTiers(raw, ztx).map((t) => [t.minNotionalUsd, t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual([
      [0, 20000, 50, 0.01],
      [20000, 30000, 40, 0.013],
      [30000, 50000, 35, 0.015],
      [50000, 70000, 30, 0.02],
      [70000, 100000, 25, 0.025],
    ]);
    expect(parseRiskLimitTiers(raw, btc())).toEqual([]); // rows of another contract
  });

  it("reads /candlesticks: t seconds, v contracts × quanto, sum = quote volume", () => {
    expect(parseCandlesticks(fixture("gate/candlesticks_BTC_USDT_docs_example.json"), btc())).toEqual([
      { venue: "gate", base: "BTC", openTime: 1539852480000, open: 1.032, high: 1.032, low: 1.032, close: 1.032, volumeCoins: 9.7151, volumeUsd: 3580 },
    ]);
  });

  it("undoes a numeric-prefix multiplier on prices and sizes", () => {
    const pepe: PerpInstrument = { venue: "gate", base: "PEPE", venueSymbol: "1000PEPE_USDT", multiplier: 1000, contractSize: 0.0001 };
    const [c] = parseCandlesticks(fixture("gate/candlesticks_BTC_USDT_docs_example.json"), pepe);
    expect([c!.close, c!.volumeCoins]).toEqual([0.001032, 9715.1]);
  });

  it("reads the error body", () => {
    expect(parseGateError(fixtureText("gate/error_invalid_param_docs_example.json"))).toEqual({
      label: "INVALID_PARAM_VALUE",
      message: "Invalid parameter `text` with value: abc",
    });
    expect(parseGateError("<html>")).toBeUndefined();
  });
});

describe("gate rate-limit headers", () => {
  it("reads X-Gate-RateLimit-* and backs off until the reset only when nothing is left", () => {
    const h = (remain: string, reset?: string) =>
      new Headers({ "X-Gate-RateLimit-Requests-Remain": remain, "X-Gate-RateLimit-Limit": "200", ...(reset ? { "X-Gate-RateLimit-Reset-Timestamp": reset } : {}) });
    const now = 1_700_000_000_000;
    const rl = parseGateRateLimit((n) => h("0", "1700000003").get(n));
    expect(rl).toEqual({ remain: 0, limit: 200, resetAtMs: 1_700_000_003_000 });
    expect(gateBackoffMs(rl, now)).toBe(3000);
    expect(
      gateBackoffMs(
        parseGateRateLimit((n) => h("198", "1700000000").get(n)),
        now,
      ),
    ).toBe(0);
    expect(
      gateBackoffMs(
        parseGateRateLimit((n) => h("0").get(n)),
        now,
      ),
    ).toBe(1000);
    expect(parseGateRateLimit((n) => new Headers().get(n))).toBeUndefined();
  });
});

describe("gate client against a stub venue", () => {
  let stub: RunningStub;
  let fail: { status: number; body: unknown } | null = null;
  const answer = (body: unknown) => () => (fail ? { status: fail.status, body: fail.body } : { body });
  beforeAll(async () => {
    stub = await startStub({
      "GET /api/v4/futures/usdt/contracts": () => ({ body: contracts() }),
      "GET /api/v4/futures/usdt/funding_rate": answer(fixture("gate/funding_rate_BTC_USDT_docs_example.json")),
      "GET /api/v4/futures/usdt/contract_stats": answer(fixture("gate/contract_stats_BTC_USDT_docs_example.json")),
      "GET /api/v4/futures/usdt/risk_limit_tiers": answer(
        (fixture("gate/risk_limit_tiers_ZTX_USDT_docs_example.json") as { contract: string }[]).map((r) => ({ ...r, contract: "BTC_USDT" })),
      ),
      "GET /api/v4/futures/usdt/candlesticks": answer(fixture("gate/candlesticks_BTC_USDT_docs_example.json")),
    });
  });
  afterAll(() => stub.close());
  const client = () => new GatePerpClient(`${stub.url}/api/v4/`, { timeoutMs: 2000, retries: 0 });

  it("serves every method from the right path and parameters", async () => {
    const c = client();
    stub.calls.length = 0;
    expect((await c.instruments()).map((i) => i.venueSymbol)).toEqual(["BTC_USDT"]);
    expect((await c.funding("btc")).fundingRate).toBe(0.002053);
    expect((await c.fundingAll()).length).toBe(1);
    expect((await c.predictedFunding("BTC"))?.rate).toBe(0.000219);
    expect(await c.fundingHistory("BTC", 500)).toHaveLength(1);
    expect((await c.openInterest("BTC")).oiCoins).toBe(12.4724);
    expect(await c.openInterestHistory("BTC", 48)).toHaveLength(1);
    expect((await c.longShort("BTC"))?.source).toBe("top_traders_positions");
    expect((await c.marginTiers("BTC")).map((t) => t.maxNotionalUsd)).toEqual([20000, 30000, 50000, 70000, 100000]);
    expect((await c.hourlyCandles("BTC", 24))[0]?.volumeUsd).toBe(3580);
    expect(stub.calls).toEqual([
      "GET /api/v4/futures/usdt/contracts",
      `GET /api/v4/futures/usdt/funding_rate?contract=BTC_USDT&limit=${GATE_MAX_FUNDING_HISTORY}`,
      "GET /api/v4/futures/usdt/contract_stats?contract=BTC_USDT&interval=5m&limit=1",
      "GET /api/v4/futures/usdt/contract_stats?contract=BTC_USDT&interval=1h&limit=48",
      "GET /api/v4/futures/usdt/contract_stats?contract=BTC_USDT&interval=5m&limit=1",
      "GET /api/v4/futures/usdt/risk_limit_tiers?contract=BTC_USDT",
      "GET /api/v4/futures/usdt/candlesticks?contract=BTC_USDT&interval=1h&limit=24",
    ]);
  });

  it("maps errors: unlisted base and 404 → NOT_FOUND, 403 → UPSTREAM_UNAVAILABLE, 400 → UPSTREAM_ERROR", async () => {
    const c = client();
    expect((await appError(() => c.funding("NOPE"))).code).toBe("NOT_FOUND");
    const err = fixture("gate/error_invalid_param_docs_example.json");
    try {
      fail = { status: 404, body: err };
      expect((await appError(() => c.fundingHistory("BTC", 10))).code).toBe("NOT_FOUND");
      fail = { status: 403, body: err };
      expect((await appError(() => c.openInterest("BTC"))).code).toBe("UPSTREAM_UNAVAILABLE");
      fail = { status: 400, body: err };
      expect((await appError(() => c.hourlyCandles("BTC", 5))).code).toBe("UPSTREAM_ERROR");
      fail = { status: 200, body: err }; // an error object at HTTP 200 is not a list
      expect((await appError(() => c.openInterestHistory("BTC", 5))).code).toBe("UPSTREAM_ERROR");
    } finally {
      fail = null;
    }
  });
});
