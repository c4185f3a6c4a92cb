import "../supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { STREAMS, TOOLS } from "../../tools/index.js";
import { CONTROL_EVENTS } from "../../tools/live/common.js";
import type { AnyTool } from "../registry/tool.js";
import type { StreamRoute, ToolRoute } from "./routes.js";

/*
 * `npm run client:generate`: writes src/client/tools.generated.ts, the typed client's view of the registry, so the
 * client never imports the registry at run time (its tools import the server: venues, stores, analytics).
 *
 * - A route table (method, path, price, paging, auth) per tool and per stream: data only.
 * - Types: each tool's input and output as `z.input` / `z.output` of its own zod schemas, reached by `import type`
 *   of the module that exports the tool (erased at build time, so nothing of the server is loaded). A tool the
 *   registry builds in a function (the alert lifecycle tools, typed `AnyTool` there) has no exported value whose
 *   type is precise: it gets the loose `LooseInput` / `LooseOutput`. Stream events likewise: the exported zod schema
 *   of an event's data when there is one, else `LooseOutput`.
 *
 * test/client/generated.test.ts fails when the file differs from what this script writes now.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TARGET = join(ROOT, "src/client/tools.generated.ts");

/** Every `.ts` module under tools/ (but the registry index, which only re-exports), sorted for a stable output. */
function toolModules(dir = join(ROOT, "tools")): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? toolModules(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []))
    .filter((f) => relative(ROOT, f) !== join("tools", "index.ts"))
    .sort();
}

/** Where a value is exported: the module's import specifier from src/client/ and the export's name. */
interface ExportRef {
  spec: string;
  name: string;
}

/** The first module (in path order) and name that export each value of tools/. */
async function exportIndex(): Promise<Map<unknown, ExportRef>> {
  const index = new Map<unknown, ExportRef>();
  for (const file of toolModules()) {
    const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const spec = `../../${relative(ROOT, file).replaceAll("\\", "/").replace(/\.ts$/, ".js")}`;
    for (const [name, value] of Object.entries(mod)) if (value && typeof value === "object" && !index.has(value)) index.set(value, { spec, name });
  }
  return index;
}

/** The first top-level array field of an object schema (the items of a paged answer), if any. */
function firstArrayField(schema: z.ZodType): string | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined;
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    let s: unknown = field;
    while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) s = (s as z.ZodOptional<z.ZodType>).unwrap();
    if (s instanceof z.ZodArray) return key;
  }
  return undefined;
}

/** The input field a variable price is read from: the only field of a tool with `priceOf` (a top-up's `amount_usd`). */
function priceField(tool: AnyTool): string | undefined {
  if (!tool.priceOf) return undefined;
  const keys = Object.keys(tool.input.shape);
  if (keys.length !== 1) throw new Error(`${tool.name}: a variable price needs one input field to read it from, has ${keys.join(", ")}`);
  return keys[0];
}

/** The client's route of `tool` (only the fields that are set, so the table stays short). */
function routeOf(tool: AnyTool): ToolRoute {
  const paged = "cursor" in tool.input.shape;
  const items = paged ? firstArrayField(tool.output) : undefined;
  const field = priceField(tool);
  return {
    method: tool.method,
    path: tool.path,
    priceUsd: tool.priceUsd,
    ...(field ? { priceField: field } : {}),
    ...(paged ? { paged: true } : {}),
    ...(items ? { items } : {}),
    ...(tool.auth ? { auth: tool.auth } : {}),
    ...(tool.acceptsCredentials ? { credentials: true } : {}),
  };
}

/** The TypeScript source of src/client/tools.generated.ts (before formatting). */
export async function generatedSource(): Promise<string> {
  const index = await exportIndex();
  const imports = new Map<string, Set<string>>();
  const ref = (value: unknown): string | undefined => {
    const r = index.get(value);
    if (!r) return undefined;
    if (!imports.has(r.spec)) imports.set(r.spec, new Set());
    imports.get(r.spec)!.add(r.name);
    return r.name;
  };

  const routes: Record<string, ToolRoute> = {};
  const types: string[] = [];
  for (const tool of TOOLS) {
    routes[tool.name] = routeOf(tool);
    const name = ref(tool);
    types.push(
      name
        ? `  ${tool.name}: { input: z.input<(typeof ${name})["input"]>; output: z.output<(typeof ${name})["output"]> };`
        : `  ${tool.name}: { input: LooseInput; output: LooseOutput };`,
    );
  }

  const streams: Record<string, StreamRoute> = {};
  const eventTypes: string[] = [];
  for (const def of STREAMS) {
    streams[def.topic] = { path: def.path, symbol: def.symbol, pricePerMinuteUsd: def.pricePerMinuteUsd, events: Object.keys(def.events) };
    const fields = Object.entries(def.events).map(([event, schema]) => {
      const name = ref(schema);
      return `    ${event}: ${name ? `z.output<typeof ${name}>` : "LooseOutput"};`;
    });
    eventTypes.push(`  ${def.topic}: {\n${fields.join("\n")}\n  };`);
  }
  const control = ref(CONTROL_EVENTS)!;

  const importLines = [...imports].sort(([a], [b]) => a.localeCompare(b)).map(([spec, names]) => `import type { ${[...names].sort().join(", ")} } from "${spec}";`);
  return [
    "// Generated by `npm run client:generate` (src/client/generate.ts) from the registry: do not edit.",
    "// test/client/generated.test.ts fails when it no longer matches the registry.",
    'import type { z } from "zod";',
    ...importLines,
    'import type { StreamRoute, ToolRoute } from "./routes.js";',
    "",
    "/** Input of a tool the registry does not type precisely (built in a function): any JSON object. */",
    "export type LooseInput = Record<string, unknown>;",
    "/** Output of such a tool, or data of such a stream event: a JSON object. */",
    "export type LooseOutput = Record<string, unknown>;",
    "",
    "/** Every registry tool's route, by tool name. */",
    `export const TOOL_ROUTES = ${JSON.stringify(routes, null, 2)} as const satisfies Record<string, ToolRoute>;`,
    "",
    "/** Every registry tool's input (as sent: before defaults and transforms) and output, by tool name. */",
    `export interface ToolTypes {\n${types.join("\n")}\n}`,
    "",
    "/** Every paid live stream's route, by topic. */",
    `export const STREAM_ROUTES = ${JSON.stringify(streams, null, 2)} as const satisfies Record<string, StreamRoute>;`,
    "",
    "/** The data of each stream's own events, by topic and event name. */",
    `export interface StreamEventTypes {\n${eventTypes.join("\n")}\n}`,
    "",
    "/** The data of the control events every stream may send (debit, payment_required, gap, replay_truncated, dropped). */",
    `export type ControlEventTypes = { [K in keyof typeof ${control}]: z.output<(typeof ${control})[K]> };`,
    "",
  ].join("\n");
}

/** {@link generatedSource} formatted with the checkout's Prettier settings, as committed. */
export async function formattedSource(): Promise<string> {
  const prettier = await import("prettier");
  const options = (await prettier.resolveConfig(TARGET)) ?? {};
  return prettier.format(await generatedSource(), { ...options, filepath: TARGET });
}

/** The committed file's path. */
export const GENERATED_FILE = TARGET;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(TARGET, await formattedSource());
  process.stdout.write(`wrote ${relative(ROOT, TARGET)}\n`);
}
