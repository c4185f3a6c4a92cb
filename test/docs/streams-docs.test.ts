import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WS_PATH } from "../../http/ws.js";
import { loadConfig } from "../../src/config.js";
import { buildX402Discovery, buildX402WellKnown } from "../../src/docs/discovery.js";
import { jsonSchema } from "../../src/registry/json-schema.js";
import { buildLlmsFullTxt, buildLlmsTxt, llmsDocuments } from "../../src/docs/llms.js";
import { buildOpenApi } from "../../src/docs/openapi.js";
import { paymentOffers, priceBook, type PaymentOffers, type PriceBook } from "../../src/docs/pricing.js";
import { STREAM_WS_PATH, streamEventSchemas } from "../../src/docs/streams.js";
import { streamPath } from "../../src/registry/stream.js";
import { isFree } from "../../src/registry/tool.js";
import { serviceInfo } from "../../src/service.js";
import { CONTROL_EVENTS } from "../../tools/live/common.js";
import { STREAMS, TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

const HOST = "https://marketgate.example";
const PAY_TO = "0x1111111111111111111111111111111111111111";
const config = loadConfig({});
const info = { ...serviceInfo(config), publicUrl: HOST };
const offers = paymentOffers(config);
const template = (path: string) => path.replace(/:(\w+)/g, "{$1}");
/** Every event a stream may send: its own, then the control events. */
const eventNames = (def: (typeof STREAMS)[number]) => [...Object.keys(def.events), ...Object.keys(CONTROL_EVENTS)];

/** The live streams, from the one STREAMS registry, in every document the service generates. */
describe("live streams in the documents", () => {
  let prices: PriceBook;
  let doc: Doc;
  beforeAll(async () => {
    prices = await priceBook(TOOLS, { network: config.payments.network, payTo: PAY_TO, timeoutSec: config.payments.timeoutSec });
    doc = buildOpenApi(TOOLS, prices, info, offers, STREAMS);
  });

  it("OpenAPI: an SSE path per stream with its price per minute, the schema of every event, the sign-in 402 and the stream errors", () => {
    expect(STREAMS.length).toBeGreaterThan(0);
    for (const def of STREAMS) {
      const op = doc.paths[template(def.path)]?.get;
      expect(op, def.path).toBeDefined();
      expect(op.operationId).toBe(`stream_${def.topic}`);
      expect(op["x-price-per-minute-usd"]).toBe(def.pricePerMinuteUsd);
      expect(op["x-payment-info"]).toBeUndefined();
      expect(op.security).toEqual([{ siwx: [] }, { creditsSession: [] }]);
      expect(Object.keys(op["x-events"])).toEqual(eventNames(def));
      const union = doc.components.schemas[op.responses["200"].content["text/event-stream"].schema.items.$ref.split("/").pop()];
      expect(union.oneOf.map((v: Doc) => v.properties.event.const)).toEqual(eventNames(def));
      for (const [name, schema] of Object.entries({ ...def.events, ...CONTROL_EVENTS })) {
        const target = op["x-events"][name].schema.$ref.split("/").pop();
        expect(doc.components.schemas[target], `${def.topic} ${name}`).toEqual(jsonSchema(schema, "output"));
        const variant = union.oneOf.find((v: Doc) => v.properties.event.const === name);
        expect(variant.properties.data.contentSchema).toEqual({ $ref: `#/components/schemas/${target}` });
      }
      expect(op.responses["402"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PaymentRequiredV1" });
      expect(op.responses["402"].headers["PAYMENT-REQUIRED"].schema.contentSchema).toEqual({ $ref: "#/components/schemas/PaymentRequired" });
      expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "402", "404", "414", "429", "503"]);
      const params = op.parameters.map((p: Doc) => `${p.in}:${p.name}`);
      expect(params).toEqual(
        expect.arrayContaining(["header:Last-Event-ID", "query:lastEventId", "query:siwx", "query:session", `${def.symbol === "required" ? "path" : "query"}:symbol`]),
      );
      expect(op.responses["200"].headers["X-Credits-Session"]).toBeDefined();
    }
    const ws = doc.paths[STREAM_WS_PATH].get;
    expect(STREAM_WS_PATH).toBe(WS_PATH);
    expect(Object.keys(ws.responses).sort()).toEqual(["101", "402", "404", "429", "503"]);
    expect(ws["x-price-per-minute-usd"]).toEqual(Object.fromEntries(STREAMS.map((d) => [d.topic, d.pricePerMinuteUsd])));
    expect(ws["x-websocket"].client.properties.topic.enum).toEqual(STREAMS.map((d) => d.topic));
    expect(ws["x-websocket"].server.oneOf.map((m: Doc) => m.properties.type.const)).toEqual(["welcome", "subscribed", "event", "unsubscribed", "error"]);
    expect(Object.keys(ws["x-websocket"].closeCodes).sort()).toEqual(["1008", "4008"]);
    expect(doc.info["x-guidance"]).toContain("x-price-per-minute-usd");
  });

  it("OpenAPI: free and anonymous with payments off; absent where payments are on but credits are off; absent without streams", () => {
    const free = buildOpenApi(TOOLS, prices, info, {}, STREAMS);
    for (const def of STREAMS) {
      const op = free.paths && (free.paths as Doc)[template(def.path)].get;
      expect(op.security).toEqual([]);
      expect(op.responses["402"]).toBeUndefined();
      expect(op.parameters.map((p: Doc) => p.name)).not.toContain("siwx");
      expect(op["x-price-per-minute-usd"]).toBe(def.pricePerMinuteUsd);
    }
    const noCredits: PaymentOffers = { ...offers, credits: undefined };
    const off = buildOpenApi(TOOLS, prices, info, noCredits, STREAMS) as Doc;
    expect(Object.keys(off.paths).filter((p) => p.startsWith("/stream/") || p === STREAM_WS_PATH)).toEqual([]);
    const none = buildOpenApi(TOOLS, prices, info, offers) as Doc;
    expect(Object.keys(none.paths).filter((p) => p.startsWith("/stream/") || p === STREAM_WS_PATH)).toEqual([]);
    expect(Object.keys(none.components.schemas).filter((k) => k.includes("Stream"))).toEqual([]);
  });

  it("x402.json lists the streams beside the resources (URL, price per minute, credits, WebSocket, events); the resources are unchanged", () => {
    const x402 = buildX402Discovery(TOOLS, prices, info, "2026-01-01T00:00:00.000Z", offers, STREAMS) as Doc;
    expect(x402.items.map((i: Doc) => i.name)).toEqual(TOOLS.filter((t) => !isFree(t)).map((t) => t.name));
    expect(x402.streams.map((s: Doc) => s.topic)).toEqual(STREAMS.map((d) => d.topic));
    for (const def of STREAMS) {
      const s = x402.streams.find((x: Doc) => x.topic === def.topic);
      expect(s).toMatchObject({
        name: `stream_${def.topic}`,
        type: "sse",
        method: "GET",
        mimeType: "text/event-stream",
        url: `${HOST}${streamPath(def, def.exampleSymbol)}`,
        price: { mode: "per_minute", currency: "USD", amount: def.pricePerMinuteUsd },
        pricePerMinuteUsd: def.pricePerMinuteUsd,
        payment: "prepaid credits via SIGN-IN-WITH-X",
        credits: { auth: "siwx", header: "SIGN-IN-WITH-X", sessionHeader: "X-Credits-Session", topUp: `POST ${HOST}/api/v1/credits` },
        websocket: { url: "wss://marketgate.example/ws", subscribe: { op: "subscribe", topic: def.topic, symbol: def.exampleSymbol } },
        resume: def.resumable,
      });
      // The same event schemas the stream_subscribe tool answers with.
      expect(s.events).toEqual(Object.fromEntries(Object.entries({ ...def.events, ...CONTROL_EVENTS }).map(([k, v]) => [k, jsonSchema(v, "output")])));
      expect(s.events).toEqual(streamEventSchemas(def));
    }
    const short = buildX402WellKnown(TOOLS, info, offers, STREAMS) as Doc;
    expect(short.resources).toEqual(buildX402WellKnown(TOOLS, info).resources);
    expect(short.streams).toEqual(STREAMS.map((d) => `${HOST}${streamPath(d, d.exampleSymbol)}`));
    expect(short.instructions).toContain("paid per minute from prepaid credits");
    expect(buildX402WellKnown(TOOLS, info).streams).toBeUndefined();
    expect(buildX402Discovery(TOOLS, prices, info, "2026-01-01T00:00:00.000Z", offers).streams).toBeUndefined();
  });

  it("llms.txt has a streams section (price per minute, how to connect, curl -N with SIGN-IN-WITH-X); llms-full.txt adds each event's fields", () => {
    const short = buildLlmsTxt(TOOLS, info, HOST, STREAMS);
    const at = short.indexOf("## Live streams");
    expect(at).toBeGreaterThan(0);
    const section = short.slice(at);
    for (const words of ["POST /api/v1/credits", "SIGN-IN-WITH-X", "X-Credits-Session", "Last-Event-ID", "payment_required", "stream_subscribe", "wss://marketgate.example/ws"])
      expect(section).toContain(words);
    for (const def of STREAMS) {
      const entry = section.slice(section.indexOf(`### stream_${def.topic}:`));
      expect(entry).toContain(`\`GET ${def.path}\``);
      expect(entry).toContain(`${def.pricePerMinuteUsd} USD per minute`);
      expect(entry).toContain(`curl -N -H "SIGN-IN-WITH-X: $SIWX" '${HOST}${streamPath(def, def.exampleSymbol)}'`);
    }
    const full = buildLlmsFullTxt(TOOLS, info, HOST, STREAMS);
    for (const def of STREAMS) for (const name of Object.keys(def.events)) expect(full).toContain(`Event \`${name}\``);
    for (const name of Object.keys(CONTROL_EVENTS)) expect(full.match(new RegExp(`^Event \`${name}\``, "gm"))).toHaveLength(1);
    expect(full).toContain("- `remaining_usd` (string): credits left after the debit");
    // Rendered once, filled per base URL: the WebSocket URL takes the base's scheme.
    const docs = llmsDocuments(TOOLS, info, STREAMS);
    expect(docs.short("http://127.0.0.1:4021/")).toContain("ws://127.0.0.1:4021/ws");
    expect(docs.short(HOST)).toBe(short);
    expect(docs.full(HOST)).toBe(full);
    expect(buildLlmsTxt(TOOLS, info, HOST)).not.toContain("## Live streams");
  });
});

/** The running service's /openapi.json (payments off here: the streams are free and anonymous). */
describe("GET /openapi.json of the service", () => {
  let stack: FreeStack;
  beforeAll(async () => {
    stack = await startFreeStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("documents the streams the service mounts, and /ws", async () => {
    const { body } = await stack.get("/openapi.json");
    for (const def of STREAMS) expect(body.paths[template(def.path)]?.get?.["x-price-per-minute-usd"], def.path).toBe(def.pricePerMinuteUsd);
    expect(body.paths[WS_PATH].get.responses["101"]).toBeDefined();
  });
});
