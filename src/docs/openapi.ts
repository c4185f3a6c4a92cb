import type { StreamDef } from "../registry/stream.js";
import { isFree, type AnyTool } from "../registry/tool.js";
import { jsonSchema, splitExample, splitInput, type JsonSchema } from "../registry/json-schema.js";
import { outputExample } from "../registry/output-example.js";
import { allAccepts, mppOffers, routeTemplate, type PaymentOffers, type PriceBook } from "./pricing.js";
import { offeredStreams, STREAM_AUTH_TEXT, STREAM_PAYMENT, STREAM_WS_PATH, streamBillingText, streamEvents, streamsPaid, wsMessageSchemas } from "./streams.js";

/** Service identity shown in documents. */
export interface ServiceInfo {
  name: string;
  version: string;
  description: string;
  /** Absolute base URL, when known; documents use relative paths otherwise. */
  publicUrl?: string;
  /** Who answers for this deployment (OpenAPI `info.contact`); default {@link CONTACT}. */
  contact?: { name?: string; url?: string; email?: string };
  /** The Solana network (CAIP-2) paid requests may also be paid on, when `PAY_TO_SOLANA` is set. */
  solanaNetwork?: string;
}

/** Default contact of a deployment: the project's issue tracker. */
export const CONTACT = { name: "marketgate", url: "https://github.com/marketgate/marketgate/issues" } as const;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, example?: unknown) => ({ "application/json": { schema, ...(example === undefined ? {} : { example }) } });
const errorResponse = (description: string) => ({ description, content: json(ref("ErrorBody")) });

/** Responses every tool route may give (the 403/409 of alerts and payments are added per operation). */
const TOOL_ERRORS: Record<string, string> = {
  "400": "Malformed parameters (error.details lists each field)",
  "404": "Unknown symbol, id or route",
  "414":
    "Request URL longer than the service accepts (path and query above 2048 bytes; a paid request's absolute URL above 1024, which its receipt repeats); refused before payment",
  "429": "Rate limit of uncached requests exceeded; see Retry-After",
  "500": "Server error",
  "502": "Upstream venue or facilitator error; nothing was charged",
  "503": "Upstream venue or facilitator unavailable; see Retry-After; nothing was charged",
  "504": "Upstream venue timed out; nothing was charged",
};

/** Header parameters of tools that read caller credentials (alert management). */
const CREDENTIAL_HEADERS = [
  { name: "Authorization", in: "header", required: false, description: "Bearer <manage_token> returned when the alert was created", schema: { type: "string" } },
  {
    name: "X-Wallet-Signature",
    in: "header",
    required: false,
    description: "EIP-191 signature by the owner wallet of 'marketgate:<read|cancel>:<alert_id>:<X-Signed-At>'",
    schema: { type: "string" },
  },
  { name: "X-Signed-At", in: "header", required: false, description: "unix seconds in the signed message, within 5 minutes of the server clock", schema: { type: "string" } },
];

/**
 * Security schemes. Payment is declared per operation by `x-payment-info` (agentcash discovery profile);
 * `security` lists what may stand in for a per-call x402 payment: `{}` (none: the call answers 402 with the
 * x402 requirements, paid with `PAYMENT-SIGNATURE`), an MPP credential, or prepaid credits (SIWX proof or
 * session token). The `x402` scheme documents the payment header but is not listed in `security`, where
 * discovery tools would read a header-type scheme as an API key ("apiKey+paid").
 */
const SECURITY_SCHEMES = {
  x402: {
    type: "apiKey",
    in: "header",
    name: "PAYMENT-SIGNATURE",
    description:
      "x402 v2 payment: base64 JSON PaymentPayload signed for one of the 402's `accepts` (EIP-3009 USDC authorization). v1 clients send X-PAYMENT. Declared by each operation's x-payment-info; not an API key.",
  },
  mpp: {
    type: "http",
    scheme: "Payment",
    description: "MPP credential (Authorization: Payment <credential>) answering one of the 402's WWW-Authenticate: Payment challenges (methods evm and tempo, intent charge).",
  },
  siwx: {
    type: "apiKey",
    in: "header",
    name: "SIGN-IN-WITH-X",
    "x-agentcash-auth-kind": "siwx",
    description:
      "Sign-In-With-X proof (CAIP-122 / EIP-4361) of a wallet holding prepaid credits (POST /api/v1/credits): the price is debited from its balance. Answers the 402's sign-in-with-x challenge.",
  },
  creditsSession: {
    type: "apiKey",
    in: "header",
    name: "X-Credits-Session",
    "x-agentcash-auth-kind": "siwx",
    description: "Credits session token returned (X-Credits-Session) by a call paid with a SIWX proof: later calls may send it instead of a new proof until it expires.",
  },
} as const;

