import type { StreamDef } from "../registry/stream.js";
import { isFree, requestPath, type AnyTool } from "../registry/tool.js";
import { bazaarTags, ICON_PATH, SERVICE_NAME } from "../payments/bazaar.js";
import { jsonSchema, splitExample, splitInput, type JsonSchema } from "../registry/json-schema.js";
import { outputExample } from "../registry/output-example.js";
import { allAccepts, mppOffers, routeTemplate, type PaymentOffers, type PriceBook } from "./pricing.js";
import { CONTACT, type ServiceInfo } from "./openapi.js";
import { offeredStreams, STREAM_PAYMENT, streamBillingText, streamEventSchemas, streamExamplePath, streamsPaid, streamWsSubscribe, streamWsUrl } from "./streams.js";

/*
 * The x402 well-known documents. Every listed resource is a concrete URL built from the tool's example
 * input, which answers 402 when fetched as listed (method and JSON body given beside it): discovery crawlers
 * (x402scan) probe the URLs they read, and a route template (`/price/{symbol}`) would answer 400. URLs are
 * absolute under PUBLIC_URL, else under the origin the document was requested from; the committed manifest
 * (no deployment known) keeps them relative.
 *
 * The live streams (paid per minute from prepaid credits, not per request with x402) are not resources:
 * unpaid they answer the sign-in 402, whose requirements are a credits top-up's. They are listed beside
 * the resources, under `streams`, where crawlers that probe and pay `items` / `resources` do not look.
 */

/**
 * Whether a paid tool's example answers 402 unpaid. The examples of the stateful alert tools refer to state
 * that may not exist (an alert to extend, a webhook host that must resolve), which their check before payment refuses
 * (404 / 400) before the 402: they are listed, marked `probe: false`, and left out of the short form.
 */
export function isProbeable(tool: AnyTool): boolean {
  return !isFree(tool) && !(tool.stateful && tool.checkBeforePayment && tool.tags.includes("alerts"));
}

/** Origin-independent parts of a tool's discovery item, computed once per tool. */
interface ToolDoc {
  input: Record<string, unknown>;
  output: { type: "json"; schema: JsonSchema; example: Record<string, unknown> };
}
const toolDocs = new WeakMap<AnyTool, ToolDoc>();

function toolDoc(t: AnyTool): ToolDoc {
  let d = toolDocs.get(t);
  if (!d) {
    const { path, rest } = splitInput(t);
    d = {
      input: {
        type: "http",
        method: t.method,
        routeTemplate: routeTemplate(t.path),
        pathParams: { type: "object", properties: path },
        ...(t.method === "POST" ? { bodyType: "json", body: rest } : { queryParams: rest }),
      },
      output: { type: "json", schema: jsonSchema(t.output, "output"), example: outputExample(t) },
    };
    toolDocs.set(t, d);
  }
  return d;
}

function base(info: ServiceInfo): string {
  return (info.publicUrl ?? "").replace(/\/+$/, "");
}

/** The example request of a tool: the concrete URL (absolute when the base is known), method and JSON body. */
export function exampleRequest(tool: AnyTool, info: ServiceInfo): { url: string; method: string; body?: Record<string, unknown> } {
  return { url: `${base(info)}${requestPath(tool)}`, method: tool.method, ...(tool.method === "POST" ? { body: splitExample(tool).rest } : {}) };
}

/** One live stream of `/.well-known/x402.json`: where and how to open it, its price per minute and its events. */
function streamItem(def: StreamDef, b: string, offers: PaymentOffers): Record<string, unknown> {
  const paid = streamsPaid(offers);
  return {
    name: `stream_${def.topic}`,
    topic: def.topic,
    title: def.title,
    description: def.summary,
    details: def.description,
    type: "sse",
    method: "GET",
    url: `${b}${streamExamplePath(def)}`,
    routeTemplate: routeTemplate(def.path),
    symbol: def.symbol === "required" ? "required (path)" : "optional (query; every symbol without it)",
    mimeType: "text/event-stream",
    price: { mode: "per_minute", currency: "USD", amount: def.pricePerMinuteUsd },
    pricePerMinuteUsd: def.pricePerMinuteUsd,
    payment: paid ? STREAM_PAYMENT : "none: this instance takes no payments",
    ...(paid
      ? {
          credits: {
            auth: "siwx",
            header: "SIGN-IN-WITH-X",
            query: "siwx",
            sessionHeader: "X-Credits-Session",
            sessionQuery: "session",
            topUp: `POST ${b}/api/v1/credits`,
            billing: streamBillingText(def),
          },
        }
      : {}),
    websocket: { url: streamWsUrl(b), subscribe: streamWsSubscribe(def) },
    resume: def.resumable,
    events: streamEventSchemas(def),
  };
}

