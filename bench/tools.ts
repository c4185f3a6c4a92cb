/**
 * Market-data tools (CEX, DEX, perpetuals, liquidation heatmap) on the simulator (payments off, loopback):
 * 1. upstream fan-in: 1,000 concurrent identical requests per tool, each tool on a service of its own whose
 *    venue clients hold only their instrument lists. Every venue request is recorded; one venue read is one
 *    distinct request (venue, method, path, query string, body), and the target is one call per read;
 * 2. tool latency on cache misses (sequential, distinct inputs), p50/p99, and each miss's latency minus its slowest
 *    single venue request (request to response headers): a tool that reads its venues in parallel costs its
 *    slowest read plus its own work (target: under 10 ms).
 * Writes bench/results/tools.json and the `tools` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { cpus } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { listAssets } from "../src/assets/catalogue.js";
import { canonicalTokens } from "../src/assets/tokens.js";
import { loadConfig } from "../src/config.js";
import type { ToolContext } from "../src/core/context.js";
import { isMarketDataTool, requestPath, type AnyTool } from "../src/registry/tool.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService } from "../src/service.js";
import { startSimulator, type RunningSimulator } from "../src/sim/server.js";
import { HYPERLIQUID_SNAPSHOT_TTL_MS } from "../src/venues/hyperliquid/client.js";
import { PERP_VENUES } from "../src/venues/perp/types.js";
import { TOOLS } from "../tools/index.js";
import { percentile, writeResults, writeSection } from "./report.js";
import { UpstreamRecorder, type VenueReads } from "./upstream-reads.js";

process.env.LOG_LEVEL ??= "silent";
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1000);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 23);
/** Tool families that read venue REST APIs; stream tools read the stream stores (bench/streams.ts). */
const FAMILIES = ["cex", "dex", "funding", "futures", "liquidations"];

/** Distinct raw inputs for one tool (distinct cache keys), to time cache misses. */
function inputs(tool: AnyTool, n: number): Array<Record<string, string | number | boolean>> {
  const assets = listAssets().filter((a) => !tool.tags.includes("dex") || canonicalTokens(a.symbol).length > 0);
  const others = assets.filter((a) => a.symbol !== tool.example.symbol && a.coingeckoId !== tool.example.id).slice(0, n);
  const shape = tool.input.shape;
  if ("symbol" in shape) return others.map((a) => ({ ...tool.example, symbol: a.symbol }));
  if ("pair" in shape) return others.map((a) => ({ pair: `${a.symbol}-USDC` }));
  if ("id" in shape) return others.map((a) => ({ ...tool.example, id: a.coingeckoId }));
  if ("symbols" in shape) return others.map((a) => ({ symbols: a.symbol.toLowerCase() }));
  if (tool.name === "funding_extreme") return Array.from({ length: n }, (_, i) => ({ threshold: 0.011 + i * 0.001 }));
  return Array.from({ length: n }, (_, i) => ({ ...tool.example, limit: i + 11 }));
}

/**
 * Loads every perp venue's instrument list, as a running service holds it (an hour), and nothing else a
 * tool reads: Hyperliquid's list comes with its 2-second market snapshot, which is left to expire.
 */
async function loadInstrumentLists(ctx: ToolContext): Promise<void> {
  await Promise.all(PERP_VENUES.map((v) => ctx.venues.perps[v].instruments()));
  await sleep(HYPERLIQUID_SNAPSHOT_TTL_MS + 100);
}

interface Row {
  tool: string;
  path: string;
  requests: number;
  statuses: Record<string, number>;
  venues: VenueReads[];
  reads: number;
  calls: number;
  calls_per_read: number | null;
  p50_ms: number;
  p99_ms: number;
  /** Per miss: its latency minus its slowest single venue request, ms (p50 / p99); null when misses read no venue. */
  over_slowest_read_p50_ms: number | null;
  over_slowest_read_p99_ms: number | null;
}

