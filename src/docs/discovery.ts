import { isFree, type AnyTool } from "../registry/tool.js";
import { jsonSchema, splitInput } from "./json-schema.js";
import { routeTemplate, type PriceBook } from "./pricing.js";
import type { ServiceInfo } from "./openapi.js";

function absolute(info: ServiceInfo, path: string): string {
  return `${info.publicUrl ?? ""}${path}`;
}

/**
 * `/.well-known/x402.json`: every paid resource with its requirements, input and output schema
 * (x402 draft well-known discovery shape: `{x402Version, lastUpdated, items}`).
 */
export function buildX402Discovery(tools: readonly AnyTool[], prices: PriceBook, info: ServiceInfo, lastUpdated: string): Record<string, unknown> {
  const items = tools
    .filter((t) => !isFree(t))
    .map((t) => {
      const { path, rest } = splitInput(t);
      return {
        resource: absolute(info, routeTemplate(t.path)),
        type: "http",
        name: t.name,
        description: t.summary,
        accepts: [prices.get(t.name)],
        cacheTtlSec: t.cacheTtlSec,
        input: {
          type: "http",
          method: t.method,
          routeTemplate: routeTemplate(t.path),
          pathParams: { type: "object", properties: path },
          ...(t.method === "POST" ? { body: rest } : { queryParams: rest }),
        },
        output: { type: "json", schema: jsonSchema(t.output, "output") },
      };
    });
  return { x402Version: 2, lastUpdated, service: { name: info.name, version: info.version }, items };
}

/** `/.well-known/x402`: the short x402scan form (`{version, resources, instructions}`). */
export function buildX402WellKnown(tools: readonly AnyTool[], info: ServiceInfo): Record<string, unknown> {
  return {
    version: 1,
    resources: tools.filter((t) => !isFree(t)).map((t) => absolute(info, routeTemplate(t.path))),
    instructions: "Prices, schemas and cache TTLs: /.well-known/x402.json and /openapi.json. MCP (Streamable HTTP): /mcp.",
  };
}
