import type { z } from "zod";
import type { ToolContext } from "../core/context.js";
import type { CallerInfo, UnpaidCaller } from "../core/types.js";

// The caller types live in the import-free src/core/types.ts; tool authors take them from here too.
export type { CallerCredentials, CallerInfo, UnpaidCaller } from "../core/types.js";

/** HTTP method of a tool's route. */
export type HttpMethod = "GET" | "POST" | "DELETE";

/**
 * One endpoint of the catalogue, written once and read by every mount (HTTP, MCP, manifests).
 *
 * - `name`: MCP tool name and OpenAPI operationId (snake_case, SEP-986 charset).
 * - `path`: express-style path; `:name` segments are path parameters taken from `input`.
 * - `priceUsd`: decimal USD string charged per request in USDC (e.g. `"0.005"`), or `"free"`.
 * - `cacheTtlSec`: identical requests inside this window are answered from cache, free of charge.
 * - `input`: every path, query and body field; over HTTP, query strings are coerced to the schema's types.
 *   Parsing it must be a pure function of the raw input (no clock, no changing state): the cache-hit fast
 *   paths (http/cache-hits.ts, MCP cached calls) remember which cache key a raw request parsed to.
 * - `output`: the success body; documented in OpenAPI and MCP `outputSchema`, validated in tests.
 * - `handler`: returns the output or throws an `AppError`; it never sees transport details.
 */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly priceUsd: string;
  readonly cacheTtlSec: number;
  readonly summary: string;
  /**
   * What a model needs beyond `summary` to call the tool right over MCP (a limit, a unit, a follow-up call), in one
   * or two short sentences: MCP `tools/list` shows summary, this note and the price (mcp/tool-listing.ts), and leaves
   * the long `description` to OpenAPI, /llms-full.txt and the docs. Keep it under 200 characters.
   */
  readonly mcpNote?: string;
  /**
   * Maxima of numeric input fields over MCP, below the schema's (which HTTP keeps), so that a result fits a model's
   * context (80,000 characters of text; test/mcp/tool-result-budget.test.ts): the MCP input schema shows each as
   * `maximum` (and as `default` when the field has none or a larger one), a larger value is refused (an isError
   * BAD_REQUEST), and an absent field whose default is larger, or that has none, is sent as this maximum.
   */
  readonly mcpMaxima?: Readonly<Record<string, number>>;
  readonly description: string;
  /** Tags for grouping in OpenAPI and discovery. */
  readonly tags: readonly string[];
  readonly input: I;
  readonly output: O;
  /** A valid raw input (as a caller would send it), used by docs, the sandbox demo, tests and benchmarks. */
  readonly example: Readonly<Record<string, string | number | boolean>>;
  /**
   * A price that depends on the input (credit top-ups charge the amount they credit): decimal USD, at
   * least `priceUsd` (which is then the minimum shown in documents). Default: `priceUsd` for every call.
   */
  priceOf?(input: z.output<I>): string;
  /**
   * `upfront`: settle the payment before the handler runs (tools that create state, such as alerts), so a
   * failed settlement leaves nothing behind. Default: verify, run the handler, settle only on success.
   */
  readonly paymentFlow?: "upfront";
  /**
   * MCP annotations; defaults: read-only, idempotent, open-world (venue data). A tool that changes state
   * (`readOnlyHint: false`) must say whether it is destructive (`destructiveHint`; MCP's default is true), and
   * validateRegistry checks that it does: see {@link toolAnnotations}.
   */
  readonly annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; destructiveHint?: boolean };
  /**
   * Optional asynchronous validation that runs before any payment is asked for (e.g. "is this symbol
   * listed on any venue?"), for `caller` (free work it starts may be budgeted per client). Throws an
   * `AppError` (404 / 400 / 429 / 503); never charged.
   */
  checkBeforePayment?(input: z.output<I>, ctx: ToolContext, caller: UnpaidCaller): Promise<void>;
  /**
   * Optional interim answer decided before any payment (e.g. CVD warm-up: the stream for a new symbol is
   * being established). When it returns a value, the mounts send it free of charge and uncached: HTTP with
   * `status` and `Retry-After`, MCP as a normal result with `_meta["marketgate/interim"]`.
   */
  interimAnswer?(input: z.output<I>, ctx: ToolContext, caller: UnpaidCaller): Promise<InterimAnswer<z.output<O>> | undefined>;
  /**
   * HTTP status of a successful answer of a free tool (default 200): 202 for an answer that only accepts
   * the request (a refund whose transfer is not confirmed yet). OpenAPI then documents a 202 with the same
   * schema; MCP results carry the answer unchanged.
   */
  statusOf?(output: z.output<O>): 200 | 202;
  /**
   * The tool reads {@link CallerCredentials} (alert management): HTTP takes them from `Authorization:
   * Bearer`, `X-Wallet-Signature` and `X-Signed-At`; MCP from the arguments `manage_token`,
   * `wallet_signature` and `signed_at`. They are never part of the input or of a cache key.
   */
  readonly acceptsCredentials?: boolean;
  /**
   * `siwx`: the (free) tool acts for a wallet that must prove itself with a Sign-In-With-X proof
   * (`SIGN-IN-WITH-X` header / MCP `_meta["x402/sign-in-with-x"]`); without a valid one the mounts answer
   * 402 with the SIWX challenge, and the handler reads the wallet from `caller.wallet`.
   */
  readonly auth?: "siwx";
  /**
   * The tool creates or reads caller-owned state (alerts): its example refers to state that may not
   * exist, so generic runners (parity test, sandbox demo, benchmarks) leave it to its own tests.
   */
  readonly stateful?: boolean;
  handler(input: z.output<I>, ctx: ToolContext, caller: CallerInfo): Promise<z.output<O>>;
}

