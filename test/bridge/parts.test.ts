/**
 * The parts of `marketgate connect` on their own: the x402 MCP client (both 402 shapes, the JSON-RPC 402, the
 * retry's `_meta`), the spend file (UTC days of an injected clock, restarts, two processes at once), the budget's
 * messages, and the command line (one-line usage errors, exit 2; key errors that never quote the key).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { connectMain } from "../../src/bridge/main.js";
import { Budget } from "../../src/bridge/budget.js";
import { parseConnectArgs, UsageError } from "../../src/bridge/args.js";
import { cheapestPayable } from "../../src/bridge/pricing.js";
import { bridgedTool } from "../../src/bridge/server.js";
import { CallPayer } from "../../src/bridge/payer.js";
import type { Wallet } from "../../src/bridge/wallet.js";
import { SpendStore, SPEND_FILE } from "../../src/bridge/spend-store.js";
import { paymentRequiredOf, X402McpClient, type ToolCallParams, type ToolResult } from "../../src/client/mcp.js";
import { PAYMENT_META, PAYMENT_RESPONSE_META } from "../../src/client/mcp-meta.js";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";

const KEY = `0x${"ab".repeat(32)}` as const;
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const DAY_MS = 86_400_000;

const required = (amount: string): PaymentRequired => ({
  x402Version: 2,
  error: "Payment required",
  resource: { url: "http://127.0.0.1:1/mcp" },
  accepts: [{ scheme: "exact", network: "eip155:8453", amount, asset: BASE_USDC, payTo: `0x${"11".repeat(20)}`, maxTimeoutSeconds: 60, extra: { name: "USD Coin", version: "2" } }],
});

/** An MCP tool server stand-in: answers 402 in `shape` until a payment arrives, then a receipt. */
function fakeRemote(shape: "text" | "structured" | "jsonrpc", pr: PaymentRequired) {
  const calls: ToolCallParams[] = [];
  return {
    calls,
    callTool: async (params: ToolCallParams): Promise<ToolResult> => {
      calls.push(params);
      const payment = params._meta?.[PAYMENT_META];
      if (payment) return { content: [{ type: "text", text: "{}" }], _meta: { [PAYMENT_RESPONSE_META]: { success: true, transaction: "0xabc", network: "eip155:8453" } } };
      if (shape === "jsonrpc") throw Object.assign(new Error("payment required"), { code: 402, data: pr });
      const text = { isError: true, content: [{ type: "text", text: JSON.stringify(pr) }] };
      return shape === "text" ? text : { ...text, structuredContent: pr };
    },
  };
}

