import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client as fetchX402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { MODERN, modernCall, textOf, type RawResult } from "../helpers/mcp.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { siwxHeader } from "../helpers/siwx.js";

const { counter } = paidTestTools();

/** A result as both clients return it: content blocks, structuredContent, isError, _meta. */
type Result = { isError?: boolean; content: unknown[]; structuredContent?: unknown; _meta?: Record<string, unknown> };

/**
 * Issue 32, item 4: `/mcp` on the MCP SDK v2 serves `2025-11-25` clients (SDK 1.32.2 and 2.4.0) and stateless
 * `2026-07-28` clients on one endpoint, with the same payments; 402 results carry the PaymentRequired in
 * `structuredContent` and in `content[0].text`; a credits session token in `Authorization: Bearer` pays from credits.
 * Real parts: the service with payments and credits on, anvil, the official x402 client.
 */
describe("MCP on the SDK v2: both protocol eras on /mcp, paid the same way", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const mcpUrl = () => `${stack.url}/mcp`;
  /** Pays the x402 PaymentRequired of a 402 result with payer `i` (the official client). */
  const pay = (i: number, required: PaymentRequired) =>
    new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))).createPaymentPayload(required);
  const topUp = async (i: number, amount: string) => {
    const f = wrapFetchWithPayment(fetch, new fetchX402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await f(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status).toBe(200);
  };
  /** The credits balance of payer `i` in micro-USD, read over HTTP with a SIWX proof. */
  const balance = async (i: number) => {
    const url = `${stack.url}/api/v1/credits`;
    const body = await json(await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, url) } }));
    return Math.round(Number(body.balance_usd) * 1e6);
  };
  /** A v2 client (2.4.0) on `/mcp`: `2025-11-25` by default, `2026-07-28` pinned, with optional extra headers. */
  const v2 = async (era: "legacy" | "modern", headers: Record<string, string> = {}) => {
    const c = new Client({ name: "t", version: "2" }, era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
    await c.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers } }));
    return c;
  };

  beforeAll(async () => {
    stack = await startOfflineStack({ tools: [...TOOLS, counter], env: { RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.10" } });
  });
  afterAll(() => stack?.close());

  /** A 402 result: isError, and the PaymentRequired both as structuredContent and as the JSON text of content[0]. */
  const expect402 = (r: Result): PaymentRequired => {
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toEqual(textOf(r));
    const required = r.structuredContent as PaymentRequired;
    expect(required).toMatchObject({ x402Version: 2, resource: { url: mcpUrl() }, accepts: [{ amount: "5000", payTo: stack.operator.address }] });
    return required;
  };

  it.each(["legacy", "modern"] as const)("the v2 client (%s era) lists the tools, gets a 402 with structuredContent, and pays a call on anvil", async (era) => {
    const client = await v2(era);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(era === "modern" ? MODERN : "2025-11-25");
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "cex_market")?.outputSchema).toMatchObject({
        type: "object",
        anyOf: [{ properties: { data: {} } }, { required: ["x402Version", "accepts"] }],
      });
      // Another coin per era: an answer paid for once is a free cache hit for the next caller.
      const [i, id] = era === "legacy" ? [1, "ethereum"] : [2, "cardano"];
      const required = expect402((await client.callTool({ name: "cex_market", arguments: { id } })) as Result);
      const before = await stack.balanceOf(payer(i).address);
      const paid = (await client.callTool({ name: "cex_market", arguments: { id }, _meta: { "x402/payment": await pay(i, required) } })) as Result;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ data: { id } });
      expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer: payer(i).address });
      expect(await stack.balanceOf(payer(i).address)).toBe(before - 5000n);
    } finally {
      await client.close();
    }
  });

  it("the v1 client (1.32.2) takes the 402 with structuredContent after listing the tools (the output schema admits it)", async () => {
    const client = new ClientV1({ name: "t", version: "1" });
    await client.connect(new TransportV1(new URL(mcpUrl())));
    try {
      await client.listTools(); // the v1 client then validates structuredContent, error results included
      expect402((await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as Result);
    } finally {
      await client.close();
    }
  });

  it("a raw 2026-07-28 exchange with fetch: server/discover, then tools/call free and paid with the _meta envelope, no session", async () => {
    const discover = await modernCall(mcpUrl(), "server/discover", {});
    expect(discover.headers.get("mcp-session-id")).toBeNull();
    expect(discover.body.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "marketgate" } },
    });
    expect(discover.body.result.instructions).toMatch(/x402\/payment/);

    const free = await modernCall(mcpUrl(), "tools/call", { name: "service_status", arguments: {} });
    expect(free.headers.get("mcp-session-id")).toBeNull();
    const status = free.body.result as RawResult;
    expect(status).toMatchObject({ resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "marketgate" } } });
    expect(status.isError).toBeFalsy();
    expect(status.structuredContent).toEqual(textOf(status));

    const unpaid = (await modernCall(mcpUrl(), "tools/call", { name: "cex_market", arguments: { id: "solana" } })).body.result as RawResult;
    const required = expect402(unpaid);
    const i = 3;
    const before = await stack.balanceOf(payer(i).address);
    const paid = (await modernCall(mcpUrl(), "tools/call", { name: "cex_market", arguments: { id: "solana" }, _meta: { "x402/payment": await pay(i, required) } })).body
      .result as RawResult;
    expect(paid).toMatchObject({ resultType: "complete", structuredContent: { data: { id: "solana" } }, _meta: { "x402/payment-response": { success: true } } });
    expect(await stack.balanceOf(payer(i).address)).toBe(before - 5000n);
  });

  it("Authorization: Bearer <credits session token> pays from credits on both eras, exactly the price; a bad token is a clear isError that charges nothing", async () => {
    const i = 4;
    await topUp(i, "0.2");
    // The session token a SIWX-signed call mints (result _meta["marketgate/credits"].session).
    const signed = await v2("legacy");
    const first = (await signed.callTool({
      name: "test_counter",
      arguments: { label: "sign-in" },
      _meta: { "x402/sign-in-with-x": await siwxHeader(payer(i).privateKey, mcpUrl()) },
    })) as Result;
    await signed.close();
    const token = (first._meta?.["marketgate/credits"] as { session: string }).session;
    expect(token).toMatch(/^v1\.0x[0-9a-f]{40}\.\d+\./);

    const onChain = await stack.balanceOf(payer(i).address);
    for (const era of ["legacy", "modern"] as const) {
      const client = await v2(era, { Authorization: `Bearer ${token}` });
      try {
        const before = await balance(i);
        const r = (await client.callTool({ name: "test_counter", arguments: { label: `bearer-${era}` } })) as Result;
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
        expect(r.structuredContent).toMatchObject({ label: `bearer-${era}` });
        expect(r._meta?.["marketgate/credits"]).toMatchObject({ wallet: payer(i).address.toLowerCase() });
        expect(await balance(i)).toBe(before - 20_000);
      } finally {
        await client.close();
      }
    }
    const raw = await modernCall(mcpUrl(), "tools/call", { name: "test_counter", arguments: { label: "bearer-raw" } }, { Authorization: `Bearer ${token}` });
    expect((raw.body.result as RawResult).structuredContent).toMatchObject({ label: "bearer-raw" });
    expect(await stack.balanceOf(payer(i).address)).toBe(onChain);

    const expired = token.replace(/\.(\d+)\./, (_m, exp: string) => `.${Number(exp) - 3600}.`);
    for (const bad of [expired, "not-a-token"]) {
      const before = await balance(i);
      const client = await v2("legacy", { Authorization: `Bearer ${bad}` });
      try {
        const r = (await client.callTool({ name: "test_counter", arguments: { label: "bad-bearer" } })) as Result;
        expect(r.isError).toBe(true);
        expect(textOf(r).error).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/^Authorization: Bearer refused: invalid_credits_session/) });
        // A free tool is not refused for a stale token.
        expect(((await client.callTool({ name: "service_status", arguments: {} })) as Result).isError).toBeFalsy();
      } finally {
        await client.close();
      }
      expect(await balance(i)).toBe(before);
    }
  });
});