/** `security` of a paid operation (see {@link SECURITY_SCHEMES}); credits are not accepted by top-ups. */
function paidSecurity(tool: AnyTool, offers: PaymentOffers): Array<Record<string, string[]>> {
  return [{}, ...(offers.mpp ? [{ mpp: [] }] : []), ...(offers.credits && !tool.priceOf ? [{ siwx: [] }, { creditsSession: [] }] : [])];
}

/** The 402 of a paid (or sign-in) operation: v1 body plus the credits hint, v2 in the PAYMENT-REQUIRED header. */
function paymentRequiredResponse(offers: PaymentOffers, signIn: boolean): Record<string, unknown> {
  return {
    description: signIn
      ? "Sign in: the SIGN-IN-WITH-X challenge is in the PAYMENT-REQUIRED header's extensions (beside the smallest top-up's requirements); error says why"
      : "Payment required. Body: the x402 v1 view (outputSchema: how to call, JSON Schema of the answer) plus how to use credits. PAYMENT-REQUIRED header: the x402 v2 PaymentRequired (base64 JSON) with the bazaar and sign-in-with-x extensions. The live 402 is authoritative.",
    headers: {
      "PAYMENT-REQUIRED": {
        description: "base64 JSON of the x402 v2 PaymentRequired",
        schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json", contentSchema: ref("PaymentRequired") },
      },
      ...(offers.mpp && !signIn
        ? {
            "WWW-Authenticate": { description: "MPP challenges: Payment id=..., realm=..., method=evm|tempo, intent=charge, request=..., expires=...", schema: { type: "string" } },
          }
        : {}),
    },
    content: json(ref("PaymentRequiredV1")),
  };
}

/** `x-payment-info` of a paid tool: price, protocols (x402, MPP methods) and prepaid credits. */
function paymentInfo(tool: AnyTool, price: NonNullable<ReturnType<PriceBook["get"]>>, offers: PaymentOffers): Record<string, unknown> {
  return {
    price: tool.priceOf
      ? { mode: "dynamic", currency: "USD", min: tool.priceUsd, ...(offers.credits ? { max: offers.credits.maxTopUpUsd } : {}) }
      : { mode: "fixed", currency: "USD", amount: tool.priceUsd },
    // One x402 entry per network: Base, then Solana when offered.
    protocols: [
      ...allAccepts(price).map((a) => ({
        x402: {
          x402Version: 2,
          scheme: a.scheme,
          network: a.network,
          asset: a.asset,
          amount: a.amount,
          ...(a.payTo ? { payTo: a.payTo } : {}),
          maxTimeoutSeconds: a.maxTimeoutSeconds,
          header: "PAYMENT-SIGNATURE",
        },
      })),
      ...mppOffers(price, offers).map((o) => ({ mpp: { method: o.method, intent: o.intent, currency: "USD", network: o.network, asset: o.asset } })),
    ],
    ...(offers.credits && !tool.priceOf
      ? {
          credits: {
            description:
              "prepaid credits: top up once (POST /api/v1/credits, x402 or MPP), then send a SIGN-IN-WITH-X proof or an X-Credits-Session token per call; the price is debited without a chain transaction",
            topUp: "POST /api/v1/credits",
            auth: "siwx",
            headers: ["SIGN-IN-WITH-X", "X-Credits-Session"],
          },
        }
      : {}),
  };
}

/** `example` of a parameter from the tool's example input, when it has one: what Scalar's "Send" fills in. */
const exampleOf = (values: Record<string, string | number | boolean>, name: string) => (name in values ? { example: values[name] } : {});

/**
 * `x-badges` (shown by Scalar beside the operation): the price per call, or "free". Dynamic prices (top-ups)
 * show their minimum.
 */
function priceBadges(tool: AnyTool, paid: boolean): Array<{ name: string; position: "before"; color: string }> {
  if (!paid) return [{ name: "free", position: "before", color: "#64748b" }];
  return [{ name: tool.priceOf ? `from ${tool.priceUsd} USD` : `${tool.priceUsd} USD`, position: "before", color: "#16a34a" }];
}

