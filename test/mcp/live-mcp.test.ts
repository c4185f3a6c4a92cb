import type { AddressInfo } from "node:net";
import type { Server as HttpServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import express from "express";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveMcpHandler } from "../../mcp/live-server.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import type { Liquidation } from "../../src/ingestion/types.js";
import { testLiquidation } from "../helpers/liquidations.js";
import { STREAMS, streamSymbol } from "../../tools/live/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { siwxHeader } from "../helpers/siwx.js";
import { until } from "../helpers/wait.js";

const MINUTE_MS = 1500;

/** What `resources/read` of a live resource returns. */
interface LiveContents {
  uri: string;
  topic: string;
  symbol: string | null;
  status: "not_subscribed" | "opening" | "active" | "ended";
  price_per_minute_usd: string;
  billing: { minutes_paid: number; remaining_usd: string } | null;
  ended: { event: string; data: Record<string, unknown> } | null;
  events: Array<{ seq: number; event: string; id?: string; data: Record<string, unknown> }>;
}

const liquidation = testLiquidation;

/** An MCP client of `url` (the SDK's own Streamable HTTP client) recording every resource update. */
async function connect(url: string) {
  const client = new Client({ name: "live-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await client.connect(transport);
  const read = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text) as LiveContents;
  return { client, transport, updates, read };
}

/** The McpError a promise rejects with. */
async function rpcError(p: Promise<unknown>): Promise<McpError & { data: Record<string, unknown> }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError & { data: Record<string, unknown> };
}

/**
 * The stateful MCP endpoint `/mcp/live` against the offline stack (venue simulator, anvil, real credits
 * ledger), with the SDK's own client: resources, subscriptions billed per minute from credits, coalesced
 * `notifications/resources/updated`, refusals as JSON-RPC errors.
 */
