import { describe, expect, it } from "vitest";
import { assetBySymbol, listAssets } from "../../src/assets/catalogue.js";
import {
  acceptPool,
  addressKey,
  CANONICAL_TOKENS,
  canonicalTokens,
  isCanonical,
  isWellFormedAddress,
  MIN_LIQUIDITY_USD,
  poolPriceOf,
  QUOTE_ASSETS,
  quoteAsset,
} from "../../src/assets/tokens.js";
import { DEX_CHAINS, type DexChain, type DexPool } from "../../src/venues/dex/types.js";
import { parsePairList } from "../../src/venues/dexscreener/parse.js";
import { parsePools } from "../../src/venues/geckoterminal/parse.js";
import { fixture } from "../helpers/fixtures.js";

const WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";
const USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";

/** A synthetic pool for edge cases; real-payload cases below use the recorded fixtures. */
function pool(over: Partial<DexPool> & { base: [string, string]; quote: [string, string] }): DexPool {
  const { base, quote, ...rest } = over;
  return {
    source: "dexscreener",
    chain: "ethereum",
    dex: "uniswap",
    pairAddress: "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640",
    baseToken: { address: base[0], symbol: base[1], name: base[1] },
    quoteToken: { address: quote[0], symbol: quote[1], name: quote[1] },
    priceUsd: 3000,
    priceNative: 3000,
    liquidityUsd: 1_000_000,
    volume24hUsd: 1_000_000,
    priceChange24hPct: 0,
    txns24h: null,
    feeBps: null,
    createdAt: null,
    ...rest,
  };
}

const gtTokenPools = () => parsePools(fixture("geckoterminal/token_pools_eth_WETH_2024-05.json"));
const gtTopPools = () => parsePools(fixture("geckoterminal/top_pools_eth_2024-05.json"));

describe("canonical-token registry data", () => {
  it("keys only catalogue symbols and aggregated chains", () => {
    for (const [symbol, tokens] of Object.entries(CANONICAL_TOKENS)) {
      expect(assetBySymbol(symbol)?.symbol, symbol).toBe(symbol);
      expect(tokens.length, symbol).toBeGreaterThan(0);
      for (const t of tokens) expect(Object.keys(DEX_CHAINS), `${symbol} ${t.chain}`).toContain(t.chain);
    }
    expect(Object.keys(QUOTE_ASSETS).sort()).toEqual(Object.keys(DEX_CHAINS).sort());
  });

  it("has only well-formed addresses (EVM 0x+40 hex, checksum-agnostic; Solana base58)", () => {
    const all = [
      ...Object.values(CANONICAL_TOKENS).flatMap((list) => list.map((t) => ({ chain: t.chain, address: t.address }))),
      ...(Object.entries(QUOTE_ASSETS) as Array<[DexChain, ReadonlyArray<{ address: string }>]>).flatMap(([chain, list]) => list.map((a) => ({ chain, address: a.address }))),
    ];
    expect(all.length).toBeGreaterThan(90);
    for (const { chain, address } of all) expect(isWellFormedAddress(chain, address), `${chain} ${address}`).toBe(true);
    expect(isWellFormedAddress("ethereum", "0x123")).toBe(false);
    expect(isWellFormedAddress("solana", "So1111111111111111111111111111111111111111O")).toBe(false); // 'O' is not base58
    expect(isWellFormedAddress("solana", WETH)).toBe(false);
  });

  it("maps no contract to two assets, and lists no contract twice", () => {
    const owner = new Map<string, string>();
    for (const [symbol, list] of Object.entries(CANONICAL_TOKENS)) {
      for (const t of list) {
        const key = `${t.chain}:${addressKey(t.chain, t.address)}`;
        expect(owner.get(key), key).toBeUndefined();
        owner.set(key, symbol);
      }
    }
    for (const [chain, list] of Object.entries(QUOTE_ASSETS) as Array<[DexChain, ReadonlyArray<{ address: string }>]>) {
      const keys = list.map((a) => addressKey(chain, a.address));
      expect(new Set(keys).size, chain).toBe(keys.length);
    }
  });

  it("covers the majors on their home chains and leaves unverifiable symbols out", () => {
    const chainsOf = (s: string) => new Set(canonicalTokens(s).map((t) => t.chain));
    expect([...chainsOf("ETH")]).toEqual(expect.arrayContaining(["ethereum", "arbitrum", "optimism", "base", "polygon", "bsc", "avalanche"]));
    expect([...chainsOf("BTC")]).toEqual(expect.arrayContaining(["ethereum", "base", "bsc", "arbitrum"]));
    expect(canonicalTokens("sol")).toEqual([{ chain: "solana", address: "So11111111111111111111111111111111111111112", symbol: "SOL" }]);
    for (const s of ["APT", "SUI", "TON", "TRX"]) expect(canonicalTokens(s), s).toEqual([]);
    expect(canonicalTokens("NOPE")).toEqual([]);
    const covered = listAssets().filter((a) => canonicalTokens(a.symbol).length > 0).length;
    expect(covered).toBe(19);
  });
});

