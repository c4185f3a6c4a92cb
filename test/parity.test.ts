import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maximaDefaults, withMcpMaxima } from "../mcp/maxima.js";
import { isMarketDataTool, requestPath } from "../src/registry/tool.js";
import { TOOLS } from "../tools/index.js";
import { startFreeStack, type FreeStack } from "./helpers/free-stack.js";
import { connectInMemory } from "./helpers/mcp.js";

/** Drops the fields that legitimately differ between two calls (time, cache flag, uptime). */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !["timestamp", "cached", "uptime_sec", "last_ok_at", "requests", "last_message_at", "lag_ms", "connected_since"].includes(k))
        .map(([k, x]) => [k, stable(x)]),
    );
  }
  return v;
}

describe("every market-data tool answers the same over HTTP and MCP, matching its output schema", () => {
  let s: FreeStack;
  let client: Client;
  beforeAll(async () => {
    s = await startFreeStack();
    client = await connectInMemory(s.service.mcp);
    await client.listTools(); // makes the SDK client validate structuredContent against each outputSchema
  });
  afterAll(async () => {
    await client?.close();
    await s?.close();
  });

  it.each(TOOLS.filter(isMarketDataTool).map((t) => [t.name, t] as const))("%s", async (_name, tool) => {
    // The example as MCP runs it (an absent field with an MCP maximum takes it: mcp/maxima.ts), sent over both.
    const args = withMcpMaxima(tool, tool.example, maximaDefaults(tool)) as typeof tool.example;
    const mcp = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
    expect(mcp.isError).toBeFalsy();
    const res = await fetch(`${s.url}${requestPath(tool, args)}`, { method: tool.method });
    expect(res.status).toBe(200);
    const http = await res.json();
    expect(() => tool.output.parse(http)).not.toThrow();
    expect(() => tool.output.parse(mcp.structuredContent)).not.toThrow();
    expect(stable(http)).toEqual(stable(mcp.structuredContent));
  });
});
