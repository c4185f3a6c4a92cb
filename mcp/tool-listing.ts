import type { Tool } from "@modelcontextprotocol/server";
import { mcpJsonSchema } from "../src/registry/json-schema.js";
import { isFree, type AnyTool } from "../src/registry/tool.js";
import { schemaWithMcpMaxima } from "./maxima.js";

/*
 * How a tool reads in MCP `tools/list`: what a model needs to call it right, within the listing budget of
 * mcp/toolsets.ts. The long method text (sources, formulas, edge cases) stays in `description`, which OpenAPI,
 * /llms-full.txt and the docs show; the server's instructions point there (mcp/server.ts).
 */

/** `text` ending in one full stop. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** What a call costs, as the listing says it: free, a fixed USDC price (and how long repeats are free), or a price that depends on the input. */
export function priceText(t: AnyTool): string {
  if (isFree(t)) return "Free.";
  const repeats = t.cacheTtlSec > 0 ? `; identical calls within ${t.cacheTtlSec}s free` : "";
  return t.priceOf ? `Price: set by the input, at least ${t.priceUsd} USDC${repeats}.` : `Price: ${t.priceUsd} USDC per call${repeats}.`;
}

/**
 * The MCP description of a tool: its summary, its `mcpNote` when it has one, how to sign in for a `siwx` tool, and
 * its price. Units and parameter meanings are in the input schema's descriptions.
 */
export function mcpDescription(t: AnyTool): string {
  const parts = [sentence(t.summary)];
  if (t.mcpNote) parts.push(sentence(t.mcpNote));
  if (t.auth === "siwx") parts.push('Sign in: a SIWX proof in _meta["x402/sign-in-with-x"] (without one: a 402 with the challenge).');
  parts.push(priceText(t));
  return parts.join(" ");
}

/**
 * `schema` without what a model does not need and the server checks anyway: the `$schema` keyword, and a
 * `pattern` beside a `format` that says the same (zod writes the 500-character ISO 8601 expression of
 * `format: "date-time"` out in full).
 */
function compact(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compact);
  if (!schema || typeof schema !== "object") return schema;
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "$schema") continue;
    if (k === "pattern" && typeof s.format === "string") continue;
    out[k] = k === "const" || k === "enum" || k === "default" || k === "examples" ? v : compact(v);
  }
  return out;
}

/**
 * The MCP input schema of a tool: JSON Schema of its input, compacted (no `$schema`, no pattern beside a format),
 * with its MCP maxima (mcp/maxima.ts).
 */
export function mcpInputSchema(t: AnyTool): Tool["inputSchema"] {
  return schemaWithMcpMaxima(t, compact(mcpJsonSchema(t.input, "input")) as Tool["inputSchema"]);
}

/** zod's bounds of `z.number().int()` (the safe-integer range): they say nothing a client needs. */
const SAFE_INTEGER_BOUNDS = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

/** `schema` without the safe-integer bounds zod writes on every integer (see {@link SAFE_INTEGER_BOUNDS}). */
function withoutSafeIntegerBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutSafeIntegerBounds);
  if (!schema || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if ((k === "minimum" || k === "maximum") && v === SAFE_INTEGER_BOUNDS[k]) continue;
    out[k] = k === "const" || k === "enum" || k === "default" || k === "examples" ? v : withoutSafeIntegerBounds(v);
  }
  return out;
}

/** Keys whose value is a sub-schema, and keys whose value is a list or a map of sub-schemas. */
const SCHEMA_KEYS = new Set(["items", "additionalProperties", "propertyNames", "not", "contains", "if", "then", "else"]);
const SCHEMA_LIST_KEYS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const SCHEMA_MAP_KEYS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/** Calls `visit` on every sub-schema below `schema` (not `schema` itself), children first. */
function eachSubSchema(schema: unknown, visit: (node: Record<string, unknown>) => void): void {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return;
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    const children = SCHEMA_KEYS.has(k) ? [v] : SCHEMA_LIST_KEYS.has(k) && Array.isArray(v) ? v : SCHEMA_MAP_KEYS.has(k) && v && typeof v === "object" ? Object.values(v) : [];
    for (const c of children) {
      if (!c || typeof c !== "object" || Array.isArray(c)) continue;
      eachSubSchema(c, visit);
      visit(c as Record<string, unknown>);
    }
  }
}

