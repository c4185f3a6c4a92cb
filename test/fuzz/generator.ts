import type { PaymentPayload } from "@x402/core/types";
import { pathParams, type AnyTool } from "../../src/registry/tool.js";
import { STREAMS } from "../../tools/index.js";
import { prng } from "../helpers/prng.js";

/** One generated HTTP request, relative to the service's base URL. */
export interface FuzzRequest {
  method: string;
  /** Path with query string, already encoded (may be deliberately malformed). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What it targets, for the report (`tool:<name>`, `mcp`, `random`). */
  target: string;
}

/** Strings that break parsers, coercions, paths and logs. */
const HOSTILE_STRINGS = [
  "",
  " ",
  "BTC",
  "btc,eth,,",
  "0",
  "-1",
  "1e309",
  "-0",
  "NaN",
  "Infinity",
  "9007199254740993",
  "0x",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "prototype",
  "../../etc/passwd",
  "%00",
  "%",
  "%E0%A4%A",
  "%F0%9F%92%A5",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "${7*7}",
  "\u0000",
  "\uFFFF",
  "\uD800",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "a".repeat(300),
  "A,".repeat(200),
  "https://127.0.0.1:1/hook",
  "https://user:pass@[::1]/x",
  "http://169.254.169.254/latest/meta-data",
  "https://example.invalid/webhook",
  "0x000000000000000000000000000000000000dEaD",
  "2026-13-45T99:99:99Z",
  "1700000000000000",
  "above",
  "below",
  "long",
  "1h",
  "7d",
];

/**
 * Host and X-Forwarded-Host values: malformed (`[::1`, `a b`, `%zz`, `@@`, bad ports), foreign names (a
 * SIWX proof's other origin), oversized, and the service's own names.
 */
const HOSTILE_HOSTS = [
  "[::1",
  "a b",
  "%zz",
  "@@",
  "",
  " ",
  "u@127.0.0.1",
  "127.0.0.1:99999",
  "127.0.0.1:-1",
  "[::1]:4021",
  "[zz]",
  "a/b",
  "a?b#c",
  "a,b",
  "other-x402-service.example",
  "evil.example:443",
  "localhost",
  "127.0.0.1",
  "xn--80ak6aa92e.com",
  "h".repeat(300),
  "\u0000",
  "host\r\nx-injected: 1",
];
/** Request methods beyond the routed ones: WebDAV and other registered methods, CONNECT, lower case, unknown tokens, non-tokens. */
const HOSTILE_METHODS = ["TRACE", "PROPFIND", "MKCOL", "M-SEARCH", "PURGE", "LINK", "QUERY", "CONNECT", "get", "post", "FOO", "BREW", "A B", "GET\r\n", ""];

/** JSON values of every type, including nesting that stresses recursive validators. */
function hostileJson(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * 12);
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1e308, -1e308, 0.1, 2 ** 53 + 1, 1e-320][Math.floor(r() * 7)];
    case 3:
    case 4:
    case 5:
      return pick(r, HOSTILE_STRINGS);
    case 6:
      return depth > 3 ? [] : Array.from({ length: Math.floor(r() * 4) }, () => hostileJson(r, depth + 1));
    case 7:
      return depth > 3 ? {} : Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [pick(r, HOSTILE_STRINGS), hostileJson(r, depth + 1)]));
    case 8: {
      // Deep nesting: a validator that recurses without a bound would blow the stack.
      let v: unknown = 1;
      for (let i = 0; i < 2000; i++) v = [v];
      return v;
    }
    default:
      return `${pick(r, HOSTILE_STRINGS)}${Math.floor(r() * 1000)}`;
  }
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** Replaces one random leaf of a JSON value with a hostile value (structure-aware mutation). */
function mutate(r: () => number, v: unknown, depth = 0): unknown {
  if (v && typeof v === "object" && depth < 5 && r() < 0.85) {
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.length === 0) return hostileJson(r);
    const i = Math.floor(r() * entries.length);
    const out: Record<string, unknown> | unknown[] = Array.isArray(v) ? [...v] : { ...(v as Record<string, unknown>) };
    (out as Record<string, unknown>)[entries[i]![0]] = r() < 0.1 ? undefined : mutate(r, entries[i]![1], depth + 1);
    return out;
  }
  return hostileJson(r);
}

