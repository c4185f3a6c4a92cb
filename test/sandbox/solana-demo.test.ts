import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSolanaDemo } from "../../src/sandbox/solana-demo.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";

describe("sandbox Solana demo", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true });
  });
  afterAll(() => stack?.close());

  it("pays one endpoint from Solana payer #1 on the local VM: the payer spends the price, PAY_TO_SOLANA receives it", async () => {
    const lines: string[] = [];
    const call = await runSolanaDemo({ baseUrl: stack.url, solana: stack.solana!, path: "/api/v1/market/solana", print: (l) => lines.push(l) });
    expect(call.status).toBe(200);
    expect(call.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(call.spent).toBe(5000n);
    expect(call.received).toBe(5000n);
    expect(lines.join("\n")).toContain(`paid from Solana payer #1 ${stack.solana!.payers[0]!.address}`);
  });

  it("funds payers #1..#9 with 1,000 test USDC each at deterministic addresses (the same on every run)", async () => {
    const again = await startOfflineStack({ solana: true });
    try {
      expect(again.solana!.payers.map((p) => p.address)).toEqual(stack.solana!.payers.map((p) => p.address));
      expect(await again.solana!.balanceOf(again.solana!.payers[8]!.address)).toBe(1_000_000_000n);
    } finally {
      await again.close();
    }
  });
});
