import { bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { match } from "path-to-regexp";
import { isFree, type AnyTool } from "../registry/tool.js";
import { jsonSchema, splitExample, splitInput, type JsonSchema } from "../registry/json-schema.js";
import { bazaarOutputExample } from "../registry/output-example.js";

/*
 * x402 Bazaar discovery (`@x402/extensions/bazaar`), built from the registry: every paid tool's 402 declares
 * how to call it (input example and schema) and what it answers (output example), over HTTP and over MCP,
 * and its `resource` names the service (serviceName, tags, iconUrl). Facilitators that index settlements
 * (the CDP facilitator) catalogue a resource from the payment payload of its first settled call, which
 * copies these extensions from the 402 (docs/discovery.md).
 */

/** `resource.serviceName` of every 402 (printable ASCII, at most 32 characters). */
export const SERVICE_NAME = "marketgate";
/** Path of the service icon (SVG), served by the HTTP app; `resource.iconUrl` is absolute. */
export const ICON_PATH = "/favicon.svg";
/** Tags added after the tool's own (the Bazaar keeps the first five). */
const SERVICE_TAGS = ["crypto", "market-data"];
/**
 * Longest resource URL whose 402 declares `bazaar`. The 402's headers repeat the URL about five times once
 * base64-encoded (resource, sign-in-with-x challenge, X-PAYMENT), and HTTP clients read 16 KB of headers:
 * with the largest declaration (about 3.5 KB encoded) a URL of the full MAX_URL_BYTES (2048) would not fit.
 * Discovery needs one paid call per route, and real calls have short URLs; longer ones go without.
 */
export const MAX_DISCOVERY_URL_BYTES = 1024;
/** Transport of `/mcp` (stateless Streamable HTTP). */
const MCP_TRANSPORT = "streamable-http";

/** The Bazaar tags of a tool: its own tags, then the service's (unique, at most five). */
export function bazaarTags(tool: AnyTool): string[] {
  return [...new Set([...tool.tags, ...SERVICE_TAGS])].slice(0, 5);
}

/** The service metadata of a tool's `resource` (x402 `ResourceInfo`), the icon under `base` when it is http(s). */
export function serviceMetadata(tool: AnyTool, base?: string): { serviceName: string; tags: string[]; iconUrl?: string } {
  const iconUrl = base && /^https?:\/\//.test(base) ? `${base.replace(/\/+$/, "")}${ICON_PATH}` : undefined;
  return { serviceName: SERVICE_NAME, tags: bazaarTags(tool), ...(iconUrl ? { iconUrl } : {}) };
}

/**
 * A schema without `format` keywords: facilitators validate declarations with ajv without its formats
 * plugin, which logs a warning per unknown format (`date-time`) on every payment. Nor descriptions, string lengths
 * or defaults (the 402's header block must fit a proxy's buffer). OpenAPI keeps them all.
 */
function withoutFormats<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutFormats) as T;
  if (!schema || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    // Nor descriptions: the declaration travels in every 402's PAYMENT-REQUIRED header, whose block must fit a
    // reverse proxy's response buffer (4 KB in nginx by default); /openapi.json and /llms-full.txt describe each field.
    if ((k === "format" || k === "description") && typeof v === "string") continue;
    // Nor string lengths and defaults, for the same reason: they bound and complete the call, not describe it, and
    // the service checks them anyway (a 400 before payment names the field); /openapi.json keeps them.
    if (k === "minLength" || k === "maxLength" || k === "default") continue;
    // A pattern beside a format repeats it (zod writes the 500-character ISO 8601 expression of date-time).
    if (k === "pattern" && typeof (schema as Record<string, unknown>).format === "string") continue;
    if (k === "properties" && v && typeof v === "object") out[k] = Object.fromEntries(Object.entries(v).map(([name, x]) => [name, withoutFormats(x)]));
    else if (k === "const" || k === "enum" || k === "examples") out[k] = v;
    else out[k] = withoutFormats(v);
  }
  return out as T;
}

type Declaration = Record<string, unknown>;
const httpCache = new WeakMap<AnyTool, Declaration>();
const mcpCache = new WeakMap<AnyTool, Declaration>();

/**
 * The `bazaar` declaration of a tool's HTTP route, before enrichment (the method, the route template and
 * the request's path parameters are added per request by {@link discoveryExtensions}): the example input
 * (query or JSON body, path parameters), their JSON Schemas, and the output example.
 */
