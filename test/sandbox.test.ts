import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMarketDataTool } from "../src/registry/tool.js";
import { runAlertDemo } from "../src/sandbox/alert-demo.js";
import { runCreditsDemo } from "../src/sandbox/credits-demo.js";
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

  it("walks through alerts: pays for a liquidation alert, its webhook, a price alert and both extensions, then cancels both", async () => {
    const lines: string[] = [];
    const r = await runAlertDemo({
      baseUrl: stack.url,
      payer: stack.payers[5]!,
      receiver,
      round: () => stack.service.alerts!.round(),
      balanceOf: stack.balanceOf,
      print: (l) => lines.push(l),
    });
    expect(r).toMatchObject({
      createStatus: 200,
      webhookVerified: true,
      deliveryStatus: "delivered",
      extendStatus: 200,
      priceCreateStatus: 200,
      priceExtendStatus: 200,
      cancelStatus: 200,
      priceCancelStatus: 200,
      tokenCreateStatus: 200,
      tokenCancelStatus: 200,
      // 0.06 (liquidation alert) + 0.03 (its extension) + 0.04 (price alert) + 0.02 (its extension) + 0.04 (token alert)
      spentAtomic: 190_000n,
    });
    expect(r.alertId).toMatch(/^alert_liq_btc_\d+_\d+$/);
    expect(r.priceAlertId).toMatch(/^alert_price_eth_\d+_\d+$/);
    expect(lines.join("\n")).toContain("signature verified with webhook_secret: true");
  });

  it("pays every paid endpoint of the registry across the three walk-throughs", () => {
    const paid = TOOLS.filter((t) => t.priceUsd !== "free").map((t) => t.name);
    const walkedThrough = ["liquidation_alert_create", "liquidation_alert_extend", "price_alert_create", "price_alert_extend", "dex_token_alert_create", "credits_top_up"];
    expect([...TOOLS.filter((t) => t.priceUsd !== "free" && isMarketDataTool(t)).map((t) => t.name), ...walkedThrough].sort()).toEqual([...paid].sort());
  });

  it("walks through credits: one top-up on chain, then 20 SIWX-signed calls that move nothing on chain", async () => {
    const lines: string[] = [];
    const r = await runCreditsDemo({ baseUrl: stack.url, payer: stack.payers[6]!, balanceOf: stack.balanceOf, print: (l) => lines.push(l) });
    expect(r.statuses).toEqual(Array(20).fill(200));
    expect(r.onChainSpentAtomic).toBe(1_000_000n);
    expect(r.account).toMatchObject({ balance_usd: "0.9", spent_usd: "0.1", credited_usd: "1" });
    expect(lines.join("\n")).toContain("no chain transaction");
  });
});
