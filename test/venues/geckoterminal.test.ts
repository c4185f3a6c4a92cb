import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectAppError } from "../helpers/errors.js";
import { AppError } from "../../src/errors.js";
import { GeckoTerminalClient } from "../../src/venues/geckoterminal/client.js";
import { chainFromNetwork, feeBpsFromName, parseOhlcv, parsePools, splitGeckoId, symbolsFromName } from "../../src/venues/geckoterminal/parse.js";
import { fixture } from "../helpers/fixtures.js";
import { startStub, type RunningStub } from "./perp-server.js";

const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const WBTC = "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599";
const CBRL_POOL = "7LLLPK5TnjdRVaCw6r3FMKmpUTbxgWSvE1m6dxvx6ERA";

const tokenPools = () => fixture("geckoterminal/token_pools_eth_WETH_2024-05.json") as { data: Array<Record<string, unknown>> };
const ohlcv15m = () => fixture("geckoterminal/ohlcv_15m_solana_CBRL_SOL_pool_2025-08-20_to_2025-08-21.json");

/** Message of a geckoterminal payload that fails its schema. */
const SHAPE_ERROR = /^geckoterminal .* unexpected shape$/;

describe("geckoterminal parsers on recorded payloads", () => {
  it("normalises a real token-pools page (strings → numbers, fee from the name, ISO → ms, addresses from relationship ids)", () => {
    const pools = parsePools(tokenPools());
    expect(pools).toHaveLength(20);
    const p = pools[0]!;
    expect(p).toMatchObject({
      source: "geckoterminal",
      chain: "ethereum",
      dex: "uniswap_v3",
      pairAddress: "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640",
      baseToken: { address: WETH, symbol: "WETH", name: "WETH" },
      quoteToken: { address: USDC, symbol: "USDC", name: "USDC" },
      priceUsd: 2958.19885153499,
      liquidityUsd: 151752296.378,
      volume24hUsd: 122431218.206013,
      priceChange24hPct: 0.86,
      txns24h: { buys: 2937, sells: 4011 },
      feeBps: 5,
      createdAt: Date.UTC(2021, 11, 29, 12, 35, 14),
    });
    // base in quote tokens = base USD / quote USD
    expect(p.priceNative).toBeCloseTo(2958.19885153499 / 1.00155068153471, 9);
    expect(pools.map((x) => x.feeBps)).toEqual([5, 5, 30, 5, null, 1, 5, 30, null, 4, null, 30, null, 5, null, 1, null, 1, 1, 30]);
  });

  it("takes base and quote from the relationships of multi-asset pools, symbols from the name", () => {
    const curve = parsePools(tokenPools())[10]!;
    expect(curve).toMatchObject({
      dex: "curve",
      baseToken: { address: "0xdac17f958d2ee523a2206206994597c13d831ec7", symbol: "USDT" },
      quoteToken: { address: WBTC, symbol: "WBTC" },
      feeBps: null,
      priceUsd: 1.00008502093185,
    });
    expect(curve.priceNative).toBeCloseTo(1.00008502093185 / 62871.5817153984, 15);
  });

  it("uses included[] tokens for symbols and names when the body has them", () => {
    const pools = parsePools(fixture("geckoterminal/top_pools_eth_2024-05.json"));
    expect(pools).toHaveLength(20);
    expect(pools[19]).toMatchObject({
      baseToken: { address: "0x4ce5df9033ead87976255a8695592bca3e8cb5cb", symbol: "XRP2.0", name: "XRP 2.0" },
      quoteToken: { address: WETH, symbol: "WETH", name: "Wrapped Ether" },
      dex: "uniswap_v2",
      liquidityUsd: Number("83672.23705192308714363392472"), // 30-digit wire decimal → nearest double
      createdAt: Date.UTC(2023, 6, 13, 15, 46, 47),
    });
    expect(pools[2]).toMatchObject({ baseToken: { symbol: "cbETH", name: "Coinbase Wrapped Staked ETH" }, feeBps: 5, createdAt: null });
  });

  it("drops pools on networks we do not aggregate and reads polygon_pos ids", () => {
    const raw = tokenPools();
    const first = raw.data[0] as { id: string };
    const moved = { data: [{ ...first, id: `zksync_${first.id.slice(4)}` }] };
    expect(parsePools(moved)).toEqual([]);
    expect(splitGeckoId("polygon_pos_0xabc")).toEqual({ chain: "polygon", address: "0xabc" });
    expect(splitGeckoId("solana_So11111111111111111111111111111111111111112")).toEqual({ chain: "solana", address: "So11111111111111111111111111111111111111112" });
    expect(splitGeckoId("eth_")).toBeUndefined();
    expect(chainFromNetwork("avax")).toBe("avalanche");
  });

  it("reads fees and symbols from pool names", () => {
    expect(feeBpsFromName("WETH / USDC 0.05%")).toBe(5);
    expect(feeBpsFromName("WBTC / WETH 0.3%")).toBe(30);
    expect(feeBpsFromName("X / Y 1%")).toBe(100);
    expect(feeBpsFromName("X / Y 0.0085%")).toBe(0.85);
    expect(feeBpsFromName("WETH / USDT")).toBeNull();
    expect(symbolsFromName("ezETH-WETH-BPT / ezETH / WETH 0.04%")).toEqual({ base: "ezETH-WETH-BPT", quote: "ezETH" });
    expect(symbolsFromName("oddname")).toEqual({ base: "", quote: "" });
  });

  it("parses OHLCV rows: seconds → ms, exponent values, newest first", () => {
    const candles = parseOhlcv(ohlcv15m());
    expect(candles).toHaveLength(35);
    expect(candles[0]).toEqual({
      time: 1755756000000,
      open: 1.613691542742065e-5,
      high: 1.8577063943794163e-5,
      low: 1.613691542742065e-5,
      close: 1.8111106133282376e-5,
      volumeUsd: 941.0332575772828,
    });
    expect(candles.at(-1)!.time).toBe(1755725400000);
    for (let i = 1; i < candles.length; i++) expect(candles[i - 1]!.time).toBeGreaterThan(candles[i]!.time);
  });

  it("keeps the gaps of a sparse 1h series and sorts newest first even if the wire does not", () => {
    const hourly = parseOhlcv(fixture("geckoterminal/ohlcv_1h_solana_CBRL_SOL_pool_2025-08-20_to_2025-08-30.json"));
    expect(hourly).toHaveLength(235);
    expect(hourly.some((c, i) => i > 0 && hourly[i - 1]!.time - c.time > 3_600_000)).toBe(true);
    const stable = parseOhlcv(fixture("geckoterminal/ohlcv_15m_stablecoin_pool_2023-07-12_to_2023-07-13.json"));
    expect(stable).toHaveLength(99);
    expect(stable[0]).toMatchObject({ time: 1689280200000, close: 1.00090364948961 });
    const body = ohlcv15m() as { data: { attributes: { ohlcv_list: unknown[] } } };
    body.data.attributes.ohlcv_list.reverse();
    expect(parseOhlcv(body)[0]!.time).toBe(1755756000000);
  });

  it("rejects unexpected shapes with UPSTREAM_ERROR", () => {
    expectAppError(() => parseOhlcv({ data: { type: "ohlcv_request_response", attributes: { ohlcv_list: [[1, 2, 3]] } } }), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parseOhlcv({ data: { type: "pool", attributes: { ohlcv_list: [] } } }), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parsePools({ data: [{ id: "eth_0x1", type: "pool" }] }), "UPSTREAM_ERROR", SHAPE_ERROR);
    expectAppError(() => parsePools({ errors: [{ status: "404" }] }), "UPSTREAM_ERROR", SHAPE_ERROR);
    const bad = tokenPools();
    (bad.data[0] as { attributes: Record<string, unknown> }).attributes.reserve_in_usd = "lots";
    expectAppError(() => parsePools(bad), "UPSTREAM_ERROR", SHAPE_ERROR);
  });
});