function operation(tool: AnyTool, prices: PriceBook, offers: PaymentOffers): Record<string, unknown> {
  const { path, rest, restRequired } = splitInput(tool);
  const example = splitExample(tool);
  const parameters = [
    ...Object.entries(path).map(([name, schema]) => ({ name, in: "path", required: true, description: schema.description, schema, ...exampleOf(example.path, name) })),
    ...(tool.method === "POST"
      ? []
      : Object.entries(rest.properties ?? {}).map(([name, schema]) => ({
          name,
          in: "query",
          required: restRequired.includes(name),
          description: schema.description,
          schema,
          ...exampleOf(example.rest, name),
        }))),
    ...(tool.acceptsCredentials ? CREDENTIAL_HEADERS : []),
  ];
  const price = prices.get(tool.name);
  const paid = !isFree(tool) && price !== undefined;
  const alerts = tool.tags.includes("alerts");
  const responses: Record<string, unknown> = {
    "200": {
      description: tool.cacheTtlSec > 0 ? `Success. X-Cache: HIT marks a free answer from the ${tool.cacheTtlSec}s cache.` : "Success",
      content: json(jsonSchema(tool.output, "output"), outputExample(tool)),
    },
  };
  if (tool.statusOf)
    responses["202"] = { description: "Accepted, not complete yet: the body says where it stands (see the description)", content: json(jsonSchema(tool.output, "output")) };
  if (paid) responses["402"] = paymentRequiredResponse(offers, false);
  else if (tool.auth === "siwx") responses["402"] = paymentRequiredResponse(offers, true);
  for (const [code, description] of Object.entries(TOOL_ERRORS)) {
    responses[code] = errorResponse(description);
    if (code === "400") {
      if (tool.acceptsCredentials) responses["403"] = errorResponse("Missing or invalid manage token / owner signature (alert management)");
      const conflicts = [
        ...(paid ? ["a payment identifier (or SIWX requestId) reused for another request, or still in progress"] : []),
        ...(alerts && tool.method !== "GET" && !tool.name.endsWith("_create") ? ["the alert is not active"] : []),
      ];
      if (conflicts.length) responses["409"] = errorResponse(`Conflict: ${conflicts.join("; or ")}`);
    }
  }
  const op: Record<string, unknown> = {
    operationId: tool.name,
    summary: tool.summary,
    description: tool.description,
    tags: [...tool.tags],
    security: paid ? paidSecurity(tool, offers) : tool.auth === "siwx" ? [{ siwx: [] }] : [],
    parameters,
    responses,
    "x-cache-ttl": tool.cacheTtlSec,
    "x-badges": priceBadges(tool, paid),
  };
  if (tool.method === "POST") op.requestBody = { required: true, content: json(rest, example.rest) };
  if (paid) op["x-payment-info"] = paymentInfo(tool, price, offers);
  return op;
}

/** Schemas shared by operations: errors and the x402 PaymentRequired objects (v2 in the header, v1 in the body). */
function componentSchemas(): Record<string, JsonSchema> {
  const str = { type: "string" };
  return {
    ErrorBody: {
      type: "object",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          properties: { code: str, message: str, details: { description: "per-field problems, or facts about the error" } },
        },
      },
    },
    ResourceInfo: {
      type: "object",
      description: "x402 v2 resource: the URL paid for, and the service metadata discovery catalogues read",
      required: ["url"],
      properties: { url: str, description: str, mimeType: str, serviceName: str, tags: { type: "array", items: str }, iconUrl: str },
    },
    PaymentRequirements: {
      type: "object",
      description: "x402 v2 payment requirements (one way to pay)",
      required: ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds"],
      properties: {
        scheme: { type: "string", description: "exact" },
        network: { type: "string", description: "CAIP-2 network, e.g. eip155:8453" },
        amount: { type: "string", description: "atomic units of asset (USDC: 6 decimals)" },
        asset: { type: "string", description: "token contract address" },
        payTo: str,
        maxTimeoutSeconds: { type: "integer" },
        extra: { type: "object", additionalProperties: true },
      },
    },
    PaymentRequired: {
      type: "object",
      description:
        "x402 v2 PaymentRequired (the PAYMENT-REQUIRED header, base64 JSON): requirements, resource, and extensions (bazaar discovery, sign-in-with-x, payment-identifier)",
      required: ["x402Version", "resource", "accepts"],
      properties: {
        x402Version: { type: "integer", const: 2 },
        error: str,
        resource: ref("ResourceInfo"),
        accepts: { type: "array", items: ref("PaymentRequirements") },
        extensions: { type: "object", additionalProperties: true },
      },
    },
    PaymentRequirementsV1: {
      type: "object",
      description: "x402 v1 payment requirements",
      required: ["scheme", "network", "maxAmountRequired", "resource", "description", "mimeType", "payTo", "maxTimeoutSeconds", "asset"],
      properties: {
        scheme: str,
        network: { type: "string", description: "v1 network name, e.g. base" },
        maxAmountRequired: { type: "string", description: "atomic units of asset" },
        resource: str,
        description: str,
        mimeType: str,
        outputSchema: {
          type: "object",
          description: "how to call the resource (input: method, query or body fields, path parameters) and the JSON Schema of its answer (output)",
          properties: { input: { type: "object", additionalProperties: true }, output: { type: "object", additionalProperties: true } },
        },
        payTo: str,
        maxTimeoutSeconds: { type: "integer" },
        asset: str,
        extra: { type: "object", additionalProperties: true },
      },
    },
    CreditsHint: {
      type: "object",
      description: "how to pay with prepaid credits instead (present when credits are on)",
      properties: {
        how: str,
        top_up: { type: "object", properties: { method: str, path: str, body: { type: "object", additionalProperties: true } } },
        balance: { type: "object", properties: { method: str, path: str, header: str } },
      },
    },
    PaymentRequiredV1: {
      type: "object",
      description: "The 402 body: the x402 v1 PaymentRequired, plus how to use credits",
      required: ["x402Version", "error", "accepts"],
      properties: {
        x402Version: { type: "integer", const: 1 },
        error: { type: "string", description: "why payment is (still) required" },
        accepts: { type: "array", items: ref("PaymentRequirementsV1") },
        credits: ref("CreditsHint"),
      },
    },
  };
}

