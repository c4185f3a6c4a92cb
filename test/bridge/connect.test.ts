/**
 * The done-when test of `marketgate connect` (issue 32): the bridge runs as a host runs it (its own process,
 * stdio), against a paid service on anvil; both MCP SDK clients (v1 1.32.2 and v2 2.4.0) call it. Five paid
 * calls move the payer's USDC by exactly their prices, the budget refuses the sixth with nothing charged, a
 * restarted bridge (same state folder) keeps the day's spend, and the key is in no result and no log line.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";
import { siwxHeader } from "../helpers/siwx.js";
import { json } from "../helpers/json.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const COST = "marketgate/cost";

/** A registry tool's example call and its price in micro-USD. */
function exampleCall(name: string): { name: string; arguments: Record<string, unknown>; priceMicro: bigint } {
  const tool = TOOLS.find((t) => t.name === name)!;
  return { name, arguments: tool.example as Record<string, unknown>, priceMicro: BigInt(Math.round(Number(tool.priceUsd) * 1e6)) };
}

type Result = { isError?: boolean; content?: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown> };

/** The stdio parameters of the bridge as a host would start it (tsx stands in for the built bin). */
function bridge(url: string, key: `0x${string}` | undefined, flags: string[], env: Record<string, string> = {}) {
  return {
    command: process.execPath,
    args: ["--import", "tsx", "bin/marketgate.ts", "connect", `${url}/mcp`, ...flags],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...(key ? { X402_PRIVATE_KEY: key } : {}), ...env },
    stderr: "pipe" as const,
  };
}

