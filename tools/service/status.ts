import { z } from "zod";
import { ALERT_LEASE } from "../../src/alerts/scheduler.js";
import type { ToolContext } from "../../src/core/context.js";
import { defineTool } from "../../src/registry/tool.js";
import { leaseHolder } from "../../src/state/lease.js";
import { STREAMS_LEASE } from "../../src/streams/replication/replicated-streams.js";
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
      .describe("websocket feeds (empty when STREAMS=off; with replicas, the ingest leader's feeds)"),
    replication: z.object({
      mode: z.enum(["embedded", "redis"]).describe("redis: several replicas share state through REDIS_URL"),
      replica_id: z.string().nullable(),
      redis_connected: z.boolean().nullable(),
      leaders: z
        .object({ streams: z.string().nullable(), alerts: z.string().nullable() })
        .nullable()
        .describe("replica ids holding the ingest and alert-scheduler leases; null when Redis cannot be read"),
    }),
    alerts: z.object({
      enabled: z.boolean(),
      active: z.number().int().nullable().describe("active alerts of every kind; null when the alert store cannot be read"),
    }),
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
      replication: await replication(ctx),
      alerts: { enabled: ctx.alerts !== undefined, active: ctx.alerts ? await Promise.resolve(ctx.alerts.store.countActive()).catch(() => null) : null },
      timestamp: isoNow(ctx),
    };
  },
});

/** Replication facts for the status: mode, this replica, Redis reachability and the lease holders. */
async function replication(ctx: ToolContext) {
  const { redis } = ctx;
  if (!redis) return { mode: "embedded" as const, replica_id: null, redis_connected: null, leaders: null };
  const leaders = await Promise.all([leaseHolder(redis, STREAMS_LEASE), leaseHolder(redis, ALERT_LEASE)])
    .then(([streams, alerts]) => ({ streams, alerts }))
    .catch(() => null);
  return { mode: "redis" as const, replica_id: ctx.replicaId ?? null, redis_connected: redis.ready, leaders };
}
