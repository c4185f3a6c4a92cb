import { specTypeSchemas, type CallToolResult, type Tool } from "@modelcontextprotocol/server";
import { LRUCache } from "lru-cache";
import type { DataMode } from "../src/config.js";
import { CallPipeline, type CallOutcome, type CallSite, type Paid } from "../src/core/call-pipeline.js";
import { parseToolInput } from "../src/core/input.js";
import type { Metrics } from "../src/core/metrics.js";
import { hasSharedHits, type HitAnswer } from "../src/core/hit-answer.js";
import type { DataSource } from "../src/core/request-scope.js";
import type { ToolRunner } from "../src/core/runner.js";
import { allAccepts, type PriceBook } from "../src/docs/pricing.js";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import type { PaymentProcessor } from "../src/payments/processor.js";
import type { CreditGate } from "../src/payments/credits/gate.js";
import { withReceipt, type ReceiptIssuer, type Sealed } from "../src/payments/receipts/issuer.js";
import type { PaymentRequired } from "@x402/core/types";
import { CREDENTIAL_ARGS, isFree, toolAnnotations, type AnyTool, type CallerCredentials } from "../src/registry/tool.js";
import type { MissRateLimiter } from "../src/lib/rate-limit.js";
import { maximaDefaults, withMcpMaxima } from "./maxima.js";
import { mcpDescription, mcpInputSchema, mcpOutputSchema, withPaymentRequired } from "./tool-listing.js";
import { selectTools } from "./toolsets.js";

/*
 * The `_meta` keys of paid calls (payment, receipt, SIWX proof, credits, session token) are shared with the clients
 * (src/client/mcp-meta.ts imports nothing, so the client bundle stays free of the server).
 */
import { CREDITS_META, PAYMENT_META, PAYMENT_RESPONSE_META, SESSION_META, SIWX_META } from "../src/client/mcp-meta.js";
export { CREDITS_META, PAYMENT_META, PAYMENT_RESPONSE_META, SESSION_META, SIWX_META };
/** `_meta` key stating whether an answer comes from live venues or the simulator. */
export const DATA_SOURCE_META = "marketgate/data-source";
/**
 * `_meta` key of a paid result's signed receipt and content signature (receipts on, docs/receipts.md):
 * `{ receipt, content_digest, signature_input, signature, method, target_uri }`, the digest over the text
 * content's UTF-8 bytes. An x402 result carries the receipt in `x402/payment-response` as well.
 */
export const RECEIPT_META = "marketgate/receipt";
/**
 * `_meta` key of an isError result the caller may retry after waiting: the seconds HTTP sends as `Retry-After`
 * (rate limited, a venue or the facilitator unavailable, a settlement not yet confirmed). Its text has them too
 * (`retry_after_sec`, {@link AppError.toMcpBody}).
 */
export const RETRY_AFTER_META = "marketgate/retry-after-sec";

/** Per-call facts supplied by the transport. */
export interface CallContext {
  /** Rate-limit key (client IP) for network transports; undefined for stdio (not limited). */
  rateLimitKey?: string;
  /** Request `_meta` (carries the x402 payment or a SIWX proof). */
  meta?: Record<string, unknown>;
  /**
   * Origin SIWX proofs and session tokens are bound to: the configured origin of `/mcp` (src/lib/public-origins.ts),
   * never a request's Host; default {@link McpCatalogDeps.origin}.
   */
  origin?: string;
  /** Base of the public URL of `/mcp` (origin and PUBLIC_URL's path) that 402s name; default {@link McpCatalogDeps.baseUrl}, else the origin. */
  baseUrl?: string;
  /**
   * The credits session token of the request's `Authorization: Bearer` header (HTTP only): pays paid tools from
   * credits when the call's `_meta` carries no payment, SIWX proof or session token of its own.
   */
  bearer?: string;
}

/** What the MCP catalogue needs. `payments` undefined = every tool free (stdio default). */
export interface McpCatalogDeps {
  tools: readonly AnyTool[];
  runner: ToolRunner;
  metrics: Metrics;
  dataMode: DataMode;
  prices: PriceBook;
  limiter?: MissRateLimiter;
  payments?: PaymentProcessor;
  /** Prepaid credits (SIWX), when payments are on. */
  credits?: CreditGate;
  /** Signed offers and receipts (docs/receipts.md), when payments and receipts are on. */
  receipts?: ReceiptIssuer;
  /** Origin of SIWX proofs when the transport has none (stdio): PUBLIC_URL's, else the configured loopback address. */
  origin: string;
  /** Base of the public URL of `/mcp` when the transport has none (stdio): default {@link origin}. */
  baseUrl?: string;
}