/** Hostile payment headers: junk, near-valid envelopes and mutations of a real signed payload. */
function paymentHeaders(r: () => number, valid?: PaymentPayload): Record<string, string> {
  const k = Math.floor(r() * 10);
  const mutated = () => JSON.stringify(valid ? mutate(r, valid) : hostileJson(r));
  switch (k) {
    case 0:
      return {};
    case 1:
      return { "PAYMENT-SIGNATURE": pick(r, ["e30=", "", "%%%", "bnVsbA==", b64("[]"), b64("1"), "A".repeat(4000)]) };
    case 2:
    case 3:
    case 4:
      return { "PAYMENT-SIGNATURE": b64(mutated()) };
    case 5:
      return { "X-PAYMENT": b64(r() < 0.5 ? mutated() : JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload: hostileJson(r) })) };
    case 6:
      return { "X-PAYMENT-PROOF": b64(mutated()) };
    case 7:
      return { Authorization: `Payment ${pick(r, ["", "abc", b64(mutated()), "e30", "a".repeat(3000)])}` };
    case 8:
      if (r() < 0.5) {
        // Credits: hostile SIWX proofs (junk, near-valid JSON) and session tokens.
        const siwx = {
          domain: "127.0.0.1",
          address: pick(r, HOSTILE_STRINGS),
          uri: pick(r, HOSTILE_STRINGS),
          version: "1",
          chainId: pick(r, ["eip155:8453", "solana:x", "x"]),
          type: "eip191",
          nonce: pick(r, HOSTILE_STRINGS),
          issuedAt: pick(r, HOSTILE_STRINGS),
          signature: pick(r, ["0x", "0x12", `0x${"ab".repeat(65)}`]),
        };
        return r() < 0.5
          ? { "SIGN-IN-WITH-X": r() < 0.3 ? pick(r, HOSTILE_STRINGS) : b64(JSON.stringify(r() < 0.5 ? mutate(r, siwx) : siwx)) }
          : { "X-Credits-Session": pick(r, ["v1.0x0000000000000000000000000000000000000000.9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "v1", ...HOSTILE_STRINGS]) };
      }
      return {
        Authorization: `Bearer ${pick(r, HOSTILE_STRINGS)}`,
        "X-Wallet-Signature": pick(r, ["0x", "0x1234", `0x${"ab".repeat(65)}`]),
        "X-Signed-At": pick(r, HOSTILE_STRINGS),
      };
    default:
      return { "PAYMENT-SIGNATURE": b64(mutated()), "X-PAYMENT": b64(mutated()) };
  }
}

/** A value for one path or query field: usually hostile, sometimes the example (so deeper code runs). */
function fieldValue(r: () => number, example: unknown): string {
  if (example !== undefined && r() < 0.3) return String(example);
  return pick(r, HOSTILE_STRINGS);
}

/** `encodeURIComponent` that also encodes lone surrogates (as invalid UTF-8, which servers must refuse). */
function encode(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return "%ED%A0%80";
  }
}

