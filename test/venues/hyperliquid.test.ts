import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HyperliquidPerpClient } from "../../src/venues/hyperliquid/client.js";
import {
  fromHyperliquidCoin,
  nextHour,
  parseFunding,
  parseFundingHistory,
  parseInstruments,
  parseMarginTiers,
  parseOpenInterest,
  parsePredictedFundings,
  toHyperliquidCoin,
} from "../../src/venues/hyperliquid/parse.js";
import type { PerpInstrument } from "../../src/venues/perp/types.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";
import { expectAppError } from "../helpers/errors.js";

const NOW = 1780137000000; // 2026-05-30 10:30 UTC
const btc: PerpInstrument = { venue: "hyperliquid", base: "BTC", venueSymbol: "BTC", multiplier: 1, contractSize: 1, fundingIntervalHours: 1 };

describe("hyperliquid coin normalisation", () => {
  it("maps coins both ways, including kPEPE", () => {
    expect(fromHyperliquidCoin("BTC")).toEqual({ base: "BTC", multiplier: 1 });
    expect(fromHyperliquidCoin("kPEPE")).toEqual({ base: "PEPE", multiplier: 1000 });
    expect(toHyperliquidCoin("PEPE", 1000)).toBe("kPEPE");
    expect(toHyperliquidCoin("btc")).toBe("BTC");
    expect(nextHour(NOW)).toBe(1780138800000);
    expect(nextHour(1780138800000)).toBe(1780142400000);
  });
});

