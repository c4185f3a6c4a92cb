import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { DataMode } from "../src/config.js";
import { parseToolInput } from "../src/core/input.js";
import type { Metrics } from "../src/core/metrics.js";
import type { ToolRunner } from "../src/core/runner.js";
import { mcpJsonSchema } from "../src/docs/json-schema.js";
import type { PriceBook } from "../src/docs/pricing.js";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";
import { handlerFailure, type PaymentProcessor } from "../src/payments/processor.js";
import type { PaymentPayload } from "@x402/core/types";
import { CREDENTIAL_ARGS, isFree, type AnyTool, type CallerCredentials } from "../src/registry/tool.js";
import type { MissRateLimiter } from "../http/rate-limit.js";

/** `_meta` key of the payment on `tools/call` (x402 MCP transport, specs/transports-v2/mcp.md). */
export const PAYMENT_META = "x402/payment";
/** `_meta` key of the settlement receipt on the result. */
export const PAYMENT_RESPONSE_META = "x402/payment-response";
/** `_meta` key stating whether an answer comes from live venues or the simulator. */
export const DATA_SOURCE_META = "marketgate/data-source";

/** Per-call facts supplied by the transport. */
export interface CallContext {
  /** Rate-limit key (client IP) for network transports; undefined for stdio (not limited). */
  rateLimitKey?: string;
  /** Request `_meta` (carries the x402 payment). */
  meta?: Record<string, unknown>;
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
}

function text(value: unknown): string {
  return JSON.stringify(value);
}

