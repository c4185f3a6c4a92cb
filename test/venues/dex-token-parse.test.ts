import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePairList } from "../../src/venues/dexscreener/parse.js";
import { CAIP2, checkTokenAddress, parseNetwork } from "../../src/venues/dex/token-address.js";
import { parseTokens } from "../../src/venues/geckoterminal/parse-token.js";

const fixture = (venue: string, name: string): unknown => JSON.parse(readFileSync(new URL(`../../src/venues/${venue}/fixtures/${name}`, import.meta.url), "utf8"));

describe("GeckoTerminal token parser on recorded bodies", () => {
  it("reads the observed BSC ETH token with its top pool", () => {
    const [t, ...rest] = parseTokens(fixture("geckoterminal", "token_bsc_ETH_2026-09.json"), "/networks/{network}/tokens/{address}");
    expect(rest).toEqual([]);
    expect(t).toMatchObject({
      chain: "bsc",
      address: "0x2170Ed0880ac9A755fd29B2688956BD959F933F8",
      symbol: "ETH",
      name: "Ethereum Token",
      decimals: 18,
      coingeckoCoinId: "binance-peg-weth",
      priceUsd: 2575.1402462078,
      volume24hUsd: 25016115.5564862,
    });
    // The 115-digit reserve string still becomes a finite number.
    expect(t!.totalReserveUsd).toBeCloseTo(29281935.667, 2);
    expect(t!.topPools).toHaveLength(1);
    expect(t!.topPools[0]).toMatchObject({
      dex: "pancakeswap-v3-bsc",
      pairAddress: "0xd0e226f674bbf064f54ab47f42473ff80db98cba",
      liquidityUsd: 16714230.2158,
      txns24h: { buys: 1822, sells: 2358 },
      feeBps: 5,
      priceUsd: null,
      createdAt: Date.parse("2025-11-14T06:46:14Z"),
    });
    expect(t!.topPools[0]!.quoteToken.address).toBe("0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c");
    expect(t!.topPools[0]!.quoteToken.symbol).toBe("WBNB");
  });

  it("reads the multi-token envelope, and refuses a body of another shape", () => {
    const list = parseTokens(fixture("geckoterminal", "tokens_multi_bsc_ETH_DERIVED_2026-09.json"));
    expect(list.map((t) => t.symbol)).toEqual(["ETH"]);
    expect(parseTokens({ data: [] })).toEqual([]);
    expect(() => parseTokens({ data: [{ id: "bsc_0x1", type: "pool", attributes: {} }] })).toThrow(/unexpected shape/);
  });
});

describe("DexScreener tokens/v1 on recorded pairs", () => {
  it("keeps the BSC pairs of both tokens, with the dust pool's absurd change as a number", () => {
    const pools = parsePairList(fixture("dexscreener", "tokens_v1_bsc_BTCB_ETH_2026-09.json"), "/tokens/v1");
    expect(pools.map((p) => p.baseToken.symbol)).toEqual(["BTCB", "BTCB", "ETH"]);
    expect(pools[0]).toMatchObject({ priceUsd: 84584.076, liquidityUsd: 28700176.37, txns24h: { buys: 6734, sells: 7609 } });
    expect(pools[1]!.priceChange24hPct).toBe(3.725857251510287e42);
    expect(pools[2]).toMatchObject({ priceUsd: 2576.66, liquidityUsd: 899550.52, txns24h: null });
  });

  it("reads the Solana pumpswap pair (young pool, SOL quote)", () => {
    const [p] = parsePairList(fixture("dexscreener", "tokens_v1_solana_UMIA_2026-08.json"), "/tokens/v1");
    expect(p).toMatchObject({ chain: "solana", dex: "pumpswap", priceUsd: 0.00008138, liquidityUsd: 256213.77, createdAt: 1787786646000 });
    expect(p!.quoteToken.address).toBe("So11111111111111111111111111111111111111112");
  });
});

describe("network and address input rules", () => {
  it("accepts the slugs and CAIP-2 ids, nothing else", () => {
    expect(parseNetwork("eth")).toBe("ethereum");
    expect(parseNetwork("BASE")).toBe("base");
    expect(parseNetwork("eip155:8453")).toBe("base");
    expect(parseNetwork("eip155:56")).toBe("bsc");
    expect(parseNetwork(CAIP2.solana)).toBe("solana");
    expect(parseNetwork("solana:5EYKT4USFV8P8NJDTREPY1VZQKQZKVDP")).toBeUndefined();
    expect(parseNetwork("eip155:999")).toBeUndefined();
    expect(parseNetwork("polygon_pos")).toBeUndefined();
  });

  it("checks EVM hex, length and EIP-55, and returns the checksummed form", () => {
    const weth = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";
    expect(checkTokenAddress("ethereum", weth.toLowerCase())).toEqual({ ok: true, address: weth });
    expect(checkTokenAddress("ethereum", `0x${weth.slice(2).toUpperCase()}`)).toEqual({ ok: true, address: weth });
    expect(checkTokenAddress("ethereum", weth)).toEqual({ ok: true, address: weth });
    // One letter's case flipped: a mixed-case address whose checksum fails.
    expect(checkTokenAddress("ethereum", weth.replace("aA39", "Aa39"))).toMatchObject({ ok: false, reason: expect.stringContaining("EIP-55") });
    expect(checkTokenAddress("base", weth.slice(0, 41))).toMatchObject({ ok: false, reason: expect.stringContaining("40 hex") });
    expect(checkTokenAddress("base", `${weth.slice(0, 41)}g`)).toMatchObject({ ok: false, reason: expect.stringContaining("hex") });
    expect(checkTokenAddress("base", "So11111111111111111111111111111111111111112")).toMatchObject({ ok: false });
  });

  it("checks Solana base58 of 32 bytes", () => {
    expect(checkTokenAddress("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toEqual({ ok: true, address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" });
    expect(checkTokenAddress("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1O")).toMatchObject({ ok: false, reason: expect.stringContaining("base58") });
    // 44 base58 characters that decode to 33 bytes.
    expect(checkTokenAddress("solana", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")).toMatchObject({ ok: false, reason: expect.stringContaining("32 bytes") });
    expect(checkTokenAddress("solana", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")).toMatchObject({ ok: false });
  });
});
