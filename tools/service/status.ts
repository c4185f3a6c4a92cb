import { z } from "zod";
import { defineTool } from "../../src/registry/tool.js";
import { isoNow, Timestamp } from "../common.js";

const VenueState = z.object({
  venue: z.string(),
  reachable: z.boolean().nullable().describe("outcome of the latest call; null before any call"),
  last_ok_at: z.string().nullable(),
  last_error_at: z.string().nullable(),
  last_error: z.string().nullable(),
  requests: z.number().int(),
  errors: z.number().int(),
});

/** `GET /api/v1/status`: version, uptime, data mode and per-venue reachability (free). */
export const serviceStatus = defineTool({
  name: "service_status",
  title: "Service status",
  method: "GET",
  path: "/api/v1/status",
  priceUsd: "free",
  cacheTtlSec: 0,
  tags: ["service"],
  summary: "Version, uptime, data mode and per-venue reachability",
  description:
    "Free. Reports whether answers come from live venues or the local simulator (simulated: true), and each venue's reachability as observed on real calls (no probes are sent, so the venues' rate budgets are not spent).",
  example: {},
  input: z.object({}),
  output: z.object({
    status: z.literal("ok"),
    version: z.string(),
    uptime_sec: z.number().int(),
    data_mode: z.enum(["live", "sim"]),
    simulated: z.boolean(),
    venues: z.array(VenueState),
    streams: z
      .array(
        z.object({
          venue: z.string(),
          connected: z.boolean(),
          connected_since: z.string().nullable(),
          last_message_at: z.string().nullable(),
          reconnects: z.number().int(),
          subscribed_symbols: z.number().int(),
          lag_ms: z.number().nullable().describe("now - venue time of the latest trade"),
        }),
      )
      .describe("websocket feeds (empty when STREAMS=off)"),
    timestamp: Timestamp,
  }),
  annotations: { openWorldHint: false },
  async handler(_input, ctx) {
    return {
      status: "ok" as const,
      version: ctx.version,
      uptime_sec: Math.floor((ctx.now() - ctx.startedAt) / 1000),
      data_mode: ctx.dataMode,
      simulated: ctx.dataMode === "sim",
      venues: ctx.health.snapshot(),
      streams: (ctx.streams?.states() ?? []).map((f) => ({
        venue: f.venue,
        connected: f.connected,
        connected_since: f.connectedSince === null ? null : new Date(f.connectedSince).toISOString(),
        last_message_at: f.lastMessageAt === null ? null : new Date(f.lastMessageAt).toISOString(),
        reconnects: f.reconnects,
        subscribed_symbols: f.subscribedSymbols,
        lag_ms: f.lagMs,
      })),
      timestamp: isoNow(ctx),
    };
  },
});