function text(value: unknown): string {
  return JSON.stringify(value);
}

/** `_meta` of a result answered from the response cache (beside the data source). */
const HIT_META = { "marketgate/cache": "HIT" } as const;

/**
 * Characters of `tools/call` signatures (name and arguments) remembered with their cache keys, least recently
 * used forgotten first, so invented arguments cannot grow it; arguments longer than
 * {@link MAX_REMEMBERED_ARGS_CHARS} are never remembered (such calls take the full pipeline every time).
 */
const MAX_REMEMBERED_CHARS = 2_000_000;
const MAX_REMEMBERED_ARGS_CHARS = 2_048;

/** The memo key of a call: tool name and arguments as JSON (as received; undefined when they do not serialize). */
function callSignature(name: string, args: unknown): string | undefined {
  try {
    const json = JSON.stringify(args);
    return json === undefined || json.length > MAX_REMEMBERED_ARGS_CHARS ? undefined : `${name}\n${json}`;
  } catch {
    return undefined;
  }
}

/**
 * A `tools/call` result answered from the response cache, serialized once per cache entry and data-source
 * label, so that a cached call costs a lookup and a copy rather than a serialization.
 */
export interface CachedAnswer {
  /**
   * The UTF-8 bytes of the stateless Streamable HTTP answer up to its id, `{"result":<json>,"jsonrpc":"2.0","id":`
   * (the SDK's transport writes a response's keys in that order); the id and `}` complete it.
   */
  readonly responseHead: Buffer;
}

/** The JSON-RPC response head of a result serialized as `json` (see {@link CachedAnswer}). */
function responseHead(json: string): Buffer {
  return Buffer.from(`{"result":${json},"jsonrpc":"2.0","id":`);
}

/**
 * `result` as the SDK server's result validation outputs it (its key order is what the SDK sends).
 * @throws Error when the SDK would refuse it (a bug: the cache holds only results the SDK has sent).
 */
function sdkValidated(result: CallToolResult): CallToolResult {
  const out = specTypeSchemas.CallToolResult["~standard"].validate(result);
  if (out.issues) throw new Error(`mcp: invalid tools/call result: ${out.issues.map((i) => i.message).join("; ")}`);
  return out.value as CallToolResult;
}

/** A server's identity (`name`, `version`), as `initialize`, `server/discover` and 2026-07-28 results name it. */
export interface McpServerInfoLike {
  name: string;
  version: string;
}

/** `_meta` key of the server's identity on every 2026-07-28 result (the SDK's encoder adds it). */
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";

/**
 * A cached `tools/call` result as each protocol era sends it: {@link legacy} for `2025-11-25` clients, and
 * {@link modern} for `2026-07-28` clients, which the SDK's 2026 encoder gives `resultType: "complete"` and the
 * server's identity in `_meta` (test/mcp/cached-call.test.ts checks both against the SDK's own answers).
 */
export class CachedResult {
  /** The `2025-11-25` answer. */
  readonly legacy: CachedAnswer;
  #modern?: CachedAnswer;

  /** @param result the result as the SDK's result validation outputs it (its key order is the wire's). */
  constructor(private readonly result: CallToolResult) {
    this.legacy = { responseHead: responseHead(JSON.stringify(result)) };
  }

