import { STREAM_VENUES } from "../ingestion/types.js";
import type { StreamDef } from "../registry/stream.js";
import { PERP_VENUES } from "../venues/perp/types.js";
import type { AnyTool } from "../registry/tool.js";
import { isFree, pathParams, requestPath } from "../registry/tool.js";
import { jsonSchema, splitInput, type JsonSchema } from "../registry/json-schema.js";
import type { ServiceInfo } from "./openapi.js";
import { STREAM_AUTH_TEXT, streamBillingText, streamEvents, streamExamplePath, streamWsSubscribe, streamWsUrl, type StreamEventDoc } from "./streams.js";

/*
 * `/llms.txt` and `/llms-full.txt` (the llms.txt convention: a Markdown page for language models), built
 * from the registry like the other documents: what the service is, how paying works, every tool with its
 * price and an example call, and the live streams with their price per minute and how to connect; the
 * full version adds each tool's input parameters and output fields and each stream event's fields.
 */

/** How a tool is priced, in words. */
function priceText(tool: AnyTool): string {
  if (isFree(tool)) return tool.auth === "siwx" ? "free (needs a Sign-In-With-X proof of the wallet)" : "free";
  if (tool.priceOf) return `${tool.priceUsd} USDC minimum (the price depends on the input)`;
  return `${tool.priceUsd} USDC`;
}

/** Cache line of a tool. */
function cacheText(tool: AnyTool): string {
  return tool.cacheTtlSec > 0 ? `an identical request within ${tool.cacheTtlSec} s is answered from cache for free` : "never cached";
}

/** Single-quoted for a POSIX shell. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The example's body fields (POST): everything that is not a path parameter. */
function exampleBody(tool: AnyTool): Record<string, string | number | boolean> {
  const params = new Set(pathParams(tool));
  return Object.fromEntries(Object.entries(tool.example).filter(([k]) => !params.has(k)));
}

/** A curl command for the tool's example request against `base`. */
export function exampleCurl(tool: AnyTool, base: string): string {
  const url = shellQuote(`${base}${requestPath(tool)}`);
  if (tool.method === "POST") return `curl -i -X POST ${url} -H 'content-type: application/json' -d ${shellQuote(JSON.stringify(exampleBody(tool)))}`;
  if (tool.method === "DELETE") return `curl -i -X DELETE ${url}`;
  return `curl -i ${url}`;
}

/** A JSON Schema's type in a few characters (`number | null`, `"1h" | "4h"`, `string[]`). */
function typeText(s: JsonSchema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map((v) => JSON.stringify(v)).join(" | ");
  if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).map(typeText).join(" | ");
  if (Array.isArray(s.type)) return (s.type as string[]).join(" | ");
  if (s.type === "array") {
    const items = s.items as JsonSchema | undefined;
    const inner = items ? typeText(items) : "unknown";
    return inner.includes(" ") ? `(${inner})[]` : `${inner}[]`;
  }
  if (s.type === "object" && !s.properties && s.additionalProperties && typeof s.additionalProperties === "object")
    return `map of ${typeText(s.additionalProperties as JsonSchema)}`;
  return typeof s.type === "string" ? s.type : "any";
}

/** Bounds and defaults worth telling (JSON Schema's integer safety bounds are not). */
function constraints(s: JsonSchema): string[] {
  const out: string[] = [];
  const safe = (n: unknown) => typeof n === "number" && Math.abs(n) < 9e15;
  if (safe(s.minimum)) out.push(`min ${String(s.minimum)}`);
  if (safe(s.exclusiveMinimum)) out.push(`> ${String(s.exclusiveMinimum)}`);
  if (safe(s.maximum)) out.push(`max ${String(s.maximum)}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out;
}

/** One parameter line: `- name (in, type, required; default 100): description`. */
function paramLine(name: string, s: JsonSchema, where: string, required: boolean): string {
  const bits = [where, typeText(s), ...(required ? ["required"] : []), ...constraints(s)];
  return `- \`${name}\` (${bits.join(", ")})${s.description ? `: ${String(s.description)}` : ""}`;
}

/** The input parameters of a tool, path parameters first. */
function inputLines(tool: AnyTool): string[] {
  const { path, rest, restRequired } = splitInput(tool);
  const where = tool.method === "POST" ? "body" : "query";
  const lines = Object.entries(path).map(([k, s]) => paramLine(k, s, "path", true));
  for (const [k, s] of Object.entries(rest.properties ?? {})) lines.push(paramLine(k, s, where, restRequired.includes(k)));
  return lines;
}

/** The object shapes a schema can take (`anyOf` of objects: each one). */
function objectVariants(s: JsonSchema): JsonSchema[] {
  if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).flatMap(objectVariants);
  return s.type === "object" || s.properties ? [s] : [];
}

