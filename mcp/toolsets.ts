import { AppError } from "../src/errors.js";
import type { AnyTool } from "../src/registry/tool.js";

/*
 * Toolsets: which tools `tools/list` shows, chosen per connection (`/mcp?toolsets=perp,dex`, `MCP_TOOLSETS` over
 * stdio), as large MCP servers do, so that an agent's context holds only the tools it needs. A tool's toolset is
 * its first registry tag (`cex`, `dex`, `tokens`, `funding`, `futures`, `liquidations`, `streams`, `alerts`, `credits`,
 * `service`); a few names stand for several. Every tool stays callable by name whatever the listing shows: the
 * endpoint is stateless, and a toolset only spares the model's context.
 */

/** Names that stand for several toolsets (`all`: every tool). */
export const TOOLSET_GROUPS: Readonly<Record<string, readonly string[]>> = {
  /** Perpetual futures: funding, open interest, long/short, basis, the liquidation heatmap. */
  perp: ["funding", "futures", "liquidations"],
};

/**
 * The toolsets listed when none is asked for: market data, streams, credits and the service status. The eleven alert
 * tools (webhook alerts: create, read, cancel, list, extend) are left to `?toolsets=alerts` (or `all`), so that
 * the default listing stays within {@link TOOLS_LIST_BUDGET_CHARS}.
 */
export const DEFAULT_TOOLSETS: readonly string[] = ["cex", "dex", "tokens", "funding", "futures", "liquidations", "streams", "credits", "service"];

/**
 * Most characters of model-visible listing (each tool's name, description and JSON input schema) that a
 * toolset selection may take: 6,000 tokens at about 4 characters a token (test/mcp/tools-list-budget.test.ts).
 */
export const TOOLS_LIST_BUDGET_CHARS = 24_000;

/** The toolset of a tool: its first tag. */
export function toolsetOf(tool: AnyTool): string {
  return tool.tags[0] ?? "other";
}

/** Every toolset name a selection may use (the tools' first tags, the groups, `all`, `default`), sorted. */
export function toolsetNames(tools: readonly AnyTool[]): string[] {
  return [...new Set([...tools.map(toolsetOf), ...Object.keys(TOOLSET_GROUPS), "all", "default"])].sort();
}

/**
 * The tools a selection lists, in registry order. `spec` is a comma-separated list of toolset names
 * (`perp,dex`); undefined or blank selects {@link DEFAULT_TOOLSETS}; `all` selects every tool and `default` the
 * default toolsets (`default,alerts` adds the alerts to them).
 * @throws AppError BAD_REQUEST naming the unknown toolsets and the known ones.
 */
export function selectTools(tools: readonly AnyTool[], spec: string | undefined): readonly AnyTool[] {
  const names = (spec ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) names.push("default");
  const known = new Set(tools.map(toolsetOf));
  const wanted = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const members = name === "all" ? [...known] : name === "default" ? DEFAULT_TOOLSETS : (TOOLSET_GROUPS[name] ?? (known.has(name) ? [name] : undefined));
    if (members) for (const m of members) wanted.add(m);
    else unknown.push(name);
  }
  if (unknown.length) {
    throw new AppError("BAD_REQUEST", `unknown toolset ${unknown.map((u) => `'${u.slice(0, 40)}'`).join(", ")}; toolsets: ${toolsetNames(tools).join(", ")}`);
  }
  return tools.filter((t) => wanted.has(toolsetOf(t)));
}