  /** The `2026-07-28` answer of a server named `info`, built on first use (a server has one identity). */
  modern(info: McpServerInfoLike): CachedAnswer {
    return (this.#modern ??= { responseHead: responseHead(JSON.stringify({ ...this.result, _meta: { ...this.result._meta, [SERVER_INFO_META]: info }, resultType: "complete" })) });
  }
}

/** JSON Schema of the credential arguments of tools with `acceptsCredentials` (HTTP sends them as headers). */
const CREDENTIAL_PROPERTIES = {
  manage_token: { type: "string", description: "the alert's manage_token (returned at creation); or sign as the owner wallet instead" },
  wallet_signature: {
    type: "string",
    description:
      "EIP-191 signature by the owner (paying) wallet of 'marketgate:<action>:<alert_id, or for list the wallet in lower case>:<signed_at>' (action: read, cancel or list)",
  },
  signed_at: { type: "string", description: "unix seconds used in the signed message (within 5 minutes of now)" },
} as const;

/** Splits MCP arguments into the tool's own arguments and the caller's credentials. */
function splitCredentials(tool: AnyTool, args: unknown): { args: unknown; credentials: CallerCredentials } {
  if (!tool.acceptsCredentials || !args || typeof args !== "object") return { args, credentials: {} };
  const rest: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  const credentials: CallerCredentials = {};
  for (const [arg, field] of Object.entries(CREDENTIAL_ARGS)) {
    if (typeof rest[arg] === "string") credentials[field] = rest[arg];
    delete rest[arg];
  }
  return { args: rest, credentials };
}

/** The `_meta` of a paid result: the x402 receipt, or the credits left; with `sealed`, the signed receipt and content signature. */
function paidMeta(paid: Paid | undefined, sealed: Sealed | undefined): Record<string, unknown> {
  if (!paid) return {};
  const signed = sealed
    ? {
        [RECEIPT_META]: {
          receipt: sealed.receipt,
          content_digest: sealed.headers["Content-Digest"],
          signature_input: sealed.headers["Signature-Input"],
          signature: sealed.headers.Signature,
          method: sealed.request.method,
          target_uri: sealed.request.targetUri,
        },
      }
    : {};
  if (paid.method === "credits") return { [CREDITS_META]: paid.credits, ...signed };
  return { [PAYMENT_RESPONSE_META]: sealed ? withReceipt(paid.receipt, sealed.receipt) : paid.receipt, ...signed };
}

/**
 * The registry as MCP tools: the `tools/list` answer is built once; `call` reads one `tools/call` (arguments,
 * credentials, `_meta` proofs) and switches over the outcome of the same call pipeline as HTTP
 * (src/core/call-pipeline.ts). Errors are `isError` results whose text is the HTTP error body
 * (`{"error":{"code",...}}`); a payment request is an `isError` result whose text is the x402
 * PaymentRequired object (with the SIWX challenge when credits are on).
 */
export class McpCatalog {
  /** Every tool, as `tools/list` shows it (`?toolsets=all`). */
  readonly list: Tool[];
  /** The `tools/list` of each toolset selection asked for, by normalised selection (see {@link listFor}). */
  private readonly lists = new Map<string, Tool[]>();
  private readonly byName: Map<string, AnyTool>;
  /** Input defaults of the fields with an MCP maximum, per tool name (mcp/maxima.ts). */
  private readonly maximaDefaults: Map<string, Map<string, unknown>>;
  /** Runs the calls; its labels give `_meta["marketgate/data-source"]`: live, simulated, or replay (see request-scope.ts). */
  private readonly pipeline: CallPipeline;
  /**
   * Cache key of each call already parsed, by {@link callSignature}, for tools with shared hits: parsing a
   * tool's input is a pure function of its arguments, so {@link cachedResult} needs no schema parse.
   */
  private readonly keys = new LRUCache<string, { tool: AnyTool; key: string }>({ maxSize: MAX_REMEMBERED_CHARS, sizeCalculation: (_v, sig) => sig.length });
  /** The serialized hit results of each cache entry, per data-source label, built on first use (freed with the entry). */
  private readonly hitResults = new WeakMap<HitAnswer, Partial<Record<DataSource, CachedResult>>>();

  constructor(private readonly deps: McpCatalogDeps) {
    this.byName = new Map(deps.tools.map((t) => [t.name, t]));
    this.maximaDefaults = new Map(deps.tools.map((t) => [t.name, maximaDefaults(t)]));
    this.pipeline = new CallPipeline({
      runner: deps.runner,
      metrics: deps.metrics,
      dataMode: deps.dataMode,
      transport: "mcp",
      payments: deps.payments,
      credits: deps.credits,
      receipts: deps.receipts,
    });
    this.list = deps.tools.map((t) => this.describe(t));
  }

