import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { loadConfig } from "../src/config.js";
import { logger } from "../src/lib/log.js";
import { createService } from "../src/service.js";
import { createMcpServer } from "./server.js";

/**
 * MCP over stdio for the operator's own agent: every tool, payments off unless `MCP_PAYMENTS=true`
 * (then paid tools expect `_meta["x402/payment"]` as over HTTP), with the live streams and the alert
 * scheduler running as under HTTP. Logs go to stderr only.
 */
export async function runStdio(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(env);
  const service = await createService({ config, paymentsOff: !config.mcpStdioPayments });
  const server = createMcpServer(service.mcp, { name: service.info.name, version: service.info.version }, (meta) => ({ meta }));
  await server.connect(new StdioServerTransport());
  await service.startStreams();
  // Alerts created over stdio are evaluated and delivered by this process too.
  service.alerts?.start();
  logger.info({ dataMode: config.dataMode, payments: config.mcpStdioPayments }, "marketgate MCP server on stdio");
}