describe("hyperliquid parsers on recorded payloads", () => {
  it("lists a real meta universe with kPEPE undone and hourly funding", () => {
    const list = parseInstruments(fixture("hyperliquid/meta_2023-07-17.json"));
    expect(list).toHaveLength(28);
    expect(list[0]).toEqual(btc);
    expect(list.find((i) => i.venueSymbol === "kPEPE")).toEqual({
      venue: "hyperliquid",
      base: "PEPE",
      venueSymbol: "kPEPE",
      multiplier: 1000,
      contractSize: 1,
      fundingIntervalHours: 1,
    });
  });

  it("parses funding from metaAndAssetCtxs (real 2026 ctxs paired with BTC/ETH)", () => {
    const raw = fixture("hyperliquid/metaAndAssetCtxs_BTC_ETH_2026-05_DERIVED.json");
    expect(parseInstruments(raw).map((i) => i.venueSymbol)).toEqual(["BTC", "ETH"]);
    const [b, e] = parseFunding(raw, NOW);
    expect(b).toEqual({
      venue: "hyperliquid",
      base: "BTC",
      venueSymbol: "BTC",
      fundingRate: -0.0000015186,
      fundingIntervalHours: 1,
      nextFundingTime: 1780138800000,
      markPrice: 77562,
      indexPrice: 77605,
      premium: -0.0005927453,
      interestRate: null,
      time: NOW,
    });
    expect(e).toMatchObject({ base: "ETH", fundingRate: 0.0000125, markPrice: 2123.7, indexPrice: 2124.6, premium: -0.0002824061 });
  });

  it("parses open interest in coins and USD (openInterest × markPx)", () => {
    expect(parseOpenInterest(fixture("hyperliquid/metaAndAssetCtxs_BTC_ETH_2026-05_DERIVED.json"), NOW)).toEqual([
      { venue: "hyperliquid", base: "BTC", oiCoins: 27353.17682, oiUsd: 2121567100.51284, time: NOW },
      { venue: "hyperliquid", base: "ETH", oiCoins: 605822.2557999999, oiUsd: 1286584724.64246, time: NOW },
    ]);
    const moodeng = fixture("hyperliquid/metaAndAssetCtxs_MOODENG_from_activeAssetCtx_DERIVED.json");
    expect(parseOpenInterest(moodeng, NOW)[0]).toMatchObject({ base: "MOODENG", oiCoins: 18617460, oiUsd: 3716603.5398 });
    expect(parseFunding(moodeng, NOW)[0]).toMatchObject({ fundingRate: 0.00004863, premium: 0.00008521, markPrice: 0.19963, indexPrice: 0.1995 });
  });

  it("undoes kPEPE, skips delisted assets, keeps a null premium", () => {
    const ctx = (markPx: string, premium: string | null) => ({ funding: "0.0000125", openInterest: "1000", markPx, oraclePx: "0.0183", premium });
    const raw = [
      {
        universe: [
          { name: "kPEPE", szDecimals: 0, maxLeverage: 10 },
          { name: "OLD", szDecimals: 0, maxLeverage: 3, isDelisted: true },
        ],
      },
      [ctx("0.01835", null), ctx("1", "0.0001")],
    ];
    expect(parseInstruments(raw).map((i) => i.venueSymbol)).toEqual(["kPEPE"]);
    expect(parseFunding(raw, NOW)).toEqual([
      {
        venue: "hyperliquid",
        base: "PEPE",
        venueSymbol: "kPEPE",
        fundingRate: 0.0000125,
        fundingIntervalHours: 1,
        nextFundingTime: 1780138800000,
        markPrice: 0.00001835,
        indexPrice: 0.0000183,
        premium: null,
        interestRate: null,
        time: NOW,
      },
    ]);
    expect(parseOpenInterest(raw, NOW)).toEqual([{ venue: "hyperliquid", base: "PEPE", oiCoins: 1_000_000, oiUsd: 18.35, time: NOW }]);
  });

  it("parses a real fundingHistory (8-hourly rows, then hourly) newest first", () => {
    const pts = parseFundingHistory(fixture("hyperliquid/fundingHistory_BTC_2023_trimmed.json"), btc);
    expect(pts).toHaveLength(9);
    expect(pts[0]).toEqual({ venue: "hyperliquid", base: "BTC", time: 1689627600065, rate: 0.0000125, markPrice: null });
    expect(pts[8]).toEqual({ venue: "hyperliquid", base: "BTC", time: 1683849600048, rate: -0.00061334, markPrice: null });
    expect(pts.map((p) => p.time)).toEqual([...pts.map((p) => p.time)].sort((a, b) => b - a));
  });

  it("parses predictedFundings (docs example) and the newer shape with fundingIntervalHours", () => {
    expect(parsePredictedFundings(fixture("hyperliquid/predictedFundings_docs_example.json"))).toEqual([
      { venue: "binance", base: "AVAX", rate: 0.0001, nextFundingTime: 1733961600000, fundingIntervalHours: null },
      { venue: "hyperliquid", base: "AVAX", rate: 0.0000125, nextFundingTime: 1733958000000, fundingIntervalHours: null },
      { venue: "bybit", base: "AVAX", rate: 0.0001, nextFundingTime: 1733961600000, fundingIntervalHours: null },
    ]);
    const newer = [
      [
        "kPEPE",
        [
          ["BinPerp", { fundingRate: "0.00005", nextFundingTime: 1733961600000, fundingIntervalHours: 4 }],
          ["BybitPerp", null],
          ["OkxPerp", { fundingRate: "0.1", nextFundingTime: 1 }],
          ["HlPerp", { fundingRate: "0.0000125", nextFundingTime: 1733958000000, fundingIntervalHours: 1 }],
        ],
      ],
    ];
    expect(parsePredictedFundings(newer)).toEqual([
      { venue: "binance", base: "PEPE", rate: 0.00005, nextFundingTime: 1733961600000, fundingIntervalHours: 4 },
      { venue: "hyperliquid", base: "PEPE", rate: 0.0000125, nextFundingTime: 1733958000000, fundingIntervalHours: 1 },
    ]);
  });

  it("derives one tier per asset from a real 2023 meta without margin tables (universe maxLeverage, mmr = 1 / (2 × lev))", () => {
    const meta = fixture("hyperliquid/meta_2023-07-17.json");
    expect(parseMarginTiers(meta, btc)).toEqual([{ venue: "hyperliquid", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.01 }]);
    const kpepe = parseInstruments(meta).find((i) => i.venueSymbol === "kPEPE")!;
    expect(parseMarginTiers(meta, kpepe)).toEqual([{ venue: "hyperliquid", base: "PEPE", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.01 }]);
  });

  it("reads marginTables by marginTableId (docs example and a tiered table), sorted, upper bound = next lowerBound", () => {
    // The metaAndAssetCtxs example of https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals: a table but no marginTableId on the asset → the universe maxLeverage
    const docs = [
      {
        universe: [{ name: "BTC", szDecimals: 5, maxLeverage: 50 }],
        marginTables: [[50, { description: "", marginTiers: [{ lowerBound: "0.0", maxLeverage: 50 }] }]],
        collateralToken: 0,
      },
      [
        {
          dayNtlVlm: "1169046.29406",
          funding: "0.0000125",
          impactPxs: ["14.3047", "14.3444"],
          markPx: "14.3161",
          midPx: "14.314",
          openInterest: "688.11",
          oraclePx: "14.32",
          premium: "0.00031774",
          prevDayPx: "15.322",
        },
      ],
    ];
    expect(parseMarginTiers(docs, btc)).toEqual([{ venue: "hyperliquid", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.01 }]);
    const tiered = {
      universe: [
        { name: "BTC", szDecimals: 5, maxLeverage: 40, marginTableId: 56 },
        { name: "ETH", szDecimals: 4, maxLeverage: 25, marginTableId: 99 },
        { name: "OLD", szDecimals: 0 },
      ],
      marginTables: [
        [50, { description: "", marginTiers: [{ lowerBound: "0.0", maxLeverage: 50 }] }],
        [
          56,
          {
            description: "tiered 40x",
            marginTiers: [
              { lowerBound: "150000000.0", maxLeverage: 20 },
              { lowerBound: "0.0", maxLeverage: 40 },
            ],
          },
        ],
      ],
    };
    expect(parseMarginTiers(tiered, btc)).toEqual([
      { venue: "hyperliquid", base: "BTC", minNotionalUsd: 0, maxNotionalUsd: 150_000_000, maxLeverage: 40, maintenanceMarginRate: 0.0125 },
      { venue: "hyperliquid", base: "BTC", minNotionalUsd: 150_000_000, maxNotionalUsd: null, maxLeverage: 20, maintenanceMarginRate: 0.025 },
    ]);
    const eth: PerpInstrument = { ...btc, base: "ETH", venueSymbol: "ETH" };
    // table 99 is missing → one tier at the universe maxLeverage
    expect(parseMarginTiers(tiered, eth)).toEqual([{ venue: "hyperliquid", base: "ETH", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 25, maintenanceMarginRate: 0.02 }]);
    expectAppError(() => parseMarginTiers(tiered, { ...btc, base: "OLD", venueSymbol: "OLD" }), "UPSTREAM_ERROR");
    expectAppError(() => parseMarginTiers(tiered, { ...btc, base: "DOGE", venueSymbol: "DOGE" }), "NOT_FOUND");
    expectAppError(
      () => parseMarginTiers({ universe: [{ name: "BTC", marginTableId: 1 }], marginTables: [[1, { marginTiers: [{ lowerBound: "x", maxLeverage: 3 }] }]] }, btc),
      "UPSTREAM_ERROR",
    );
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parseFunding({ universe: [] }));
    expectAppError(() => parseFunding([{ universe: [{ name: "BTC" }] }, []])); // ctxs do not line up with the universe
    expectAppError(() => parseFunding([{ universe: [{ name: "BTC" }] }, [{ funding: "abc" }]]));
    expectAppError(() => parseFundingHistory([{ coin: "BTC", fundingRate: "0.1" }], btc));
    expectAppError(() => parsePredictedFundings({ AVAX: [] }));
  });
});

