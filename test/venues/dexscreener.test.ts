import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VenueHealth } from "../../src/core/venue-health.js";
import { expectAppError } from "../helpers/errors.js";
import { DexScreenerClient } from "../../src/venues/dexscreener/client.js";
import { chainFromDexScreener, parsePairList, parseSearch } from "../../src/venues/dexscreener/parse.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const BTCB = "0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c";
const btcbPairs = () => fixture("dexscreener/token_pairs_bsc_BTCB_2026-09.json") as Array<Record<string, unknown>>;

/** Message of a dexscreener payload that fails its schema. */
const SHAPE_ERROR = /^dexscreener .* unexpected shape$/;

describe("dexscreener parsers on recorded payloads", () => {
  it("normalises the verbatim token-pairs BTCB pair (strings → numbers, exponent float, ms timestamp)", () => {
    expect(parsePairList(btcbPairs())).toEqual([
      {
        source: "dexscreener",
        chain: "bsc",
        dex: "squadswap",
        pairAddress: "0x02259FDbF99Ea59e3Bb6589f67e99C0A6322AfF7",
        baseToken: { address: BTCB, symbol: "BTCB", name: "BTCB Token" },
        quoteToken: { address: "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", symbol: "WBNB", name: "Wrapped BNB" },
        priceUsd: 82269.44,
        priceNative: 105.3723,
        liquidityUsd: 60.88,
        volume24hUsd: 4.78,
        priceChange24hPct: 3.725857251510287e42,
        txns24h: { buys: 33, sells: 31 },
        feeBps: null,
        createdAt: 1762901008000,
      },
    ]);
  });

  it("maps missing windows, null liquidity and absent txns to null", () => {
    const pair = { ...btcbPairs()[0]!, volume: { h6: 0.91 }, priceChange: { h1: 0.59 }, liquidity: null, txns: {} };
    delete (pair as Record<string, unknown>).pairCreatedAt;
    const [pool] = parsePairList([pair]);
    expect(pool).toMatchObject({ volume24hUsd: null, priceChange24hPct: null, liquidityUsd: null, txns24h: null, createdAt: null });
    const noLiquidity = { ...btcbPairs()[0]! };
    delete noLiquidity.liquidity;
    delete noLiquidity.volume;
    expect(parsePairList([noLiquidity])[0]).toMatchObject({ liquidityUsd: null, volume24hUsd: null, priceUsd: 82269.44 });
  });

  it("parses a real 2022 Avalanche search body (older schema: quote tokens with only a symbol)", () => {
    const pools = parseSearch(fixture("dexscreener/search_pairs_LUNA_avalanche_2022-08.json"));
    expect(pools).toHaveLength(15);
    expect(pools.every((p) => p.chain === "avalanche" && p.source === "dexscreener")).toBe(true);
    expect(pools[0]).toEqual({
      source: "dexscreener",
      chain: "avalanche",
      dex: "traderjoe",
      pairAddress: "0xdfa0484fBdea70E5e5fA323e314B1274b476c886",
      baseToken: { address: "0x120AD3e5A7c796349e591F1570D9f7980F4eA9cb", symbol: "LUNA", name: "Axelar Wrapped LUNA" },
      quoteToken: { address: "", symbol: "WAVAX", name: "WAVAX" },
      priceUsd: 0.0001685,
      priceNative: 0.000005396,
      liquidityUsd: 11736.84509609765,
      volume24hUsd: 79465.69,
      priceChange24hPct: 62.47,
      txns24h: { buys: 542, sells: 495 },
      feeBps: null,
      createdAt: 1643031831000,
    });
    // no pairCreatedAt on the USDT.e/DAI.e pairs; a dexId that is a contract address passes through
    expect(pools[2]).toMatchObject({ pairAddress: "0xa6908C7E3Be8F4Cd2eB704B5cB73583eBF56Ee62", createdAt: null, priceUsd: 1, priceNative: 1 });
    expect(pools[3]!.dex).toBe("0xCFBA329d49C24b70F3a8b9CC0853493d4645436b");
    expect(pools[5]).toMatchObject({ priceUsd: 1.065e-7, priceNative: 3.315e-9 });
  });

  it("drops pairs on chains we do not aggregate (Injective)", () => {
    expect(parseSearch(fixture("dexscreener/search_pairs_babyDOJO_injective_2024-03.json"))).toEqual([]);
    expect(chainFromDexScreener("injective")).toBeUndefined();
    expect(chainFromDexScreener("ethereum")).toBe("ethereum");
    expect(chainFromDexScreener("polygon")).toBe("polygon");
  });

  it("accepts a null pairs list in search answers", () => {
    expect(parseSearch({ schemaVersion: "1.0.0", pairs: null })).toEqual([]);
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parsePairList({ pairs: [] }), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parsePairList([{ ...btcbPairs()[0]!, priceUsd: "n/a" }]), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parsePairList([{ ...btcbPairs()[0]!, baseToken: { address: BTCB } }]), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parseSearch({ schemaVersion: "1.0.0", pairs: "none" }), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parseSearch([]), "UPSTREAM_ERROR", SHAPE_ERROR);
  });
});