/** The free quote endpoint (an HTTP-mount feature, not a tool): the payment a request would need. */
function quoteOperation(): Record<string, unknown> {
  return {
    operationId: "get_quote",
    summary: "Exact payment requirements of a request, without running it (free)",
    tags: ["service"],
    security: [],
    parameters: [
      {
        name: "path",
        in: "query",
        required: true,
        description: "request path with its query, e.g. /api/v1/prices?symbols=btc",
        schema: { type: "string" },
        example: "/api/v1/prices?symbols=btc,eth",
      },
      { name: "method", in: "query", required: false, description: "HTTP method (default GET)", schema: { type: "string", enum: ["GET", "POST", "DELETE"] } },
      {
        name: "body",
        in: "query",
        required: false,
        description: "for POST: the JSON body the request would send (validated like the route); without it the price is quoted and input_checked is false",
        schema: { type: "string" },
      },
    ],
    responses: {
      "200": {
        description: "The quote: price, whether it would be free (cache hit, free tool), the x402 PaymentRequired and MPP challenges",
        content: json({
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
            x402: {
              type: "object",
              required: ["payment_required", "header"],
              properties: { payment_required: ref("PaymentRequired"), header: { type: "string", description: "the PAYMENT-REQUIRED header value the 402 would carry" } },
            },
            mpp: { type: "object", properties: { challenges: { type: "array", items: { type: "string" } } } },
          },
        }),
      },
      "400": errorResponse("The request would be malformed"),
      "404": errorResponse("Unknown route, symbol or id"),
      "429": errorResponse("Free-route rate limit exceeded; see Retry-After"),
    },
    "x-cache-ttl": 0,
  };
}

/** A free GET of the service (health, index, documents), with its 200 body and the 4xx every route can give. */
function freeGet(operationId: string, summary: string, tag: string, content: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    operationId,
    summary,
    tags: [tag],
    security: [],
    responses: { "200": { description: "OK", content }, "414": errorResponse("Request URL too long"), ...extra },
  };
}

