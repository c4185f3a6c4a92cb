import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestPath, type AnyTool } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "./json.js";

/**
 * A suite that pays for each tool's example request with the official `@x402/fetch` client on anvil and
 * checks: 200, an answer matching the output schema, and the payer's balance down by exactly the price.
 */
export function describePaidTools(title: string, tools: readonly AnyTool[], payerIndex: number): void {
  describe(title, () => {
    let stack: OfflineStack;
    beforeAll(async () => {
      stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000" } });
    });
    afterAll(() => stack?.close());

    it("charges each tool exactly its price and returns a valid answer", async () => {
      const payer = stack.payers[payerIndex]!;
      const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
      for (const tool of tools) {
        const before = await stack.balanceOf(payer.address);
        const res = await pay(`${stack.url}${requestPath(tool)}`);
        expect(res.status, tool.name).toBe(200);
        expect(tool.output.safeParse(await json(res)).success, tool.name).toBe(true);
        expect(await stack.balanceOf(payer.address), tool.name).toBe(before - BigInt(Math.round(Number(tool.priceUsd) * 1e6)));
      }
    });
  });
}
