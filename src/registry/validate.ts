import { z } from "zod";
import { pathParams, isFree, type AnyTool } from "./tool.js";
import type { StreamDef } from "./stream.js";

/** Thrown at boot (and in tests) when the registry is inconsistent; lists every problem at once. */
export class RegistryError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid tool registry:\n  - ${problems.join("\n  - ")}`);
    this.name = "RegistryError";
  }
}

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const PRICE = /^(free|\d+(\.\d{1,6})?)$/;

/**
 * Checks the catalogue: unique snake_case names, unique method+path, valid prices (USDC has 6 decimals)
 * and TTLs, path params present in the input object, a valid example, schemas convertible to JSON Schema, a
 * deliberate `destructiveHint` on every tool that changes state, a short `mcpNote`, and `mcpMaxima` on numeric fields within their maxima.
 * @throws RegistryError with every problem found.
 */
export function validateRegistry(tools: readonly AnyTool[]): void {
  const problems: string[] = [];
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const t of tools) {
    if (!NAME.test(t.name)) problems.push(`${t.name}: name must be snake_case (SEP-986 safe)`);
    if (names.has(t.name)) problems.push(`${t.name}: duplicate name`);
    names.add(t.name);
    const route = `${t.method} ${t.path}`;
    if (routes.has(route)) problems.push(`${t.name}: duplicate route ${route}`);
    routes.add(route);
    if (!PRICE.test(t.priceUsd) || (!isFree(t) && Number(t.priceUsd) <= 0)) problems.push(`${t.name}: bad priceUsd ${t.priceUsd}`);
    if (!Number.isInteger(t.cacheTtlSec) || t.cacheTtlSec < 0) problems.push(`${t.name}: bad cacheTtlSec ${t.cacheTtlSec}`);
    for (const p of pathParams(t)) {
      if (!(p in t.input.shape)) problems.push(`${t.name}: path param :${p} missing from input`);
    }
    if (t.annotations?.readOnlyHint === false && t.annotations.destructiveHint === undefined) {
      problems.push(`${t.name}: a tool that changes state must set annotations.destructiveHint (MCP assumes true when absent)`);
    }
    if (t.mcpNote !== undefined && t.mcpNote.length > 200) problems.push(`${t.name}: mcpNote over 200 characters`);
    for (const [field, max] of Object.entries(t.mcpMaxima ?? {})) {
      const prop = (z.toJSONSchema(t.input, { io: "input" }) as { properties?: Record<string, { type?: string; maximum?: number }> }).properties?.[field];
      if (!prop || (prop.type !== "integer" && prop.type !== "number")) problems.push(`${t.name}: mcpMaxima.${field} is not a numeric input field`);
      else if (!Number.isInteger(max) || max < 1 || (prop.maximum !== undefined && max > prop.maximum))
        problems.push(`${t.name}: mcpMaxima.${field} must be a positive integer within the field's maximum`);
    }
    if (!t.input.safeParse(t.example).success) problems.push(`${t.name}: example input does not validate`);
    for (const [label, schema, io] of [
      ["input", t.input, "input"],
      ["output", t.output, "output"],
    ] as const) {
      try {
        z.toJSONSchema(schema, { io });
      } catch (err) {
        problems.push(`${t.name}: ${label} schema not representable: ${(err as Error).message}`);
      }
    }
  }
  if (problems.length) throw new RegistryError(problems);
}

/**
 * Checks the live streams: unique topics and paths under `/stream/`, `:symbol` exactly when the symbol is
 * required, a positive price per minute with at most 6 decimals, event schemas convertible to JSON Schema.
 * @throws RegistryError with every problem found.
 */
export function validateStreams(streams: readonly StreamDef[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const s of streams) {
    if (seen.has(s.topic) || seen.has(s.path)) problems.push(`${s.topic}: duplicate topic or path`);
    seen.add(s.topic).add(s.path);
    if (!s.path.startsWith("/stream/")) problems.push(`${s.topic}: path must start with /stream/`);
    if (s.path.includes(":symbol") !== (s.symbol === "required")) problems.push(`${s.topic}: :symbol in the path exactly when the symbol is required`);
    if (!/^\d+(\.\d{1,6})?$/.test(s.pricePerMinuteUsd) || Number(s.pricePerMinuteUsd) <= 0) problems.push(`${s.topic}: bad pricePerMinuteUsd ${s.pricePerMinuteUsd}`);
    for (const [name, schema] of Object.entries(s.events)) {
      try {
        z.toJSONSchema(schema, { io: "output" });
      } catch (err) {
        problems.push(`${s.topic}: event ${name} has no JSON Schema (${(err as Error).message})`);
      }
    }
  }
  if (problems.length) throw new RegistryError(problems);
}
