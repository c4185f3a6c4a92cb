import { z } from "zod";
import { pathParams, type AnyTool } from "./tool.js";

/** A JSON Schema object (draft 2020-12). */
export type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

/** JSON Schema (draft 2020-12) of a zod schema without the `$schema` key, for OpenAPI 3.1 and discovery. */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const s = z.toJSONSchema(schema, { target: "draft-2020-12", io }) as JsonSchema;
  delete s.$schema;
  return s;
}

/**
 * JSON Schema draft-07 (declared in `$schema`) for MCP `tools/list`: the MCP SDK client validates results
 * with a draft-07 validator, which rejects 2020-12 tuples (`prefixItems`). `reused: "ref"` writes a sub-schema
 * used more than once (a shared zod schema) once, under `definitions`, and refers to it by `$ref`.
 */
export function mcpJsonSchema(schema: z.ZodType, io: "input" | "output", opts: { reused?: "ref" | "inline" } = {}): JsonSchema {
  const s = z.toJSONSchema(schema, { target: "draft-07", io, reused: opts.reused ?? "inline" }) as JsonSchema;
  // MCP requires `type: "object"` at the top; a union of object shapes (answer | warm-up body) qualifies.
  if (s.type === undefined && Array.isArray(s.anyOf)) return { type: "object", ...s };
  return s;
}

/** A tool's input split into path parameters and the rest (query for GET/DELETE, body for POST). */
export function splitInput(tool: AnyTool): { path: Record<string, JsonSchema>; rest: JsonSchema; restRequired: string[] } {
  const input = jsonSchema(tool.input, "input");
  const params = new Set(pathParams(tool));
  const path: Record<string, JsonSchema> = {};
  const rest: Record<string, JsonSchema> = {};
  for (const [k, v] of Object.entries(input.properties ?? {})) (params.has(k) ? path : rest)[k] = v;
  const restRequired = (input.required ?? []).filter((k) => !params.has(k));
  return { path, rest: { type: "object", properties: rest, ...(restRequired.length ? { required: restRequired } : {}) }, restRequired };
}

/** A tool's example input split like {@link splitInput}: path parameters, and the rest (query or body). */
export function splitExample(tool: AnyTool): { path: Record<string, string | number | boolean>; rest: Record<string, string | number | boolean> } {
  const params = new Set(pathParams(tool));
  const path: Record<string, string | number | boolean> = {};
  const rest: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(tool.example)) (params.has(k) ? path : rest)[k] = v;
  return { path, rest };
}
