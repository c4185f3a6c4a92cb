import { isMarketDataTool } from "../src/registry/tool.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../src/sandbox/demo.js";
import { startOfflineStack, type OfflineStack } from "../src/sandbox/offline-stack.js";
import { TOOLS } from "../tools/index.js";

describe("sandbox demo client", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack();
  });
  afterAll(() => stack?.close());

  it("pays for every paid tool with @x402/fetch, then gets a free cache hit; balances move by the sum of prices", async () => {
    const payer = stack.payers[4]!;
    const before = await stack.balanceOf(payer.address);
    const lines: string[] = [];
    const calls = await runDemo({ baseUrl: stack.url, tools: TOOLS, payer, payTo: stack.operator.address, balanceOf: stack.balanceOf, print: (l) => lines.push(l) });
    const paid = TOOLS.filter((t) => t.priceUsd !== "free" && isMarketDataTool(t));
    expect(calls.map((c) => [c.tool, c.status, c.cache])).toEqual([...paid.map((t) => [t.name, 200, "MISS"]), [paid[0]!.name, 200, "HIT"]]);
    expect(calls.slice(0, -1).every((c) => /^0x[0-9a-f]{64}$/.test(c.transaction ?? ""))).toBe(true);
    const total = paid.reduce((sum, t) => sum + BigInt(Math.round(Number(t.priceUsd) * 1e6)), 0n);
    expect(await stack.balanceOf(payer.address)).toBe(before - total);
    expect(lines.at(-1)).toContain(`payer spent ${Number(total) / 1e6} USDC`);
  });
});