/** Shortest sub-schema worth a definition: below it a `$ref` and its definition cost more than the copies. */
const MIN_SHARED_CHARS = 120;

/**
 * `schema` (a JSON object, not shared with anyone) with each sub-schema that occurs more than once, and is at least
 * {@link MIN_SHARED_CHARS} long, written once under `definitions` (`d0`, `d1`, ...) and referred to by `$ref`, the
 * largest first. zod's own `reused: "ref"` does this by schema identity and for every size, which lengthens the
 * listing (a `$ref` for each shared `z.number()`); this goes by content and only where it saves characters.
 */
export function shareRepeatedSubSchemas(schema: Record<string, unknown>): Record<string, unknown> {
  const definitions: Record<string, unknown> = {};
  for (let round = 0; round < 50; round++) {
    const counts = new Map<string, number>();
    eachSubSchema(schema, (node) => {
      if (typeof node.$ref === "string") return;
      const json = JSON.stringify(node);
      if (json.length >= MIN_SHARED_CHARS) counts.set(json, (counts.get(json) ?? 0) + 1);
    });
    let best: string | undefined;
    for (const [json, n] of counts) if (n > 1 && (best === undefined || json.length > best.length)) best = json;
    if (best === undefined) break;
    const name = `d${Object.keys(definitions).length}`;
    definitions[name] = JSON.parse(best);
    const ref = `#/definitions/${name}`;
    eachSubSchema(schema, (node) => {
      if (JSON.stringify(node) !== best) return;
      for (const k of Object.keys(node)) delete node[k];
      node.$ref = ref;
    });
  }
  return Object.keys(definitions).length ? { ...schema, definitions: { ...(schema.definitions as object | undefined), ...definitions } } : schema;
}

/**
 * The MCP output schema of a tool (draft-07, declared: the SDK client validates `structuredContent` with it): no
 * pattern beside a format, no safe-integer bounds, and each repeated sub-schema written once
 * ({@link shareRepeatedSubSchemas}).
 */
export function mcpOutputSchema(t: AnyTool): Tool["outputSchema"] {
  const s = mcpJsonSchema(t.output, "output");
  const out = shareRepeatedSubSchemas(withoutSafeIntegerBounds(compact(s)) as Record<string, unknown>);
  return { $schema: s.$schema, ...out } as unknown as Tool["outputSchema"];
}

/**
 * JSON Schema of the x402 `PaymentRequired` object a paying tool answers (with `isError: true`) when a call carries
 * no payment or a refused one (x402 MCP transport: `structuredContent` and `content[0].text` both hold it).
 */
const PAYMENT_REQUIRED_SCHEMA = {
  type: "object",
  description: "isError: x402 PaymentRequired. Pay one of `accepts` in _meta['x402/payment'] of the same call, or sign in for credits (extensions['sign-in-with-x']).",
  required: ["x402Version", "accepts"],
  properties: {
    x402Version: { type: "integer" },
    error: { type: "string" },
    resource: { type: "object" },
    accepts: { type: "array", items: { type: "object" } },
    extensions: { type: "object" },
  },
} as const;

/**
 * `schema` (an MCP output schema) that also admits the x402 `PaymentRequired` object: `{type: "object", anyOf:
 * [<the answer>, <PaymentRequired>]}`, `$schema` and `definitions` kept at the root (where the `$ref`s point).
 * For tools that may answer 402: the x402 MCP transport puts the PaymentRequired in `structuredContent` of an
 * `isError` result, and MCP clients before the TypeScript SDK 2.x (1.32.2 included) validate `structuredContent`
 * against the output schema even on `isError` results (typescript-sdk issue #1943), so the schema must admit it.
 */
export function withPaymentRequired(schema: Tool["outputSchema"]): Tool["outputSchema"] {
  const { $schema, definitions, ...answer } = schema as Record<string, unknown>;
  return {
    ...($schema === undefined ? {} : { $schema }),
    type: "object",
    anyOf: [answer, PAYMENT_REQUIRED_SCHEMA],
    ...(definitions === undefined ? {} : { definitions }),
  } as unknown as Tool["outputSchema"];
}