/**
 * Output fields as dotted names (`data.{key}.price`, `history[].funding_rate`), nested objects down to
 * `depth` levels, each with its type and description.
 */
function fieldLines(s: JsonSchema, prefix: string, depth: number, out: string[]): void {
  for (const [k, f] of Object.entries(s.properties ?? {})) {
    const name = `${prefix}${k}`;
    const desc = f.description ? `: ${String(f.description)}` : "";
    out.push(`- \`${name}\` (${typeText(f)})${desc}`);
    if (depth <= 1) continue;
    const items = f.type === "array" ? (f.items as JsonSchema | undefined) : undefined;
    const map = f.type === "object" && !f.properties && f.additionalProperties && typeof f.additionalProperties === "object" ? (f.additionalProperties as JsonSchema) : undefined;
    const nested = items ?? map ?? f;
    const nestedPrefix = items ? `${name}[].` : map ? `${name}.{key}.` : `${name}.`;
    for (const v of objectVariants(nested)) fieldLines(v, nestedPrefix, depth - 1, out);
  }
}

/** A tool's output fields; an answer with several shapes (e.g. a warm-up body) lists each. */
function outputLines(tool: AnyTool): string[] {
  const variants = objectVariants(jsonSchema(tool.output, "output"));
  if (variants.length <= 1) {
    const out: string[] = [];
    if (variants[0]) fieldLines(variants[0], "", 3, out);
    return out;
  }
  return variants.flatMap((v, i) => {
    const out = [...(i === 0 ? [] : [""]), i === 0 ? "The answer:" : tool.interimAnswer ? "Or (an interim answer, free and uncached):" : "Or:", ""];
    fieldLines(v, "", 3, out);
    return out;
  });
}

/** The service introduction shared by both documents. */
function intro(info: ServiceInfo, base: string): string[] {
  return [
    `# ${info.name}`,
    "",
    `> ${info.description}`,
    "",
    `Base URL: ${base}. Version ${info.version}. There are no accounts and no API keys: every paid request is paid on its own, in USDC on Base (eip155:8453)${info.solanaNetwork ? ` or on Solana (${info.solanaNetwork})` : ""}.`,
    "",
    "## How to pay",
    "",
    "1. Call a paid endpoint without payment. The answer is `402`: the `PAYMENT-REQUIRED` header is the x402 v2 `PaymentRequired` (base64 JSON: scheme `exact`, network, USDC asset, amount in atomic units, `payTo`), and `WWW-Authenticate: Payment` carries the MPP challenges. `GET /api/v1/quote?path=<path and query>` returns the same requirements without calling.",
    "2. Pay with x402: sign an EIP-3009 USDC authorization for exactly that amount and repeat the request with the proof in `PAYMENT-SIGNATURE` (any x402 client does it, e.g. `wrapFetchWithPayment` of `@x402/fetch`). Or pay with MPP: `Authorization: Payment <credential>`.",
    ...(info.solanaNetwork
      ? [
          "   On Solana (the second `accepts` entry): sign a USDC `TransferChecked` transaction whose fee payer is the facilitator's (`extra.feePayer`), e.g. with the `exact` client scheme of `@x402/svm`; the same `PAYMENT-SIGNATURE` header carries it.",
        ]
      : []),
    "3. The answer is `200` with the receipt (transaction hash) in `PAYMENT-RESPONSE`. Answers with status >= 400 are never charged; an identical request within a tool's cache TTL is free (`X-Cache: HIT`).",
    "",
    'Prepaid credits: top up once with `POST /api/v1/credits {"amount_usd":"5"}` (paid with x402 or MPP), then send a Sign-In-With-X proof in `SIGN-IN-WITH-X` on each paid call (the official `wrapFetchWithSIWx` client answers the 402\'s challenge by itself): the price is debited from the wallet\'s balance with no chain transaction, and `X-Credits-Remaining` tells the balance.',
    "",
    `MCP: the same tools over Streamable HTTP at ${base}/mcp (stateless); a paid tool's price is in \`_meta["x402/price"]\` of \`tools/list\`, and the payment goes in \`params._meta["x402/payment"]\`.`,
    "",
    'Errors are JSON: `{"error":{"code","message","details"?}}`.',
    "",
    `Perpetual venues read: ${PERP_VENUES.join(", ")}; trade and liquidation streams from ${STREAM_VENUES.join(", ")}. Every aggregate perpetual answer names the venues it used in \`coverage\` and the others, with the reason, in \`missing_exchanges\`.`,
    "",
    "## Documents",
    "",
    `- [OpenAPI 3.1](${base}/openapi.json): every endpoint with its input and output schema; \`operationId\` is the MCP tool name, \`x-payment-info\` the price`,
    `- [API reference](${base}/docs): the same, for people`,
    `- [x402 discovery](${base}/.well-known/x402.json): every paid resource with its payment requirements`,
    `- [Endpoint index](${base}/): every endpoint with its price and cache TTL`,
    `- [Service status](${base}/api/v1/status): venues, streams and data mode (free)`,
  ];
}

