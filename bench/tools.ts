/**
 * Perp and DEX tools on the simulator (payments off, loopback):
 * 1. upstream calls made for 1,000 concurrent identical requests per tool (target: one per venue the
 *    tool reads), instrument lists already cached;
 * 2. tool latency on cache misses (sequential, distinct inputs), p50/p99.
 * Writes bench/results/tools.json and the `tools` section of bench/README.md.
 */
import { cpus } from "node:os";
import { listAssets } from "../src/assets/catalogue.js";
import { canonicalTokens } from "../src/assets/tokens.js";
import { loadConfig } from "../src/config.js";
import { requestPath, type AnyTool } from "../src/registry/tool.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService } from "../src/service.js";
import { startSimulator } from "../src/sim/server.js";
import { TOOLS } from "../tools/index.js";
import { percentile, writeResults, writeSection } from "./report.js";

process.env.LOG_LEVEL ??= "silent";
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1000);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 23);
const VENUES = ["binance", "binance_spot", "bybit", "okx", "hyperliquid", "dexscreener", "geckoterminal"] as const;

/** Distinct raw inputs for one tool (distinct cache keys), to time cache misses. */
function inputs(tool: AnyTool, n: number): Array<Record<string, string | number | boolean>> {
  const syms = listAssets()
    .map((a) => a.symbol)
    .filter((s) => !tool.tags.includes("dex") || canonicalTokens(s).length > 0);
  const others = syms.filter((s) => s !== tool.example.symbol);
  if ("symbol" in tool.input.shape) return others.slice(0, n).map((symbol) => ({ ...tool.example, symbol }));
  if ("pair" in tool.input.shape) return others.slice(0, n).map((s) => ({ pair: `${s}-USDC` }));
  if (tool.name === "funding_extreme") return Array.from({ length: n }, (_, i) => ({ threshold: 0.011 + i * 0.001 }));
  return Array.from({ length: n }, (_, i) => ({ ...tool.example, limit: i + 11 }));
}

async function main(): Promise<void> {
  const sim = await startSimulator();
  const service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off" }) });
  const { url, close } = await service.listen();
  // Stream tools are measured by bench/streams.ts.
  const perpTools = TOOLS.filter((t) => t.tags.includes("funding") || t.tags.includes("futures") || t.tags.includes("dex"));
  // Load every venue's instrument list once (the clients cache them for an hour).
  // The warm-up inputs differ from the measured ones, so the measured requests start as cache misses.
  await Promise.all(perpTools.map((t) => fetch(`${url}${requestPath(t, inputs(t, LATENCY_SAMPLES + 1).at(-1))}`).then((r) => r.arrayBuffer())));

  const rows: Array<{ tool: string; path: string; requests: number; statuses: Record<string, number>; upstream: Record<string, number>; upstream_total: number; p50_ms: number; p99_ms: number }> = [];
  for (const tool of perpTools) {
    const path = requestPath(tool);
    const before = Object.fromEntries(VENUES.map((v) => [v, sim.faults.requestCount(v)]));
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const r = await fetch(`${url}${path}`);
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }),
    );
    const upstream: Record<string, number> = Object.fromEntries(VENUES.map((v) => [v, sim.faults.requestCount(v) - before[v]!] as const).filter(([, n]) => n > 0));
    const times: number[] = [];
    for (const raw of inputs(tool, LATENCY_SAMPLES)) {
      const t0 = performance.now();
      const r = await fetch(`${url}${requestPath(tool, raw)}`);
      await r.arrayBuffer();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    rows.push({
      tool: tool.name,
      path,
      requests: CONCURRENT,
      statuses,
      upstream,
      upstream_total: Object.values(upstream).reduce((a: number, b) => a + Number(b), 0),
      p50_ms: +percentile(times, 50).toFixed(2),
      p99_ms: +percentile(times, 99).toFixed(2),
    });
    process.stdout.write(`${tool.name}: ${JSON.stringify(upstream)} p50 ${percentile(times, 50).toFixed(1)} ms\n`);
  }
  await close();
  await sim.close();
  writeResults("tools", { date: new Date().toISOString(), node: process.version, cpus: cpus().length, concurrent: CONCURRENT, rows });
  const table = [
    `Run ${new Date().toISOString()} on ${cpus().length} cores, Node ${process.version}: ${CONCURRENT} concurrent identical requests per tool (instrument lists already cached), then ${LATENCY_SAMPLES} sequential cache misses with distinct inputs for latency. Simulator and service in one process, loopback.`,
    "",
    "| tool | statuses | upstream calls (per venue) | calls per venue read | miss latency p50 / p99 |",
    "|---|---|---|---|---|",
    ...rows.map((r) => {
      const venues = Object.keys(r.upstream).length;
      return `| \`${r.tool}\` | ${Object.entries(r.statuses).map(([s, n]) => `${n}x${s}`).join(", ")} | ${Object.entries(r.upstream).map(([v, n]) => `${v} ${n}`).join(", ") || "none"} | ${venues ? (r.upstream_total / venues).toFixed(2) : "0"} | ${r.p50_ms} / ${r.p99_ms} ms |`;
    }),
  ].join("\n");
  writeSection("tools", table);
  process.stdout.write(`\n${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
