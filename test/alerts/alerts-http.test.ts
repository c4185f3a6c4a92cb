import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ownerMessage } from "../../src/alerts/auth.js";
import { verifyWebhookSignature } from "../../src/alerts/webhook/sign.js";
import { HOUR_MS, MINUTE_MS } from "../../src/lib/time.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { startHttpsReceiver, type HttpsReceiver, type ReceivedWebhook } from "../../src/sandbox/https-receiver.js";
import { json } from "../helpers/json.js";
import { connectInMemory } from "../helpers/mcp.js";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";

const usdc = (usd: number) => BigInt(Math.round(usd * 1e6));
const textOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

describe("liquidation and price alerts over HTTP, paid on anvil, delivered to a real HTTPS receiver", () => {
  const cleanup = cleanupAfterEach();
  let stack: OfflineStack;
  let receiver: HttpsReceiver;
  let dir: string;
  const clock = manualClock(Date.now());
  const payer = () => stack.payers[6]!;
  const payFetch = () => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey))));
  const post = (path: string, body: unknown, f: typeof fetch = payFetch()) =>
    f(`${stack.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.url}${path}`, { headers });
  const del = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.url}${path}`, { method: "DELETE", headers });
  const hooksTo = (path: string) => receiver.requests.filter((r) => r.path === path);
  const round = () => stack.service.alerts!.round();
  async function create(path: string, body: Record<string, unknown>) {
    const res = await post(path, body);
    expect(res.status).toBe(200);
    return json(res);
  }

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    dir = tempDir([], "alerts-http-");
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, receiver.ca);
    stack = await startOfflineStack({
      now: clock.now,
      env: {
        RATE_LIMIT_PER_MIN: "100000",
        WEBHOOK_ALLOW_LOOPBACK: "true",
        WEBHOOK_EXTRA_CA_FILE: caFile,
        // Rounds are run by the test (no timer-driven round in between); the outbox poll stays on.
        ALERT_EVAL_CRON: "0 0 0 1 1 *",
        ALERT_DISPATCH_POLL_MS: "20",
        WEBHOOK_RETRY_BASE_MS: "1000",
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it("refuses bad requests before any payment: 400 / 404, never a 402", async () => {
    const before = await stack.balanceOf(payer().address);
    const bad: Array<[Record<string, unknown>, number, string?]> = [
      [{ symbol: "BTC", webhook_url: "http://hooks.example.com/x" }, 400],
      [{ symbol: "BTC", webhook_url: "https://10.1.2.3/hook" }, 400, "private"],
      [{ symbol: "BTC", webhook_url: "https://169.254.169.254/latest/meta-data" }, 400, "cloud_metadata"],
      [{ symbol: "BTC", webhook_url: "https://[fd00:ec2::254]/" }, 400],
      [{ symbol: "BTC", webhook_url: "https://[::ffff:192.168.1.1]/" }, 400],
      [{ symbol: "BTC", webhook_url: "https://user:pw@hooks.example.com/" }, 400],
      [{ symbol: "BTC", webhook_url: receiver.url("/x"), expires_in_hours: 169 }, 400],
      [{ symbol: "BTC", webhook_url: receiver.url("/x"), threshold_pct: -1 }, 400],
      [{ symbol: "BTC" }, 400],
      [{ symbol: "NOSUCHCOIN", webhook_url: receiver.url("/x") }, 404],
    ];
    for (const [body, status, reason] of bad) {
      const res = await post("/liquidation/alert", body, fetch);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const err = await json(res);
      expect(err.error.code).toMatch(/BAD_REQUEST|UNKNOWN_SYMBOL/);
      if (reason) expect(JSON.stringify(err.error.details)).toContain(reason);
    }
    expect((await post("/price-alert", { symbol: "ETH", direction: "sideways", target_price: 1, webhook_url: receiver.url("/x") }, fetch)).status).toBe(400);
    // `condition` is the price alert's field, `direction` its alias: one of them, or both agreeing.
    expect((await post("/price-alert", { symbol: "ETH", condition: "sideways", target_price: 1, webhook_url: receiver.url("/x") }, fetch)).status).toBe(400);
    expect((await post("/price-alert", { symbol: "ETH", target_price: 1, webhook_url: receiver.url("/x") }, fetch)).status).toBe(400);
    const both = await post("/price-alert", { symbol: "ETH", condition: "above", direction: "below", target_price: 1, webhook_url: receiver.url("/x") }, fetch);
    expect(both.status).toBe(400);
    expect((await json(both)).error.details).toEqual([expect.objectContaining({ field: "direction" })]);
    expect((await get("/liquidation/alert/alert_liq_btc_1_1")).status).toBe(404);
    expect((await post("/liquidation/alert/alert_liq_btc_1_1/extend", { add_hours: 1 }, fetch)).status).toBe(404);
    expect(await stack.balanceOf(payer().address)).toBe(before);
  });

  it("creates a liquidation alert for exactly 0.06 USDC: the create fields of docs/alerts.md, secrets shown once, payer as owner", async () => {
    const before = await stack.balanceOf(payer().address);
    const a = await create("/liquidation/alert", { symbol: "btc", threshold_pct: 0.0001, webhook_url: receiver.url("/liq-a?k=1"), expires_in_hours: 48 });
    expect(await stack.balanceOf(payer().address)).toBe(before - usdc(0.06));
    expect(a.alert_id).toMatch(new RegExp(`^alert_liq_btc_${Math.floor(clock.t / 1000)}_\\d+$`));
    expect(a).toMatchObject({
      symbol: "BTC",
      status: "active",
      condition: "cascade_risk",
      threshold_pct: 0.0001,
      min_value_usd: 0,
      webhook_url: receiver.url("/liq-a?k=1"),
      owner: payer().address.toLowerCase(),
    });
    expect(Date.parse(a.expires_at) - clock.t).toBe(48 * HOUR_MS);
    expect(a.webhook_secret).toMatch(/^whsec_/);
    expect(a.manage_token).toMatch(/^mgt_/);
    expect(a.message).toContain("not shown again");

    // Without credentials: public fields only (test/alerts/privacy.test.ts has the details). With the manage token: the full record.
    const anon = await json(await get(`/liquidation/alert/${a.alert_id}`));
    expect(anon).toMatchObject({ alert_id: a.alert_id, status: "active", visibility: "public", threshold_pct: 0.0001 });
    expect(anon).not.toHaveProperty("webhook_url");
    expect(anon).not.toHaveProperty("deliveries");
    const owner = await json(await get(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` }));
    expect(owner).toMatchObject({ webhook_url: receiver.url("/liq-a?k=1"), visibility: "owner", trigger_count: 0, deliveries: [] });
    expect(JSON.stringify(owner)).not.toContain(a.webhook_secret);

    const list = await json(await get("/liquidation/alerts"));
    expect(list.alerts.map((x: { alert_id: string }) => x.alert_id)).toContain(a.alert_id);
    expect(JSON.stringify(list)).not.toContain("/liq-a");
    // Filtering by wallet needs that wallet's signature (else 403: it would tell who owns which alert).
    expect((await get(`/liquidation/alerts?wallet=${payer().address}`)).status).toBe(403);
    expect((await get("/liquidation/alerts?wallet=nope")).status).toBe(400);
  });

  it("a round sends a signed spec-6 webhook; it re-fires only after the 15 min cooldown", async () => {
    const a = await create("/liquidation/alert", { symbol: "ETH", threshold_pct: 0.0001, webhook_url: receiver.url("/liq-b"), expires_in_hours: 24 });
    await round();
    const [hook] = await waitForPath("/liq-b", 1);
    // Signed with the service's (manual) clock: freshness is checked against it.
    const at = { nowSec: clock.t / 1000 };
    expect(verifyWebhookSignature(a.webhook_secret, hook!.headers["x-marketgate-timestamp"] as string, hook!.body, hook!.headers["x-marketgate-signature"] as string, at)).toBe(
      true,
    );
    expect(verifyWebhookSignature("whsec_other", hook!.headers["x-marketgate-timestamp"] as string, hook!.body, hook!.headers["x-marketgate-signature"] as string, at)).toBe(false);
    expect(hook!.headers["x-marketgate-data-source"]).toBe("simulated");
    expect(hook!.headers["x-marketgate-event"]).toBe("liquidation_alert");
    const body = JSON.parse(hook!.body);
    expect(Object.keys(body).sort()).toEqual(["alert_id", "data", "event", "severity", "symbol", "timestamp"]);
    expect(Object.keys(body.data).sort()).toEqual(["cascade_risk", "current_price", "oi_at_risk_pct", "oi_at_risk_usd", "threshold_pct", "triggered"]);
    expect(body).toMatchObject({ event: "liquidation_alert", alert_id: a.alert_id, symbol: "ETH", data: { triggered: true, threshold_pct: 0.0001 } });
    expect(body.severity).toBe(body.data.cascade_risk);
    expect(body.data.oi_at_risk_pct).toBeGreaterThanOrEqual(0.0001);
    // The alert reads the paid heatmap's model.
    const heatmap = await json(await payFetch()(`${stack.url}/liquidation/heatmap/ETH`));
    expect(heatmap.estimated).toBe(true);
    expect(["high", "medium", "low"]).toContain(heatmap.risk_summary.cascade_risk);

    await round();
    await sleep(200);
    expect(hooksTo("/liq-b")).toHaveLength(1);
    clock.t += 15 * MINUTE_MS;
    await round();
    await waitForPath("/liq-b", 2);
    const rec = await json(await get(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` }));
    expect(rec.trigger_count).toBe(2);
    expect(rec.deliveries).toHaveLength(2);
    expect(rec.deliveries.every((d: { status: string; attempts: Array<{ status: number }> }) => d.status === "delivered" && d.attempts[0]!.status === 200)).toBe(true);
    expect(rec.last_evaluation).toMatchObject({ condition_met: true });
  });

  it("retries a delivery after 500s with backoff, keeping one delivery id, and records every attempt", async () => {
    receiver.respond((r) => ({ status: r.path === "/liq-c" && hooksTo("/liq-c").length <= 2 ? 500 : 200 }));
    cleanup.push(() => receiver.respond(() => ({ status: 200 })));
    const a = await create("/liquidation/alert", { symbol: "SOL", threshold_pct: 0.0001, webhook_url: receiver.url("/liq-c"), expires_in_hours: 24 });
    await round();
    // The service clock moves only once the dispatcher has recorded an attempt (its next one is due from that
    // record's time): advanced earlier, the retry would be scheduled after the moved clock and never come.
    const recorded = async (n: number) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const ds = (await json(await get(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` }))).deliveries;
        if ((ds[0]?.attempts.length ?? 0) >= n) return;
        if (Date.now() > deadline) throw new Error(`expected ${n} recorded attempt(s)`);
        await sleep(20);
      }
    };
    await waitForPath("/liq-c", 1);
    await recorded(1);
    await sleep(150);
    expect(hooksTo("/liq-c")).toHaveLength(1); // next attempt not due before 1 s of service time
    clock.t += 1000;
    await waitForPath("/liq-c", 2);
    await recorded(2);
    clock.t += 3000;
    const hooks = await waitForPath("/liq-c", 3);
    expect(new Set(hooks.map((h) => h.headers["x-marketgate-delivery"])).size).toBe(1);
    await sleep(100);
    const [d] = (await json(await get(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` }))).deliveries;
    expect(d.status).toBe("delivered");
    expect(d.attempts.map((x: { status: number }) => x.status)).toEqual([500, 500, 200]);
    expect(d.attempts[0].error).toBe("HTTP 500");
  });

  it("extends for 0.03 USDC, capped at 168 h remaining; 404/409 are decided before payment", async () => {
    const a = await create("/liquidation/alert", { symbol: "BTC", webhook_url: receiver.url("/liq-d"), expires_in_hours: 24 });
    const before = await stack.balanceOf(payer().address);
    const res = await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 24 });
    expect(res.status).toBe(200);
    const ext = await json(res);
    expect(Date.parse(ext.expires_at) - Date.parse(a.expires_at)).toBe(24 * HOUR_MS);
    expect(ext).toMatchObject({ added_hours: 24, previous_expires_at: a.expires_at, status: "active" });
    expect(await stack.balanceOf(payer().address)).toBe(before - usdc(0.03));
    const capped = await json(await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 168 }));
    expect(Date.parse(capped.expires_at)).toBe(clock.t + 168 * HOUR_MS);
    expect(capped.message).toContain("capped");
    // Already at the cap: refused before payment.
    expect((await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 1 }, fetch)).status).toBe(400);
    expect((await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 0 }, fetch)).status).toBe(400);
    expect((await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 169 }, fetch)).status).toBe(400);
  });

  it("cancels only with the manage token or an owner-wallet signature; 403 otherwise", async () => {
    const a = await create("/liquidation/alert", { symbol: "BTC", webhook_url: receiver.url("/liq-e") });
    const b = await create("/liquidation/alert", { symbol: "BTC", webhook_url: receiver.url("/liq-f") });
    expect((await del(`/liquidation/alert/${a.alert_id}`)).status).toBe(403);
    expect((await del(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${b.manage_token}` })).status).toBe(403);
    const stranger = privateKeyToAccount(stack.payers[7]!.privateKey);
    const at = String(Math.floor(clock.t / 1000));
    const forged = await stranger.signMessage({ message: ownerMessage("cancel", a.alert_id, at) });
    expect((await del(`/liquidation/alert/${a.alert_id}`, { "x-wallet-signature": forged, "x-signed-at": at })).status).toBe(403);
    const ownerKey = privateKeyToAccount(payer().privateKey);
    const readSig = await ownerKey.signMessage({ message: ownerMessage("read", a.alert_id, at) });
    expect((await del(`/liquidation/alert/${a.alert_id}`, { "x-wallet-signature": readSig, "x-signed-at": at })).status).toBe(403);
    const stale = String(Math.floor(clock.t / 1000) - 600);
    const staleSig = await ownerKey.signMessage({ message: ownerMessage("cancel", a.alert_id, stale) });
    expect((await del(`/liquidation/alert/${a.alert_id}`, { "x-wallet-signature": staleSig, "x-signed-at": stale })).status).toBe(403);
    expect((await json(await get(`/liquidation/alert/${a.alert_id}`))).status).toBe("active");

    const sig = await ownerKey.signMessage({ message: ownerMessage("cancel", a.alert_id, at) });
    const cancelled = await del(`/liquidation/alert/${a.alert_id}`, { "x-wallet-signature": sig, "x-signed-at": at });
    expect(cancelled.status).toBe(200);
    expect(await json(cancelled)).toMatchObject({ status: "cancelled", webhook_url: receiver.url("/liq-e") });
    const byToken = await del(`/liquidation/alert/${b.alert_id}`, { authorization: `Bearer ${b.manage_token}` });
    expect((await json(byToken)).status).toBe("cancelled");
    expect((await del(`/liquidation/alert/${b.alert_id}`, { authorization: `Bearer ${b.manage_token}` })).status).toBe(200); // idempotent
    const ids = (await json(await get("/liquidation/alerts"))).alerts.map((x: { alert_id: string }) => x.alert_id);
    expect(ids).not.toContain(a.alert_id);
    expect(ids).not.toContain(b.alert_id);
    // Extending a cancelled alert: 409 before payment.
    expect((await post(`/liquidation/alert/${a.alert_id}/extend`, { add_hours: 1 }, fetch)).status).toBe(409);
  });

  it("expires on the controlled clock: status expired, ended at expires_at, gone from the list, no more webhooks", async () => {
    const a = await create("/liquidation/alert", { symbol: "BTC", threshold_pct: 0.0001, webhook_url: receiver.url("/liq-g"), expires_in_hours: 1 });
    clock.t += 2 * HOUR_MS;
    await round();
    await sleep(150);
    expect(hooksTo("/liq-g")).toHaveLength(0);
    const rec = await json(await get(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` }));
    expect(rec).toMatchObject({ status: "expired", ended_at: a.expires_at, trigger_count: 0 });
    expect((await json(await get("/liquidation/alerts"))).alerts.map((x: { alert_id: string }) => x.alert_id)).not.toContain(a.alert_id);
    expect((await del(`/liquidation/alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` })).status).toBe(409);
  });

  it("price alerts: 0.04 USDC, fire on a crossing with a price_alert payload, separate ids and lists", async () => {
    const before = await stack.balanceOf(payer().address);
    const a = await create("/price-alert", { symbol: "ETH", condition: "below", target_price: 1e9, webhook_url: receiver.url("/price-a") });
    const never = await create("/price-alert", { symbol: "ETH", direction: "above", target_price: 1e9, webhook_url: receiver.url("/price-b") });
    expect(await stack.balanceOf(payer().address)).toBe(before - 2n * usdc(0.04));
    // Either name in, both out (the spec's `direction` and `condition`, as liquidation alerts name it).
    expect(a).toMatchObject({ condition: "below", direction: "below", target_price: 1e9 });
    expect(never).toMatchObject({ condition: "above", direction: "above" });
    expect(await json(await get(`/price-alert/${a.alert_id}`))).toMatchObject({ condition: "below", direction: "below", visibility: "public" });
    expect(a.alert_id).toMatch(/^alert_price_eth_\d+_\d+$/);
    await round();
    const [hook] = await waitForPath("/price-a", 1);
    const body = JSON.parse(hook!.body);
    expect(body).toMatchObject({ event: "price_alert", alert_id: a.alert_id, symbol: "ETH", data: { triggered: true, direction: "below", target_price: 1e9 } });
    expect(body.data.current_price).toBeGreaterThan(0);
    expect(
      verifyWebhookSignature(a.webhook_secret, hook!.headers["x-marketgate-timestamp"] as string, hook!.body, hook!.headers["x-marketgate-signature"] as string, {
        nowSec: clock.t / 1000,
      }),
    ).toBe(true);
    // The same secret verifies the Standard Webhooks headers with the standardwebhooks package (against the service's clock).
    vi.useFakeTimers({ toFake: ["Date"], now: clock.t });
    try {
      expect(new Webhook(a.webhook_secret).verify(hook!.body, hook!.headers as Record<string, string>)).toEqual(body);
    } finally {
      vi.useRealTimers();
    }
    expect(hooksTo("/price-b")).toHaveLength(0);
    expect((await json(await get(`/price-alert/${never.alert_id}`, { authorization: `Bearer ${never.manage_token}` }))).last_evaluation).toMatchObject({ condition_met: false });
    expect((await get(`/liquidation/alert/${a.alert_id}`)).status).toBe(404);
    const ids = (await json(await get("/price-alerts"))).alerts.map((x: { alert_id: string }) => x.alert_id);
    expect(ids).toEqual(expect.arrayContaining([a.alert_id, never.alert_id]));
    const ext = await post(`/price-alert/${a.alert_id}/extend`, { add_hours: 2 });
    expect(ext.status).toBe(200);
    expect((await del(`/price-alert/${a.alert_id}`, { authorization: `Bearer ${a.manage_token}` })).status).toBe(200);
  });

  it("serves the same tools over MCP: paid create with x402 in _meta, credentials as arguments", async () => {
    const client: Client = await connectInMemory(stack.service.mcp);
    cleanup.push(() => void client.close());
    const args = { symbol: "BTC", webhook_url: receiver.url("/mcp-a") };
    const unpaid = (await client.callTool({ name: "liquidation_alert_create", arguments: args })) as CallToolResult;
    expect(unpaid.isError).toBe(true);
    const required = textOf(unpaid) as PaymentRequired;
    const x402 = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey)));
    const created = (await client.callTool({
      name: "liquidation_alert_create",
      arguments: args,
      _meta: { "x402/payment": await x402.createPaymentPayload(required) },
    })) as CallToolResult;
    expect(created.isError).toBeFalsy();
    const a = created.structuredContent as { alert_id: string; manage_token: string; owner: string };
    expect(a.owner).toBe(payer().address.toLowerCase());

    const anon = (await client.callTool({ name: "liquidation_alert_get", arguments: { id: a.alert_id } })) as CallToolResult;
    expect(anon.structuredContent).toMatchObject({ visibility: "public" });
    const full = (await client.callTool({ name: "liquidation_alert_get", arguments: { id: a.alert_id, manage_token: a.manage_token } })) as CallToolResult;
    expect(full.structuredContent).toMatchObject({ webhook_url: receiver.url("/mcp-a"), visibility: "owner" });
    const refused = (await client.callTool({ name: "liquidation_alert_cancel", arguments: { id: a.alert_id } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused).error.code).toBe("FORBIDDEN");
    const ok = (await client.callTool({ name: "liquidation_alert_cancel", arguments: { id: a.alert_id, manage_token: a.manage_token } })) as CallToolResult;
    expect(ok.structuredContent).toMatchObject({ status: "cancelled" });
    const tools = (await client.listTools()).tools;
    expect(tools.find((t) => t.name === "liquidation_alert_cancel")!.inputSchema.properties).toHaveProperty("manage_token");
    expect(tools.find((t) => t.name === "liquidation_alert_create")!.inputSchema.properties).not.toHaveProperty("manage_token");
    // Creating and extending destroy nothing (MCP's destructiveHint defaults to true); cancelling does.
    for (const name of ["liquidation_alert_create", "liquidation_alert_extend", "price_alert_create", "price_alert_extend"]) {
      expect(tools.find((t) => t.name === name)!.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
    expect(tools.find((t) => t.name === "price_alert_cancel")!.annotations).toMatchObject({ destructiveHint: true });
  });

  async function waitForPath(path: string, count: number, timeoutMs = 10_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (hooksTo(path).length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} webhook(s) to ${path}, got ${hooksTo(path).length}`);
      await sleep(20);
    }
    return hooksTo(path);
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
