import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "../../mcp/server.js";
import type { McpCatalog } from "../../mcp/catalog.js";

/**
 * An MCP SDK client connected in memory to a server over `catalog` (no transport-level rate limit), listing the
 * `toolsets` of mcp/toolsets.ts (default `all`: every tool, so that the SDK client knows each output schema).
 */
export async function connectInMemory(catalog: McpCatalog, toolsets = "all"): Promise<Client> {
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(catalog, { name: "marketgate", version: "test" }, (meta) => ({ meta }), { toolsets }).connect(st);
  const client = new Client({ name: "test", version: "0" });
  await client.connect(ct);
  return client;
}
