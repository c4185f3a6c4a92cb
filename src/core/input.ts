import type { z } from "zod";
import { AppError } from "../errors.js";
import type { AnyTool } from "../registry/tool.js";

/** One problem of a request, as sent in `error.details`. */
export interface InputIssue {
  field: string;
  message: string;
}

function isUnknownSymbol(issue: z.core.$ZodIssue): boolean {
  return issue.code === "custom" && (issue.params as { appCode?: string } | undefined)?.appCode === "UNKNOWN_SYMBOL";
}

/**
 * Validates a tool's raw input (already typed: JSON from MCP, or coerced query strings from HTTP).
 * @returns the parsed input (defaults applied, symbols resolved)
 * @throws AppError `UNKNOWN_SYMBOL` (404) when the only problem is an unsupported symbol/id,
 *   `BAD_REQUEST` (400) with per-field `details` otherwise.
 */
export function parseToolInput(tool: AnyTool, raw: unknown): unknown {
  const r = tool.input.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues;
  const details: InputIssue[] = issues.map((i: z.core.$ZodIssue) => ({ field: i.path.join(".") || "(input)", message: i.message }));
  if (issues.every(isUnknownSymbol)) {
    throw new AppError("UNKNOWN_SYMBOL", details.map((d) => d.message).join("; "), { details });
  }
  throw new AppError("BAD_REQUEST", `invalid input: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, { details });
}
