import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMarketDataTool } from "../src/registry/tool.js";
import { runAlertDemo } from "../src/sandbox/alert-demo.js";
import { runDemo } from "../src/sandbox/demo.js";
import { startHttpsReceiver, type HttpsReceiver } from "../src/sandbox/https-receiver.js";
import { startOfflineStack, type OfflineStack } from "../src/sandbox/offline-stack.js";
import { TOOLS } from "../tools/index.js";
import { tempDir } from "./helpers/scratch.js";

describe("sandbox demo client", () => {
  let stack: OfflineStack;
  let receiver: HttpsReceiver;
  const dirs: Array<() => void> = [];
  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    const caFile = join(tempDir(dirs, "sandbox-ca-"), "ca.pem");
    writeFileSync(caFile, receiver.ca);
    stack = await startOfflineStack({ env: { WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_EXTRA_CA_FILE: caFile } });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    for (const d of dirs) d();
  });

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

  it("walks through an alert: pays 0.06 USDC, receives the signed webhook, reads and cancels it", async () => {
    const lines: string[] = [];
    const r = await runAlertDemo({ baseUrl: stack.url, payer: stack.payers[5]!, receiver, round: () => stack.service.alerts!.round(), balanceOf: stack.balanceOf, print: (l) => lines.push(l) });
    expect(r).toMatchObject({ createStatus: 200, webhookVerified: true, deliveryStatus: "delivered", cancelStatus: 200, spentAtomic: 60_000n });
    expect(r.alertId).toMatch(/^alert_liq_btc_\d+_\d+$/);
    expect(lines.join("\n")).toContain("signature verified with webhook_secret: true");
  });
});
