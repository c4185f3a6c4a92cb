import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpOutputSchema, shareRepeatedSubSchemas } from "../../mcp/tool-listing.js";
import { DEFAULT_TOOLSETS, selectTools, TOOLS_LIST_BUDGET_CHARS, TOOLSET_GROUPS, toolsetNames, toolsetOf } from "../../mcp/toolsets.js";
import { outputExample } from "../../src/registry/output-example.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

/** What a model reads of a listing: each tool's name, description and input schema (JSON), in characters. */
function modelVisibleChars(tools: readonly Tool[]): number {
  return tools.reduce((n, t) => n + t.name.length + (t.description ?? "").length + JSON.stringify(t.inputSchema).length, 0);
}

/** An MCP SDK client over Streamable HTTP to `/mcp` with `query` (e.g. `?toolsets=perp`). */
async function connect(url: string, query = ""): Promise<Client> {
  const client = new Client({ name: "budget-test", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp${query}`)));
  return client;
}

describe("tools/list fits a model's context (6k tokens = 24,000 characters by default)", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());

  it("lists the default toolsets within the budget, each tool with a short description that states its price", async () => {
    const client = await connect(s.url);
    try {
      const { tools } = await client.listTools();
      const expected = TOOLS.filter((t) => DEFAULT_TOOLSETS.includes(toolsetOf(t)));
      expect(tools.map((t) => t.name)).toEqual(expected.map((t) => t.name));
      expect(tools.length).toBeGreaterThanOrEqual(20);
      expect(modelVisibleChars(tools)).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_CHARS);
      for (const t of tools) {
        expect(t.description!.length, t.name).toBeLessThanOrEqual(400);
        expect(t.description, t.name).toMatch(/(Free\.|Price: .*USDC.*\.)$/);
        // The 500-character ISO 8601 expression zod writes beside format: date-time is not repeated to the model.
        expect(JSON.stringify(t.inputSchema), t.name).not.toContain('"pattern":"^(?:(?:\\\\d\\\\d[2468]');
        expect(t.inputSchema, t.name).not.toHaveProperty("$schema");
      }
      const history = tools.find((t) => t.name === "dex_price_history")!;
      expect(JSON.stringify(history.inputSchema).length).toBeLessThan(1000);
      expect(history.inputSchema.properties!.start).toMatchObject({ type: "string", format: "date-time" });
    } finally {
      await client.close();
    }
  });

  it("lists each toolset within the budget; perp names funding, futures and liquidations", async () => {
    for (const name of toolsetNames(TOOLS).filter((n) => n !== "all")) {
      const client = await connect(s.url, `?toolsets=${name}`);
      try {
        const { tools } = await client.listTools();
        expect(
          tools.map((t) => t.name),
          name,
        ).toEqual(selectTools(TOOLS, name).map((t) => t.name));
        expect(tools.length, name).toBeGreaterThan(0);
        expect(modelVisibleChars(tools), name).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_CHARS);
      } finally {
        await client.close();
      }
    }
    const client = await connect(s.url, "?toolsets=perp,dex");
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      const sets = [...TOOLSET_GROUPS.perp!, "dex"];
      expect(names).toEqual(TOOLS.filter((t) => sets.includes(toolsetOf(t))).map((t) => t.name));
      expect(names).toEqual(expect.arrayContaining(["funding_rate", "open_interest", "liquidation_heatmap", "dex_price"]));
      expect(names).not.toContain("cex_prices");
      // A tool outside the listing is still callable by name.
      const r = (await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("lists every tool with ?toolsets=all, and refuses an unknown toolset with 400 naming the known ones", async () => {
    const client = await connect(s.url, "?toolsets=all");
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    } finally {
      await client.close();
    }
    expect(() => selectTools(TOOLS, "all,nope")).toThrow(/'nope'/);
    expect(selectTools(TOOLS, "default,alerts").map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    const res = await fetch(`${s.url}/mcp?toolsets=perp,nope`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("BAD_REQUEST");
    expect(body.error.message).toContain("'nope'");
    expect(body.error.message).toContain("perp");
  });

  it("sets every annotation of every tool deliberately (top-up additive, caps replaced)", async () => {
    const client = await connect(s.url, "?toolsets=all");
    try {
      const { tools } = await client.listTools();
      for (const t of tools) {
        for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const)
          expect(typeof t.annotations?.[hint], `${t.name} ${hint}`).toBe("boolean");
      }
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(byName.get("credits_top_up")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      expect(byName.get("credits_set_caps")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(byName.get("cex_prices")!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    } finally {
      await client.close();
    }
  });
});

describe("toolsets as documented", () => {
  it("names every toolset in docs/mcp.md, with the tools of each", () => {
    const doc = readFileSync(new URL("../../docs/mcp.md", import.meta.url), "utf8");
    for (const name of toolsetNames(TOOLS)) expect(doc, name).toContain(`| \`${name}\` |`);
    for (const t of TOOLS.filter((t) => toolsetOf(t) !== "alerts")) expect(doc, t.name).toContain(`\`${t.name}\``);
  });
});

describe("output schemas written once per repeated part", () => {
  it("moves a repeated sub-schema to definitions and refers to it", () => {
    const venue = { type: "object", properties: { venue: { type: "string", description: "exchange name" }, rate_pct: { type: "number", description: "funding rate, percent" } } };
    const schema = { type: "object", properties: { highest: structuredClone(venue), lowest: structuredClone(venue), all: { type: "array", items: structuredClone(venue) } } };
    const shared = shareRepeatedSubSchemas(schema) as { properties: Record<string, unknown>; definitions: Record<string, unknown> };
    expect(shared.definitions).toEqual({ d0: venue });
    expect(shared.properties.highest).toEqual({ $ref: "#/definitions/d0" });
    expect(shared.properties.all).toEqual({ type: "array", items: { $ref: "#/definitions/d0" } });
    // Short repeats stay inline: a $ref and its definition would cost more.
    const small = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } };
    expect(shareRepeatedSubSchemas(structuredClone(small))).toEqual(small);
  });

  it("keeps every tool's output schema valid for its answers (the SDK client's validator accepts each example)", () => {
    const ajv = new AjvJsonSchemaValidator();
    for (const t of TOOLS) {
      const check = ajv.getValidator(mcpOutputSchema(t) as Parameters<typeof ajv.getValidator>[0]);
      expect(check(outputExample(t)).valid, t.name).toBe(true);
      expect(check({ unexpected: true }).valid, t.name).toBe(false);
    }
  });
});
