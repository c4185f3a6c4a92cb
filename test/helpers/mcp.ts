import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "../../mcp/server.js";
import type { McpCatalog } from "../../mcp/catalog.js";

/** An MCP SDK client connected in memory to a server over `catalog` (no transport-level rate limit). */
export async function connectInMemory(catalog: McpCatalog): Promise<Client> {
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(catalog, { name: "marketgate", version: "test" }, (meta) => ({ meta })).connect(st);
  const client = new Client({ name: "test", version: "0" });
  await client.connect(ct);
  return client;
}