/** Free routes that are not tools: health, readiness, index, metrics, the discovery documents, MCP. */
function servicePaths(): Record<string, Record<string, unknown>> {
  const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
    type: "object",
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: true,
  });
  const readiness = obj(
    {
      status: { type: "string", enum: ["ready", "not_ready"] },
      checked_at: { type: "string" },
      components: { type: "object", additionalProperties: { type: "object", properties: { status: { type: "string", enum: ["ok", "fail", "not_configured"] } } } },
    },
    ["status", "components"],
  );
  return {
    "/health": { get: freeGet("get_health", "Liveness: the process answers", "service", json(obj({ status: { type: "string", const: "ok" } }, ["status"]), { status: "ok" })) },
    "/ready": {
      get: freeGet("get_ready", "Readiness: Redis, chain RPC, facilitator and venues reachable (503 when not)", "service", json(readiness), {
        "503": { description: "Not ready: a component failed", content: json(readiness) },
      }),
    },
    "/": {
      get: freeGet(
        "get_index",
        "Service index: data mode, payment summary, endpoints with prices, MCP",
        "service",
        json(
          obj(
            {
              name: { type: "string" },
              version: { type: "string" },
              description: { type: "string" },
              data_mode: { type: "string" },
              simulated: { type: "boolean" },
              payment: { type: ["object", "null"] },
              endpoints: { type: "array", items: { type: "object" } },
              free_endpoints: { type: "array", items: { type: "string" } },
              mcp: { type: "object" },
            },
            ["name", "version", "endpoints"],
          ),
        ),
      ),
    },
    "/metrics": {
      get: {
        ...freeGet(
          "get_metrics",
          "Prometheus metrics (format=json for JSON)",
          "service",
          { "text/plain": { schema: { type: "string" } }, "application/json": { schema: { type: "array", items: { type: "object" } } } },
          {
            "429": errorResponse("Free-route rate limit exceeded; see Retry-After"),
          },
        ),
        parameters: [{ name: "format", in: "query", required: false, description: "json for the JSON form", schema: { type: "string", enum: ["json"] } }],
      },
    },
    "/openapi.json": { get: freeGet("get_openapi", "This OpenAPI 3.1 document", "discovery", json({ type: "object", additionalProperties: true })) },
    "/.well-known/x402": {
      get: freeGet(
        "get_x402_well_known",
        "x402 discovery, short form: the concrete URL of every paid resource that answers 402 unpaid",
        "discovery",
        json(
          obj(
            {
              version: { type: "integer" },
              resources: { type: "array", items: { type: "string" } },
              streams: { type: "array", items: { type: "string" }, description: "example URLs of the live streams (paid per minute from credits; not x402 resources)" },
              instructions: { type: "string" },
            },
            ["version", "resources"],
          ),
        ),
      ),
    },
    "/.well-known/x402.json": {
      get: freeGet(
        "get_x402_discovery",
        "x402 discovery: every paid resource with its requirements, MPP offers, credits, input and output schemas and an output example; the live streams with their price per minute",
        "discovery",
        json(
          obj(
            {
              x402Version: { type: "integer" },
              lastUpdated: { type: "string" },
              service: { type: "object" },
              items: { type: "array", items: { type: "object", additionalProperties: true } },
              streams: {
                type: "array",
                description: "the live streams: URL, price per minute, payment, WebSocket subscribe message, resume, event schemas",
                items: { type: "object", additionalProperties: true },
              },
            },
            ["x402Version", "lastUpdated", "items"],
          ),
        ),
      ),
    },
    "/mcp": {
      post: {
        operationId: "mcp",
        summary: 'MCP over Streamable HTTP (stateless, JSON responses): the same tools; paid tools/call take _meta["x402/payment"] or a SIWX proof',
        tags: ["mcp"],
        security: [],
        parameters: [
          {
            name: "Accept",
            in: "header",
            required: true,
            description: "application/json, text/event-stream",
            schema: { type: "string" },
            example: "application/json, text/event-stream",
          },
        ],
        requestBody: {
          required: true,
          content: json(
            obj({ jsonrpc: { type: "string", const: "2.0" }, method: { type: "string" }, id: { type: ["string", "integer", "null"] }, params: { type: "object" } }, [
              "jsonrpc",
              "method",
            ]),
            // A stateless server answers tools/list without an initialize first.
            { jsonrpc: "2.0", id: 1, method: "tools/list" },
          ),
        },
        responses: {
          "200": {
            description: "JSON-RPC response (a paid tool without payment: an isError result whose text is the x402 PaymentRequired)",
            content: json(obj({ jsonrpc: { type: "string" }, id: {}, result: { type: "object" }, error: { type: "object" } })),
          },
          "400": errorResponse("Malformed JSON-RPC request"),
          "429": errorResponse("Free-route rate limit exceeded; see Retry-After"),
        },
      },
    },
  };
}

/** `cvd_bucket` → `CvdBucket`. */
const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

/** Component names of the live streams' schemas, per stream: event name → schema name, and the event union. */
interface StreamComponents {
  schemas: Record<string, JsonSchema>;
  events: Map<StreamDef, Record<string, string>>;
  union: Map<StreamDef, string>;
}

