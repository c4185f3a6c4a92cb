import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownerMessage } from "../../src/alerts/auth.js";
import { AlertService } from "../../src/alerts/service.js";
import { AlertStore } from "../../src/alerts/store.js";
import type { LiquidationParams, ManageAction } from "../../src/alerts/types.js";
import type { CallerCredentials } from "../../src/registry/tool.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../src/sandbox/https-receiver.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { appError } from "../helpers/errors.js";
import { json } from "../helpers/json.js";
import { connectInMemory } from "../helpers/mcp.js";
import { cleanupAfterEach, manualClock, tempDir } from "../helpers/scratch.js";

/*
 * Issue 12, finding 8: an anonymous caller sees only the public fields of an alert (id, type, symbol,
 * status, condition, created_at, expires_at); the owner wallet, webhook URL, evaluations and delivery log
 * need the manage token or an owner-wallet signature, over HTTP and MCP alike.
 */

/** Keys of the public view of each kind, sorted. */
const PUBLIC_KEYS = {
  liquidation: ["alert_id", "condition", "created_at", "expires_at", "min_value_usd", "status", "symbol", "threshold_pct", "type", "visibility"],
  price: ["alert_id", "condition", "created_at", "direction", "expires_at", "status", "symbol", "target_price", "type", "visibility"],
};

const toolNamed = (name: string) => TOOLS.find((t) => t.name === name)!;
const keysOf = (o: object) => Object.keys(o).sort();

/** Credentials of an EIP-191 signature by `key` of `marketgate:<action>:<subject>:<signedAtSec>`. */
async function signed(key: PrivateKeyAccount, action: ManageAction, subject: string, signedAtSec: number): Promise<CallerCredentials> {
  return { walletSignature: await key.signMessage({ message: ownerMessage(action, subject, signedAtSec) }), signedAt: String(signedAtSec) };
}

/** The HTTP headers carrying `creds`. */
function headersOf(creds: CallerCredentials): Record<string, string> {
  const h: Record<string, string> = {};
  if (creds.bearerToken) h.authorization = `Bearer ${creds.bearerToken}`;
  if (creds.walletSignature) h["x-wallet-signature"] = creds.walletSignature;
  if (creds.signedAt) h["x-signed-at"] = creds.signedAt;
  return h;
}

describe("AlertService.requireWallet (listing one wallet's alerts)", () => {
  const cleanup = cleanupAfterEach();
  const T0_SEC = Date.UTC(2025, 0, 15, 12, 0, 0) / 1000;
  const owner = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
  const other = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");

  function service() {
    const store = new AlertStore(":memory:");
    cleanup.push(() => store.close());
    return new AlertService(store, { now: manualClock(T0_SEC * 1000).now, target: { allowLoopback: false }, maxActive: 10 });
  }

  it("accepts that wallet's signature of marketgate:list:<wallet in lowercase>:<signed_at>, whatever the case of the filter", async () => {
    const svc = service();
    const w = owner.address.toLowerCase();
    const creds = await signed(owner, "list", w, T0_SEC - 60);
    await expect(svc.requireWallet(owner.address, creds)).resolves.toBeUndefined();
    await expect(svc.requireWallet(w, creds)).resolves.toBeUndefined();
    await expect(svc.requireWallet(`0x${w.slice(2).toUpperCase()}`, creds)).resolves.toBeUndefined();
  });

  it("refuses with FORBIDDEN: no credentials, a manage token, another wallet's key, another action or subject, a stale signature", async () => {
    const svc = service();
    const w = owner.address.toLowerCase();
    const alert = await svc.create(
      "liquidation",
      {
        symbol: "BTC",
        params: { condition: "cascade_risk", threshold_pct: 5, min_value_usd: 0 } satisfies LiquidationParams,
        webhookUrl: "https://hooks.example.com/x",
        expiresInHours: 1,
      },
      owner.address,
    );
    const refusals: CallerCredentials[] = [
      {},
      { bearerToken: alert.manageToken },
      await signed(other, "list", w, T0_SEC),
      await signed(owner, "read", w, T0_SEC),
      await signed(owner, "read", alert.alert.id, T0_SEC),
      await signed(owner, "list", other.address.toLowerCase(), T0_SEC),
      await signed(owner, "list", w, T0_SEC - 301),
      await signed(owner, "list", w, T0_SEC + 301),
      { ...(await signed(owner, "list", w, T0_SEC)), signedAt: String(T0_SEC + 1) },
    ];
    for (const creds of refusals) {
      const err = await appError(() => svc.requireWallet(owner.address, creds));
      expect(err.code, JSON.stringify(creds)).toBe("FORBIDDEN");
      expect(err.message).toContain(`marketgate:list:${w}:`);
    }
  });
});

