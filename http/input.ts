import { z } from "zod";
import { parseToolInput } from "../src/core/input.js";
import { pathParams, type AnyTool } from "../src/registry/tool.js";

type Kind = "number" | "boolean" | "other";

/** The JSON type a query-string field must be coerced to, read from the tool's input JSON Schema. */
function kindOf(prop: Record<string, unknown> | undefined): Kind {
  if (!prop) return "other";
  const t = prop.type;
  if (t === "number" || t === "integer") return "number";
  if (t === "boolean") return "boolean";
  const values = (prop.enum as unknown[] | undefined) ?? (prop.const !== undefined ? [prop.const] : undefined);
  if (values?.length && values.every((v) => typeof v === "number")) return "number";
  return "other";
}

function coerce(value: unknown, kind: Kind): unknown {
  if (typeof value !== "string") return value;
  if (kind === "number") return value.trim() === "" ? value : Number(value);
  if (kind === "boolean") return value === "true" ? true : value === "false" ? false : value;
  return value;
}

/** The parts of an HTTP request a tool's input is read from. */
export interface RequestParts {
  params: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  body?: unknown;
}

/**
 * Reads a tool's input from a request: path params, then query (GET/DELETE) or JSON body (POST), with
 * query strings coerced to the schema's number/boolean types. Repeated query keys keep the last value.
 * @throws AppError BAD_REQUEST / UNKNOWN_SYMBOL (see parseToolInput).
 */
export function inputReader(tool: AnyTool): (req: RequestParts) => unknown {
  const schema = z.toJSONSchema(tool.input, { io: "input" }) as { properties?: Record<string, Record<string, unknown>> };
  const kinds = new Map(Object.entries(schema.properties ?? {}).map(([k, p]) => [k, kindOf(p)]));
  const params = pathParams(tool);
  return (req) => {
    const raw: Record<string, unknown> = tool.method === "POST" ? { ...((req.body as Record<string, unknown> | undefined) ?? {}) } : {};
    if (tool.method !== "POST") {
      for (const [k, v] of Object.entries(req.query)) {
        raw[k] = coerce(Array.isArray(v) ? v[v.length - 1] : v, kinds.get(k) ?? "other");
      }
    }
    for (const p of params) raw[p] = req.params[p];
    return parseToolInput(tool, raw);
  };
}