/**
 * `/.well-known/x402.json`: every paid resource, as the Bazaar lists them (`resource`, `type`, `x402Version`,
 * `accepts`, `lastUpdated`, service metadata) plus how to call it (method, body, input and output schemas,
 * an output example), its MPP offers and the credits, so that an agent can pay it any supported way;
 * and, under `streams`, the live streams of `streams` (the STREAMS registry) with their price per minute.
 */
export function buildX402Discovery(
  tools: readonly AnyTool[],
  prices: PriceBook,
  info: ServiceInfo,
  lastUpdated: string,
  offers: PaymentOffers = {},
  streams: readonly StreamDef[] = [],
): Record<string, unknown> {
  const b = base(info);
  const live = offeredStreams(streams, offers);
  const icon = /^https?:\/\//.test(b) ? { iconUrl: `${b}${ICON_PATH}` } : {};
  const items = tools
    .filter((t) => !isFree(t))
    .map((t) => {
      const price = prices.get(t.name);
      const ex = exampleRequest(t, info);
      const doc = toolDoc(t);
      const creditsAccepted = offers.credits && !t.priceOf;
      return {
        resource: ex.url,
        type: "http",
        x402Version: 2,
        lastUpdated,
        name: t.name,
        description: t.summary,
        mimeType: "application/json",
        serviceName: SERVICE_NAME,
        tags: bazaarTags(t),
        ...icon,
        method: ex.method,
        ...(ex.body ? { body: ex.body } : {}),
        ...(isProbeable(t)
          ? {}
          : {
              probe: false,
              probeNote:
                "the example refers to state that may not exist (an alert to extend, a webhook host that must resolve): unpaid, it answers 400 or 404 before the 402; with a real alert id or webhook URL it answers 402",
            }),
        accepts: price ? allAccepts(price) : [],
        ...(t.priceOf
          ? { price: { mode: "dynamic", currency: "USD", min: t.priceUsd, ...(offers.credits ? { max: offers.credits.maxTopUpUsd } : {}) } }
          : { price: { mode: "fixed", currency: "USD", amount: t.priceUsd } }),
        mpp: price ? mppOffers(price, offers).map((o) => ({ ...o, amount: t.priceUsd, header: "WWW-Authenticate: Payment", credential: "Authorization: Payment" })) : [],
        ...(creditsAccepted ? { credits: { auth: "siwx", header: "SIGN-IN-WITH-X", sessionHeader: "X-Credits-Session", topUp: `POST ${b}/api/v1/credits` } } : {}),
        cacheTtlSec: t.cacheTtlSec,
        input: doc.input,
        output: doc.output,
      };
    });
  return {
    x402Version: 2,
    lastUpdated,
    service: {
      name: info.name,
      version: info.version,
      description: info.description,
      contact: info.contact ?? CONTACT,
      ...icon,
      openapi: `${b}/openapi.json`,
      mcp: `${b}/mcp`,
      protocols: ["x402", ...(offers.mpp ? ["mpp"] : [])],
      ...(offers.credits ? { credits: { topUp: `POST ${b}/api/v1/credits`, minTopUpUsd: offers.credits.minTopUpUsd, maxTopUpUsd: offers.credits.maxTopUpUsd, auth: "siwx" } } : {}),
    },
    items,
    ...(live.length ? { streams: live.map((d) => streamItem(d, b, offers)) } : {}),
  };
}

/**
 * `/.well-known/x402`: the short x402scan form (`{version, resources, instructions}`): the concrete URL of
 * every paid resource whose example answers 402 unpaid (see {@link isProbeable}), and beside them
 * (`streams`) the example URL of every live stream, which is paid per minute from credits instead.
 */
export function buildX402WellKnown(tools: readonly AnyTool[], info: ServiceInfo, offers: PaymentOffers = {}, streams: readonly StreamDef[] = []): Record<string, unknown> {
  const b = base(info);
  const live = offeredStreams(streams, offers);
  const streamText = live.length
    ? ` Live streams (Server-Sent Events, and one WebSocket at ${streamWsUrl(b)}) are listed under streams, not resources: ${
        streamsPaid(offers) ? "they are paid per minute from prepaid credits (open them with a SIGN-IN-WITH-X proof after POST /api/v1/credits)" : "they are free on this instance"
      }; prices, events and how to connect are in ${b}/.well-known/x402.json.`
    : "";
  return {
    version: 1,
    resources: tools.filter(isProbeable).map((t) => exampleRequest(t, info).url),
    ...(live.length ? { streams: live.map((d) => `${b}${streamExamplePath(d)}`) } : {}),
    instructions: `Each resource answers 402 with x402 v2 requirements (PAYMENT-REQUIRED) and MPP challenges (WWW-Authenticate: Payment); POST resources take the JSON body listed in ${b}/.well-known/x402.json, which also gives prices, schemas and cache TTLs. OpenAPI: ${b}/openapi.json. MCP (Streamable HTTP): ${b}/mcp.${streamText}`,
  };
}
