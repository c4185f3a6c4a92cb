import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { fakeEvmAddress, simDexToken } from "../../src/sim/dex-tokens.js";
import { requireKnownToken } from "../../tools/dex/token-common.js";
import { json } from "../helpers/json.js";

/*
 * Checks before payment of the token lookups against paid ones (issue 31, finding 3), on the offline stack
 * (simulator on loopback, anvil, the official x402 client), with the live venue budgets of the report (GeckoTerminal
 * 30 a minute, DexScreener 300; 20% of each kept for checks before payment): clients told apart by X-Forwarded-For from loopback (TRUST_PROXY=loopback).
 */

const BASE_WETH = "0x4200000000000000000000000000000000000006";
const from = (ip: string) => ({ "X-Forwarded-For": ip });

/** An x402-paying fetch for dev payer `i` of `stack`. */
const payWith = (stack: OfflineStack, i: number) =>
  wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[i]!.privateKey))));

describe("token checks before payment never starve paid lookups (live budgets)", () => {
  let stack: OfflineStack;
  const get = (path: string, ip: string) => fetch(`${stack.url}${path}`, { headers: from(ip) });
  const source = () => stack.service.ctx.venues.dexTokens;

  beforeAll(async () => {
    stack = await startOfflineStack({
      env: {
        // The live budgets of the report (the simulator's own environment sets far larger ones).
        GECKOTERMINAL_CALLS_PER_MIN: "30",
        DEXSCREENER_CALLS_PER_MIN: "300",
        RATE_LIMIT_PER_MIN: "100000",
        FREE_RATE_LIMIT_PER_MIN: "100000",
        TOKEN_CHECKS_PER_MIN: "5",
        TRUST_PROXY: "loopback",
        STREAMS: "off",
      },
    });
  });
  afterAll(() => stack?.close());

  // The first two spend 4 of the 6 GeckoTerminal calls a minute kept for checks before payment; the flood spends the rest.
  it("refuses before payment a batch whose addresses are all unknown (404), and asks payment for one with a known address", async () => {
    const unknown = Array.from({ length: 3 }, (_, i) => fakeEvmAddress(`batch-none-${i}`));
    const none = await get(`/dex/tokens/base?addresses=${unknown.join(",")}`, "10.3.0.1");
    expect(none.status).toBe(404);
    expect(none.headers.get("payment-required")).toBeNull();
    expect((await json(none)).error).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("any of the 3 addresses") });
    // Remembered: the same batch again costs no upstream call.
    const calls = { ...source().calls };
    expect((await get(`/dex/tokens/base?addresses=${unknown.join(",")}`, "10.3.0.1")).status).toBe(404);
    expect(source().calls).toEqual(calls);
    expect((await get(`/dex/tokens/base?addresses=${[...unknown, BASE_WETH].join(",")}`, "10.3.0.1")).status).toBe(402);
  });

  it("answers 429 with Retry-After beyond a client's checks per minute, over HTTP and MCP alike; cached answers and other clients pass", async () => {
    // BASE_WETH is known since the batch above: no point. Five unknown addresses spend the five points.
    expect((await get(`/dex/tokens/base/${BASE_WETH}`, "10.4.0.1")).status).toBe(402);
    for (let i = 0; i < 5; i++) expect([402, 404]).toContain((await get(`/dex/tokens/base/${fakeEvmAddress(`client-${i}`)}`, "10.4.0.1")).status);
    const over = await get(`/dex/tokens/base/${fakeEvmAddress("client-over")}/ohlcv`, "10.4.0.1");
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(over.headers.get("payment-required")).toBeNull();
    expect((await json(over)).error).toMatchObject({ code: "RATE_LIMITED", message: expect.stringContaining("token existence checks") });
    // A token the caches know costs no point; another client has its own budget.
    expect((await get(`/dex/tokens/base/${BASE_WETH}`, "10.4.0.1")).status).toBe(402);
    expect([402, 404]).toContain((await get(`/dex/tokens/base/${fakeEvmAddress("client-over")}`, "10.4.0.2")).status);

    // MCP is the same call pipeline: the same refusal, with the wait.
    const client = new Client({ name: "token-checks", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers: from("10.4.0.3") } }));
    try {
      const call = (i: number) => client.callTool({ name: "dex_token", arguments: { network: "base", address: fakeEvmAddress(`mcp-${i}`) } }) as Promise<CallToolResult>;
      for (let i = 0; i < 5; i++) expect((await call(i)).isError).toBe(true);
      const refused = await call(5);
      expect(refused.isError).toBe(true);
      const body = JSON.parse((refused.content[0] as { text: string }).text);
      expect(body.error.code).toBe("RATE_LIMITED");
      expect(body.retry_after_sec).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("a flood of unpaid lookups of random addresses spends only the unpaid share: a paid lookup of a new token beside it answers 200 at once", async () => {
    const src = source();
    const share = src.budgets.geckoterminal.unpaid;
    expect(share).toBe(6);
    const before = { ...src.unpaidCalls };
    // The flood: about 3 a second in the report; here one request after the other as fast as they go, each from a
    // new client (so no per-client budget stops it), bounded, and stopped once the paid lookup is done.
    const statuses: number[] = [];
    let stop = false;
    let sent = 0;
    const lane = async () => {
      while (!stop && sent < 400) {
        const n = sent++;
        const res = await get(`/dex/tokens/base/${fakeEvmAddress(`flood-${n}`)}`, `10.5.${n >> 8}.${n & 255}`);
        statuses.push(res.status);
        await res.body?.cancel();
      }
    };
    const gtCalls = () => stack.sim.faults.requestCount("geckoterminal");
    const gtBefore = gtCalls();
    const flood = lane();
    try {
      // More lookups than the whole GeckoTerminal budget of a minute (30) before the paid one starts (or, before
      // the fix, until the flood has spent that budget: its lookups then wait 5 s each).
      while (statuses.length < 34 && gtCalls() - gtBefore < 30 && sent < 400) await new Promise((r) => setTimeout(r, 20));
      const token = simDexToken("WETH@optimism").address;
      const started = performance.now();
      const res = await payWith(stack, 1)(`${stack.url}/dex/tokens/optimism/${token}`, { headers: from("10.6.0.1") });
      const elapsedMs = performance.now() - started;
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ network: "optimism", symbol: "WETH", missing_sources: [] });
      // Before the fix it waited 5 s for the budget the flood had spent, then 503 or one source missing.
      expect(elapsedMs).toBeLessThan(3000);
    } finally {
      stop = true;
      await flood;
    }
    // The flood got quick answers (404 checked, or 402 once the share is spent: existence left to a payer), never a 503,
    // and spent at most the unpaid share of each source.
    expect(statuses.length).toBeGreaterThanOrEqual(34);
    expect(gtCalls() - gtBefore).toBeLessThanOrEqual(share + 1);
    expect(new Set(statuses.filter((s) => s !== 402 && s !== 404))).toEqual(new Set());
    expect(src.unpaidCalls.geckoterminal - before.geckoterminal).toBeLessThanOrEqual(share);
    expect(src.unpaidCalls.dexscreener - before.dexscreener).toBeLessThanOrEqual(src.budgets.dexscreener.unpaid);
  });
});