export function httpDeclaration(tool: AnyTool): Declaration {
  let d = httpCache.get(tool);
  if (!d) {
    const { path, rest } = splitInput(tool);
    const example = splitExample(tool);
    const names = Object.keys(path);
    const common = {
      input: example.rest,
      inputSchema: withoutFormats(rest),
      ...(names.length
        ? { pathParams: example.path, pathParamsSchema: { properties: Object.fromEntries(Object.entries(path).map(([n, x]) => [n, withoutFormats(x)])), required: names } }
        : {}),
      output: { example: bazaarOutputExample(tool) },
    };
    d = (tool.method === "POST" ? declareDiscoveryExtension({ ...common, bodyType: "json" }) : declareDiscoveryExtension(common)).bazaar as unknown as Declaration;
    httpCache.set(tool, d);
  }
  return d;
}

/** The `bazaar` declaration of a tool called over MCP (`input.type: "mcp"`): tool name, input schema, examples. */
export function mcpDeclaration(tool: AnyTool): Declaration {
  let d = mcpCache.get(tool);
  if (!d) {
    d = declareDiscoveryExtension({
      toolName: tool.name,
      description: tool.summary,
      transport: MCP_TRANSPORT,
      inputSchema: withoutFormats(jsonSchema(tool.input, "input")),
      example: { ...tool.example },
      output: { example: bazaarOutputExample(tool) },
    }).bazaar as unknown as Declaration;
    mcpCache.set(tool, d);
  }
  return d;
}

const matchers = new WeakMap<AnyTool, ReturnType<typeof match>>();

/** Where a tool's route sits in a request path: the path prefix before it (PUBLIC_URL's path), or undefined. */
function routePrefix(tool: AnyTool, pathname: string): string | undefined {
  let m = matchers.get(tool);
  if (!m) matchers.set(tool, (m = match(tool.path, { decode: false })));
  const segments = pathname.split("/");
  // A prefix of at most a few segments (PUBLIC_URL=https://host/some/base), never the whole path.
  for (let i = 1; i < Math.min(segments.length, 6); i++) {
    const prefix = segments.slice(0, i).join("/");
    if (m(`/${segments.slice(i).join("/")}`)) return prefix;
  }
  return undefined;
}

/**
 * The `bazaar` extension of a 402 for `tool` whose `resource.url` is `resourceUrl`, enriched as the official
 * resource-server extension would be for that request: over HTTP the method, the route template and the
 * path parameters; an `mcp:` URL or one ending in `/mcp` gets the MCP declaration. Empty when the tool is
 * free, when the URL is not the tool's route (a sign-in 402 borrowing the top-up's requirements), or when it
 * is longer than {@link MAX_DISCOVERY_URL_BYTES}.
 */
export function discoveryExtensions(tool: AnyTool, resourceUrl: string): Record<string, unknown> {
  if (isFree(tool) || Buffer.byteLength(resourceUrl) > MAX_DISCOVERY_URL_BYTES) return {};
  let url: URL;
  try {
    url = new URL(resourceUrl);
  } catch {
    return {};
  }
  if (url.protocol === "mcp:" || url.pathname.endsWith("/mcp")) return { bazaar: mcpDeclaration(tool) };
  const prefix = routePrefix(tool, url.pathname);
  if (prefix === undefined) return {};
  const path = url.pathname;
  const ctx = { method: tool.method, path, routePattern: `${prefix}${tool.path}`, adapter: { getPath: () => path } };
  return { bazaar: bazaarResourceServerExtension.enrichDeclaration!(httpDeclaration(tool), ctx) };
}

/**
 * The service metadata of the `resource` of a 402 for `tool` at `resourceUrl`: the icon is served under the
 * same base as the route (origin plus PUBLIC_URL's path); no icon for an `mcp:` resource.
 */
export function resourceMetadata(tool: AnyTool, resourceUrl: string): ReturnType<typeof serviceMetadata> {
  let url: URL;
  try {
    url = new URL(resourceUrl);
  } catch {
    return serviceMetadata(tool);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return serviceMetadata(tool);
  const prefix = url.pathname.endsWith("/mcp") ? url.pathname.slice(0, -"/mcp".length) : (routePrefix(tool, url.pathname) ?? "");
  return serviceMetadata(tool, `${url.origin}${prefix}`);
}

/**
 * x402 v1 `outputSchema` of a tool's requirements (the shape x402 v1 discovery reads): how to call it
 * (`input`: method, query or body fields, path parameters) and the JSON Schema of its answer (`output`).
 */
export function v1OutputSchema(tool: AnyTool): { input: Record<string, unknown>; output: JsonSchema } {
  const { path, rest } = splitInput(tool);
  const fields = rest.properties ?? {};
  const input = {
    type: "http",
    method: tool.method,
    discoverable: true,
    ...(tool.method === "POST" ? { bodyType: "json", bodyFields: fields } : { queryParams: fields }),
    ...(Object.keys(path).length ? { pathParams: path } : {}),
  };
  return { input, output: jsonSchema(tool.output, "output") };
}