describe("alert privacy over HTTP and MCP, on a paid offline stack", () => {
  const cleanup = cleanupAfterEach();
  let stack: OfflineStack;
  let receiver: HttpsReceiver;
  const dirs: Array<() => void> = [];
  const clock = manualClock(Date.now());
  const nowSec = () => Math.floor(clock.t / 1000);
  const ownerDev = () => stack.payers[1]!;
  const strangerDev = () => stack.payers[2]!;
  const ownerKey = () => privateKeyToAccount(ownerDev().privateKey);
  const strangerKey = () => privateKeyToAccount(strangerDev().privateKey);
  const x402 = (dev: { privateKey: `0x${string}` }) => new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(dev.privateKey)));
  const get = (path: string, creds: CallerCredentials = {}) => fetch(`${stack.url}${path}`, { headers: headersOf(creds) });
  /** Alerts created in beforeAll: two of the owner's (liquidation, price), one of a stranger's. */
  const made = {} as Record<"liq" | "price" | "strangers", { alert_id: string; manage_token: string }>;
  /** What must never reach an anonymous caller: the owner's address and anything of the webhook URL. */
  const secrets = () => [ownerDev().address.toLowerCase(), `127.0.0.1:${receiver.port}`, "priv-liq", "priv-price", "priv-stranger"];

  async function create(dev: { privateKey: `0x${string}` }, path: string, body: Record<string, unknown>) {
    const res = await wrapFetchWithPayment(fetch, x402(dev))(`${stack.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return json(res);
  }

  /** Asserts a view is the public one of `kind`: exactly the public keys, nothing private in it, and valid for the tool's output schema. */
  function expectPublic(view: Record<string, unknown>, kind: keyof typeof PUBLIC_KEYS, tool: string) {
    expect(keysOf(view)).toEqual(PUBLIC_KEYS[kind]);
    expect(view.visibility).toBe("public");
    const text = JSON.stringify(view).toLowerCase();
    for (const s of secrets()) expect(text).not.toContain(s);
    toolNamed(tool).output.parse(
      tool.endsWith("_list") ? { count: 1, wallet_filter: null, alerts: [view], truncated: false, next_cursor: null, timestamp: new Date().toISOString() } : view,
    );
  }

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    const caFile = join(tempDir(dirs, "alerts-privacy-"), "ca.pem");
    writeFileSync(caFile, receiver.ca);
    stack = await startOfflineStack({
      now: clock.now,
      env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_EXTRA_CA_FILE: caFile, ALERT_EVAL_CRON: "0 0 0 1 1 *", ALERT_DISPATCH_POLL_MS: "20" },
    });
    made.liq = await create(ownerDev(), "/liquidation/alert", { symbol: "BTC", threshold_pct: 0.0001, webhook_url: receiver.url("/priv-liq?team=7") });
    made.price = await create(ownerDev(), "/price-alert", { symbol: "ETH", direction: "below", target_price: 1e9, webhook_url: receiver.url("/priv-price") });
    made.strangers = await create(strangerDev(), "/liquidation/alert", { symbol: "ETH", threshold_pct: 50, webhook_url: receiver.url("/priv-stranger") });
    // One round fires the owner's two alerts, so there is a delivery log to hide.
    await stack.service.alerts!.round();
    await receiver.waitFor(2, 10_000);
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    for (const d of dirs) d();
  });

  it("anonymous GET of an alert: public fields only, no owner wallet, no webhook URL or origin, no delivery log", async () => {
    const liq = await json(await get(`/liquidation/alert/${made.liq.alert_id}`));
    expectPublic(liq, "liquidation", "liquidation_alert_get");
    expect(liq).toMatchObject({
      alert_id: made.liq.alert_id,
      type: "liquidation",
      symbol: "BTC",
      status: "active",
      condition: "cascade_risk",
      threshold_pct: 0.0001,
      min_value_usd: 0,
    });
    const price = await json(await get(`/price-alert/${made.price.alert_id}`));
    expectPublic(price, "price", "price_alert_get");
    expect(price).toMatchObject({ direction: "below", target_price: 1e9 });
  });

  it("GET with the manage token or the owner's read signature: the owner view with webhook URL, owner and deliveries", async () => {
    const byToken = await json(await get(`/liquidation/alert/${made.liq.alert_id}`, { bearerToken: made.liq.manage_token }));
    expect(byToken).toMatchObject({ visibility: "owner", webhook_url: receiver.url("/priv-liq?team=7"), owner: ownerDev().address.toLowerCase(), trigger_count: 1 });
    expect(byToken.deliveries).toHaveLength(1);
    expect(byToken.deliveries[0].attempts[0].status).toBe(200);
    toolNamed("liquidation_alert_get").output.parse(byToken);

    const bySig = await json(await get(`/price-alert/${made.price.alert_id}`, await signed(ownerKey(), "read", made.price.alert_id, nowSec())));
    expect(bySig).toMatchObject({ visibility: "owner", webhook_url: receiver.url("/priv-price"), owner: ownerDev().address.toLowerCase() });
    expect(bySig.deliveries).toHaveLength(1);
  });

  it("GET with someone else's credentials is anonymous: another alert's token, a stranger's or a stale signature", async () => {
    const id = made.liq.alert_id;
    const others: CallerCredentials[] = [
      { bearerToken: made.strangers.manage_token },
      await signed(strangerKey(), "read", id, nowSec()),
      await signed(ownerKey(), "read", made.price.alert_id, nowSec()),
      await signed(ownerKey(), "cancel", id, nowSec()),
      await signed(ownerKey(), "read", id, nowSec() - 600),
    ];
    for (const creds of others) {
      const res = await get(`/liquidation/alert/${id}`, creds);
      expect(res.status).toBe(200);
      expectPublic(await json(res), "liquidation", "liquidation_alert_get");
    }
  });

  it("anonymous list: every owner's active alerts with the public fields only", async () => {
    const list = await json(await get("/liquidation/alerts"));
    expect(list.alerts.map((a: { alert_id: string }) => a.alert_id)).toEqual([made.liq.alert_id, made.strangers.alert_id]);
    expect(list.wallet_filter).toBeNull();
    for (const a of list.alerts) expectPublic(a, "liquidation", "liquidation_alerts_list");
    const prices = await json(await get("/price-alerts"));
    expect(prices.count).toBe(1);
    expectPublic(prices.alerts[0], "price", "price_alerts_list");
    // A manage token does not open the whole list.
    expect(JSON.stringify(await json(await get("/liquidation/alerts", { bearerToken: made.liq.manage_token })))).not.toContain("priv-liq");
  });

  it("wallet-filtered list: the owner's signature shows the owner's alerts in full; without it 403", async () => {
    const wallet = ownerDev().address; // checksummed: the signed subject is the lowercase form
    const w = wallet.toLowerCase();
    const res = await get(`/liquidation/alerts?wallet=${wallet}`, await signed(ownerKey(), "list", w, nowSec()));
    expect(res.status).toBe(200);
    const list = await json(res);
    toolNamed("liquidation_alerts_list").output.parse(list);
    expect(list).toMatchObject({ count: 1, wallet_filter: w });
    expect(list.alerts[0]).toMatchObject({ alert_id: made.liq.alert_id, visibility: "owner", owner: w, webhook_url: receiver.url("/priv-liq?team=7"), trigger_count: 1 });
    expect(list.alerts[0]).not.toHaveProperty("deliveries");
    const prices = await json(await get(`/price-alerts?wallet=${w}`, await signed(ownerKey(), "list", w, nowSec())));
    expect(prices.alerts).toMatchObject([{ alert_id: made.price.alert_id, visibility: "owner", webhook_url: receiver.url("/priv-price") }]);

    for (const creds of [
      {},
      { bearerToken: made.liq.manage_token },
      await signed(strangerKey(), "list", w, nowSec()),
      await signed(ownerKey(), "read", w, nowSec()),
      await signed(ownerKey(), "list", w, nowSec() - 600),
    ]) {
      const refused = await get(`/liquidation/alerts?wallet=${wallet}`, creds);
      expect(refused.status, JSON.stringify(creds)).toBe(403);
      expect((await json(refused)).error.code).toBe("FORBIDDEN");
    }
  });

  it("extend answers the public view (anyone may pay to extend)", async () => {
    const res = await wrapFetchWithPayment(fetch, x402(strangerDev()))(`${stack.url}/liquidation/alert/${made.liq.alert_id}/extend`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ add_hours: 1 }),
    });
    expect(res.status).toBe(200);
    const { previous_expires_at, added_hours, message, ...view } = await json(res);
    expect([typeof previous_expires_at, added_hours, typeof message]).toEqual(["string", 1, "string"]);
    expectPublic(view, "liquidation", "liquidation_alert_get");
  });

  it("MCP: the same views from the same handlers, credentials as arguments; output schemas describe both", async () => {
    const client: Client = await connectInMemory(stack.service.mcp);
    cleanup.push(() => void client.close());
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
    const credArgs = (c: CallerCredentials) => ({
      ...(c.bearerToken ? { manage_token: c.bearerToken } : {}),
      ...(c.walletSignature ? { wallet_signature: c.walletSignature, signed_at: c.signedAt } : {}),
    });
    const id = made.liq.alert_id;
    const w = ownerDev().address.toLowerCase();

    const anon = await call("liquidation_alert_get", { id });
    expect(anon.isError).toBeFalsy();
    expectPublic(anon.structuredContent!, "liquidation", "liquidation_alert_get");
    expect(JSON.stringify(anon.content)).not.toContain(w);

    const byToken = await call("liquidation_alert_get", { id, manage_token: made.liq.manage_token });
    expect(byToken.structuredContent).toMatchObject({ visibility: "owner", owner: w, webhook_url: receiver.url("/priv-liq?team=7") });
    const bySig = await call("liquidation_alert_get", { id, ...credArgs(await signed(ownerKey(), "read", id, nowSec())) });
    expect((bySig.structuredContent as { deliveries: unknown[] }).deliveries).toHaveLength(1);

    const list = await call("liquidation_alerts_list", {});
    for (const a of (list.structuredContent as { alerts: Array<Record<string, unknown>> }).alerts) expectPublic(a, "liquidation", "liquidation_alerts_list");
    const mine = await call("liquidation_alerts_list", { wallet: w, ...credArgs(await signed(ownerKey(), "list", w, nowSec())) });
    expect(mine.structuredContent).toMatchObject({ count: 1, alerts: [{ alert_id: id, visibility: "owner", owner: w }] });
    const refused = await call("liquidation_alerts_list", { wallet: w });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content[0] as { text: string }).text).error.code).toBe("FORBIDDEN");

    const tools = (await client.listTools()).tools;
    for (const name of ["liquidation_alert_get", "price_alert_get"]) {
      const t = tools.find((x) => x.name === name)!;
      expect(t.outputSchema!.properties).toHaveProperty("visibility");
      expect(t.outputSchema!.required).toEqual(expect.arrayContaining(["alert_id", "status", "visibility"]));
      expect(t.outputSchema!.required).not.toContain("webhook_url");
      expect(t.outputSchema!.required).not.toContain("owner");
      expect(t.description).toContain("anonymous caller sees only");
    }
    expect(tools.find((x) => x.name === "price_alerts_list")!.inputSchema.properties).toHaveProperty("wallet_signature");
  });
});