describe("a token left unchecked before payment is never charged for (TOKEN_CHECK_SHARE_PCT=0)", () => {
  let stack: OfflineStack;

  beforeAll(async () => {
    // No share at all: no check before payment asks a source, every uncached token goes to the 402.
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", TOKEN_CHECK_SHARE_PCT: "0", STREAMS: "off" } });
  });
  afterAll(() => stack?.close());

  it("asks payment, then the paid run answers 404 and the payer keeps its USDC (single token and batch); the 404 is remembered", async () => {
    const payer = stack.payers[2]!;
    const pay = payWith(stack, 2);
    const balance = await stack.balanceOf(payer.address);
    const unknown = fakeEvmAddress("unchecked-unknown");
    expect((await fetch(`${stack.url}/dex/tokens/base/${unknown}`)).status).toBe(402);
    const single = await pay(`${stack.url}/dex/tokens/base/${unknown}`);
    expect(single.status).toBe(404);
    expect((await json(single)).error.code).toBe("NOT_FOUND");
    // The paid run's answer is remembered: now refused before payment.
    expect((await fetch(`${stack.url}/dex/tokens/base/${unknown}/ohlcv`)).status).toBe(404);

    const batch = `/dex/tokens/base?addresses=${fakeEvmAddress("unchecked-1")},${fakeEvmAddress("unchecked-2")}`;
    expect((await fetch(`${stack.url}${batch}`)).status).toBe(402);
    const paidBatch = await pay(`${stack.url}${batch}`);
    expect(paidBatch.status).toBe(404);
    expect((await json(paidBatch)).error.message).toContain("nothing was charged");
    expect(await stack.balanceOf(payer.address)).toBe(balance);

    // A known token is sold as usual.
    expect((await pay(`${stack.url}/dex/tokens/base/${BASE_WETH}`)).status).toBe(200);
    expect(await stack.balanceOf(payer.address)).toBe(balance - 10_000n);
  });

  it("refuses an upfront-paid token alert with 503 and Retry-After when its token cannot be checked before payment", async () => {
    await expect(requireKnownToken("base", fakeEvmAddress("alert-unchecked"), stack.service.ctx, {}, { upfront: true })).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryAfterSec: expect.any(Number),
    });
  });
});
