import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { selectTools } from "../../mcp/toolsets.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { connectInMemory } from "../helpers/mcp.js";

const textOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

describe("MCP over an in-memory transport (payments off)", () => {
  let s: FreeStack;
  let client: Client;
  beforeAll(async () => {
    s = await startFreeStack();
    client = await connectInMemory(s.service.mcp);
  });
  afterAll(async () => {
    await client?.close();
    await s?.close();
  });

  it("lists every registry tool with schemas, annotations and price metadata", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    const history = tools.find((t) => t.name === "cex_market_history")!;
    expect(history.inputSchema.properties).toHaveProperty("days");
    expect(history.outputSchema?.properties).toHaveProperty("data");
    expect(history.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    expect(history._meta).toMatchObject({ "marketgate/price-usd": "0.01", "marketgate/cache-ttl-sec": 300, "marketgate/http": "GET /api/v1/market/:id/history" });
  });

  it("calls a tool: structuredContent plus text, and the data source in _meta", async () => {
    const r = (await client.callTool({ name: "cex_prices", arguments: { symbols: "btc,xrp" } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(Object.keys((r.structuredContent as { data: object }).data).sort()).toEqual(["btc", "xrp"]);
    expect(textOf(r)).toEqual(r.structuredContent);
    expect(r._meta).toMatchObject({ "marketgate/data-source": "simulated", "marketgate/cache": "MISS" });
    const again = (await client.callTool({ name: "cex_prices", arguments: { symbols: "xrp,btc" } })) as CallToolResult;
    expect(again._meta).toMatchObject({ "marketgate/cache": "HIT" });
    expect((again.structuredContent as { meta: { cached: boolean } }).meta.cached).toBe(true);
  });

  it("returns isError results with the HTTP error codes", async () => {
    const bad = (await client.callTool({ name: "cex_market_history", arguments: { id: "bitcoin", days: 5 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatchObject({ error: { code: "BAD_REQUEST", details: [{ field: "days" }] } });
    const unknown = (await client.callTool({ name: "cex_market", arguments: { id: "nope" } })) as CallToolResult;
    expect(textOf(unknown)).toMatchObject({ error: { code: "UNKNOWN_SYMBOL" } });
    const noTool = (await client.callTool({ name: "no_such_tool", arguments: {} })) as CallToolResult;
    expect(textOf(noTool)).toMatchObject({ error: { code: "NOT_FOUND" } });
    s.sim.faults.inject("coingecko", { kind: "rate_limit", retryAfterSec: 60 }, Infinity);
    const down = (await client.callTool({ name: "cex_market", arguments: { id: "litecoin" } })) as CallToolResult;
    s.sim.faults.clear();
    expect(textOf(down)).toMatchObject({ error: { code: "UPSTREAM_UNAVAILABLE" } });
  });
});

describe("MCP over stdio (npx marketgate mcp)", () => {
  let s: FreeStack;
  let client: Client;
  beforeAll(async () => {
    s = await startFreeStack();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", "bin/marketgate.ts", "mcp"],
      env: { PATH: process.env.PATH ?? "", ...simEnv(s.sim), LOG_LEVEL: "silent" },
      stderr: "pipe",
    });
    client = new Client({ name: "test", version: "0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await s?.close();
  });

  it("lists and calls tools without payment", async () => {
    // MCP_TOOLSETS unset: the default toolsets (mcp/toolsets.ts).
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(selectTools(TOOLS, undefined).map((t) => t.name));
    const r = (await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ success: true, data: { id: "bitcoin", source: "coingecko (simulated)" } });
  });
});

describe("MCP over stdio with MCP_TOOLSETS", () => {
  it("lists the chosen toolsets only, and still calls any tool by name", async () => {
    const s = await startFreeStack();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", "bin/marketgate.ts", "mcp"],
      env: { PATH: process.env.PATH ?? "", ...simEnv(s.sim), LOG_LEVEL: "silent", MCP_TOOLSETS: "dex,service" },
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "0" });
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(selectTools(TOOLS, "dex,service").map((t) => t.name));
      const r = (await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
      await s.close();
    }
  }, 60_000);
});

describe("MCP over Streamable HTTP with x402 payments", () => {
  let stack: OfflineStack;
  let client: Client;
  beforeAll(async () => {
    stack = await startOfflineStack();
    client = new Client({ name: "test", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await stack?.close();
  });

  it("publishes x402 prices in tools/list _meta", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "cex_prices")!._meta).toMatchObject({ "x402/price": { amountUsd: "0.005", network: "eip155:8453", amount: "5000" } });
  });

  it("asks for payment with an isError PaymentRequired, then settles a paid call and returns the receipt", async () => {
    const payer = stack.payers[2]!;
    const unpaid = (await client.callTool({ name: "cex_market", arguments: { id: "ethereum" } })) as CallToolResult;
    expect(unpaid.isError).toBe(true);
    const required = textOf(unpaid) as PaymentRequired;
    // The Bazaar lists the tool under (the service's /mcp URL, tool name).
    expect(required.extensions?.bazaar).toMatchObject({ info: { input: { type: "mcp", toolName: "cex_market" } } });
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url: `${stack.url}/mcp`, serviceName: "marketgate" },
      accepts: [{ amount: "5000", payTo: stack.operator.address }],
    });

    const before = await stack.balanceOf(payer.address);
    const x402 = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey)));
    const payment = await x402.createPaymentPayload(required);
    const paid = (await client.callTool({ name: "cex_market", arguments: { id: "ethereum" }, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ data: { id: "ethereum" } });
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer: payer.address });
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);

    const replay = (await client.callTool({ name: "cex_market", arguments: { id: "solana" }, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(replay.isError).toBe(true);
    expect(textOf(replay).error).toMatch(/simulation_failed|nonce/);
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("answers GET on /mcp with 405", async () => {
    expect((await fetch(`${stack.url}/mcp`)).status).toBe(405);
  });
});
