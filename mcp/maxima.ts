import { z } from "zod";
import { AppError } from "../src/errors.js";
import type { AnyTool } from "../src/registry/tool.js";

/*
 * The MCP maxima of numeric input fields (`mcpMaxima` in src/registry/tool.ts): lower than HTTP's, so that one
 * result fits a model's context; the rest is read page by page with the tool's cursor.
 */

/** A JSON Schema property as far as the maxima touch it. */
interface NumericProp {
  maximum?: number;
  default?: unknown;
  [k: string]: unknown;
}

/**
 * `schema` (a tool's MCP input JSON Schema) with each MCP maximum as the field's `maximum`, and as its `default`
 * where the field has none or a larger one (what {@link withMcpMaxima} sends for an absent field).
 */
export function schemaWithMcpMaxima<S extends { properties?: object }>(t: AnyTool, schema: S): S {
  if (!t.mcpMaxima || !schema.properties) return schema;
  const properties: Record<string, object> = { ...(schema.properties as Record<string, object>) };
  for (const [field, max] of Object.entries(t.mcpMaxima)) {
    const prop = properties[field] as NumericProp | undefined;
    if (!prop) continue;
    const larger = typeof prop.default !== "number" || prop.default > max;
    properties[field] = { ...prop, maximum: max, ...(larger ? { default: max } : {}) };
  }
  return { ...schema, properties };
}

/**
 * The `tools/call` arguments of `t` within its MCP maxima: an absent field whose default exceeds its maximum (or
 * that has none) is set to the maximum; other arguments are left as they are.
 * @throws AppError BAD_REQUEST (an isError result) naming the field, its MCP maximum and the cursor to page with.
 */
export function withMcpMaxima(t: AnyTool, args: unknown, defaults: ReadonlyMap<string, unknown>): unknown {
  if (!t.mcpMaxima) return args;
  const a = args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { ...a };
  for (const [field, max] of Object.entries(t.mcpMaxima)) {
    const v = a[field];
    if (v === undefined) {
      const d = defaults.get(field);
      if (typeof d !== "number" || d > max) out[field] = max;
    } else if (typeof v === "number" && v > max) {
      const message = `at most ${max} over MCP (larger answers do not fit a model's context); read further pages with cursor = next_cursor`;
      throw new AppError("BAD_REQUEST", `invalid input: ${field}: ${message}`, { details: [{ field, message }] });
    }
  }
  return out;
}

/** The input defaults of `t`'s fields that have an MCP maximum (for {@link withMcpMaxima}), read once per tool. */
export function maximaDefaults(t: AnyTool): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!t.mcpMaxima) return out;
  const schema = z.toJSONSchema(t.input, { io: "input" }) as { properties?: Record<string, NumericProp> };
  for (const field of Object.keys(t.mcpMaxima)) out.set(field, schema.properties?.[field]?.default);
  return out;
}
