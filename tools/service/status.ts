import { z } from "zod";
import { ALERT_LEASE } from "../../src/alerts/scheduler.js";
import { CIRCUIT_STATES } from "../../src/core/circuit.js";
import type { ToolContext } from "../../src/core/context.js";
import { replayedEndpoints } from "../../src/core/request-scope.js";
import { readSummary } from "../../src/doctor/summary.js";
import { defineTool } from "../../src/registry/tool.js";
import { leaseHolder } from "../../src/state/lease.js";
import { STREAMS_LEASE } from "../../src/ingestion/replication/replicated-ingestion.js";
import { isoNow, Timestamp } from "../common.js";

const VenueState = z.object({
  venue: z.string(),
  reachable: z.boolean().nullable().describe("outcome of the latest call; null before any call"),
  last_ok_at: z.string().nullable(),
  last_error_at: z.string().nullable(),
  last_error: z.string().nullable(),
  requests: z.number().int(),
  errors: z.number().int(),
  circuit: z
    .enum(CIRCUIT_STATES)
    .describe(
      "circuit breaker: closed (calls go through); open (skipped after repeated failures until the half-open delay passes, then the next call probes); half_open (a probe is in flight)",
    ),
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
  summary: "Version, uptime, data mode and per-venue reachability and circuit state",
  description:
    "Free. Reports whether answers come from live venues or the local simulator (simulated: true; replay when the simulator replays real recordings), and each venue's reachability as observed on real calls (no probes are sent, so the venues' rate budgets are not spent), with its circuit breaker state (an open circuit means the venue is skipped and listed in missing_exchanges), and the last `marketgate doctor` run.",
  example: {},
  input: z.object({}),
  output: z.object({
    status: z.literal("ok"),
    version: z.string(),
    uptime_sec: z.number().int(),
    data_mode: z.enum(["live", "sim"]),
    simulated: z.boolean(),
    replay: z
      .object({
        enabled: z.boolean().describe("SIM_REPLAY=on: the simulator replays real recordings on some endpoints (answers built on them carry X-Data-Source: replay)"),
        endpoints: z
          .array(
            z.object({
              venue: z.string(),
              endpoint: z.string(),
              kind: z.enum(["data", "instruments"]).describe("instruments: a recorded instrument list (which symbols are listed); it does not make an answer a replay"),
              recording: z.string().nullable().describe("the recording file the simulator named"),
              answers: z.number().int(),
              last_at: z.string(),
            }),
          )
          .describe("venue endpoints whose answers the simulator marked as replayed recordings, since start"),
      })
      .nullable()
      .describe("sim data mode only (null when live)"),
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
    doctor: z
      .object({
        ran_at: z.string(),
        data_mode: z.enum(["live", "sim"]),
        ok: z.boolean(),
        checks: z.number().int(),
        failed: z.array(
          z.object({
            venue: z.string(),
            endpoint: z.string(),
            status: z.enum(["fail", "skipped"]),
            kind: z.string().nullable().describe("unreachable, timeout, http, shape, empty or error; null when skipped"),
            message: z.string().nullable(),
            field: z.string().nullable().describe("shape: the payload field (zod path) that broke"),
          }),
        ),
      })
      .nullable()
      .describe("summary of the last `marketgate doctor` run (DATA_DIR/doctor.json); null when none was saved"),
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
      replay:
        ctx.dataMode === "sim"
          ? {
              enabled: ctx.simReplay,
              endpoints: replayedEndpoints(ctx.health).map((e) => ({
                venue: e.venue,
                endpoint: e.endpoint,
                kind: e.kind,
                recording: e.recording,
                answers: e.answers,
                last_at: new Date(e.lastAt).toISOString(),
              })),
            }
          : null,
      venues: ctx.health.snapshot(),
      streams: (ctx.ingestion?.states() ?? []).map((f) => ({
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
      doctor: readSummary(ctx.dataDir),
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
