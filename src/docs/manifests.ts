import type { StreamDef } from "../registry/stream.js";
import type { AnyTool } from "../registry/tool.js";
import { buildX402Discovery } from "./discovery.js";
import { buildOpenApi, type ServiceInfo } from "./openapi.js";
import type { PaymentOffers, PriceBook } from "./pricing.js";

/** Name under which the server is published in the MCP registry (must equal package.json `mcpName`). */
export const MCP_REGISTRY_NAME = "io.github.marketgate/marketgate";

/** The MCP registry `server.json` (schema 2025-12-11): the npm package run as `marketgate mcp` over stdio. */
export function buildServerJson(info: ServiceInfo): Record<string, unknown> {
  const env = (name: string, description: string, extra: Record<string, unknown> = {}) => ({ name, description, isRequired: false, ...extra });
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: MCP_REGISTRY_NAME,
    title: "marketgate",
    description: "Crypto market data for agents: CEX prices, market details and history (x402-paid over HTTP)",
    version: info.version,
    packages: [
      {
        registryType: "npm",
        identifier: "marketgate",
        version: info.version,
        runtimeHint: "npx",
        transport: { type: "stdio" },
        packageArguments: [{ type: "positional", value: "mcp" }],
        environmentVariables: [
          env("DATA_MODE", "live (real venues, default) or sim (local simulator)", { default: "live", choices: ["live", "sim"] }),
          env("COINGECKO_API_KEY", "CoinGecko Demo or Pro API key (optional; raises the rate budget)", { isSecret: true }),
          env("COINGECKO_PLAN", "public, demo or pro (default: demo when a key is set, else public)"),
          env("MCP_PAYMENTS", "true to charge x402 payments over stdio too (needs PAY_TO and a facilitator)", { default: "false" }),
        ],
      },
    ],
  };
}

/** The three generated manifests, keyed by file name under `manifest/`; `streams` is the STREAMS registry. */
export function buildManifests(
  tools: readonly AnyTool[],
  prices: PriceBook,
  info: ServiceInfo,
  lastUpdated: string,
  offers: PaymentOffers = {},
  streams: readonly StreamDef[] = [],
): Record<string, unknown> {
  return {
    "openapi.json": buildOpenApi(tools, prices, info, offers, streams),
    "x402.json": buildX402Discovery(tools, prices, info, lastUpdated, offers, streams),
    "server.json": buildServerJson(info),
  };
}