/** Encodes a path segment, sometimes leaving it raw (malformed percent-encoding reaches the router). */
function segment(r: () => number, v: string): string {
  if (r() < 0.15) return v.replace(/[/?#\s]/g, "");
  return encode(v);
}

function toolRequest(r: () => number, tool: AnyTool, valid?: PaymentPayload): FuzzRequest {
  const ex = tool.example as Record<string, unknown>;
  const params = pathParams(tool);
  const path = tool.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => segment(r, fieldValue(r, ex[name])) || "x");
  const fields = Object.keys(ex).filter((k) => !params.includes(k));
  const extra = r() < 0.3 ? [pick(r, HOSTILE_STRINGS).slice(0, 20) || "k"] : [];
  const qs: string[] = [];
  for (const f of [...fields, ...extra]) {
    if (r() < 0.2) continue;
    const v = fieldValue(r, ex[f]);
    qs.push(`${encode(f)}${r() < 0.1 ? "[x]" : ""}=${segment(r, v)}`);
    if (r() < 0.1) qs.push(`${encode(f)}=${segment(r, pick(r, HOSTILE_STRINGS))}`);
  }
  const method = r() < 0.9 ? tool.method : pick(r, ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]);
  const headers: Record<string, string> = { ...paymentHeaders(r, valid), "X-Forwarded-For": `10.0.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}` };
  let body: string | undefined;
  if (method === "POST" || (method !== "GET" && method !== "HEAD" && r() < 0.3)) {
    headers["content-type"] = pick(r, [
      "application/json",
      "application/json",
      "application/json; charset=utf-8",
      "application/json; charset=latin1",
      "text/plain",
      "application/x-www-form-urlencoded",
    ]);
    const obj = r() < 0.6 ? mutate(r, Object.fromEntries(Object.entries(ex).map(([k, v]) => [k, v]))) : hostileJson(r);
    body = r() < 0.1 ? `{"${pick(r, HOSTILE_STRINGS)}":` : JSON.stringify(obj);
  }
  return { method, path: `${path}${qs.length ? `?${qs.join("&")}` : ""}`, headers, body, target: `tool:${tool.name}` };
}

function mcpRequest(r: () => number, tools: readonly AnyTool[], valid?: PaymentPayload): FuzzRequest {
  const tool = pick(r, tools);
  const method = pick(r, ["tools/call", "tools/call", "tools/call", "tools/list", "initialize", "ping", "resources/list", "nope/nope"]);
  const args = r() < 0.5 ? mutate(r, { ...(tool.example as Record<string, unknown>) }) : hostileJson(r);
  const meta =
    r() < 0.4
      ? { "x402/payment": valid && r() < 0.7 ? mutate(r, valid) : hostileJson(r) }
      : r() < 0.3
        ? { "x402/sign-in-with-x": hostileJson(r), "marketgate/credits-session": hostileJson(r) }
        : r() < 0.5
          ? hostileJson(r)
          : undefined;
  const params = r() < 0.1 ? hostileJson(r) : { name: r() < 0.9 ? tool.name : hostileJson(r), arguments: args, _meta: meta };
  const msg = { jsonrpc: r() < 0.95 ? "2.0" : "1.0", id: r() < 0.9 ? Math.floor(r() * 1e6) : hostileJson(r), method, params };
  const body = r() < 0.1 ? JSON.stringify([msg, msg]) : r() < 0.05 ? "{not json" : JSON.stringify(msg);
  return {
    method: r() < 0.95 ? "POST" : pick(r, ["GET", "DELETE", "PUT"]),
    path: "/mcp",
    headers: { "content-type": "application/json", accept: pick(r, ["application/json, text/event-stream", "application/json", "*/*", "text/html"]) },
    body,
    target: "mcp",
  };
}

