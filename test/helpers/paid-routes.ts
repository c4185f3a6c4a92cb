import { isFree, requestPath, type AnyTool } from "../../src/registry/tool.js";
import { TOOLS } from "../../tools/index.js";

/*
 * Every paid REST route of the registry, called as its example says: what the header-size and nginx tests pay
 * for, route by route.
 */

/** A loopback webhook the alert tools accept before payment (the stack runs with `WEBHOOK_ALLOW_LOOPBACK=true`). */
export const LOOPBACK_WEBHOOK = "https://127.0.0.1/marketgate";

/** The registry's paid tools (one REST route each). */
export const PAID_TOOLS: readonly AnyTool[] = TOOLS.filter((t) => !isFree(t));

/**
 * The registry with no response cache: a second payment for the same request is charged and answered as the
 * first (with the cache it would be a free hit, with no receipt to measure). Nothing else changes.
 */
export const UNCACHED_TOOLS: readonly AnyTool[] = TOOLS.map((t) => ({ ...t, cacheTtlSec: 0 }));

/** The alert tools that extend an alert, and the tool creating the alert they extend. */
export const EXTENDS: ReadonlyArray<readonly [create: string, extend: string]> = [
  ["liquidation_alert_create", "liquidation_alert_extend"],
  ["price_alert_create", "price_alert_extend"],
];

/** One call of a tool: its URL and fetch options. */
export interface RouteCall {
  url: string;
  init: RequestInit & { method: string; body?: string };
}

/**
 * The call of `tool`'s example on `base`: the alert tools with a loopback webhook, an extend with the alert id in
 * `ids` (by extend tool name).
 */
export function exampleCall(base: string, tool: AnyTool, ids: Readonly<Record<string, string>> = {}): RouteCall {
  const example: Record<string, string | number | boolean> = { ...tool.example };
  if ("webhook_url" in example) example.webhook_url = LOOPBACK_WEBHOOK;
  if ("id" in example && ids[tool.name]) example.id = ids[tool.name]!;
  const url = `${base}${requestPath(tool, example)}`;
  return tool.method === "POST"
    ? { url, init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(example) } }
    : { url, init: { method: tool.method } };
}

/** Creates one alert of each kind with `pay` (a paying fetch) and returns their ids by extend tool name. */
export async function alertsToExtend(pay: typeof fetch, base: string): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const [create, extend] of EXTENDS) {
    const call = exampleCall(
      base,
      TOOLS.find((t) => t.name === create)!,
    );
    const res = await pay(call.url, call.init);
    if (res.status !== 200) throw new Error(`${create}: ${res.status} ${await res.text()}`);
    ids[extend] = ((await res.json()) as { alert_id: string }).alert_id;
  }
  return ids;
}