/** A caller with no payment and no credentials. */
export const ANONYMOUS: CallerInfo = Object.freeze({ credentials: Object.freeze({}) });

/** MCP argument names of the {@link CallerCredentials} fields. */
export const CREDENTIAL_ARGS = { manage_token: "bearerToken", wallet_signature: "walletSignature", signed_at: "signedAt" } as const;

/** An answer sent instead of the paid one, free of charge (see {@link ToolDef.interimAnswer}). */
export interface InterimAnswer<T> {
  status: number;
  retryAfterSec?: number;
  body: T;
}

/** The USD price of one call of `tool` with `input` (decimal string; `priceOf` when the tool has one). */
export function priceFor(tool: AnyTool, input: unknown): string {
  return tool.priceOf ? tool.priceOf(input) : tool.priceUsd;
}

/** A tool of any input/output type, as stored in the registry. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any, any>;

/** Identity function that gives a tool definition its types. */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

/** True when a tool answers its example from market data alone (not {@link ToolDef.stateful}). */
export function isMarketDataTool(tool: AnyTool): boolean {
  return !tool.stateful;
}

/** The MCP annotations of a tool, every hint set: its own, else read-only, not destructive, idempotent, open-world. */
export function toolAnnotations(tool: AnyTool): { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean } {
  const a = tool.annotations ?? {};
  return { readOnlyHint: a.readOnlyHint ?? true, destructiveHint: a.destructiveHint ?? false, idempotentHint: a.idempotentHint ?? true, openWorldHint: a.openWorldHint ?? true };
}

/** True when the tool is served without payment. */
export function isFree(tool: AnyTool): boolean {
  return tool.priceUsd === "free";
}

/** Names of the `:param` segments of a tool's path, in order. */
export function pathParams(tool: AnyTool): string[] {
  return [...tool.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
}

/**
 * The HTTP request path (with query string for GET/DELETE) for a raw input, e.g.
 * `requestPath(cexMarket, {id: "bitcoin"})` -> `/api/v1/market/bitcoin`.
 */
export function requestPath(tool: AnyTool, raw: Readonly<Record<string, string | number | boolean>> = tool.example): string {
  const params = new Set(pathParams(tool));
  const path = tool.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => encodeURIComponent(String(raw[name] ?? "")));
  if (tool.method === "POST") return path;
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(raw)) if (!params.has(k)) qs.set(k, String(v));
  return qs.size ? `${path}?${qs}` : path;
}
