/**
 * `marketgate mcp` over stdio serves both MCP protocol eras (issue 32, item 4) on the SDK v2's `serveStdio`: a client
 * that opens with `initialize` gets `2025-11-25` for the connection, one that opens with `server/discover` the
 * stateless `2026-07-28`. Spawned as a host spawns it (the v1 client's run is in stdio-lifecycle.test.ts).
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describe, expect, it } from "vitest";
import { selectTools } from "../../mcp/toolsets.js";
import { TOOLS } from "../../tools/index.js";
import { MODERN, textOf } from "../helpers/mcp.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARGS = ["--import", "tsx", "bin/marketgate.ts", "mcp", "--sim"];
const ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };

// Each run starts a server process through tsx: slow on a loaded machine.
describe("marketgate mcp --sim over stdio: both protocol eras (SDK client 2.4.0)", { timeout: 120_000 }, () => {
  it.each(["legacy", "modern"] as const)("the %s era lists the default toolsets and calls a tool", async (era) => {
    const client = new Client({ name: "stdio-eras", version: "0" }, era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ARGS, cwd: ROOT, env: ENV, stderr: "ignore" }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(era === "modern" ? MODERN : "2025-11-25");
      expect(client.getInstructions()).toMatch(/x402\/payment/);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(selectTools(TOOLS, undefined).map((t) => t.name));
      const r = await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ success: true, data: { id: "bitcoin", source: "coingecko (simulated)" } });
      expect(r.structuredContent).toEqual(textOf(r as { content: unknown[] }));
      expect(r._meta).toMatchObject({ "marketgate/data-source": "simulated" });
      // Arguments that do not fit the tool: an isError result, on either era.
      const bad = await client.callTool({ name: "cex_market", arguments: { id: 5 } });
      expect(bad.isError).toBe(true);
      expect(textOf(bad as { content: unknown[] }).error.code).toBe("BAD_REQUEST");
    } finally {
      await client.close();
    }
  });
});