  private describe(t: AnyTool): Tool {
    const price = this.deps.payments ? this.deps.prices.get(t.name) : undefined;
    return {
      name: t.name,
      title: t.title,
      description: mcpDescription(t),
      inputSchema: this.inputSchema(t),
      outputSchema: this.answers402(t) ? withPaymentRequired(mcpOutputSchema(t)) : mcpOutputSchema(t),
      annotations: { title: t.title, ...toolAnnotations(t) },
      _meta: {
        "marketgate/http": `${t.method} ${t.path}`,
        "marketgate/cache-ttl-sec": t.cacheTtlSec,
        "marketgate/price-usd": t.priceUsd,
        ...(price ? { "x402/price": { amountUsd: t.priceUsd, scheme: price.scheme, network: price.network, asset: price.asset, amount: price.amount } } : {}),
        // Every network the tool may be paid on (Base, and Solana when offered), as the 402's `accepts` lists them.
        ...(price ? { "x402/accepts": allAccepts(price).map((a) => ({ scheme: a.scheme, network: a.network, asset: a.asset, amount: a.amount })) } : {}),
      },
    };
  }

  /** Whether calls of `t` may answer a 402 (payments on, and a paid or sign-in tool): its output schema admits the PaymentRequired. */
  private answers402(t: AnyTool): boolean {
    return this.deps.payments !== undefined && (!isFree(t) || t.auth === "siwx");
  }

  private inputSchema(t: AnyTool): Tool["inputSchema"] {
    const schema = mcpInputSchema(t);
    if (!t.acceptsCredentials) return schema;
    return { ...schema, properties: { ...schema.properties, ...CREDENTIAL_PROPERTIES } };
  }

  /**
   * The `tools/list` of a toolset selection (`/mcp?toolsets=perp,dex`, `MCP_TOOLSETS`; see mcp/toolsets.ts), built
   * once per selection: blank or undefined lists the default toolsets.
   * @throws AppError BAD_REQUEST for an unknown toolset name.
   */
  listFor(toolsets: string | undefined): Tool[] {
    const key = (toolsets ?? "").trim().toLowerCase();
    let list = this.lists.get(key);
    if (!list) {
      const names = new Set(selectTools(this.deps.tools, key).map((t) => t.name));
      list = this.list.filter((t) => names.has(t.name));
      // Selections are few (toolset names, checked above); the bound only stops a caller from growing it.
      if (this.lists.size < 256) this.lists.set(key, list);
    }
    return list;
  }

  /**
   * Where a call's 402s point: the service's public `/mcp` URL (`<base>/mcp`, PUBLIC_URL's path included), so that
   * the x402 Bazaar lists the tool under (that URL, tool name); the SIWX challenge names `<origin>/mcp`.
   */
  private site(tool: AnyTool, cc: CallContext): CallSite {
    const origin = cc.origin ?? this.deps.origin;
    const base = (cc.baseUrl ?? this.deps.baseUrl ?? origin).replace(/\/+$/, "");
    return {
      resource: { url: `${base}/mcp`, description: tool.summary, mimeType: "application/json" },
      origin,
      challengeUrl: `${origin}/mcp`,
      signInHint: `sign_in_required: put a SIWX proof in _meta["${SIWX_META}"] to use this tool`,
    };
  }

  /**
   * A payment request result: `isError`, the PaymentRequired in `structuredContent` and as the JSON text of
   * `content[0]` (the x402 MCP transport requires both; the tool's output schema admits it, see
   * {@link withPaymentRequired}).
   */
  private paymentRequired(required: PaymentRequired): CallToolResult {
    return { isError: true, content: [{ type: "text", text: text(required) }], structuredContent: required as unknown as Record<string, unknown> };
  }

  private error(err: unknown): CallToolResult {
    const e = toAppError(err);
    if (e.code === "INTERNAL") logger.error({ err: e.cause ?? e }, "mcp tool error");
    const result: CallToolResult = { isError: true, content: [{ type: "text", text: text(e.toMcpBody()) }] };
    if (e.retryAfterSec !== undefined) result._meta = { [RETRY_AFTER_META]: e.retryAfterSec };
    return result;
  }

  private ok(value: unknown, meta: Record<string, unknown>, label: DataSource): CallToolResult {
    return {
      content: [{ type: "text", text: text(value) }],
      structuredContent: value as Record<string, unknown>,
      _meta: { [DATA_SOURCE_META]: label, ...meta },
    };
  }

