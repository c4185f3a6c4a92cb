import { usdToMicros } from "./budget.js";
import type { ToolRoute } from "./routes.js";
import { TOOL_ROUTES } from "./tools.generated.js";

/** A tool call as an HTTP request: method, path with query, JSON body (POST). */
export interface ToolRequest {
  method: string;
  path: string;
  body?: Record<string, unknown>;
}

/** The `:name` segments of a route's path, in order. */
export function pathParams(route: ToolRoute): string[] {
  return [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
}

/**
 * The request of one call of `route` with `input`: path parameters in the path (URL-encoded), the other fields in
 * the query (GET, DELETE; `undefined` left out) or the JSON body (POST).
 * @throws Error when a path parameter is missing.
 */
export function toolRequest(route: ToolRoute, input: Readonly<Record<string, unknown>> = {}): ToolRequest {
  const params = new Set(pathParams(route));
  const path = route.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    const v = input[name];
    if (v === undefined || v === null || v === "") throw new Error(`${route.path}: the path parameter ${name} is required`);
    return encodeURIComponent(String(v));
  });
  const rest = Object.fromEntries(Object.entries(input).filter(([k, v]) => !params.has(k) && v !== undefined));
  if (route.method === "POST") return { method: route.method, path, body: rest };
  const qs = new URLSearchParams(Object.entries(rest).map(([k, v]): [string, string] => [k, String(v)]));
  return { method: route.method, path: qs.size ? `${path}?${qs}` : path };
}

/** The price of one call, micro-USD (`0n` for a free tool; a variable price read from its input field). */
export function priceMicros(route: ToolRoute, input: Readonly<Record<string, unknown>> = {}): bigint {
  if (route.priceUsd === "free") return 0n;
  const variable = route.priceField ? input[route.priceField] : undefined;
  return usdToMicros(typeof variable === "string" || typeof variable === "number" ? variable : route.priceUsd);
}

/** Each route's path as a pattern, in registry order (the order express matches them in). */
const PATTERNS = Object.entries(TOOL_ROUTES as Record<string, ToolRoute>).map(([name, route]) => ({
  name,
  route,
  pattern: new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "[^/]+")}/?$`),
}));

/** The registry tool that serves `method` `path` (query ignored), as the service routes it, if any. */
export function routeOf(method: string, path: string): { name: string; route: ToolRoute } | undefined {
  const pathname = path.split("?")[0]!;
  const m = method.toUpperCase();
  const found = PATTERNS.find((p) => p.route.method === m && p.pattern.test(pathname));
  return found && { name: found.name, route: found.route };
}