describe("dexscreener client against a local stub", () => {
  let stub: RunningStub;
  let status = 200;
  const many = Array.from({ length: 31 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
  const client = (health?: VenueHealth) => new DexScreenerClient(`${stub.url}/`, { timeoutMs: 2000, retries: 0, health });

  beforeAll(async () => {
    stub = await startStub({
      [`GET /token-pairs/v1/bsc/${BTCB}`]: () => (status === 200 ? { body: btcbPairs() } : { status, body: { error: "x" } }),
      [`GET /tokens/v1/bsc/${many.slice(0, 30).join(",")}`]: () => ({ body: btcbPairs() }),
      [`GET /tokens/v1/bsc/${many[30]}`]: () => ({ body: btcbPairs() }),
      "GET /latest/dex/search": () => ({ body: fixture("dexscreener/search_pairs_LUNA_avalanche_2022-08.json") }),
    });
  });
  afterAll(() => stub.close());
  beforeEach(() => {
    stub.calls.length = 0;
    status = 200;
  });

  it("reads a token's pairs from token-pairs/v1 with DexScreener's chain id", async () => {
    const health = new VenueHealth();
    const pools = await client(health).tokenPairs("bsc", BTCB);
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({ chain: "bsc", priceUsd: 82269.44 });
    expect(stub.calls).toEqual([`GET /token-pairs/v1/bsc/${BTCB}`]);
    expect(health.snapshot().find((s) => s.venue === "dexscreener")).toMatchObject({ reachable: true, requests: 1 });
  });

  it("splits token lists into requests of 30 addresses and returns each pair once", async () => {
    const pools = await client().tokens("bsc", [...many, many[0]!]);
    expect(stub.calls).toHaveLength(2);
    expect(pools).toHaveLength(1);
    expect(await client().tokens("bsc", [])).toEqual([]);
  });

  it("searches with an encoded query", async () => {
    const pools = await client().search("LUNA/WAVAX");
    expect(pools).toHaveLength(15);
    expect(stub.calls).toEqual(["GET /latest/dex/search?q=LUNA%2FWAVAX"]);
  });

  it("coalesces identical concurrent requests into one upstream call", async () => {
    const c = client();
    const results = await Promise.all(Array.from({ length: 5 }, () => c.tokenPairs("bsc", BTCB)));
    expect(results.every((r) => r.length === 1)).toBe(true);
    expect(stub.calls).toHaveLength(1);
  });

  it("maps 404 to NOT_FOUND and other refusals to UPSTREAM_ERROR, without retrying", async () => {
    status = 404;
    await expect(client().tokenPairs("bsc", BTCB)).rejects.toMatchObject({ code: "NOT_FOUND" });
    status = 400;
    await expect(client().tokenPairs("bsc", BTCB)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    expect(stub.calls).toHaveLength(2);
  });
});