/** A stream opening (SSE route) with hostile symbols, sign-in proofs, session tokens and Last-Event-IDs. */
function streamRequest(r: () => number): FuzzRequest {
  const def = pick(r, STREAMS);
  const symbol = r() < 0.3 ? def.exampleSymbol : pick(r, HOSTILE_STRINGS);
  let path = def.symbol === "required" ? def.path.replace(":symbol", segment(r, symbol) || "x") : r() < 0.5 ? `${def.path}?symbol=${segment(r, symbol)}` : def.path;
  const headers: Record<string, string> = {};
  const proof = () => (r() < 0.5 ? Buffer.from(JSON.stringify(hostileJson(r))).toString("base64") : pick(r, HOSTILE_STRINGS));
  if (r() < 0.5) headers["sign-in-with-x"] = proof();
  if (r() < 0.2) headers["x-credits-session"] = pick(r, HOSTILE_STRINGS);
  if (r() < 0.3) headers["last-event-id"] = pick(r, [...HOSTILE_STRINGS, "liq_1_1", "cvd_BTC_0", "liq_99999999999999_1"]);
  if (r() < 0.2) path += `${path.includes("?") ? "&" : "?"}${pick(r, ["siwx", "session", "lastEventId"])}=${segment(r, proof())}`;
  return { method: r() < 0.9 ? "GET" : pick(r, ["POST", "DELETE"]), path, headers, target: `stream:${def.topic}` };
}

function randomRequest(r: () => number): FuzzRequest {
  const paths = ["/", "/health", "/metrics", "/openapi.json", "/.well-known/x402", "/api/v1/quote", "/api/v1/status", "/nope", "/%", "/api/v1/%E0%A4%A"];
  let path = pick(r, paths);
  if (path === "/api/v1/quote")
    path += `?path=${segment(r, pick(r, ["/api/v1/prices?symbols=btc", "/funding-rate/BTC", ...HOSTILE_STRINGS]))}&method=${pick(r, ["GET", "POST", "x"])}${r() < 0.3 ? `&body=${segment(r, JSON.stringify(hostileJson(r)))}` : ""}`;
  else if (r() < 0.5) path += `/${segment(r, pick(r, HOSTILE_STRINGS))}`;
  const headers: Record<string, string> = { "content-type": pick(r, ["application/json", "application/json; charset=latin1", "text/plain"]) };
  if (r() < 0.3) headers["content-encoding"] = pick(r, ["gzip", "compress", "br", "identity"]);
  const method = pick(r, ["GET", "POST", "DELETE", "PUT", "OPTIONS"]);
  const body = method === "GET" || method === "OPTIONS" ? undefined : r() < 0.5 ? "{bad json" : JSON.stringify(hostileJson(r));
  return { method, path, headers, body, target: "random" };
}

/**
 * Sometimes gives a request a hostile `Host`, `X-Forwarded-Host` / `X-Forwarded-Proto` (read by the
 * service under trust proxy) or method, on top of whatever else it carries.
 */
function withHostileEnvelope(r: () => number, req: FuzzRequest): FuzzRequest {
  const headers = { ...req.headers };
  if (r() < 0.15) headers.host = pick(r, HOSTILE_HOSTS);
  if (r() < 0.1) headers["x-forwarded-host"] = pick(r, HOSTILE_HOSTS);
  if (r() < 0.05) headers["x-forwarded-proto"] = pick(r, ["https", "http", "javascript", "a b", "https, http", ""]);
  const method = r() < 0.05 ? pick(r, HOSTILE_METHODS) : req.method;
  return { ...req, method, headers };
}

/**
 * Generates `count` hostile requests over every route of the registry (path, query, body and payment
 * headers), `POST /mcp` and unrouted paths, with hostile Host, X-Forwarded-Host and methods mixed in,
 * reproducibly from `seed`. `valid` is a real signed payment payload to mutate (structure-aware fuzzing
 * of the payment path).
 */
export function* generateRequests(seed: number, count: number, tools: readonly AnyTool[], valid?: PaymentPayload): Generator<FuzzRequest> {
  const r = prng(seed);
  for (let i = 0; i < count; i++) {
    const k = r();
    let req: FuzzRequest;
    if (k < 0.7) req = toolRequest(r, pick(r, tools), valid);
    else if (k < 0.85) req = mcpRequest(r, tools, valid);
    else if (k < 0.9) req = streamRequest(r);
    else req = randomRequest(r);
    yield withHostileEnvelope(r, req);
  }
}