/**
 * Component schemas of the live streams: each event's `data` (`Stream<Event>Event`, with the topic in the
 * name when two topics send events of one name with different data), each stream's SSE event union
 * (`<Topic>StreamEvent`: event name, id, and data as a JSON string of that schema). The WebSocket
 * messages are inline in `/ws`'s `x-websocket` (no response or body refers to them: components would be unused).
 */
function streamComponents(streams: readonly StreamDef[]): StreamComponents {
  const out: StreamComponents = { schemas: {}, events: new Map(), union: new Map() };
  if (!streams.length) return out;
  for (const def of streams) {
    const names: Record<string, string> = {};
    const variants = streamEvents(def).map((e) => {
      let name = `Stream${pascal(e.name)}Event`;
      if (out.schemas[name] && JSON.stringify(out.schemas[name]) !== JSON.stringify(e.schema)) name = `Stream${pascal(def.topic)}${pascal(e.name)}Event`;
      out.schemas[name] = e.schema;
      names[e.name] = name;
      return {
        type: "object",
        title: e.name,
        ...(e.description ? { description: e.description } : {}),
        required: ["event", "data"],
        properties: {
          event: { type: "string", const: e.name },
          ...(e.control ? {} : { id: { type: "string", description: "the SSE id (Last-Event-ID to resume after it); absent on events that are not replayed" } }),
          data: { type: "string", description: "one line of JSON", contentMediaType: "application/json", contentSchema: ref(name) },
        },
      };
    });
    const union = `${pascal(def.topic)}StreamEvent`;
    out.schemas[union] = { description: `One Server-Sent Event of ${def.path}`, oneOf: variants };
    out.events.set(def, names);
    out.union.set(def, union);
  }
  return out;
}

/** Query parameters that stand in for the credentials headers where a client cannot set headers. */
const STREAM_CREDENTIAL_PARAMS = [
  {
    name: "siwx",
    in: "query",
    required: false,
    description: "the SIGN-IN-WITH-X proof (base64, URL-encoded) for clients that cannot set headers (browser EventSource and WebSocket); single-use like the header",
    schema: { type: "string" },
  },
  {
    name: "session",
    in: "query",
    required: false,
    description: "a credits session token (X-Credits-Session of an earlier answer, or the WebSocket welcome's session)",
    schema: { type: "string" },
  },
];

/** Errors of opening a stream (SSE request or WebSocket upgrade), before anything is debited. */
function streamErrors(paid: boolean, symbol: boolean): Record<string, unknown> {
  return {
    ...(symbol ? { "400": errorResponse("Missing or malformed symbol") } : {}),
    "404": errorResponse(
      [
        ...(symbol ? ["No venue lists the symbol"] : ["Not a WebSocket upgrade (a plain GET), or another path"]),
        ...(paid ? ["this instance takes payments but not credits (CREDITS=off), which streams are paid from"] : []),
      ].join("; or "),
    ),
    "429": errorResponse(
      "Too many streams opened by this client (free-route rate limit), or the wallet already has LIVE_STREAMS_PER_WALLET streams open on this instance; see Retry-After",
    ),
    "503": errorResponse(
      "This instance serves its maximum of LIVE_STREAMS_MAX streams, runs without live trade streams (STREAMS=off: liquidations and CVD), or the credits ledger is unreachable; see Retry-After; nothing was debited",
    ),
  };
}

/** The sign-in 402 of a stream: no (valid) proof, or the first minute not covered. */
function streamPaymentRequired(offers: PaymentOffers): Record<string, unknown> {
  return {
    ...paymentRequiredResponse(offers, true),
    description:
      "Sign in or top up; nothing was debited. error says why: sign_in_required (no SIGN-IN-WITH-X proof or session token), a refused proof (e.g. invalid_siwx_nonce: a proof is single-use) or session, or the first minute not covered (credits_insufficient_balance, a credits_cap_…). The SIGN-IN-WITH-X challenge is in the PAYMENT-REQUIRED header's extensions, beside the smallest top-up's requirements (POST /api/v1/credits)",
  };
}

