import { z } from "zod";
import { jsonSchema } from "../../src/registry/json-schema.js";
import { defineTool } from "../../src/registry/tool.js";
import { streamPath } from "../../src/registry/stream.js";
import { CONTROL_EVENTS } from "./common.js";
import { STREAMS, streamSymbol } from "./index.js";

/**
 * `GET /stream` (MCP `stream_subscribe`): where and how to open a live stream: its SSE URL, the WebSocket
 * subscribe message, the price per minute, how to authenticate and resume, and the JSON Schema of every
 * event. Free: the stream itself is paid per minute from credits.
 */
export const streamSubscribe = defineTool({
  name: "stream_subscribe",
  title: "Open a live stream",
  method: "GET",
  path: "/stream",
  priceUsd: "free",
  cacheTtlSec: 0,
  tags: ["streams"],
  summary: "How to subscribe to live liquidations, CVD or funding: stream URL, price per minute and event schemas",
  description:
    "Returns the Server-Sent Events URL (and the WebSocket message) of a live topic with the JSON Schema of its events. Streams are paid from prepaid credits per minute (debited at the start of each minute); open one with a SIGN-IN-WITH-X header (or ?siwx=), reconnect with the X-Credits-Session token and Last-Event-ID. symbol is required for cvd and funding, optional for liquidations (all symbols). MCP clients can instead subscribe to the resources marketgate://liquidations[/{symbol}] and marketgate://cvd/{symbol} on the stateful endpoint /mcp/live.",
  example: { topic: "liquidations", symbol: "BTC" },
  input: z.object({
    topic: z.enum(["liquidations", "cvd", "funding"]).describe("liquidations, cvd or funding"),
    symbol: z.string().max(40).optional().describe("BTC, BTCUSDT…; required for cvd and funding"),
  }),
  output: z.object({
    topic: z.string(),
    symbol: z.string().nullable(),
    sse_url: z.string().describe("absolute under PUBLIC_URL, else a path on the server you called"),
    websocket: z.object({ url: z.string(), subscribe: z.record(z.string(), z.unknown()) }),
    price_per_minute_usd: z.string(),
    authentication: z.string(),
    resume: z.string(),
    events: z.record(z.string(), z.record(z.string(), z.unknown())).describe("event name → JSON Schema of its data"),
  }),
  async handler({ topic, symbol: raw }, ctx) {
    const def = STREAMS.find((d) => d.topic === topic)!;
    const symbol = await streamSymbol(def, raw, ctx);
    const base = ctx.publicUrl ?? "";
    const events: Record<string, Record<string, unknown>> = {};
    for (const [name, schema] of Object.entries({ ...def.events, ...CONTROL_EVENTS })) events[name] = jsonSchema(schema, "output");
    return {
      topic,
      symbol: symbol ?? null,
      sse_url: `${base}${streamPath(def, symbol)}`,
      websocket: { url: `${base.replace(/^http/, "ws")}/ws`, subscribe: { op: "subscribe", topic, ...(symbol ? { symbol } : {}) } },
      price_per_minute_usd: def.pricePerMinuteUsd,
      authentication:
        "Send SIGN-IN-WITH-X (a SIWX proof for this server's origin; ?siwx=<base64> where headers are impossible) on the SSE request or the WebSocket upgrade; the answer's X-Credits-Session token (or the WebSocket welcome's session) reopens streams without signing again. Without credits for the first minute: 402 with the top-up requirements (POST /api/v1/credits).",
      resume: def.resumable,
      events,
    };
  },
});
