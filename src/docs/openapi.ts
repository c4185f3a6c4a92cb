import { isFree, type AnyTool } from "../registry/tool.js";
import { jsonSchema, splitInput, type JsonSchema } from "./json-schema.js";
import { routeTemplate, type PriceBook } from "./pricing.js";

/** Service identity shown in documents. */
export interface ServiceInfo {
  name: string;
  version: string;
  description: string;
  /** Absolute base URL, when known; documents use relative paths otherwise. */
  publicUrl?: string;
}

const ERROR_RESPONSES: Record<string, string> = {
  "400": "Malformed parameters (error.details lists each field)",
  "403": "Missing or invalid manage token / owner signature (alert management)",
  "404": "Unknown symbol, id or route",
  "409": "Conflict: payment identifier reused for another request, or the alert is not active",
  "429": "Rate limit of uncached requests exceeded; see Retry-After",
  "500": "Server error",
  "502": "Upstream venue or facilitator error; nothing was charged",
  "503": "Upstream venue or facilitator unavailable; see Retry-After; nothing was charged",
  "504": "Upstream venue timed out; nothing was charged",
};

const errorRef = { $ref: "#/components/schemas/Error" };

/** Header parameters of tools that read caller credentials (alert management). */
const CREDENTIAL_HEADERS = [
  { name: "Authorization", in: "header", required: false, description: "Bearer <manage_token> returned when the alert was created", schema: { type: "string" } },
  { name: "X-Wallet-Signature", in: "header", required: false, description: "EIP-191 signature by the owner wallet of 'marketgate:<read|cancel>:<alert_id>:<X-Signed-At>'", schema: { type: "string" } },
  { name: "X-Signed-At", in: "header", required: false, description: "unix seconds in the signed message, within 5 minutes of the server clock", schema: { type: "string" } },
];

function operation(tool: AnyTool, prices: PriceBook): Record<string, unknown> {
  const { path, rest, restRequired } = splitInput(tool);
  const parameters = [
    ...Object.entries(path).map(([name, schema]) => ({ name, in: "path", required: true, description: schema.description, schema })),
    ...(tool.method === "POST"
      ? []
      : Object.entries(rest.properties ?? {}).map(([name, schema]) => ({ name, in: "query", required: restRequired.includes(name), description: schema.description, schema }))),
    ...(tool.acceptsCredentials ? CREDENTIAL_HEADERS : []),
  ];
  const responses: Record<string, unknown> = {
    "200": {
      description: tool.cacheTtlSec > 0 ? `Success. X-Cache: HIT marks a free answer from the ${tool.cacheTtlSec}s cache.` : "Success",
      content: { "application/json": { schema: jsonSchema(tool.output, "output") } },
    },
  };
  const price = prices.get(tool.name);
  if (!isFree(tool) && price) {
    responses["402"] = {
      description: "Payment required: x402 v2 requirements in the PAYMENT-REQUIRED header (base64 JSON); v1 view in X-PAYMENT and the body",
      headers: { "PAYMENT-REQUIRED": { schema: { type: "string" }, description: "base64 JSON PaymentRequired (x402 v2)" } },
    };
  }
  for (const [code, description] of Object.entries(ERROR_RESPONSES)) {
    responses[code] = { description, content: { "application/json": { schema: errorRef } } };
  }
  const op: Record<string, unknown> = {
    operationId: tool.name,
    summary: tool.summary,
    description: tool.description,
    tags: [...tool.tags],
    parameters,
    responses,
    "x-cache-ttl": tool.cacheTtlSec,
  };
  if (tool.method === "POST") op.requestBody = { required: true, content: { "application/json": { schema: rest } } };
  if (price) {
    op["x-payment-info"] = {
      price: { mode: "fixed", currency: "USD", amount: tool.priceUsd },
      protocols: [{ x402: { scheme: price.scheme, network: price.network, asset: price.asset, amount: price.amount, ...(price.payTo ? { payTo: price.payTo } : {}) } }],
    };
  }
  return op;
}

/** The free quote endpoint (an HTTP-mount feature, not a tool): the payment a request would need. */
const QUOTE_OPERATION = {
  operationId: "get_quote",
  summary: "Exact payment requirements of a request, without running it (free)",
  tags: ["service"],
  parameters: [
    { name: "path", in: "query", required: true, description: "request path with its query, e.g. /api/v1/prices?symbols=btc", schema: { type: "string" } },
    { name: "method", in: "query", required: false, description: "HTTP method (default GET)", schema: { type: "string", enum: ["GET", "POST", "DELETE"] } },
    { name: "body", in: "query", required: false, description: "for POST: the JSON body the request would send (validated like the route); without it the price is quoted and input_checked is false", schema: { type: "string" } },
  ],
  responses: {
    "200": {
      description: "The quote: price, whether it would be free (cache hit, free tool), the x402 PaymentRequired and MPP challenges",
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["tool", "method", "path", "price_usd", "cache_ttl_sec", "input_checked", "charged"],
            properties: {
              tool: { type: "string" },
              method: { type: "string" },
              path: { type: "string" },
              price_usd: { type: "string" },
              cache_ttl_sec: { type: "integer" },
              input_checked: { type: "boolean", description: "false for a POST quoted without its body: the price holds, the body was not validated" },
              charged: { type: "boolean" },
              reason: { type: "string", enum: ["free_tool", "cache_hit", "payments_off"] },
              interim_possible: { type: "string", description: "present when the request may first be answered free with an interim body (CVD warm-up)" },
              x402: { type: "object", properties: { payment_required: { type: "object" }, header: { type: "string" } } },
              mpp: { type: "object", properties: { challenges: { type: "array", items: { type: "string" } } } },
            },
          },
        },
      },
    },
    "400": { description: "The request would be malformed", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
    "404": { description: "Unknown route, symbol or id", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  },
  "x-cache-ttl": 0,
};

/** Builds the OpenAPI 3.1 document of the catalogue (operationId = MCP tool name, `x-payment-info`, `x-cache-ttl`). */
export function buildOpenApi(tools: readonly AnyTool[], prices: PriceBook, info: ServiceInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const t of tools) {
    const p = routeTemplate(t.path);
    paths[p] ??= {};
    paths[p][t.method.toLowerCase()] = operation(t, prices);
  }
  paths["/api/v1/quote"] = { get: QUOTE_OPERATION };
  const error: JsonSchema = {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: info.name,
      version: info.version,
      description: info.description,
      license: { name: "MIT", identifier: "MIT" },
      "x-guidance":
        "Paid operations answer 402 with x402 v2 payment requirements (USDC on Base). Sign an EIP-3009 authorization and retry with PAYMENT-SIGNATURE. Identical requests inside x-cache-ttl seconds are free (X-Cache: HIT). The live 402 is authoritative.",
    },
    servers: [{ url: info.publicUrl ?? "/" }],
    paths,
    components: { schemas: { Error: error } },
  };
}