/** `GET /stream/...` of one registry stream: Server-Sent Events, paid per minute from credits. */
function streamOperation(def: StreamDef, c: StreamComponents, offers: PaymentOffers): Record<string, unknown> {
  const paid = streamsPaid(offers);
  const names = c.events.get(def)!;
  const symbol =
    def.symbol === "required"
      ? {
          name: "symbol",
          in: "path",
          required: true,
          description: "perpetual base or venue symbol (BTC, BTCUSDT, BTC-USDT-SWAP), listed on at least one venue",
          schema: { type: "string" },
          example: def.exampleSymbol,
        }
      : {
          name: "symbol",
          in: "query",
          required: false,
          description: "only this base (BTC, BTCUSDT and BTC-USDT-SWAP all mean BTC); without it, every symbol",
          schema: { type: "string" },
          example: def.exampleSymbol,
        };
  const eventList = streamEvents(def)
    .map((e) => e.name)
    .join(", ");
  return {
    operationId: `stream_${def.topic}`,
    summary: `${def.title}: ${def.summary} (Server-Sent Events, ${def.pricePerMinuteUsd} USD per minute)`,
    description: [
      def.description,
      paid ? streamBillingText(def) : "Free on this instance (it takes no payments); the price elsewhere is x-price-per-minute-usd.",
      ...(paid ? [STREAM_AUTH_TEXT] : []),
      `Resume: ${def.resumable}. Send the last id received as Last-Event-ID (EventSource does it when it reconnects) or ?lastEventId=.`,
      `Events: ${eventList}; a ": hb" comment every LIVE_HEARTBEAT_SEC. dropped ends the stream (slow consumer, shutdown): reconnect with Last-Event-ID. The same topic over one WebSocket: GET ${STREAM_WS_PATH}.`,
    ].join("\n\n"),
    tags: ["streams"],
    security: paid ? [{ siwx: [] }, { creditsSession: [] }] : [],
    parameters: [
      symbol,
      { name: "Last-Event-ID", in: "header", required: false, description: `the last event id received: ${def.resumable}`, schema: { type: "string", maxLength: 100 } },
      {
        name: "lastEventId",
        in: "query",
        required: false,
        description: "the same as Last-Event-ID, for clients that cannot set it (the header wins)",
        schema: { type: "string", maxLength: 100 },
      },
      ...(paid ? STREAM_CREDENTIAL_PARAMS : []),
    ],
    responses: {
      "200": {
        description: `The stream (Server-Sent Events; retry: 3000 first). Each event's data is one line of JSON; its schema per event name is in ${c.union.get(def)} and x-events.`,
        headers: {
          ...(paid
            ? {
                "X-Credits-Session": {
                  description: "a fresh credits session token: reopen streams with it (header or ?session=) instead of a new proof until it expires",
                  schema: { type: "string" },
                },
              }
            : {}),
          "Cache-Control": { description: "no-cache, no-transform", schema: { type: "string" } },
        },
        content: { "text/event-stream": { schema: { type: "array", description: "the events in order, as they arrive", items: ref(c.union.get(def)!) } } },
      },
      ...(paid ? { "402": streamPaymentRequired(offers) } : {}),
      ...streamErrors(paid, true),
      "414": errorResponse("Request URL longer than the service accepts (MAX_URL_BYTES, 2048)"),
    },
    "x-price-per-minute-usd": def.pricePerMinuteUsd,
    "x-stream-payment": paid ? STREAM_PAYMENT : "none (this instance takes no payments)",
    "x-resume": def.resumable,
    "x-events": Object.fromEntries(
      streamEvents(def).map((e) => [e.name, { ...(e.description ? { description: e.description } : {}), control: e.control, schema: ref(names[e.name]!) }]),
    ),
  };
}

/** `GET /ws`: every stream of the registry over one WebSocket. */
function wsOperation(streams: readonly StreamDef[], offers: PaymentOffers): Record<string, unknown> {
  const paid = streamsPaid(offers);
  return {
    operationId: "stream_websocket",
    summary: "Every live stream over one WebSocket: JSON subscribe and unsubscribe, each subscription billed per minute like its SSE stream",
    description: [
      `Sign in on the upgrade request${paid ? " (SIGN-IN-WITH-X header, ?siwx=, X-Credits-Session or ?session=; a refused sign-in answers the 402 before the upgrade)" : ""}. The server sends welcome (the session token to reconnect with, the topics and prices); then send {"op":"subscribe","topic","symbol"?,"last_event_id"?} per topic (symbol as on the SSE routes) and {"op":"unsubscribe","topic","symbol"?} to stop.`,
      'Each subscribe is answered subscribed, then the stream\'s events as {type:"event",topic,symbol,event,id?,data} (the first is the debit of the first minute), until unsubscribed {reason}; a refused message is answered {type:"error",request,error} and the connection stays open.',
      "Close codes: 4008 slow consumer (more than LIVE_STREAM_BUFFER_KB unread on the connection: every subscription ends), 1008 more than 100 client messages in 10 s. There are no server pings: reconnect when the connection drops, with last_event_id per topic.",
      `The messages' JSON Schemas are in x-websocket (client, server); each event's data is as on the SSE routes (x-events there). Prices per minute: ${streams.map((d) => `${d.topic} ${d.pricePerMinuteUsd}`).join(", ")} USD.`,
    ].join("\n\n"),
    tags: ["streams"],
    security: paid ? [{ siwx: [] }, { creditsSession: [] }] : [],
    parameters: [
      { name: "Upgrade", in: "header", required: true, description: "websocket", schema: { type: "string", const: "websocket" } },
      ...(paid ? STREAM_CREDENTIAL_PARAMS : []),
    ],
    responses: {
      "101": { description: "Switching Protocols: the connection is a WebSocket carrying JSON text messages (x-websocket: client and server)" },
      ...(paid ? { "402": streamPaymentRequired(offers) } : {}),
      ...streamErrors(paid, false),
    },
    "x-price-per-minute-usd": Object.fromEntries(streams.map((d) => [d.topic, d.pricePerMinuteUsd])),
    "x-websocket": {
      ...wsMessageSchemas(streams.map((d) => d.topic)),
      closeCodes: { "1008": "more than 100 client messages in 10 s", "4008": "slow consumer: more than LIVE_STREAM_BUFFER_KB unread" },
    },
  };
}