  /**
   * The result of a `tools/call` this process can answer from its response cache right away, serialized:
   * what {@link call} returns for that hit, after the SDK server's own result validation (the SDK's
   * `CallToolResultSchema` output, which is what it sends), built once per cache entry and label. Counts the
   * hit like {@link call}. Undefined, with nothing counted, when the call needs {@link call}: its tool's hits
   * are not shared, these exact arguments have not been parsed yet, or this process does not hold the entry.
   */
  cachedResult(name: string, args: unknown): CachedResult | undefined {
    const sig = callSignature(name, args);
    const known = sig === undefined ? undefined : this.keys.get(sig);
    if (!known) return undefined;
    const hit = this.deps.runner.peek(known.tool, known.key);
    if (!hit) return undefined;
    const label = this.pipeline.labels.labelOfHit(known.key);
    let results = this.hitResults.get(hit.answer);
    if (!results) this.hitResults.set(hit.answer, (results = {}));
    return (results[label] ??= new CachedResult(sdkValidated(this.ok(hit.value, HIT_META, label))));
  }

  /** Remembers the cache key of a call's arguments for {@link cachedResult} (tools with shared hits only). */
  private remember(tool: AnyTool, args: unknown, key: string): void {
    if (!hasSharedHits(tool)) return;
    const sig = callSignature(tool.name, args);
    if (sig !== undefined && this.keys.get(sig)?.key !== key) this.keys.set(sig, { tool, key });
  }

  /** Runs one `tools/call`. Never throws. */
  async call(name: string, args: unknown, cc: CallContext): Promise<CallToolResult> {
    const tool = this.byName.get(name);
    if (!tool) return this.error(new AppError("NOT_FOUND", `unknown tool '${name}'`));
    const meta = cc.meta;
    const limiter = this.deps.limiter;
    const rateLimitKey = cc.rateLimitKey;
    const split = splitCredentials(tool, args);
    let session = meta?.[SESSION_META];
    if (cc.bearer !== undefined && !isFree(tool) && this.deps.payments && session === undefined && meta?.[SIWX_META] === undefined && meta?.[PAYMENT_META] === undefined) {
      const refused = this.refusedBearer(cc.bearer, cc.origin ?? this.deps.origin);
      if (refused) return this.error(refused);
      session = cc.bearer;
    }
    const outcome = await this.pipeline.run({
      tool,
      parse: () => parseToolInput(tool, withMcpMaxima(tool, split.args, this.maximaDefaults.get(tool.name)!)),
      onKey: (key) => this.remember(tool, args, key),
      limit: rateLimitKey !== undefined && limiter ? () => limiter.consume(rateLimitKey) : undefined,
      client: rateLimitKey,
      credentials: split.credentials,
      proofs: {
        x402: meta?.[PAYMENT_META] !== undefined ? async () => meta[PAYMENT_META] : undefined,
        siwx: meta?.[SIWX_META],
        session,
      },
      site: () => this.site(tool, cc),
    });
    return this.result(outcome);
  }

  /**
   * Why an `Authorization: Bearer` credits session token cannot pay here (undefined when it can): not one this
   * service issued for `origin`, expired, or credits sessions off. Checked before the call, so a refused token
   * answers a clear isError (FORBIDDEN) and charges nothing, rather than a 402 that asks for a SIWX proof a host
   * configured with a header cannot give.
   */
  private refusedBearer(token: string, origin: string): AppError | undefined {
    const sessions = this.deps.credits?.sessions;
    const renew = "get a new token from a credits top-up or a SIWX-signed call (its result's _meta['marketgate/credits'].session), see docs/mcp-protocol.md";
    if (!sessions)
      return new AppError(
        "FORBIDDEN",
        `Authorization: Bearer: this service takes no credits session tokens (credits or their sessions are off); pay with _meta['${PAYMENT_META}'] instead`,
      );
    const v = sessions.verify(token, origin);
    return "refusal" in v ? new AppError("FORBIDDEN", `Authorization: Bearer refused: ${v.refusal}; ${renew}`) : undefined;
  }

  /** The `tools/call` result of a call's outcome. */
  private result(outcome: CallOutcome): CallToolResult {
    switch (outcome.kind) {
      case "hit":
        return this.ok(outcome.hit.value, HIT_META, outcome.source);
      case "interim": {
        const { interim } = outcome;
        return this.ok(interim.body, { "marketgate/interim": { status: interim.status, retryAfterSec: interim.retryAfterSec ?? null } }, outcome.source);
      }
      case "payment_required":
      case "sign_in_required":
        return this.paymentRequired(outcome.required);
      case "answer":
        return this.ok(outcome.value, { "marketgate/cache": "MISS", ...paidMeta(outcome.paid, outcome.sealed) }, outcome.source);
      case "error":
        return this.error(outcome.error);
    }
  }
}
