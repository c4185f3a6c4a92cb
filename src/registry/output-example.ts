import type { AnyTool } from "./tool.js";
import { jsonSchema, type JsonSchema } from "./json-schema.js";

/*
 * Output examples for discovery (x402 Bazaar `output.example`, OpenAPI 200 examples), generated from each
 * tool's output schema: the registry stays the single source, an example can never drift from its schema
 * (test/docs/openapi-docs.test.ts parses every one with the tool's zod output schema), and it stays small
 * (required fields only, one item per array, one key per map), because the 402's `PAYMENT-REQUIRED` header
 * carries it (see {@link bazaarOutputExample}) and a paying client echoes it back in `PAYMENT-SIGNATURE`.
 */

/** The fixed time every generated timestamp shows. */
const EXAMPLE_TIME = "2026-01-01T00:00:00.000Z";
/** String fields that hold a time (ISO 8601), by name. */
const TIME_FIELD = /(^|_)(at|time|timestamp|since|start|end|date)$/;

/** Values of the tool's example input, reused for output fields of the same name (`symbol`, `period`, ...). */
type Hints = Readonly<Record<string, string | number | boolean>>;

function firstType(s: JsonSchema): string | undefined {
  const t = s.type;
  if (Array.isArray(t)) return (t as string[]).find((x) => x !== "null") ?? (t[0] as string | undefined);
  return typeof t === "string" ? t : undefined;
}

function numberIn(s: JsonSchema, integer: boolean): number {
  const min = typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum + (integer ? 1 : 0.5) : undefined;
  const max = typeof s.maximum === "number" ? s.maximum : typeof s.exclusiveMaximum === "number" ? s.exclusiveMaximum - (integer ? 1 : 0.5) : undefined;
  if ((min === undefined || min <= 0) && (max === undefined || max >= 0)) return 0;
  const v = min ?? max ?? 0;
  return integer ? Math.ceil(v) : v;
}

/** One value that `schema` accepts (draft 2020-12, the keywords zod emits); `name` is the field's name. */
export function exampleFromSchema(schema: JsonSchema, hints: Hints = {}, name = ""): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union) && union.length) {
    const branch = union.find((b) => b.type !== "null") ?? union[0]!;
    return exampleFromSchema({ ...schema, anyOf: undefined, oneOf: undefined, ...branch }, hints, name);
  }
  const hint = name ? hints[name] : undefined;
  switch (firstType(schema)) {
    case "object": {
      if (schema.properties) {
        // Required fields only: the example stays small (it travels in every 402's PAYMENT-REQUIRED header) and
        // still parses with the schema; the optional ones are documented by the schema itself.
        const required = new Set(Array.isArray(schema.required) ? schema.required : []);
        return Object.fromEntries(
          Object.entries(schema.properties)
            .filter(([k]) => required.has(k))
            .map(([k, v]) => [k, exampleFromSchema(v, hints, k)]),
        );
      }
      const values = schema.additionalProperties;
      if (values && typeof values === "object") {
        const names = schema.propertyNames as JsonSchema | undefined;
        const key = Array.isArray(names?.enum) && names.enum.length ? String(names.enum[0]) : "example";
        return { [key]: exampleFromSchema(values as JsonSchema, hints, key) };
      }
      return {};
    }
    case "array": {
      if (Array.isArray(schema.prefixItems)) return (schema.prefixItems as JsonSchema[]).map((s) => exampleFromSchema(s, hints));
      const items = schema.items && typeof schema.items === "object" ? (schema.items as JsonSchema) : {};
      const n = Math.max(1, typeof schema.minItems === "number" ? schema.minItems : 0);
      return Array.from({ length: n }, () => exampleFromSchema(items, hints));
    }
    case "string": {
      if (typeof hint === "string") return hint;
      if (schema.format === "date-time" || TIME_FIELD.test(name) || /ISO 8601|ISO time/.test(String(schema.description ?? ""))) return EXAMPLE_TIME;
      const min = typeof schema.minLength === "number" ? schema.minLength : 0;
      return "string".padEnd(min, "x");
    }
    case "integer":
      return typeof hint === "number" && Number.isInteger(hint) ? hint : numberIn(schema, true);
    case "number":
      return typeof hint === "number" ? hint : numberIn(schema, false);
    case "boolean":
      return typeof hint === "boolean" ? hint : true;
    default:
      return null;
  }
}

const cache = new WeakMap<AnyTool, Record<string, unknown>>();

/**
 * The example answer of a tool, generated once from its output schema (memoised). For an output that is a
 * union (answer | interim warm-up body) it is the first branch: the real answer.
 */
export function outputExample(tool: AnyTool): Record<string, unknown> {
  let e = cache.get(tool);
  if (!e) {
    const v = exampleFromSchema(jsonSchema(tool.output, "output"), tool.example);
    e = v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
    cache.set(tool, e);
  }
  return e;
}

/** Longest output example (JSON characters) a 402's `bazaar` declaration carries. */
export const MAX_BAZAAR_EXAMPLE_CHARS = 160;

/**
 * The output example of a tool's x402 Bazaar declaration: {@link outputExample} when it is at most
 * {@link MAX_BAZAAR_EXAMPLE_CHARS} long, else its first fields that fit (in the schema's order, nested lists and
 * objects shown empty), so that the 402's header block stays within a reverse proxy's response buffer (4 KB in
 * nginx by default). OpenAPI and /.well-known/x402.json carry the whole example beside the output schema.
 */
export function bazaarOutputExample(tool: AnyTool): Record<string, unknown> {
  const full = outputExample(tool);
  if (JSON.stringify(full).length <= MAX_BAZAAR_EXAMPLE_CHARS) return full;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(full)) {
    out[k] = Array.isArray(v) ? [] : v && typeof v === "object" ? {} : v;
    if (JSON.stringify(out).length > MAX_BAZAAR_EXAMPLE_CHARS) {
      delete out[k];
      break;
    }
  }
  return out;
}