describe("x402 MCP client (src/client/mcp.ts)", () => {
  const payer = () => new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(KEY)));

  for (const shape of ["text", "structured", "jsonrpc"] as const) {
    it(`pays a 402 given as ${shape} and retries with the PaymentPayload in _meta["x402/payment"]`, async () => {
      const remote = fakeRemote(shape, required("20000"));
      const call = await new X402McpClient(remote, payer()).callTool({ name: "t", arguments: { a: 1 } });
      expect(call.paymentRequired?.accepts[0]?.amount).toBe("20000");
      expect(remote.calls).toHaveLength(2);
      const sent = remote.calls[1]!._meta?.[PAYMENT_META] as { accepted: { amount: string }; payload: { authorization: { value: string } } };
      expect(sent.accepted.amount).toBe("20000");
      expect(sent.payload.authorization.value).toBe("20000");
      expect(remote.calls[1]!.arguments).toEqual({ a: 1 });
      expect(call.settlement).toMatchObject({ success: true, transaction: "0xabc" });
    });
  }

  it("sends nothing when approval refuses, and reads no PaymentRequired from other errors", async () => {
    const remote = fakeRemote("structured", required("20000"));
    const call = await new X402McpClient(remote, payer()).callTool({ name: "t" }, () => "too dear");
    expect(call.refused).toBe("too dear");
    expect(call.payment).toBeUndefined();
    expect(remote.calls).toHaveLength(1);
    expect(paymentRequiredOf({ isError: true, content: [{ type: "text", text: '{"error":{"code":"BAD_REQUEST"}}' }] })).toBeUndefined();
    expect(paymentRequiredOf({ content: [{ type: "text", text: JSON.stringify(required("1")) }] })).toBeUndefined();
  });

  it("prices the cheapest requirement this wallet pays, in micro-USD, and refuses assets it cannot price", () => {
    const pr = { ...required("30000"), accepts: [...required("30000").accepts, { ...required("20000").accepts[0]!, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" as const }] };
    const priced = cheapestPayable(pr, (r) => r.network.startsWith("eip155:"));
    expect(priced).toMatchObject({ priceMicro: 30_000, required: { accepts: [{ network: "eip155:8453" }] } });
    expect(cheapestPayable({ ...pr, accepts: [{ ...pr.accepts[0]!, asset: `0x${"22".repeat(20)}` }] }, () => true)).toMatch(/cannot pay/);
  });
});

describe("CallPayer: what counts against the budget", () => {
  const cleanup = cleanupAfterEach();
  const wallet: Wallet = {
    chain: "base",
    address: privateKeyToAccount(KEY).address,
    x402: new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(KEY))),
    pays: (r) => r.network.startsWith("eip155:"),
    siwx: async () => "proof",
  };
  /** A payer over a remote that answers 402 unpaid and `paid(n)` to the n-th paid attempt. */
  const payerOver = (paid: (n: number) => ToolResult | Promise<ToolResult>, maxPerCallMicro = 100_000) => {
    let n = 0;
    const remote = {
      callTool: async (params: ToolCallParams): Promise<ToolResult> =>
        params._meta?.[PAYMENT_META] ? paid(++n) : { isError: true, structuredContent: required("20000"), content: [{ type: "text", text: "{}" }] },
    };
    const budget = new Budget(new SpendStore(tempDir(cleanup, "mg-payer-")), { maxPerCallMicro, maxPerDayMicro: 1_000_000 });
    const payer = new CallPayer({
      upstream: new X402McpClient(remote, wallet.x402),
      wallet,
      budget,
      pay: "x402",
      topUpMicro: 500_000,
      canTopUp: async () => false,
      log: () => undefined,
    });
    return { payer, budget, attempts: () => n };
  };

  it("counts a settled payment, gives back one the remote asks for again, and keeps one that got no answer", async () => {
    const settled = payerOver(() => ({ content: [], _meta: { [PAYMENT_RESPONSE_META]: { success: true, transaction: "0x1", network: "eip155:8453" } } }));
    const r = await settled.payer.call({ name: "t" });
    expect(r._meta?.["marketgate/cost"]).toMatchObject({ method: "x402", price_usd: "0.02", transaction: "0x1", spent_today_usd: "0.02" });
    expect(settled.budget.today().spentMicro).toBe(20_000);

    const refused = payerOver(() => ({ isError: true, structuredContent: { ...required("20000"), error: "invalid_exact_evm_signature" }, content: [] }));
    expect((await refused.payer.call({ name: "t" }))._meta?.["marketgate/cost"]).toMatchObject({ method: "not_charged", price_usd: "0" });
    expect(refused.budget.today().spentMicro).toBe(0);

    const lost = payerOver(() => Promise.reject(new Error("socket hang up")));
    await expect(lost.payer.call({ name: "t" })).rejects.toThrow("socket hang up");
    expect(lost.budget.today().spentMicro).toBe(20_000);
  });

  it("signs nothing over the per-call limit", async () => {
    const p = payerOver(() => ({ content: [] }), 10_000);
    const r = await p.payer.call({ name: "t" });
    expect(r.isError).toBe(true);
    expect(r._meta?.["marketgate/cost"]).toMatchObject({ method: "refused", reason: "max-usd-per-call", price_usd: "0.02" });
    expect(p.attempts()).toBe(0);
    expect(p.budget.today().spentMicro).toBe(0);
  });
});

describe("bridged tool listing", () => {
  const tool = (description: string, price?: string) => ({
    name: "t",
    description,
    inputSchema: { type: "object" as const },
    ...(price ? { _meta: { "x402/price": { amountUsd: price } } } : {}),
  });

  it("adds the price to a paid tool's description only when it does not state one", () => {
    expect(bridgedTool(tool("Spot price. Price: 0.02 USDC per call.", "0.02")).description).toBe("Spot price. Price: 0.02 USDC per call.");
    expect(bridgedTool(tool("Spot price of a token.", "0.02")).description).toBe("Spot price of a token. Price: 0.02 USD per call (paid by the bridge within its budget).");
    expect(bridgedTool(tool("Free status.")).description).toBe("Free status.");
  });
});