/**
 * Builds the OpenAPI 3.1 document of the catalogue (operationId = MCP tool name, `x-payment-info`,
 * `x-cache-ttl`), with the service's own free routes, security schemes for every way to pay, and the
 * PaymentRequired schemas of the 402. `streams` (the STREAMS registry) adds the live streams: an SSE
 * path per stream (`x-price-per-minute-usd`, `x-events`) and `GET /ws`.
 */
export function buildOpenApi(
  tools: readonly AnyTool[],
  prices: PriceBook,
  info: ServiceInfo,
  offers: PaymentOffers = {},
  allStreams: readonly StreamDef[] = [],
): Record<string, unknown> {
  const streams = offeredStreams(allStreams, offers);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const t of tools) {
    const p = routeTemplate(t.path);
    paths[p] ??= {};
    paths[p][t.method.toLowerCase()] = operation(t, prices, offers);
  }
  paths["/api/v1/quote"] = { get: quoteOperation() };
  Object.assign(paths, servicePaths());
  const live = streamComponents(streams);
  for (const def of streams) paths[routeTemplate(def.path)] = { get: streamOperation(def, live, offers) };
  if (streams.length) paths[STREAM_WS_PATH] = { get: wsOperation(streams, offers) };
  const base = info.publicUrl ?? "";
  const protocols = [
    info.solanaNetwork ? "x402 v2 (USDC on Base or Solana)" : "x402 v2 (USDC on Base)",
    ...(offers.mpp ? ["MPP"] : []),
    ...(offers.credits ? ["prepaid credits with Sign-In-With-X"] : []),
  ];
  return {
    openapi: "3.1.0",
    info: {
      title: info.name,
      version: info.version,
      description: info.description,
      contact: info.contact ?? CONTACT,
      license: { name: "MIT", identifier: "MIT" },
      "x-guidance": `Paid operations (x-payment-info) accept ${protocols.join(", ")}. Unpaid, they answer 402: x402 v2 requirements in the PAYMENT-REQUIRED header (sign an EIP-3009 authorization and retry with PAYMENT-SIGNATURE), MPP challenges in WWW-Authenticate (retry with Authorization: Payment)${offers.credits ? ", and a sign-in-with-x challenge: after one top-up (POST /api/v1/credits) send a SIGN-IN-WITH-X proof per call and the price is debited from your credits" : ""}. Identical requests inside x-cache-ttl seconds are free (X-Cache: HIT). The live 402 is authoritative. GET /api/v1/quote?path= tells the price of a request without running it.${
        streams.length
          ? ` Live streams (GET /stream/..., Server-Sent Events, and GET ${STREAM_WS_PATH}) ${streamsPaid(offers) ? "are paid per minute (x-price-per-minute-usd) from prepaid credits: open them with a SIGN-IN-WITH-X proof or an X-Credits-Session token" : "are free on this instance"}.`
          : ""
      }`,
    },
    servers: [{ url: info.publicUrl ?? "/" }],
    "x-agentcash-guidance": { llmsTxtUrl: `${base}/llms.txt` },
    paths,
    components: { schemas: { ...componentSchemas(), ...live.schemas }, securitySchemes: SECURITY_SCHEMES },
  };
}