describe("live MCP resources with subscriptions (/mcp/live, payments on)", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const endpoint = () => `${stack.url}/mcp/live`;
  const proof = (i: number) => siwxHeader(payer(i).privateKey, endpoint());
  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status).toBe(200);
  };
  const account = async (i: number) =>
    json(await fetch(`${stack.url}/api/v1/credits`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${stack.url}/api/v1/credits`) } }));
  const inject = (events: Liquidation[]) => stack.service.ctx.ingestion!.liquidations.add(events);
  /** Injects one liquidation of `base` per poll until `updates` grows (the client opens its notification stream asynchronously). */
  const firstUpdate = (updates: string[], base: string) => {
    const before = updates.length;
    let n = 900;
    return until(
      "a first resource update",
      async () => {
        inject([liquidation(n++, base)]);
        return updates.length > before;
      },
      10_000,
      100,
    );
  };

  beforeAll(async () => {
    stack = await startOfflineStack({
      env: { RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.01", LIVE_STREAM_MINUTE_MS: String(MINUTE_MS) },
    });
  });
  afterAll(async () => {
    await stack?.close();
    // The session the last test left subscribed was closed by the shutdown, its stream slot released.
    if (stack) expect(stack.service.live.limits.open).toBe(0);
  });

  it("is its own stateful endpoint: /mcp stays stateless, /mcp/live wants a session, unknown sessions are 404", async () => {
    expect((await fetch(`${stack.url}/mcp`)).status).toBe(405);
    const noSession = await fetch(endpoint(), { headers: { accept: "text/event-stream" } });
    expect(noSession.status).toBe(400);
    expect((await json(noSession)).error.message).toMatch(/initialize first/);
    const unknown = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": "not-a-session" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/list" }),
    });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error).toMatchObject({ code: -32001, message: expect.stringMatching(/Mcp-Session-Id/) });
    const init = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
      }),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect((await json(init)).result.capabilities.resources).toEqual({ subscribe: true, listChanged: false });
    const del = await fetch(endpoint(), { method: "DELETE", headers: { "mcp-session-id": init.headers.get("mcp-session-id")! } });
    expect(del.status).toBe(200);
  });

  it("lists the resource and the templates; reading an unsubscribed resource is free and empty", async () => {
    const c = await connect(endpoint());
    const { resources } = await c.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["marketgate://liquidations"]);
    expect(resources[0]!._meta).toMatchObject({ "marketgate/price-per-minute-usd": "0.002" });
    const { resourceTemplates } = await c.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["marketgate://liquidations/{symbol}", "marketgate://cvd/{symbol}"]);
    expect(await c.read("marketgate://cvd/btcusdt")).toMatchObject({ uri: "marketgate://cvd/BTC", status: "not_subscribed", events: [] });
    // Unknown resources: the SDK v2 sends -32602 (Invalid params) on the wire for the server's -32002.
    expect((await rpcError(c.client.readResource({ uri: "marketgate://weather" }))).code).toBe(-32602);
    expect((await rpcError(c.client.readResource({ uri: "marketgate://cvd" }))).code).toBe(-32602);
    expect((await rpcError(c.client.subscribeResource({ uri: "marketgate://cvd/NOTACOIN1" }))).code).toBe(-32602);
    await c.client.close();
  });

  it("a subscribe without a proof, or without credits, is a 402 JSON-RPC error with the reason, the top-up hint and a SIWX challenge", async () => {
    const c = await connect(endpoint());
    const bare = await rpcError(c.client.subscribeResource({ uri: "marketgate://liquidations/ETH" }));
    expect(bare.code).toBe(402);
    expect(bare.data.reason).toMatch(/^sign_in_required/);
    expect(bare.data.top_up).toEqual({ method: "POST", path: "/api/v1/credits", body: { amount_usd: "5" } });
    const pr = bare.data.payment_required as { resource: { url: string }; extensions: Record<string, { info: { uri: string } }> };
    expect(pr.resource.url).toBe(endpoint());
    expect(pr.extensions["sign-in-with-x"]!.info.uri).toBe(endpoint());
    const broke = await rpcError(c.client.subscribeResource({ uri: "marketgate://liquidations/ETH", _meta: { "x402/sign-in-with-x": await proof(8) } }));
    expect(broke.code).toBe(402);
    expect(broke.data.reason).toMatch(/credits_insufficient_balance/);
    const forged = await rpcError(c.client.subscribeResource({ uri: "marketgate://liquidations/ETH", _meta: { "x402/sign-in-with-x": "bm90IGEgcHJvb2Y=" } }));
    expect(forged.code).toBe(402);
    expect(await c.read("marketgate://liquidations/ETH")).toMatchObject({ status: "not_subscribed" });
    expect(stack.service.live.limits.open).toBe(0);
    await c.client.close();
  });

  it("subscribed: events fill the resource, updates are coalesced, each minute is debited; unsubscribe stops both", async () => {
    await topUp(1, "1");
    const c = await connect(endpoint());
    const uri = "marketgate://liquidations/ETH";
    const sub = await c.client.subscribeResource({ uri, _meta: { "x402/sign-in-with-x": await proof(1) } });
    const credits = sub._meta?.["marketgate/credits"] as { wallet: string; remaining_usd: string; session: string };
    expect(credits.wallet.toLowerCase()).toBe(payer(1).address.toLowerCase());
    expect(credits.remaining_usd).toBe("0.998");
    expect(stack.service.live.limits.open).toBe(1);
    // Subscribing again to the same resource (any spelling) debits nothing more.
    await c.client.subscribeResource({ uri: "marketgate://liquidations/ethusdt" });
    expect(stack.service.live.limits.open).toBe(1);

    await firstUpdate(c.updates, "ETH");
    await new Promise((r) => setTimeout(r, 300));
    const before = c.updates.length;
    inject(Array.from({ length: 30 }, (_, n) => liquidation(n, "ETH")));
    inject([liquidation(1, "SOL")]);
    await until("an update for the 30 liquidations", async () => c.updates.length > before);
    await new Promise((r) => setTimeout(r, 400));
    // One injection of 30 events: one notification per subscribed URI (at most one more at the end of the
    // 250 ms period, and one for a minute's debit if it fell in the window on a slow machine), not 30.
    for (const u of [uri, "marketgate://liquidations/ethusdt"]) expect(c.updates.slice(before).filter((x) => x === u).length).toBeLessThanOrEqual(3);
    expect(new Set(c.updates)).toEqual(new Set([uri, "marketgate://liquidations/ethusdt"]));
    const got = await c.read(uri);
    expect(got.status).toBe("active");
    const liqs = got.events.filter((e) => e.event === "liquidation");
    expect(liqs.length).toBeGreaterThanOrEqual(31);
    expect(liqs.every((e) => e.data.symbol === "ETHUSDT" && e.id === e.data.id)).toBe(true);
    expect(got.events.map((e) => e.seq)).toEqual(got.events.map((_, k) => got.events[0]!.seq + k));

    // More than the ring holds: the newest 100 stay.
    inject(Array.from({ length: 150 }, (_, n) => liquidation(200 + n, "ETH")));
    await until("the ring full", async () => (await c.read(uri)).events.at(-1)?.data.price === 60_349);
    expect((await c.read(uri)).events).toHaveLength(100);

    await new Promise((r) => setTimeout(r, MINUTE_MS * 2 + 300));
    const billed = await c.read(uri);
    expect(billed.billing!.minutes_paid).toBeGreaterThanOrEqual(3);

    // A credits session token subscribes without a new signature.
    await c.client.subscribeResource({ uri: "marketgate://cvd/BTC", _meta: { "marketgate/credits-session": credits.session } });
    expect(stack.service.live.limits.open).toBe(2);
    await c.client.unsubscribeResource({ uri: "marketgate://cvd/BTC" });

    await c.client.unsubscribeResource({ uri });
    expect(stack.service.live.limits.open).toBe(0);
    const after = c.updates.length;
    inject(Array.from({ length: 5 }, (_, n) => liquidation(500 + n, "ETH")));
    await new Promise((r) => setTimeout(r, 600));
    expect(c.updates.length).toBe(after);
    const ended = await c.read(uri);
    expect(ended).toMatchObject({ status: "ended", ended: { event: "unsubscribed" } });
    const minutes = ended.billing!.minutes_paid;
    const spent = Number((await account(1)).spent_usd);
    // The ETH minutes plus the CVD subscription's first minute.
    expect(spent).toBeCloseTo(minutes * 0.002 + 0.002, 9);
    await c.client.close();
  });

  it("an exhausted balance ends the subscription with payment_required in the resource and a last update", async () => {
    await topUp(2, "0.01");
    const c = await connect(endpoint());
    const uri = "marketgate://liquidations";
    await c.client.subscribeResource({ uri, _meta: { "x402/sign-in-with-x": await proof(2) } });
    await firstUpdate(c.updates, "XRP");
    await new Promise((r) => setTimeout(r, 300));
    const quiet = c.updates.length;
    const ended = await until(
      "payment_required",
      async () => {
        const r = await c.read(uri);
        return r.status === "ended" && r;
      },
      MINUTE_MS * 8,
    );
    expect(ended.ended).toMatchObject({ event: "payment_required", data: { reason: expect.stringMatching(/credits_insufficient_balance/), top_up: { path: "/api/v1/credits" } } });
    expect(ended.billing).toEqual({ minutes_paid: 5, remaining_usd: "0" });
    expect(ended.events.some((e) => e.data.symbol === "XRPUSDT")).toBe(true);
    // Nothing was injected since: the update after `quiet` is the last one, saying the subscription ended.
    await until("the last update", async () => c.updates.length > quiet);
    expect(await account(2)).toMatchObject({ balance_usd: "0", spent_usd: "0.01" });
    expect(stack.service.live.limits.open).toBe(0);
    await c.client.close();
  });

  it("CVD: running updates replace each other in the ring; ending the session (DELETE) ends its subscriptions and the id is then unknown", async () => {
    await topUp(3, "1");
    const c = await connect(endpoint());
    const uri = "marketgate://cvd/ETH";
    await c.client.subscribeResource({ uri, _meta: { "x402/sign-in-with-x": await proof(3) } });
    expect(stack.service.live.limits.open).toBe(1);
    // The simulator trades ETH: running CVD updates arrive, each replacing the previous one in the ring.
    const first = await until("a cvd_update", async () => (await c.read(uri)).events.find((e) => e.event === "cvd_update"), 15_000);
    expect(first.data).toMatchObject({ symbol: "ETH", bucket_start: expect.any(String), exchanges: expect.any(Object) });
    await until("a later cvd_update", async () => (await c.read(uri)).events.some((e) => e.event === "cvd_update" && e.seq > first.seq), 15_000);
    expect((await c.read(uri)).events.filter((e) => e.event === "cvd_update")).toHaveLength(1);
    const id = c.transport.sessionId!;
    await c.transport.terminateSession();
    expect(stack.service.live.limits.open).toBe(0);
    const gone = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": id },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/list" }),
    });
    expect(gone.status).toBe(404);
    await c.client.close();
  });

  it("a credits session token in Authorization: Bearer subscribes (the streams' shared sign-in); a bad one is the 402 error, nothing debited", async () => {
    const i = 5;
    await topUp(i, "0.05");
    const signed = await connect(endpoint());
    const sub = await signed.client.subscribeResource({ uri: "marketgate://liquidations/SOL", _meta: { "x402/sign-in-with-x": await proof(i) } });
    const { session } = sub._meta?.["marketgate/credits"] as { session: string };
    await signed.client.unsubscribeResource({ uri: "marketgate://liquidations/SOL" });
    await signed.client.close();
    const withBearer = async (token: string) => {
      const client = new Client({ name: "live-bearer", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(endpoint()), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    const c = await withBearer(session);
    try {
      const before = Number((await account(i)).balance_usd);
      const r = await c.subscribeResource({ uri: "marketgate://liquidations/XRP" });
      expect(r._meta?.["marketgate/credits"]).toMatchObject({ wallet: payer(i).address.toLowerCase() });
      // The first minute is debited at once, from this wallet.
      expect(Number((await account(i)).balance_usd)).toBeLessThan(before);
      await c.unsubscribeResource({ uri: "marketgate://liquidations/XRP" });
    } finally {
      await c.close();
    }
    const bad = await withBearer("v1.not-a-token");
    try {
      const before = (await account(i)).balance_usd;
      const err = await rpcError(bad.subscribeResource({ uri: "marketgate://liquidations/DOGE" }));
      expect(err.code).toBe(402);
      expect(err.data.reason).toMatch(/^invalid_credits_session/);
      expect((await account(i)).balance_usd).toBe(before);
    } finally {
      await bad.close();
    }
  });

  it("a session left subscribed with its notification stream open is closed at shutdown (last test: the stack closes after it)", async () => {
    await topUp(4, "1");
    const c = await connect(endpoint());
    await c.client.subscribeResource({ uri: "marketgate://liquidations/BTC", _meta: { "x402/sign-in-with-x": await proof(4) } });
    await firstUpdate(c.updates, "BTC");
    expect(stack.service.live.limits.open).toBe(1);
    // afterAll's stack.close() must not hang on the open GET stream; the subscription is released.
  });
});

/** Session bounds with payments off (subscriptions free): the process cap with eviction, and the idle timeout. */
describe("live MCP sessions: cap, eviction, idle timeout (payments off)", () => {
  let s: FreeStack;
  let idle: { server: HttpServer; url: string; handler: ReturnType<typeof liveMcpHandler> };
  const inject = (events: Liquidation[]) => s.service.ctx.ingestion!.liquidations.add(events);

  beforeAll(async () => {
    s = await startFreeStack({ LIVE_STREAMS_MAX: "2", FREE_RATE_LIMIT_PER_MIN: "100000" });
    // A second mount of the same live streams with a short idle timeout.
    const app = express();
    app.use(express.json());
    const handler = liveMcpHandler({
      streams: STREAMS,
      live: s.service.live,
      ctx: s.service.ctx,
      symbolOf: streamSymbol,
      info: { name: "marketgate", version: "test" },
      idleMs: 400,
    });
    app.all("/mcp/live", handler);
    const server = await new Promise<HttpServer>((resolve) => {
      const srv = app.listen(0, "127.0.0.1", () => resolve(srv));
    });
    idle = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/live`, handler };
  });
  afterAll(async () => {
    if (idle) {
      idle.handler.endpoint.closeAll();
      idle.server.closeAllConnections();
      await new Promise((r) => idle.server.close(r));
    }
    await s?.close();
  });

  it("free subscriptions; at the cap the least recently used session without subscriptions is evicted, else 503", async () => {
    const a = await connect(`${s.url}/mcp/live`);
    expect(await a.client.subscribeResource({ uri: "marketgate://liquidations/SOL" })).toEqual({});
    let n = 0;
    await until(
      "an update",
      async () => {
        inject([liquidation(n++, "SOL")]);
        return a.updates.length > 0;
      },
      10_000,
      100,
    );
    expect((await a.read("marketgate://liquidations/SOL")).billing).toBeNull();
    const b = await connect(`${s.url}/mcp/live`);
    // Full (2 sessions): a third evicts b, which has no subscription.
    const c = await connect(`${s.url}/mcp/live`);
    await expect(b.client.listResources()).rejects.toThrow(/-32001.*Session not found/);
    await c.client.subscribeResource({ uri: "marketgate://liquidations/XRP" });
    // Both sessions hold subscriptions: no room.
    const refused = await fetch(`${s.url}/mcp/live`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("10");
    await Promise.all([a.transport.terminateSession(), c.transport.terminateSession()]);
    await Promise.all([a.client.close(), b.client.close(), c.client.close()]);
    expect(s.service.live.limits.open).toBe(0);
  });

  it("a session without requests or a notification stream for the idle timeout is closed with its subscriptions", async () => {
    const open0 = s.service.live.limits.open;
    const a = await connect(idle.url);
    await a.client.subscribeResource({ uri: "marketgate://liquidations/DOGE" });
    expect(idle.handler.endpoint.size).toBe(1);
    // Listening (notification stream open) is not idle.
    await new Promise((r) => setTimeout(r, 900));
    expect(idle.handler.endpoint.size).toBe(1);
    expect(s.service.live.limits.open).toBe(open0 + 1);
    await a.client.close(); // drops the stream without ending the session
    await until("the idle session closed", async () => idle.handler.endpoint.size === 0, 5_000);
    expect(s.service.live.limits.open).toBe(open0);
  });
});