describe("marketgate connect: a stdio bridge that pays, within a budget kept on disk", { timeout: 90_000 }, () => {
  let stack: OfflineStack;
  const cleanup = cleanupAfterEach();
  beforeAll(async () => {
    // Solana too: the 402s then offer Base and Solana, and each wallet pays on its own chain.
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000" }, solana: true });
  });
  afterAll(() => stack?.close());

  it("pays five calls with x402 by exactly their prices, refuses the sixth over the day's limit, and a restart keeps the day's spend", async () => {
    const payer = stack.payers[4]!;
    const stateDir = tempDir(cleanup, "mg-bridge-");
    const seen: string[] = [];
    const five = ["cex_market", "cex_prices", "funding_rate", "open_interest", "long_short"].map(exampleCall);
    const fiveMicro = five.reduce((a, c) => a + c.priceMicro, 0n);
    expect(fiveMicro).toBe(80_000n);

    // v1 SDK client (1.32.2), as most hosts ship it today.
    const t1 = new StdioV1(bridge(stack.url, payer.privateKey, ["--pay", "x402", "--max-usd-per-day", "0.09", "--state-dir", stateDir]));
    let stderr1 = "";
    t1.stderr!.on("data", (c: Buffer) => (stderr1 += c.toString("utf8")));
    const c1 = new ClientV1({ name: "host-v1", version: "0" });
    await c1.connect(t1);
    try {
      const listed = (await c1.listTools()).tools;
      expect(listed.find((t) => t.name === "funding_rate")?.description).toMatch(/Price: 0\.02 USDC per call/);
      for (const call of five) {
        const before = await stack.balanceOf(payer.address);
        const r = (await c1.callTool({ name: call.name, arguments: call.arguments })) as Result;
        seen.push(JSON.stringify(r));
        expect(r.isError, `${call.name}: ${r.content?.[0]?.text}`).toBeFalsy();
        expect(r._meta?.[COST]).toMatchObject({
          method: "x402",
          price_usd: String(Number(call.priceMicro) / 1e6),
          network: "eip155:8453",
          transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        });
        expect(before - (await stack.balanceOf(payer.address)), call.name).toBe(call.priceMicro);
      }
      const before = await stack.balanceOf(payer.address);
      const sixth = (await c1.callTool({ name: "basis", arguments: exampleCall("basis").arguments })) as Result;
      seen.push(JSON.stringify(sixth));
      expect(sixth.isError).toBe(true);
      expect(sixth.content?.[0]?.text).toMatch(/--max-usd-per-day 0\.09.*Nothing was charged.*raise --max-usd-per-day/);
      expect(sixth._meta?.[COST]).toMatchObject({ method: "refused", reason: "max-usd-per-day", spent_today_usd: "0.08" });
      expect(await stack.balanceOf(payer.address)).toBe(before);
    } finally {
      await c1.close();
    }
    expect(stderr1).toMatch(/budget: 0\.1 USD per call \(--max-usd-per-call\), 0\.09 USD per UTC day \(--max-usd-per-day\); spent today 0 USD/);

    // A new bridge process over the same state folder, with the v2 SDK client (2.4.0) speaking the stateless
    // 2026-07-28 protocol (serveStdio serves both eras): the day's 0.08 is kept.
    const t2 = new StdioV2(bridge(stack.url, payer.privateKey, ["--pay", "x402", "--max-usd-per-day", "0.10", "--state-dir", stateDir]));
    let stderr2 = "";
    t2.stderr!.on("data", (c: Buffer) => (stderr2 += c.toString("utf8")));
    const c2 = new ClientV2({ name: "host-v2", version: "0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await c2.connect(t2);
    try {
      const before = await stack.balanceOf(payer.address);
      const dexPrice = exampleCall("dex_price");
      const paid = (await c2.callTool({ name: dexPrice.name, arguments: dexPrice.arguments })) as Result;
      seen.push(JSON.stringify(paid));
      expect(paid._meta?.[COST]).toMatchObject({ method: "x402", price_usd: "0.01", spent_today_usd: "0.09" });
      expect(before - (await stack.balanceOf(payer.address))).toBe(10_000n);
      const refused = (await c2.callTool({ name: "basis", arguments: exampleCall("basis").arguments })) as Result;
      seen.push(JSON.stringify(refused));
      expect(refused.isError).toBe(true);
      expect(refused.content?.[0]?.text).toContain("0.09 spent today");
      expect(await stack.balanceOf(payer.address)).toBe(before - 10_000n);
      // A free tool passes through, costing nothing.
      const free = (await c2.callTool({ name: "service_status", arguments: {} })) as Result;
      seen.push(JSON.stringify(free));
      expect(free.isError).toBeFalsy();
      expect(free._meta?.[COST]).toMatchObject({ method: "free", price_usd: "0" });
    } finally {
      await c2.close();
    }
    expect(stderr2).toMatch(/spent today 0\.08 USD/);
    // The key is in no result and no log line (with or without its 0x).
    const secret = payer.privateKey.slice(2).toLowerCase();
    for (const text of [...seen, stderr1, stderr2]) expect(text.toLowerCase()).not.toContain(secret);
  });

  it("tops up prepaid credits once (one chain transaction) and pays the next calls from them, each by exactly its price", async () => {
    const payer = stack.payers[5]!;
    const stateDir = tempDir(cleanup, "mg-bridge-");
    const transport = new StdioV2(bridge(stack.url, payer.privateKey, ["--pay", "credits", "--top-up-usd", "0.2", "--state-dir", stateDir]));
    let stderr = "";
    transport.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const client = new ClientV2({ name: "host", version: "0" });
    await client.connect(transport);
    // Tools the other test does not call: a cache hit would be free.
    const calls = ["funding_compare", "predicted_funding", "dex_volume"].map(exampleCall);
    const before = await stack.balanceOf(payer.address);
    const credits = async () => {
      const url = `${stack.url}/api/v1/credits`;
      const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, url) } });
      return ((await json(res)) as { balance_usd: string }).balance_usd;
    };
    try {
      let spent = 0n;
      for (const [i, call] of calls.entries()) {
        const r = (await client.callTool({ name: call.name, arguments: call.arguments })) as Result;
        expect(r.isError, r.content?.[0]?.text).toBeFalsy();
        spent += call.priceMicro;
        expect(r._meta?.[COST]).toMatchObject({ method: "credits", remaining_credits_usd: String(Number(200_000n - spent) / 1e6) });
        if (i === 0) expect(r._meta?.[COST]).toMatchObject({ top_up: { amount_usd: "0.2", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
        else expect((r._meta?.[COST] as { top_up?: unknown }).top_up).toBeUndefined();
      }
      // One transfer of the top-up left the wallet; the credits fell by exactly the three prices.
      expect(before - (await stack.balanceOf(payer.address))).toBe(200_000n);
      expect(await credits()).toBe(String(Number(200_000n - spent) / 1e6));
    } finally {
      await client.close();
    }
    expect(stderr).toContain("topped up 0.2 USD of credits");
    expect(stderr.toLowerCase()).not.toContain(payer.privateKey.slice(2).toLowerCase());
  });
  it("by default (--pay auto, 0.50 top-ups) tops up once a top-up covers ten calls, then pays from credits", async () => {
    const payer = stack.payers[6]!;
    const stateDir = tempDir(cleanup, "mg-bridge-");
    const transport = new StdioV2(bridge(stack.url, payer.privateKey, ["--state-dir", stateDir]));
    let stderr = "";
    transport.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const client = new ClientV2({ name: "host", version: "0" });
    await client.connect(transport);
    const before = await stack.balanceOf(payer.address);
    try {
      const [a, b] = ["funding_extreme", "cex_market_history"].map(exampleCall);
      const first = (await client.callTool({ name: a!.name, arguments: a!.arguments })) as Result;
      expect(first._meta?.[COST]).toMatchObject({ method: "credits", price_usd: "0.02", top_up: { amount_usd: "0.5" }, remaining_credits_usd: "0.48", spent_today_usd: "0.02" });
      const second = (await client.callTool({ name: b!.name, arguments: b!.arguments })) as Result;
      expect(second._meta?.[COST]).toMatchObject({ method: "credits", price_usd: "0.01", remaining_credits_usd: "0.47", spent_today_usd: "0.03" });
      expect(before - (await stack.balanceOf(payer.address))).toBe(500_000n);
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/topping up 0\.5 USD at a time when that covers 10\+ calls/);
  });

  it("pays on Solana with a key file (official @x402/svm scheme): the payer's Solana USDC moves by exactly the price", async () => {
    const sol = stack.solana!;
    const payer = sol.payers[2]!;
    const dir = tempDir(cleanup, "mg-bridge-");
    const keyFile = join(dir, "solana-key");
    writeFileSync(keyFile, `${payer.secretKey}\n`, { mode: 0o600 });
    const transport = new StdioV2(bridge(stack.url, undefined, ["--pay", "x402", "--key-file", keyFile, "--state-dir", dir], { SOLANA_RPC_URL: sol.rpc.url }));
    let stderr = "";
    transport.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const client = new ClientV2({ name: "host", version: "0" });
    await client.connect(transport);
    const call = exampleCall("dex_spread");
    const before = await sol.balanceOf(payer.address);
    const seen: string[] = [];
    try {
      const r = (await client.callTool({ name: call.name, arguments: call.arguments })) as Result;
      seen.push(JSON.stringify(r));
      expect(r.isError, r.content?.[0]?.text).toBeFalsy();
      expect(r._meta?.[COST]).toMatchObject({ method: "x402", network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", price_usd: String(Number(call.priceMicro) / 1e6) });
      expect(before - (await sol.balanceOf(payer.address))).toBe(call.priceMicro);
    } finally {
      await client.close();
    }
    expect(stderr).toContain(`for wallet ${payer.address} on solana`);
    for (const t of [...seen, stderr]) expect(t).not.toContain(payer.secretKey);
  });
});
