import { Server, type CallToolResult, type Tool } from "@modelcontextprotocol/server";
import type { ToolResult } from "../client/mcp.js";
import { COST_META } from "../client/mcp-meta.js";
import { scrubUrls } from "../lib/redact.js";

/** The remote's tools, listed once and kept (a stateless remote's list does not change while the bridge runs). */
export interface RemoteTools {
  /** @throws the remote's error when it cannot be listed (asked again next time). */
  list(): Promise<Tool[]>;
}

/** What the bridge server needs. */
export interface BridgeServerDeps {
  tools: RemoteTools;
  /** Runs one `tools/call` (paying as needed); its result carries `_meta["marketgate/cost"]`. */
  call(params: { name: string; arguments?: Record<string, unknown> }): Promise<ToolResult>;
  /** Identity announced to the host. */
  info: { name: string; version: string };
  /** One sentence on the budget, for the server's instructions. */
  budgetNote: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The USD price a listed tool states in its `_meta` (`x402/price.amountUsd`, marketgate's listing), if any. */
export function listedPriceUsd(tool: Tool): string | undefined {
  const price = tool._meta?.["x402/price"];
  return isObject(price) && typeof price.amountUsd === "string" ? price.amountUsd : undefined;
}

/**
 * A remote tool as the bridge lists it: unchanged, except that a paid tool whose description does not state a
 * price gets one (marketgate's descriptions already end with "Price: … USDC per call").
 */
export function bridgedTool(tool: Tool): Tool {
  const price = listedPriceUsd(tool);
  // "Price:" as marketgate writes it; the word alone may be the data ("the spot price of…").
  if (!price || /\bprice:/i.test(tool.description ?? "")) return tool;
  const description = `${tool.description ?? ""}${tool.description ? " " : ""}Price: ${price} USD per call (paid by the bridge within its budget).`;
  return { ...tool, description };
}

/**
 * The bridge's MCP server (v2 SDK `Server`, served on stdio by `serveStdio` to both protocol eras): `tools/list`
 * is the remote's list ({@link bridgedTool}), `tools/call` goes through `deps.call`. A remote that fails is an
 * `isError` result naming the failure (URLs in it redacted), never a crash of the bridge.
 */
export function createBridgeServer(deps: BridgeServerDeps): Server {
  const server = new Server(deps.info, {
    capabilities: { tools: { listChanged: false } },
    instructions: `Tools of a remote paid MCP server, called through marketgate connect, which pays for them from the user's wallet (x402, or prepaid credits). ${deps.budgetNote} Each result's _meta["${COST_META}"] says what the call cost.`,
  });
  server.setRequestHandler("tools/list", async () => ({ tools: (await deps.tools.list()).map(bridgedTool) }));
  server.setRequestHandler("tools/call", async (req) => {
    // The host's own `_meta` (progress tokens, protocol envelope) is not forwarded: payment `_meta` is the bridge's to set.
    const { name, arguments: args } = req.params;
    try {
      return (await deps.call({ name, arguments: args })) as CallToolResult;
    } catch (err) {
      return { isError: true, content: [{ type: "text", text: `marketgate connect: the remote call failed: ${scrubUrls((err as Error).message)}` }] };
    }
  });
  return server;
}