describe("registry lookups", () => {
  it("matches EVM addresses case-insensitively and Solana mints exactly", () => {
    expect(isCanonical("ETH", "ethereum", WETH.toLowerCase())).toBe(true);
    expect(isCanonical("eth", "ethereum", WETH.toUpperCase().replace("0X", "0x"))).toBe(true);
    expect(isCanonical("ETH", "arbitrum", WETH)).toBe(false); // mainnet WETH is not WETH on Arbitrum
    expect(isCanonical("BTC", "ethereum", WETH)).toBe(false);
    expect(isCanonical("SOL", "solana", "So11111111111111111111111111111111111111112")).toBe(true);
    expect(isCanonical("SOL", "solana", "so11111111111111111111111111111111111111112")).toBe(false);
    expect(isCanonical("NOPE", "ethereum", WETH)).toBe(false);
  });

  it("knows quote assets and whether they are stable", () => {
    expect(quoteAsset("ethereum", USDC.toLowerCase())).toEqual({ symbol: "USDC", stable: true });
    expect(quoteAsset("ethereum", WETH)).toEqual({ symbol: "WETH", stable: false });
    expect(quoteAsset("bsc", "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c")).toEqual({ symbol: "WBNB", stable: false });
    expect(quoteAsset("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toEqual({ symbol: "USDC", stable: true });
    expect(quoteAsset("base", USDC)).toBeUndefined(); // mainnet USDC's address means nothing on Base
    expect(quoteAsset("ethereum", "0x0000000000000000000000000000000000000001")).toBeUndefined();
  });
});

describe("acceptPool and poolPriceOf", () => {
  it("accepts the real WETH/stable pools for ETH on the base side and rejects everything else in GeckoTerminal's top pools", () => {
    const pools = gtTopPools();
    const accepted = pools.filter((p) => acceptPool("ETH", p));
    expect(accepted.map((p) => p.pairAddress)).toEqual([
      "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640",
      "0x11b815efb8f581194ae79006d24e0d814b7697f6",
      "0x0d4a11d5eeaac28ec3f61d100daf4d40471f1852",
    ]);
    expect(accepted.map((p) => acceptPool("ETH", p)?.side)).toEqual(["base", "base", "base"]);
    expect(poolPriceOf(accepted[0]!, "base")).toBe(1993.76447806785);
  });

  it("never lets look-alike tokens named like a catalogue asset into an aggregate", () => {
    const pools = gtTopPools();
    const bySymbol = (s: string) => pools.find((p) => p.baseToken.symbol === s)!;
    expect(acceptPool("XRP", bySymbol("XRP2.0"))).toBeUndefined();
    expect(acceptPool("SHIB", bySymbol("Shib2.0"))).toBeUndefined();
    expect(acceptPool("PEPE", bySymbol("PEPE2.0"))).toBeUndefined();
    // same symbol, other address: a fake "WETH" and a fake "ETH" against real USDC, deep liquidity
    const fakeWeth = pool({ base: ["0x1111111111111111111111111111111111111111", "WETH"], quote: [USDC, "USDC"] });
    const fakeEth = pool({ base: ["0x2222222222222222222222222222222222222222", "ETH"], quote: [USDC, "USDC"], liquidityUsd: 5e9 });
    expect(acceptPool("ETH", fakeWeth)).toBeUndefined();
    expect(acceptPool("ETH", fakeEth)).toBeUndefined();
    // the real WETH against a look-alike "USDC" quote is rejected too
    expect(acceptPool("ETH", pool({ base: [WETH, "WETH"], quote: ["0x3333333333333333333333333333333333333333", "USDC"] }))).toBeUndefined();
    // a real token on the wrong chain
    expect(acceptPool("ETH", pool({ chain: "base", base: [WETH, "WETH"], quote: [USDC, "USDC"] }))).toBeUndefined();
  });

  it("requires a known quote asset on the other side (staked/LST pairs are not quotes)", () => {
    const pools = gtTokenPools();
    const wsteth = pools.find((p) => p.baseToken.symbol === "wstETH" && p.quoteToken.symbol === "WETH")!;
    expect(acceptPool("ETH", wsteth)).toBeUndefined();
    const pepe = pools.find((p) => p.baseToken.symbol === "PEPE")!;
    expect(acceptPool("ETH", pepe)).toBeUndefined(); // PEPE is not a quote asset
    expect(acceptPool("PEPE", pepe)).toEqual({ side: "base" });
    expect(poolPriceOf(pepe, "base")).toBe(0.00000976125434746831);
  });

  it("orients quote-side pools and prices the canonical token as priceUsd / priceNative", () => {
    const pools = gtTokenPools();
    const usdcWeth = pools.find((p) => p.pairAddress === "0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8")!; // "USDC / WETH 0.3%"
    expect(acceptPool("ETH", usdcWeth)).toEqual({ side: "quote" });
    expect(poolPriceOf(usdcWeth, "quote")).toBeCloseTo(2958.38128508324, 8);
    const tricrypto = pools.find((p) => p.dex === "curve" && p.baseToken.symbol === "USDT")!; // "USDT / WBTC / WETH": base USDT, quote WBTC
    expect(acceptPool("BTC", tricrypto)).toEqual({ side: "quote" });
    expect(poolPriceOf(tricrypto, "quote")).toBeCloseTo(62871.5817153984, 6);
    const wbtcWeth = pools.find((p) => p.baseToken.symbol === "WBTC" && p.feeBps === 30)!;
    expect(acceptPool("BTC", wbtcWeth)).toEqual({ side: "base" });
    expect(acceptPool("ETH", wbtcWeth)).toBeUndefined(); // WBTC is not a quote asset
  });

  it("computes the quote-side price from a DexScreener pair (USD per BTCB ÷ WBNB per BTCB = USD per WBNB)", () => {
    const [btcb] = parsePairList(fixture("dexscreener/token_pairs_bsc_BTCB_2026-09.json"));
    expect(poolPriceOf(btcb!, "quote")).toBeCloseTo(82269.44 / 105.3723, 9);
    expect(poolPriceOf({ ...btcb!, priceNative: null }, "quote")).toBeNull();
    expect(poolPriceOf({ ...btcb!, priceNative: 0 }, "quote")).toBeNull();
    expect(poolPriceOf({ ...btcb!, priceUsd: null }, "base")).toBeNull();
  });

  it("rejects low or unknown liquidity (the real BTCB/WBNB dust pool holds $60.88)", () => {
    const [btcb] = parsePairList(fixture("dexscreener/token_pairs_bsc_BTCB_2026-09.json"));
    expect(acceptPool("BTC", btcb!)).toBeUndefined();
    expect(acceptPool("BTC", { ...btcb!, liquidityUsd: MIN_LIQUIDITY_USD })).toEqual({ side: "base" });
    expect(acceptPool("BTC", { ...btcb!, liquidityUsd: MIN_LIQUIDITY_USD - 0.01 })).toBeUndefined();
    expect(acceptPool("BTC", { ...btcb!, liquidityUsd: null })).toBeUndefined();
    expect(acceptPool("BNB", { ...btcb!, liquidityUsd: 1e6 })).toBeUndefined(); // BTCB is not a quote asset
  });

  it("does not accept a quote token that lacks an address (older DexScreener schema)", () => {
    const pools = parsePairList([]).concat(pool({ base: [WETH, "WETH"], quote: ["", "USDC"] }));
    expect(acceptPool("ETH", pools[0]!)).toBeUndefined();
  });
});