/** One tool's entry: method and path, price, summary and example call; `full` adds input and output. */
function toolSection(tool: AnyTool, base: string, full: boolean): string[] {
  const lines = [
    `### ${tool.name}: ${tool.title}`,
    "",
    `\`${tool.method} ${tool.path}\`. Price: ${priceText(tool)}; ${cacheText(tool)}.`,
    "",
    full ? tool.description : tool.summary,
    "",
    "Example:",
    "",
    "```sh",
    exampleCurl(tool, base),
    "```",
    "",
    `MCP: \`tools/call\` \`${tool.name}\` with arguments \`${JSON.stringify(tool.example)}\`.`,
  ];
  if (!full) return lines;
  const input = inputLines(tool);
  lines.push("", "Input parameters:", "", ...(input.length ? input : ["- none"]));
  const output = outputLines(tool);
  if (output.length) lines.push("", "Output fields:", "", ...output);
  return lines;
}

/** How to open and keep a live stream, shared by every stream's entry. */
function streamsIntro(streams: readonly StreamDef[], base: string, ws: string, full: boolean): string[] {
  const first = streams[0]!;
  const control = full ? streamEvents(first).filter((e) => e.control) : [];
  return [
    "## Live streams",
    "",
    `Pushed as they happen, over Server-Sent Events (one URL per topic) or one WebSocket (${ws}), paid per minute from prepaid credits, not per request: the first minute is debited when the stream opens, then each minute at its start (a \`debit\` event each time); when a minute cannot be paid (balance or caps) a \`payment_required\` event is sent and the stream closes.`,
    "",
    '1. Top up credits once: `POST /api/v1/credits {"amount_usd":"1"}`, paid with x402 or MPP.',
    `2. Open the stream with a Sign-In-With-X proof of that wallet for this server's origin. ${STREAM_AUTH_TEXT} Without a proof, or without the balance for the first minute, the answer is \`402\` (nothing debited) with the SIWX challenge and how to top up.`,
    "3. Read events: `event:` is the name, `id:` the position (on events that can be resumed from), `data:` one line of JSON. A `: hb` comment keeps idle connections open. `dropped` means the server closed the stream (slow reader, shutdown).",
    "4. Reconnect with the last id received in `Last-Event-ID` (or `?lastEventId=`) and the session token: missed events are replayed where the topic keeps them.",
    "",
    `\`GET ${base}/stream?topic=<topic>&symbol=<symbol>\` (free; MCP tool \`stream_subscribe\`) returns a topic's URL, its WebSocket subscribe message, its price and the JSON Schema of each event. MCP has no stream subscriptions (the /mcp endpoint is stateless): use SSE or the WebSocket.`,
    "",
    "Example, with a proof in $SIWX (base64, e.g. `encodeSIWxHeader(await createSIWxPayload(info, account))` of `@x402/extensions/sign-in-with-x`):",
    "",
    "```sh",
    `curl -N -H "SIGN-IN-WITH-X: $SIWX" ${shellQuote(`${base}${streamExamplePath(first)}`)}`,
    "# later, without signing again and from where it stopped:",
    `curl -N -H "X-Credits-Session: $TOKEN" -H "Last-Event-ID: $LAST_ID" ${shellQuote(`${base}${streamExamplePath(first)}`)}`,
    "```",
    "",
    `WebSocket: connect to ${ws} with the proof (header, or ?siwx=), then send \`${JSON.stringify(streamWsSubscribe(first))}\`; the server answers \`welcome\`, \`subscribed\`, then \`{"type":"event","topic","symbol","event","id"?,"data"}\` messages, and \`unsubscribed\` when a subscription ends; \`{"op":"unsubscribe","topic","symbol"}\` stops one.`,
    ...(control.length ? ["", `Every stream may also send ${control.map((e) => `\`${e.name}\``).join(", ")}:`, ...control.flatMap(eventFields)] : []),
  ];
}

/** One stream's entry: path, price per minute, events, resume, an example; `full` adds each event's fields. */
function streamSection(def: StreamDef, base: string, full: boolean): string[] {
  const events = streamEvents(def);
  const symbol = def.symbol === "required" ? "symbol required" : "`?symbol=` optional: every symbol without it";
  const lines = [
    `### stream_${def.topic}: ${def.title}`,
    "",
    `\`GET ${def.path}\` (${symbol}). Price: ${full ? streamBillingText(def) : `${def.pricePerMinuteUsd} USD per minute from prepaid credits.`}`,
    "",
    full ? `${def.summary}. ${def.description}` : def.summary,
    "",
    `Events: ${events.map((e) => `\`${e.name}\``).join(", ")}. Resume: ${def.resumable}.`,
    "",
    "Example:",
    "",
    "```sh",
    `curl -N -H "SIGN-IN-WITH-X: $SIWX" ${shellQuote(`${base}${streamExamplePath(def)}`)}`,
    "```",
    "",
    `WebSocket: \`${JSON.stringify(streamWsSubscribe(def))}\`.`,
  ];
  if (!full) return lines;
  for (const e of events) if (!e.control) lines.push(...eventFields(e));
  return lines;
}