describe("geckoterminal client against a local stub", () => {
  let stub: RunningStub;
  let status = 200;
  const accepts: Array<string | undefined> = [];
  const client = () => new GeckoTerminalClient(stub.url, { timeoutMs: 2000, retries: 0 });

  beforeAll(async () => {
    stub = await startStub({
      [`GET /networks/eth/tokens/${WETH}/pools`]: (req) => {
        accepts.push(req.headers.accept);
        return status === 200 ? { body: tokenPools() } : { status, body: { errors: [{ status: String(status), title: "Not Found" }] } };
      },
      [`GET /networks/eth/tokens/${WBTC}/pools`]: () => ({ body: tokenPools() }),
      [`GET /networks/solana/pools/${CBRL_POOL}/ohlcv/minute`]: () => ({ body: ohlcv15m() }),
    });
  });
  afterAll(() => stub.close());
  beforeEach(() => {
    stub.calls.length = 0;
    accepts.length = 0;
    status = 200;
  });

  it("fetches a token's pools once within the cache TTL (EVM addresses case-insensitive), with the versioned Accept header", async () => {
    const gt = client();
    const first = await gt.tokenPools("ethereum", WETH);
    expect(first).toHaveLength(20);
    const again = await gt.tokenPools("ethereum", WETH.toUpperCase().replace("0X", "0x"));
    expect(again).toEqual(first);
    expect(stub.calls).toEqual([`GET /networks/eth/tokens/${WETH}/pools?page=1&include=base_token%2Cquote_token%2Cdex`]);
    expect(accepts).toEqual(["application/json;version=20230302"]);
    await gt.tokenPools("ethereum", WBTC);
    expect(stub.calls).toHaveLength(2);
  });

  it("shares one load among concurrent callers", async () => {
    const gt = client();
    const all = await Promise.all(Array.from({ length: 6 }, () => gt.tokenPools("ethereum", WETH)));
    expect(all.every((p) => p.length === 20)).toBe(true);
    expect(stub.calls).toHaveLength(1);
  });

  it("maps an unknown token (404) to NOT_FOUND and does not cache the failure", async () => {
    const gt = client();
    status = 404;
    const err = await gt.tokenPools("ethereum", WETH).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "NOT_FOUND" });
    status = 200;
    await expect(gt.tokenPools("ethereum", WETH)).resolves.toHaveLength(20);
    expect(stub.calls).toHaveLength(2);
  });

  it("maps other refusals to UPSTREAM_ERROR", async () => {
    status = 400;
    await expect(client().tokenPools("ethereum", WETH)).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
  });

  it("requests OHLCV in USD for the base token, caps the limit at 1000 and sends before_timestamp in seconds", async () => {
    const candles = await client().ohlcv("solana", CBRL_POOL, { timeframe: "minute", aggregate: 15 }, { limit: 5000, beforeMs: 1755756000999 });
    expect(candles).toHaveLength(35);
    expect(candles[0]!.time).toBe(1755756000000);
    expect(stub.calls).toEqual([`GET /networks/solana/pools/${CBRL_POOL}/ohlcv/minute?aggregate=15&limit=1000&before_timestamp=1755756000&currency=usd&token=base`]);
    const few = await client().ohlcv("solana", CBRL_POOL, { timeframe: "minute", aggregate: 15 }, { limit: 10 });
    expect(few).toHaveLength(10);
    expect(stub.calls[1]).toBe(`GET /networks/solana/pools/${CBRL_POOL}/ohlcv/minute?aggregate=15&limit=10&currency=usd&token=base`);
    expect(await client().ohlcv("solana", CBRL_POOL, { timeframe: "minute", aggregate: 15 }, { limit: 0 })).toEqual([]);
    expect(stub.calls).toHaveLength(2);
  });

  it("maps an unknown pool (404) to NOT_FOUND", async () => {
    await expect(client().ohlcv("solana", "NoSuchPool111", { timeframe: "day", aggregate: 1 }, { limit: 10 })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