describe("hyperliquid client against a local stub", () => {
  let stub: RunningStub;
  const HOUR = 3_600_000;

  beforeAll(async () => {
    stub = await startStub({
      "POST /info": (req) => {
        const body = req.body as { type: string; coin?: string; startTime?: number };
        if (body.type === "metaAndAssetCtxs") return { body: fixture("hyperliquid/metaAndAssetCtxs_BTC_ETH_2026-05_DERIVED.json") };
        if (body.type === "predictedFundings") return { body: fixture("hyperliquid/predictedFundings_docs_example.json") };
        if (body.type === "fundingHistory") {
          const rows = [];
          const now = Date.now();
          for (let t = Math.ceil(body.startTime! / HOUR) * HOUR; t <= now && rows.length < 500; t += HOUR)
            rows.push({ coin: body.coin, fundingRate: "0.0000125", premium: "0.0001", time: t });
          return { body: rows };
        }
        return { status: 422, body: "Failed to deserialize the JSON body" };
      },
    });
  });
  afterAll(() => stub.close());

  it("serves funding, OI, paged history, predictions and a null long/short ratio", async () => {
    const c = new HyperliquidPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    const [list, f] = await Promise.all([c.instruments(), c.funding("btc")]);
    expect(list.map((i) => i.base)).toEqual(["BTC", "ETH"]);
    expect(f).toMatchObject({ base: "BTC", fundingRate: -0.0000015186, fundingIntervalHours: 1 });
    expect(await c.openInterest("ETH")).toMatchObject({ oiCoins: 605822.2557999999, oiUsd: 1286584724.64246 });
    expect((await c.fundingAll()).map((s) => s.base)).toEqual(["BTC", "ETH"]);

    const before = stub.calls.length;
    const hist = await c.fundingHistory("BTC", 600);
    const historyCalls = stub.calls.slice(before).filter((u) => u.includes('"fundingHistory"'));
    expect(historyCalls).toHaveLength(2);
    expect(hist).toHaveLength(600);
    expect(hist[0]!.time).toBeGreaterThan(hist[599]!.time);
    expect(hist[0]!.time - hist[599]!.time).toBe(599 * HOUR);

    expect(await c.predictedFundings()).toHaveLength(3);
    expect(await c.longShort("BTC")).toBeNull();
    await expect(c.funding("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("reads funding history from the hour, so identical reads started apart share one request", async () => {
    const c = new HyperliquidPerpClient(stub.url, { timeoutMs: 2000, retries: 0 });
    await c.instruments();
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const before = stub.calls.length;
      vi.setSystemTime(hour + 1_000);
      const first = c.fundingHistory("BTC", 24);
      // The first request is on the wire before the clock moves on.
      await new Promise((done) => setImmediate(done));
      vi.setSystemTime(hour + 60_000);
      const [a, b] = await Promise.all([first, c.fundingHistory("BTC", 24)]);
      expect(b).toEqual(a);
      expect(a).toHaveLength(24);
      const sent = stub.calls.slice(before).filter((u) => u.includes('"fundingHistory"'));
      expect(sent).toEqual([`POST /info {"type":"fundingHistory","coin":"BTC","startTime":${hour - 25 * HOUR}}`]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("serves margin tiers from the meta loaded with the instruments, without another request", async () => {
    const [meta, ctxs] = fixture("hyperliquid/metaAndAssetCtxs_BTC_ETH_2026-05_DERIVED.json") as [{ universe: Array<Record<string, unknown>> }, unknown[]];
    const withTables = [
      {
        ...meta,
        universe: meta.universe.map((u) => (u.name === "BTC" ? { ...u, marginTableId: 56 } : u)),
        marginTables: [
          [
            56,
            {
              description: "tiered 40x",
              marginTiers: [
                { lowerBound: "0.0", maxLeverage: 40 },
                { lowerBound: "150000000.0", maxLeverage: 20 },
              ],
            },
          ],
        ],
      },
      ctxs,
    ];
    const tiered = await startStub({ "POST /info": () => ({ body: withTables }) });
    try {
      const c = new HyperliquidPerpClient(tiered.url, { timeoutMs: 2000, retries: 0 });
      await c.instruments();
      const before = tiered.calls.length;
      expect((await c.marginTiers("btc")).map((t) => [t.minNotionalUsd, t.maxNotionalUsd, t.maxLeverage, t.maintenanceMarginRate])).toEqual([
        [0, 150_000_000, 40, 0.0125],
        [150_000_000, null, 20, 0.025],
      ]);
      expect(await c.marginTiers("ETH")).toEqual([{ venue: "hyperliquid", base: "ETH", minNotionalUsd: 0, maxNotionalUsd: null, maxLeverage: 50, maintenanceMarginRate: 0.01 }]);
      expect(tiered.calls.length).toBe(before);
      await expect(c.marginTiers("DOGE")).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await tiered.close();
    }
  });
});
