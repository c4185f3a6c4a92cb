import type { z } from "zod";
import { CONTROL_EVENTS } from "../../tools/live/common.js";
import { streamPath, type StreamDef } from "../registry/stream.js";
import { jsonSchema, type JsonSchema } from "../registry/json-schema.js";
import type { PaymentOffers } from "./pricing.js";

/*
 * The live streams (tools/live: the STREAMS registry and CONTROL_EVENTS) as the documents show them:
 * OpenAPI, the x402 discovery documents and llms.txt all read their events, URLs and payment from here.
 * The transports themselves are http/stream-routes.ts (SSE) and http/ws.ts (WebSocket).
 */

/** The WebSocket path (http/ws.ts `WS_PATH`; a test keeps them equal). */
export const STREAM_WS_PATH = "/ws";

/** How streams are paid, in one phrase. */
export const STREAM_PAYMENT = "prepaid credits via SIGN-IN-WITH-X";

/** One event a stream may send: its SSE `event:` name (the WebSocket `event` field) and its `data`. */
export interface StreamEventDoc {
  name: string;
  /** JSON Schema (2020-12) of `data`. */
  schema: JsonSchema;
  /** One of CONTROL_EVENTS (debit, payment_required, dropped), which every stream may send. */
  control: boolean;
  description?: string;
}

const eventDocs = new WeakMap<StreamDef, StreamEventDoc[]>();

function eventDoc(name: string, schema: z.ZodType, control: boolean): StreamEventDoc {
  const s = jsonSchema(schema, "output");
  return { name, schema: s, control, ...(typeof s.description === "string" ? { description: s.description } : {}) };
}

/** The events of a stream, its topic's own first, then the control events; schemas converted once per stream. */
export function streamEvents(def: StreamDef): StreamEventDoc[] {
  let d = eventDocs.get(def);
  if (!d) {
    d = [
      ...Object.entries(def.events).map(([name, schema]) => eventDoc(name, schema, false)),
      ...Object.entries(CONTROL_EVENTS)
        .filter(([name]) => !(name in def.events))
        .map(([name, schema]) => eventDoc(name, schema, true)),
    ];
    eventDocs.set(def, d);
  }
  return d;
}

/** Event name → JSON Schema of its data (the shape `stream_subscribe` answers with). */
export function streamEventSchemas(def: StreamDef): Record<string, JsonSchema> {
  return Object.fromEntries(streamEvents(def).map((e) => [e.name, e.schema]));
}

/** The example SSE path of a stream (`/stream/cvd/BTC`, `/stream/liquidations?symbol=BTC`). */
export function streamExamplePath(def: StreamDef): string {
  return streamPath(def, def.exampleSymbol);
}

/** The WebSocket URL under `base` (`https://h` → `wss://h/ws`; a relative base stays a path). */
export function streamWsUrl(base: string): string {
  return `${base.replace(/\/+$/, "").replace(/^http/, "ws")}${STREAM_WS_PATH}`;
}

/** The WebSocket message that subscribes to a stream's example. */
export function streamWsSubscribe(def: StreamDef): Record<string, string> {
  return { op: "subscribe", topic: def.topic, symbol: def.exampleSymbol };
}

/**
 * Whether the documents describe streams as paid from credits. Streams are paid from prepaid credits
 * only: with credits offered they need a SIWX proof or a session token; with no payment offer at all
 * (payments off) they are free and anonymous.
 */
export function streamsPaid(offers: PaymentOffers): boolean {
  return offers.credits !== undefined;
}

/**
 * The streams a deployment serves, for documents: none when it takes payments but not credits (MPP
 * offered, credits off: the stream routes answer 404), else all. With payments on and neither MPP nor
 * credits, the offers look like payments off, and the streams are listed as free.
 */
export function offeredStreams(streams: readonly StreamDef[], offers: PaymentOffers): readonly StreamDef[] {
  return offers.mpp && !offers.credits ? [] : streams;
}