describe("spend file and budget", () => {
  const cleanup = cleanupAfterEach();

  it("keeps the day's spend across instances (a restart), starts each UTC day at zero, and refuses over each limit", async () => {
    const dir = tempDir(cleanup, "mg-spend-");
    const clock = manualClock(Math.floor(Date.now() / DAY_MS) * DAY_MS + 3_600_000);
    const limits = { maxPerCallMicro: 50_000, maxPerDayMicro: 100_000 };
    const budget = new Budget(new SpendStore(dir, clock.now), limits);
    expect(await budget.reserve(40_000)).toBeUndefined();
    expect(await budget.reserve(60_000)).toMatchObject({ limit: "max-usd-per-call" });
    expect(await budget.reserve(50_000)).toBeUndefined();
    await budget.release(50_000);
    // A new process over the same folder reads what was written.
    const restarted = new Budget(new SpendStore(dir, clock.now), limits);
    expect(restarted.today()).toMatchObject({ spentMicro: 40_000, calls: 1 });
    expect(await restarted.reserve(50_000)).toBeUndefined();
    const refused = await restarted.reserve(20_000);
    expect(refused?.limit).toBe("max-usd-per-day");
    expect(refused?.message).toMatch(/\$0\.09 spent today .* would pass --max-usd-per-day 0\.1\. Nothing was charged/);
    expect(JSON.parse(readFileSync(join(dir, SPEND_FILE), "utf8"))).toMatchObject({ spent_micro_usd: 90_000, calls: 2 });
    // 23 hours later it is the next UTC day.
    clock.t += 23 * 3_600_000;
    expect(restarted.today()).toMatchObject({ spentMicro: 0, calls: 0 });
    expect(await restarted.reserve(50_000)).toBeUndefined();
  });

  it("counts every reservation of two stores writing at once (the lock), and reads a corrupt file as zero", async () => {
    const dir = tempDir(cleanup, "mg-spend-");
    const a = new Budget(new SpendStore(dir), { maxPerCallMicro: 1_000, maxPerDayMicro: 1_000_000 });
    const b = new Budget(new SpendStore(dir), { maxPerCallMicro: 1_000, maxPerDayMicro: 1_000_000 });
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).reserve(1_000)));
    expect(a.today()).toMatchObject({ spentMicro: 40_000, calls: 40 });
    writeFileSync(join(dir, SPEND_FILE), "{not json");
    expect(a.today().spentMicro).toBe(0);
  });
});

describe("marketgate connect command line", () => {
  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const err: string[] = [];
    const code = await connectMain(argv, { stderr: (t) => err.push(t), env });
    return { code, stderr: err.join("") };
  };

  it("refuses bad flags with one usage line and exit 2", async () => {
    for (const argv of [
      [],
      ["ftp://x/mcp"],
      ["not a url"],
      ["https://x/mcp", "--max-usd-per-day", "-1"],
      ["https://x/mcp", "--bogus"],
      ["https://x/mcp", "--pay", "gold"],
      ["https://x/mcp", "https://y/mcp"],
    ]) {
      const r = await run(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr.trimEnd().split("\n"), argv.join(" ")).toHaveLength(1);
      expect(r.stderr).toMatch(/^marketgate connect: .*; usage: marketgate connect <https:\/\/host\/mcp>/);
    }
    expect(() => parseConnectArgs(["https://x/mcp", "--max-usd-per-call", "0.1234567"], {})).toThrow(UsageError);
    expect(parseConnectArgs(["http://127.0.0.1:1/mcp"], { XDG_STATE_HOME: "/s" })).toMatchObject({
      maxPerCallMicro: 100_000,
      maxPerDayMicro: 1_000_000,
      pay: "auto",
      stateDir: "/s/marketgate",
    });
  });

  it("says which key setting is wrong without quoting it, exit 1", async () => {
    const cleanup: Array<() => void> = [];
    const dir = tempDir(cleanup, "mg-key-");
    const badKey = "0x" + "cd".repeat(31) + "zz";
    const file = join(dir, "key");
    writeFileSync(file, "5" + "K".repeat(40));
    try {
      for (const [argv, env, says] of [
        [["https://x/mcp"], { X402_PRIVATE_KEY: badKey }, /X402_PRIVATE_KEY must be a 0x-prefixed 32-byte hex private key/],
        [["https://x/mcp", "--key-file", file], {}, /--key-file .* must be a Solana secret key/],
        [["https://x/mcp"], {}, /no wallet: set X402_PRIVATE_KEY/],
      ] as const) {
        const r = await run([...argv], { ...env });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(says);
        expect(r.stderr).not.toContain("cd".repeat(31));
        expect(r.stderr).not.toContain("K".repeat(40));
      }
    } finally {
      for (const c of cleanup) c();
    }
  });
});