/** JSON Schema of the credential arguments of tools with `acceptsCredentials` (HTTP sends them as headers). */
const CREDENTIAL_PROPERTIES = {
  manage_token: { type: "string", description: "the alert's manage_token (returned at creation); or sign as the owner wallet instead" },
  wallet_signature: { type: "string", description: "EIP-191 signature by the owner (paying) wallet of 'marketgate:<action>:<alert_id>:<signed_at>' (action: read or cancel)" },
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

/**
 * The registry as MCP tools: the `tools/list` answer is built once; `call` runs one `tools/call` with
 * the same pipeline as HTTP (validate, free cache hit, rate limit, x402, single-flight, settle, commit).
 * Errors are `isError` results whose text is the HTTP error body (`{"error":{"code",...}}`); a payment
 * request is an `isError` result whose text is the x402 PaymentRequired object.
 */
export class McpCatalog {
  readonly list: Tool[];
  private readonly byName: Map<string, AnyTool>;

  constructor(private readonly deps: McpCatalogDeps) {
    this.byName = new Map(deps.tools.map((t) => [t.name, t]));
    this.list = deps.tools.map((t) => this.describe(t));
  }

  private describe(t: AnyTool): Tool {
    const price = this.deps.payments ? this.deps.prices.get(t.name) : undefined;
    return {
      name: t.name,
      title: t.title,
      description: `${t.description}${isFree(t) ? " Free." : ` Price: ${t.priceUsd} USDC per call${t.cacheTtlSec > 0 ? ` (cache hits free for ${t.cacheTtlSec}s)` : ""}.`}`,
      inputSchema: this.inputSchema(t),
      outputSchema: mcpJsonSchema(t.output, "output") as Tool["outputSchema"],
      annotations: { title: t.title, readOnlyHint: true, idempotentHint: true, openWorldHint: true, ...t.annotations },
      _meta: {
        "marketgate/http": `${t.method} ${t.path}`,
        "marketgate/cache-ttl-sec": t.cacheTtlSec,
        "marketgate/price-usd": t.priceUsd,
        ...(price ? { "x402/price": { amountUsd: t.priceUsd, scheme: price.scheme, network: price.network, asset: price.asset, amount: price.amount } } : {}),
      },
    };
  }

  private inputSchema(t: AnyTool): Tool["inputSchema"] {
    const schema = mcpJsonSchema(t.input, "input") as Tool["inputSchema"];
    if (!t.acceptsCredentials) return schema;
    return { ...schema, properties: { ...schema.properties, ...CREDENTIAL_PROPERTIES } };
  }

  private error(err: unknown): CallToolResult {
    const e = toAppError(err);
    if (e.code === "INTERNAL") logger.error({ err: e.cause ?? e }, "mcp tool error");
    return { isError: true, content: [{ type: "text", text: text(e.toBody()) }] };
  }

  private ok(value: unknown, meta: Record<string, unknown>): CallToolResult {
    return {
      content: [{ type: "text", text: text(value) }],
      structuredContent: value as Record<string, unknown>,
      _meta: { [DATA_SOURCE_META]: this.deps.dataMode === "sim" ? "simulated" : "live", ...meta },
    };
  }

  /** Runs one `tools/call`. Never throws. */
  async call(name: string, args: unknown, cc: CallContext): Promise<CallToolResult> {
    const { runner, metrics } = this.deps;
    const tool = this.byName.get(name);
    if (!tool) return this.error(new AppError("NOT_FOUND", `unknown tool '${name}'`));
    try {
      const split = splitCredentials(tool, args);
      const input = parseToolInput(tool, split.args);
      const hit = await runner.lookup(tool, input);
      if (hit) return this.ok(hit.value, { "marketgate/cache": "HIT" });
      if (cc.rateLimitKey !== undefined) await this.deps.limiter?.consume(cc.rateLimitKey);
      await runner.precheck(tool, input);
      const interim = await runner.preflight(tool, input);
      if (interim) return this.ok(interim.body, { "marketgate/interim": { status: interim.status, retryAfterSec: interim.retryAfterSec ?? null } });
      if (isFree(tool) || !this.deps.payments) {
        const value = await runner.execute(tool, input, { credentials: split.credentials });
        await runner.commit(tool, input, value);
        return this.ok(value, { "marketgate/cache": "MISS" });
      }
      const resource = { url: `mcp://tool/${tool.name}`, description: tool.summary, mimeType: "application/json" };
      const check = await this.deps.payments.check(tool, cc.meta?.[PAYMENT_META] as PaymentPayload | undefined, resource, runner.key(tool, input)).catch((err: unknown) => {
        if (err instanceof AppError) throw err;
        throw new AppError("UPSTREAM_UNAVAILABLE", "payment facilitator unavailable; nothing was charged", { retryAfterSec: 5, cause: err });
      });
      if (check.kind === "required") {
        if (cc.meta?.[PAYMENT_META]) metrics.paymentsFailed.inc({ tool: tool.name, stage: "verify" });
        return { isError: true, content: [{ type: "text", text: text(check.required) }] };
      }
      if (check.kind !== "verified") return this.ok(check.value, { "marketgate/cache": "MISS", [PAYMENT_RESPONSE_META]: check.receipt });
      let value: unknown;
      try {
        value = await runner.execute(tool, input, { payer: check.payment.payer, credentials: split.credentials });
      } catch (err) {
        check.payment.abandon();
        throw handlerFailure(tool, err);
      }
      const settled = await check.payment.settle(value);
      if (settled.kind === "failed") {
        metrics.paymentsFailed.inc({ tool: tool.name, stage: "settle" });
        return { isError: true, content: [{ type: "text", text: text(settled.required) }] };
      }
      if (settled.kind === "unknown") {
        throw new AppError("UPSTREAM_ERROR", "payment settlement could not be confirmed yet; retry with the same payment to receive the result once confirmed", {
          retryAfterSec: settled.retryAfterSec,
        });
      }
      metrics.paymentsSettled.inc({ tool: tool.name, transport: "mcp" });
      metrics.revenueUsdc.inc({ tool: tool.name }, Number(tool.priceUsd));
      await runner.commit(tool, input, value);
      return this.ok(value, { "marketgate/cache": "MISS", [PAYMENT_RESPONSE_META]: settled.receipt });
    } catch (err) {
      return this.error(err);
    }
  }
}
