import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { fakeEvmAddress, fakeSolanaAddress, SIM_DEX_POOLS, SIM_DEX_TOKENS, YOUNG_POOL_AGE_MS } from "../../src/sim/dex-tokens.js";
import { dexToken } from "../../tools/dex/token.js";
import { dexTokenOhlcv } from "../../tools/dex/token-ohlcv.js";
import { dexTokens } from "../../tools/dex/tokens.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

const BASE_WETH = "0x4200000000000000000000000000000000000006";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const token = (key: string) => SIM_DEX_TOKENS.find((t) => t.key.startsWith(key))!;
const YOUNG_CBBTC = token("fake-cbBTC-").address;
const MOTH = token("MOTH@solana").address;

describe("token-by-address tools on the simulator (payments off)", () => {
  let s: FreeStack;
  const calls = () => ({ gt: s.sim.faults.requestCount("geckoterminal"), ds: s.sim.faults.requestCount("dexscreener") });
  beforeAll(async () => {
    s = await startFreeStack({ RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", TOKEN_CHECKS_PER_MIN: "100000" });
  });
  afterAll(() => s?.close());

  it("answers a canonical token by address with both sources agreeing and no guard flag", async () => {
    const { status, body } = await s.get(`/dex/tokens/base/${BASE_WETH.toLowerCase()}`);
    expect(status).toBe(200);
    expect(dexToken.output.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({
      network: "base",
      caip2: "eip155:8453",
      address: BASE_WETH,
      symbol: "WETH",
      decimals: 18,
      low_liquidity: false,
      unverified: false,
      symbol_collision: null,
    });
    expect(body.listed_on).toEqual(expect.arrayContaining(["canonical", "coingecko", "geckoterminal", "dexscreener"]));
    expect(body.sources_agree).toBe(true);
    expect(body.source_gap_pct).toBeLessThanOrEqual(2);
    const model = s.sim.market.priceAt("ETH", Date.now());
    expect(Math.abs(body.price_usd / model - 1)).toBeLessThan(0.02);
    expect(body.pools.length).toBeGreaterThan(1);
    expect(body.liquidity_usd.best_pool).toBe(body.pools[0].liquidity_usd);
    expect(body.liquidity_usd.total).toBeGreaterThanOrEqual(body.liquidity_usd.best_pool);
    // A look-alike WETH on Base has a $2.4M pool in the simulator: never a pool OF this token.
    const fakeWeth = SIM_DEX_TOKENS.find((t) => t.role === "lookalike" && t.chain === "base" && t.symbol === "WETH")!;
    const fakePools = new Set(SIM_DEX_POOLS.filter((p) => p.base === fakeWeth).map((p) => p.address.toLowerCase()));
    expect(fakePools.size).toBe(1);
    for (const p of body.pools) expect(fakePools.has(p.pool_address.toLowerCase())).toBe(false);
    // The CAIP-2 id and the checksummed form name the same token.
    const caip = await s.get(`/dex/tokens/eip155:8453/${BASE_WETH}`);
    expect(caip.body.price_usd).toBeCloseTo(body.price_usd, 6);
  });

  it("marks the young thin look-alike: low_liquidity, unverified, symbol_collision naming the real cbBTC", async () => {
    const { status, body } = await s.get(`/dex/tokens/base/${YOUNG_CBBTC}`);
    expect(status).toBe(200);
    expect(body.symbol).toBe("cbBTC");
    expect(body.flags).toEqual(expect.arrayContaining(["low_liquidity", "unverified", "symbol_collision"]));
    expect(body.symbol_collision.canonical).toEqual(expect.arrayContaining([{ network: "base", address: "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf" }]));
    expect(body.liquidity_usd.best_pool).toBeLessThan(50_000);
    expect(body.pool_count).toBe(1);
    // Aged from the simulator's start (a few seconds ago), whatever the calendar says.
    expect(body.pool_age_days).toBeCloseTo(YOUNG_POOL_AGE_MS / 86_400_000, 1);
    expect(body.listed_on).not.toContain("canonical");
    expect(body.best_pool_quote).toMatchObject({ symbol: "USDC", kind: "stablecoin" });
    expect(body.quote_is_stable_or_wrapped_native).toBe(true);
  });

  it("states empty intervals of a thin token's candles instead of dropping them", async () => {
    await s.get(`/dex/tokens/solana/${MOTH}`);
    const before = calls();
    const { status, body } = await s.get(`/dex/tokens/solana/${MOTH}/ohlcv?interval=1m&limit=120`);
    expect(status).toBe(200);
    // Token metadata and pool list come from the cache: the candles are the only upstream call.
    expect([calls().gt - before.gt, calls().ds - before.ds]).toEqual([1, 0]);
    expect(dexTokenOhlcv.output.safeParse(body).success).toBe(true);
    expect(body.pool).toMatchObject({ dex: "raydium", quote_symbol: "USDC", side: "base", reason: "most liquid pool" });
    expect(body.candles).toHaveLength(120);
    expect(body.empty_intervals).toBeGreaterThan(0);
    expect(body.candle_count).toBeGreaterThan(0);
    expect(body.empty_intervals + body.candle_count).toBe(120);
    const times = body.candles.map((c: { timestamp: string }) => Date.parse(c.timestamp));
    for (let i = 1; i < times.length; i++) expect(times[i - 1] - times[i]).toBe(60_000);
    for (const c of body.candles) {
      if (c.empty) expect(c).toMatchObject({ open: null, close: null, volume_usd: 0 });
      else expect(c.high).toBeGreaterThanOrEqual(c.low);
    }
    // A quote-side token is charted as itself: USDC in its pools is ≈ 1 USD.
    const usdc = await s.get(`/dex/tokens/base/${BASE_USDC}/ohlcv?interval=1h&limit=5`);
    expect(usdc.body.pool.side).toBe("quote");
    const closes = usdc.body.candles.filter((c: { empty: boolean }) => !c.empty).map((c: { close: number }) => c.close);
    for (const c of closes) expect(Math.abs(c - 1)).toBeLessThan(0.02);
  });

  it("refuses bad input with 400 and an unknown token with 404, checked against the sources", async () => {
    for (const path of [
      `/dex/tokens/base/0x123`,
      `/dex/tokens/base/${BASE_WETH.replace("0x42", "0xZZ")}`,
      `/dex/tokens/base/${"0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2".replace("aA39", "Aa39")}`,
      `/dex/tokens/solana/0OIl${"1".repeat(40)}`,
      `/dex/tokens/tron/${BASE_WETH}`,
      `/dex/tokens/base?addresses=${BASE_WETH},nope`,
      `/dex/tokens/base?addresses=${Array.from({ length: 31 }, (_, i) => fakeEvmAddress(`x${i}`)).join(",")}`,
    ]) {
      const r = await s.get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.error.code, path).toBe("BAD_REQUEST");
    }
    const before = calls();
    const unknown = await s.get(`/dex/tokens/base/${fakeEvmAddress("never-listed")}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
    const after = calls();
    expect(after.gt - before.gt).toBe(1);
    expect(after.ds - before.ds).toBe(1);
  });

  it("answers a batch of 20 (the most a request takes) with one call per source, one result per address", async () => {
    const known = [BASE_WETH, BASE_USDC, YOUNG_CBBTC];
    const unknown = Array.from({ length: 17 }, (_, i) => fakeEvmAddress(`batch-unknown-${i}`));
    const before = calls();
    const { status, body } = await s.get(`/dex/tokens/base?addresses=${[...known, ...unknown].join(",")}`);
    expect(status).toBe(200);
    expect(dexTokens.output.safeParse(body).success).toBe(true);
    const after = calls();
    expect(after.gt - before.gt).toBe(1);
    expect(after.ds - before.ds).toBe(1);
    expect(body.count).toBe(20);
    expect(body.found).toBe(3);
    expect(body.results.map((r: { status: string }) => r.status)).toEqual(["found", "found", "refused", ...unknown.map(() => "not_found")]);
    expect(body.results[2].reasons).toEqual(["low_liquidity", "unverified"]);
    // One more is refused before anything is asked: a paid URL of 21 mints would pass the 1,024 bytes its receipt allows.
    const over = await s.get(`/dex/tokens/base?addresses=${[...known, ...unknown, fakeEvmAddress("batch-one-too-many")].join(",")}`);
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain("at most 20 addresses");
    expect(body.results[2].price_usd).toBeGreaterThan(0);
  });

  it("costs one upstream call per source for 1,000 concurrent identical loads and for 30 distinct ones together", async () => {
    const src = s.service.ctx.venues.dexTokens;
    const addr = fakeSolanaAddress("concurrency-probe");
    let before = calls();
    const snaps = await Promise.all(Array.from({ length: 1000 }, () => src.snapshot("solana", addr, "paid")));
    expect(new Set(snaps).size).toBe(1);
    let after = calls();
    expect([after.gt - before.gt, after.ds - before.ds]).toEqual([1, 1]);
    const distinct = Array.from({ length: 30 }, (_, i) => fakeSolanaAddress(`distinct-${i}`));
    before = calls();
    await Promise.all(distinct.map((a) => src.snapshot("solana", a, "paid")));
    after = calls();
    expect([after.gt - before.gt, after.ds - before.ds]).toEqual([1, 1]);
    // 100 concurrent identical HTTP requests: one call per source.
    const weth = SIM_DEX_TOKENS.find((t) => t.key === "WETH@arbitrum")!.address;
    before = calls();
    const rs = await Promise.all(Array.from({ length: 100 }, () => s.get(`/dex/tokens/arbitrum/${weth}`)));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    after = calls();
    expect([after.gt - before.gt, after.ds - before.ds]).toEqual([1, 1]);
  });

  it("answers from DexScreener alone when GeckoTerminal fails, and says so; unknown is not decided on one source", async () => {
    const cake = SIM_DEX_TOKENS.find((t) => t.key === "Cake@bsc")!.address;
    s.sim.faults.inject("geckoterminal", { kind: "server_error", status: 500 }, 3);
    const { status, body } = await s.get(`/dex/tokens/bsc/${cake}`);
    s.sim.faults.clear("geckoterminal");
    expect(status).toBe(200);
    expect(body.missing_sources).toEqual([expect.objectContaining({ source: "geckoterminal" })]);
    expect(body.listed_on).toEqual(["dexscreener"]);
    expect(body.price_usd_by_source.geckoterminal).toBeNull();
    expect(body.sources_agree).toBeNull();
    expect(body.price_usd).toBeGreaterThan(0);
    s.sim.faults.inject("geckoterminal", { kind: "server_error", status: 500 }, 3);
    const unknown = await s.get(`/dex/tokens/bsc/${fakeEvmAddress("unknown-while-gt-down")}`);
    s.sim.faults.clear("geckoterminal");
    expect(unknown.status).toBe(503);
  });

  it("says which address each canonical symbol resolves to, per network, in the symbol price answer", async () => {
    const { body } = await s.get("/price/ETH?include_sources=false");
    expect(body.resolved_addresses).toEqual(
      expect.arrayContaining([
        { network: "base", caip2: "eip155:8453", address: BASE_WETH, token_symbol: "WETH" },
        { network: "bsc", caip2: "eip155:56", address: "0x2170Ed0880ac9A755fd29B2688956BD959F933F8", token_symbol: "ETH" },
      ]),
    );
    // Each resolved address answers the by-address tool with no symbol collision (it IS the canonical token).
    const bsc = await s.get("/dex/tokens/bsc/0x2170Ed0880ac9A755fd29B2688956BD959F933F8");
    expect(bsc.body).toMatchObject({ symbol: "ETH", symbol_collision: null });
    expect(bsc.body.listed_on).toContain("canonical");
  });

  it("serves the same answers over MCP (SDK client), well under 20k tokens", async () => {
    const client = new Client({ name: "tokens-test", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
    try {
      const r = (await client.callTool({ name: "dex_token", arguments: { network: "solana", address: MOTH } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ network: "solana", address: MOTH, symbol: "MOTH" });
      const big = (await client.callTool({
        name: "dex_token_ohlcv",
        arguments: { network: "eth", address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", interval: "1m", limit: 200 },
      })) as CallToolResult;
      expect(big.isError).toBeFalsy();
      // About 4 characters a token: the whole result (text and structured content) stays under 20k tokens.
      expect(JSON.stringify(big).length).toBeLessThan(80_000);
      const batch = (await client.callTool({
        name: "dex_tokens",
        arguments: { network: "base", addresses: Array.from({ length: 20 }, (_, i) => (i === 0 ? BASE_WETH : fakeEvmAddress(`mcp-${i}`))).join(",") },
      })) as CallToolResult;
      expect(JSON.stringify(batch).length).toBeLessThan(80_000);
      const bad = (await client.callTool({ name: "dex_token", arguments: { network: "base", address: "0x12" } })) as CallToolResult;
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe("token-by-address tools with payments on (refusals before payment)", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000" } });
  });
  afterAll(() => stack?.close());

  it("asks payment for a known token, and answers 400 / 404 without asking", async () => {
    const get = (p: string) => fetch(`${stack.url}${p}`);
    expect((await get(`/dex/tokens/base/${BASE_WETH}`)).status).toBe(402);
    expect((await get(`/dex/tokens/base/${BASE_WETH}/ohlcv?interval=4h&limit=10`)).status).toBe(402);
    expect((await get(`/dex/tokens/base/0xnothex`)).status).toBe(400);
    expect((await get(`/dex/tokens/base/${BASE_WETH}/ohlcv?interval=2h`)).status).toBe(400);
    const unknown = await get(`/dex/tokens/base/${fakeEvmAddress("paid-unknown")}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("payment-required")).toBeNull();
  });
});