/** An event's data fields (llms-full.txt). */
function eventFields(e: StreamEventDoc): string[] {
  const out: string[] = [];
  for (const v of objectVariants(e.schema)) fieldLines(v, "", 3, out);
  return ["", `Event \`${e.name}\`${e.description ? `: ${e.description}` : ""}. Data fields:`, "", ...(out.length ? out : ["- none"])];
}

/** The document, tools grouped by their first tag, then the live streams. */
function build(tools: readonly AnyTool[], info: ServiceInfo, base: string, full: boolean, streams: readonly StreamDef[] = [], ws = streamWsUrl(base)): string {
  const lines = intro(info, base);
  if (!full) lines.push(`- [Full tool reference for language models](${base}/llms-full.txt): every tool's input parameters and output fields`);
  lines.push("");
  const groups = new Map<string, AnyTool[]>();
  for (const t of tools) {
    const tag = t.tags[0] ?? "other";
    groups.set(tag, [...(groups.get(tag) ?? []), t]);
  }
  for (const [tag, group] of groups) {
    lines.push(`## Tools: ${tag}`, "");
    for (const t of group) lines.push(...toolSection(t, base, full), "");
  }
  if (streams.length) {
    lines.push(...streamsIntro(streams, base, ws, full), "");
    for (const d of streams) lines.push(...streamSection(d, base, full), "");
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

/** `/llms.txt`: the service, how to pay, every tool with its price and an example call, and the live `streams`. */
export function buildLlmsTxt(tools: readonly AnyTool[], info: ServiceInfo, baseUrl: string, streams: readonly StreamDef[] = []): string {
  return build(tools, info, baseUrl.replace(/\/+$/, ""), false, streams);
}

/** `/llms-full.txt`: `/llms.txt` plus every tool's full description, input parameters and output fields, and every stream event's fields. */
export function buildLlmsFullTxt(tools: readonly AnyTool[], info: ServiceInfo, baseUrl: string, streams: readonly StreamDef[] = []): string {
  return build(tools, info, baseUrl.replace(/\/+$/, ""), true, streams);
}

/**
 * Both documents rendered once and completed per request with its base URL (the configured public URL,
 * else the request's own origin, like `/api/v1/quote`): the registry's schemas are converted once only.
 */
export function llmsDocuments(tools: readonly AnyTool[], info: ServiceInfo, streams: readonly StreamDef[] = []): { short(baseUrl: string): string; full(baseUrl: string): string } {
  const mark = "\u0000BASE\u0000";
  // The WebSocket URL is the base with another scheme: a mark of its own, filled with streamWsUrl(base).
  const wsMark = "\u0000WS\u0000";
  const split = (text: string) => text.split(wsMark).map((part) => part.split(mark));
  const short = split(build(tools, info, mark, false, streams, wsMark));
  const full = split(build(tools, info, mark, true, streams, wsMark));
  const fill = (parts: string[][], base: string) => {
    const b = base.replace(/\/+$/, "");
    return parts.map((p) => p.join(b)).join(streamWsUrl(b));
  };
  return { short: (b) => fill(short, b), full: (b) => fill(full, b) };
}
