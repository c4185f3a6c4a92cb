import { rmSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../src/sandbox/https-receiver.js";
import { SIM_DEX_TOKENS } from "../../src/sim/dex-tokens.js";
import { json } from "../helpers/json.js";

const BASE_WETH = "0x4200000000000000000000000000000000000006";
const YOUNG_CBBTC = SIM_DEX_TOKENS.find((t) => t.key.startsWith("fake-cbBTC-"))!.address;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("price alerts on a token by address (paid on anvil, delivered to a real HTTPS receiver)", () => {
  let stack: OfflineStack;
  let receiver: HttpsReceiver;
  let dir: string;
  const payer = () => stack.payers[7]!;
  const payFetch = () => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey))));
  const post = (path: string, body: unknown, f: typeof fetch = payFetch()) =>
    f(`${stack.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    dir = mkdtempSync(join(tmpdir(), "token-alerts-"));
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, receiver.ca);
    stack = await startOfflineStack({
      env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_EXTRA_CA_FILE: caFile, ALERT_EVAL_CRON: "0 0 0 1 1 *", ALERT_DISPATCH_POLL_MS: "20" },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a low-liquidity, unverified look-alike before payment unless allow_unverified is set", async () => {
    const before = await stack.balanceOf(payer().address);
    const body = { condition: "above", target_price: 1, webhook_url: receiver.url("/young") };
    const refused = await post("/dex/token-alert", { ...body, network: "base", address: `${YOUNG_CBBTC}` }, fetch);
    expect(refused.status).toBe(400);
    const err = await json(refused);
    expect(err.error.message).toContain("allow_unverified");
    expect(err.error.details.flags).toEqual(expect.arrayContaining(["low_liquidity", "unverified", "symbol_collision"]));
    expect((await post("/dex/token-alert", { ...body, network: "base", address: `0x12` }, fetch)).status).toBe(400);
    expect((await post("/dex/token-alert", { ...body, network: "base", address: `0x000000000000000000000000000000000000dead` }, fetch)).status).toBe(404);
    expect(await stack.balanceOf(payer().address)).toBe(before);
    const forced = await post("/dex/token-alert", { network: "base", address: `${YOUNG_CBBTC}`, ...body, allow_unverified: true });
    expect(forced.status).toBe(200);
    expect((await json(forced)).symbol).toBe(`token:base:${YOUNG_CBBTC}`);
    expect(await stack.balanceOf(payer().address)).toBe(before - 40_000n);
  });

  it("fires on a crossing of the token's price, and the price_alert tools manage it", async () => {
    const res = await post("/dex/token-alert", { network: "base", address: `${BASE_WETH.toLowerCase()}`, condition: "above", target_price: 1, webhook_url: receiver.url("/weth") });
    expect(res.status).toBe(200);
    const a = await json(res);
    expect(a).toMatchObject({ network: "base", address: BASE_WETH, symbol: `token:base:${BASE_WETH}`, condition: "above", target_price: 1 });
    await stack.service.alerts!.round();
    const deadline = Date.now() + 10_000;
    while (receiver.requests.filter((r) => r.path === "/weth").length < 1 && Date.now() < deadline) await sleep(20);
    const [hook] = receiver.requests.filter((r) => r.path === "/weth");
    const payload = JSON.parse(hook!.body);
    expect(payload).toMatchObject({
      event: "price_alert",
      alert_id: a.alert_id,
      symbol: `token:base:${BASE_WETH}`,
      data: { triggered: true, direction: "above", target_price: 1 },
    });
    const model = stack.sim.market.priceAt("ETH", Date.now());
    expect(Math.abs(payload.data.current_price / model - 1)).toBeLessThan(0.02);
    const got = await json(await fetch(`${stack.url}/price-alert/${encodeURIComponent(a.alert_id)}`, { headers: { authorization: `Bearer ${a.manage_token}` } }));
    expect(got).toMatchObject({ alert_id: a.alert_id, last_evaluation: { condition_met: true } });
    expect((await fetch(`${stack.url}/price-alert/${encodeURIComponent(a.alert_id)}`, { method: "DELETE", headers: { authorization: `Bearer ${a.manage_token}` } })).status).toBe(
      200,
    );
  });
});