/** How to authenticate, in a sentence (SSE and WebSocket alike). */
export const STREAM_AUTH_TEXT =
  "Send a SIGN-IN-WITH-X proof (CAIP-122 / EIP-4361, base64, for this server's origin) in the SIGN-IN-WITH-X header, or URL-encoded in ?siwx= where headers cannot be set (browser EventSource and WebSocket). A proof's nonce is single-use: reconnect with the X-Credits-Session token of the answer (or the WebSocket welcome's session), as a header or ?session=, or with a fresh proof.";

/** How billing works, in a sentence. */
export function streamBillingText(def: StreamDef): string {
  return `${def.pricePerMinuteUsd} USD per stream-minute from prepaid credits (top up with POST /api/v1/credits): the first minute is debited when the stream opens (without the balance for it the answer is a 402 and nothing is debited), then each minute at its start, each announced by a debit event. A minute that cannot be paid (balance or caps) sends payment_required and closes the stream.`;
}

/** JSON Schemas of the WebSocket messages (http/ws.ts), for OpenAPI and llms-full.txt. */
export function wsMessageSchemas(topics: readonly string[]): { client: JsonSchema; server: JsonSchema } {
  const str = { type: "string" };
  const topic = topics.length ? { type: "string", enum: [...topics] } : str;
  const symbol = { type: ["string", "null"], description: "the validated base (BTC), null for all liquidations" };
  const client: JsonSchema = {
    type: "object",
    description: "A client message (JSON text, at most 4 KB; at most 100 per 10 s, beyond which the connection is closed with 1008)",
    required: ["op", "topic"],
    properties: {
      op: { type: "string", enum: ["subscribe", "unsubscribe"] },
      topic,
      symbol: { type: "string", maxLength: 40, description: "required for cvd and funding; optional for liquidations (all symbols)" },
      last_event_id: { type: "string", maxLength: 100, description: "resume after this event id, as Last-Event-ID does on SSE" },
    },
  };
  const msg = (type: string, description: string, properties: Record<string, unknown>, required: string[]) => ({
    type: "object",
    title: type,
    description,
    required: ["type", ...required],
    properties: { type: { type: "string", const: type }, ...properties },
  });
  const server: JsonSchema = {
    description: "A server message (JSON text)",
    oneOf: [
      msg(
        "welcome",
        "sent once the connection is open: the session token to reconnect with, and the topics",
        {
          session: { type: ["string", "null"], description: "credits session token (null when payments are off)" },
          topics: {
            type: "array",
            items: {
              type: "object",
              properties: { topic: str, symbol: { type: "string", enum: ["required", "optional"] }, price_per_minute_usd: str, events: { type: "array", items: str } },
            },
          },
        },
        ["session", "topics"],
      ),
      msg(
        "subscribed",
        "a subscribe was accepted; the first minute is debited next (a debit event), or the subscription ends with unsubscribed + error",
        { topic, symbol, price_per_minute_usd: str },
        ["topic", "symbol", "price_per_minute_usd"],
      ),
      msg(
        "event",
        "one stream event: event and data as on SSE (debit, payment_required and dropped included); id only on resumable events",
        { topic, symbol, event: str, id: str, data: { description: "the event's data (see the stream's event schemas)" } },
        ["topic", "symbol", "event", "data"],
      ),
      msg(
        "unsubscribed",
        "a subscription ended: unsubscribe (asked), payment_required, dropped, error (it could not open) or closed",
        { topic, symbol, reason: { type: "string", description: "unsubscribe, payment_required, dropped, error or closed" } },
        ["topic", "symbol", "reason"],
      ),
      msg(
        "error",
        "a message was refused (malformed, unknown topic or symbol, already or not subscribed, stream limits, payment); the connection stays open",
        {
          request: { description: "the message refused, when it parsed" },
          error: {
            type: "object",
            required: ["code", "message"],
            properties: { code: str, message: str, details: { description: "for PAYMENT_REQUIRED: the 402 body (how to top up)" } },
          },
        },
        ["request", "error"],
      ),
    ],
  };
  return { client, server };
}