/** Measures one tool on a fresh service: the burst's venue reads, then the latency of cache misses. */
async function measure(tool: AnyTool, sim: RunningSimulator, upstream: UpstreamRecorder): Promise<Row> {
  const service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off" }) });
  const { url, close } = await service.listen();
  try {
    await loadInstrumentLists(service.ctx);
    const path = requestPath(tool);
    const statuses: Record<string, number> = {};
    const mark = upstream.mark();
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const r = await fetch(`${url}${path}`);
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }),
    );
    const venues = upstream.readsSince(mark);
    const times: number[] = [];
    const over: number[] = [];
    for (const raw of inputs(tool, LATENCY_SAMPLES)) {
      const before = upstream.mark();
      const t0 = performance.now();
      const r = await fetch(`${url}${requestPath(tool, raw)}`);
      await r.arrayBuffer();
      const ms = performance.now() - t0;
      times.push(ms);
      const slowest = upstream.slowestReadSince(before);
      if (slowest !== undefined) over.push(ms - slowest);
    }
    times.sort((a, b) => a - b);
    over.sort((a, b) => a - b);
    const reads = venues.reduce((n, v) => n + v.reads, 0);
    const calls = venues.reduce((n, v) => n + v.calls, 0);
    return {
      tool: tool.name,
      path,
      requests: CONCURRENT,
      statuses,
      venues,
      reads,
      calls,
      calls_per_read: reads ? +(calls / reads).toFixed(2) : null,
      p50_ms: +percentile(times, 50).toFixed(2),
      p99_ms: +percentile(times, 99).toFixed(2),
      over_slowest_read_p50_ms: over.length ? +percentile(over, 50).toFixed(2) : null,
      over_slowest_read_p99_ms: over.length ? +percentile(over, 99).toFixed(2) : null,
    };
  } finally {
    await close();
  }
}

/** The README section: the table, then what each tool reads. */
function report(rows: readonly Row[]): string {
  const list = (r: Row, f: (v: VenueReads) => string) => r.venues.map(f).join(", ") || "none";
  const endpoints = (v: VenueReads) =>
    Object.entries(v.endpoints)
      .map(([e, n]) => `\`${e}\`${n > 1 ? ` ×${n}` : ""}`)
      .join(", ");
  const repeated = rows.flatMap((r) => r.venues.flatMap((v) => Object.entries(v.repeated).map(([req, n]) => `- \`${r.tool}\`: ${v.venue} \`${req}\` sent ${n} times`)));
  return [
    `Run ${new Date().toISOString()} on ${cpus().length} cores, Node ${process.version}: ${CONCURRENT} concurrent identical requests per tool, each tool on a service of its own whose venue clients hold only their instrument lists; then ${LATENCY_SAMPLES} sequential cache misses with distinct inputs for latency. Simulator and service in one process, loopback.`,
    "",
    "| tool | statuses | venue reads (distinct requests) | upstream calls | calls per venue read (target 1.0) | miss latency p50 / p99 | miss minus its slowest venue request p50 / p99 |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| \`${r.tool}\` | ${Object.entries(r.statuses)
          .map(([s, n]) => `${n}x${s}`)
          .join(
            ", ",
          )} | ${list(r, (v) => `${v.venue} ${v.reads}`)} | ${list(r, (v) => `${v.venue} ${v.calls}`)} | ${r.calls_per_read?.toFixed(2) ?? "no read"} | ${r.p50_ms} / ${r.p99_ms} ms | ${r.over_slowest_read_p50_ms === null ? "no read" : `${r.over_slowest_read_p50_ms} / ${r.over_slowest_read_p99_ms} ms`} |`,
    ),
    "",
    "What each burst read (`×n`: n reads of one endpoint with different parameters; `*` an address):",
    "",
    ...rows.map((r) => `- \`${r.tool}\`: ${r.venues.map((v) => `${v.venue} ${endpoints(v)}`).join("; ") || "nothing"}`),
    "",
    repeated.length ? ["Requests sent more than once:", "", ...repeated].join("\n") : "No request was sent twice.",
  ].join("\n");
}

async function main(): Promise<void> {
  const sim = await startSimulator();
  const upstream = new UpstreamRecorder(sim.urls);
  const measured = TOOLS.filter((t) => t.method === "GET" && isMarketDataTool(t) && !t.tags.includes("streams") && t.tags.some((tag) => FAMILIES.includes(tag)));
  const rows: Row[] = [];
  for (const tool of measured) {
    const row = await measure(tool, sim, upstream);
    rows.push(row);
    process.stdout.write(`${row.tool}: ${row.reads} reads, ${row.calls} calls, p50 ${row.p50_ms} ms\n`);
  }
  await sim.close();
  writeResults("tools", { date: new Date().toISOString(), node: process.version, cpus: cpus().length, concurrent: CONCURRENT, rows });
  const section = report(rows);
  writeSection("tools", section);
  process.stdout.write(`\n${section}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
