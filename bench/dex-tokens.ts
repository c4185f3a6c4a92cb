/**
 * Upstream calls of the token-by-address tools (issue 23, docs/methods/dex-tokens.md): a 30-address batch,
 * 1,000 concurrent identical requests, and 30 distinct single-address requests arriving together (over HTTP
 * and straight at the token source), each on a fresh service against the venue simulator. Calls are counted
 * by the simulator per venue (every request it receives). Writes bench/results/dex-tokens.json and the
 * `dex-tokens` section of bench/README.md.
 *
 * Run: npx tsc -p tsconfig.bench.json && node .bench-dist/bench/dex-tokens.js
 */
import { loadConfig } from "../src/config.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService, type Service } from "../src/service.js";
import { fakeEvmAddress, fakeSolanaAddress, SIM_DEX_TOKENS } from "../src/sim/dex-tokens.js";
import { startSimulator, type RunningSimulator } from "../src/sim/server.js";
import { percentile, writeResults, writeSection } from "./report.js";

interface Row {
  case: string;
  requests: number;
  statuses: Record<string, number>;
  geckoterminal_calls: number;
  dexscreener_calls: number;
  /** What the same work would cost with one call per address per source (no batching, no single-flight). */
  naive_calls_per_source: number;
  p50_ms: number;
  p99_ms: number;
}

const BASE_KNOWN = ["WETH@base", "USDC@base", "cbBTC@base", "AERO@base"].map((k) => SIM_DEX_TOKENS.find((t) => t.key === k)!.address);

async function withService<T>(sim: RunningSimulator, fn: (s: Service, url: string) => Promise<T>): Promise<T> {
  const service = await createService({
    config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), RATE_LIMIT_PER_MIN: "100000000", FREE_RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off", ALERTS: "off" }),
  });
  const { url, close } = await service.listen();
  try {
    return await fn(service, url);
  } finally {
    await close();
  }
}

/** Runs `n` requests at once and counts the simulator's calls per source they caused. */
async function burst(sim: RunningSimulator, name: string, paths: readonly string[], url: string, naive: number): Promise<Row> {
  const gt0 = sim.faults.requestCount("geckoterminal");
  const ds0 = sim.faults.requestCount("dexscreener");
  const statuses: Record<string, number> = {};
  const times: number[] = [];
  await Promise.all(
    paths.map(async (p) => {
      const t0 = performance.now();
      const r = await fetch(`${url}${p}`);
      await r.arrayBuffer();
      times.push(performance.now() - t0);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }),
  );
  times.sort((a, b) => a - b);
  return {
    case: name,
    requests: paths.length,
    statuses,
    geckoterminal_calls: sim.faults.requestCount("geckoterminal") - gt0,
    dexscreener_calls: sim.faults.requestCount("dexscreener") - ds0,
    naive_calls_per_source: naive,
    p50_ms: +percentile(times, 50).toFixed(2),
    p99_ms: +percentile(times, 99).toFixed(2),
  };
}

async function main(): Promise<void> {
  const sim = await startSimulator({ seed: 23 });
  const rows: Row[] = [];
  try {
    const batch = [...BASE_KNOWN, ...Array.from({ length: 26 }, (_, i) => fakeEvmAddress(`bench-batch-${i}`))];
    rows.push(
      await withService(sim, (_s, url) =>
        burst(sim, "`GET /dex/tokens/base?addresses=` with 30 addresses (4 known, 26 unknown)", [`/dex/tokens/base?addresses=${batch.join(",")}`], url, 30),
      ),
    );

    const weth = SIM_DEX_TOKENS.find((t) => t.key === "WETH@arbitrum")!.address;
    rows.push(
      await withService(sim, (_s, url) => burst(sim, "1,000 concurrent identical `GET /dex/tokens/arbitrum/{WETH}`", Array(1000).fill(`/dex/tokens/arbitrum/${weth}`), url, 1000)),
    );

    const distinct = [...BASE_KNOWN, ...Array.from({ length: 26 }, (_, i) => fakeEvmAddress(`bench-single-${i}`))];
    rows.push(
      await withService(sim, (_s, url) =>
        burst(
          sim,
          "30 distinct single-address `GET /dex/tokens/base/{address}` arriving together (4 known, 26 unknown: 404)",
          distinct.map((a) => `/dex/tokens/base/${a}`),
          url,
          30,
        ),
      ),
    );

    rows.push(
      await withService(sim, async (s) => {
        const gt0 = sim.faults.requestCount("geckoterminal");
        const ds0 = sim.faults.requestCount("dexscreener");
        const t0 = performance.now();
        await Promise.all(Array.from({ length: 30 }, (_, i) => s.ctx.venues.dexTokens.snapshot("solana", fakeSolanaAddress(`bench-source-${i}`), "paid")));
        const ms = +(performance.now() - t0).toFixed(2);
        return {
          case: "30 distinct loads at the token source at once (Solana, no HTTP)",
          requests: 30,
          statuses: {},
          geckoterminal_calls: sim.faults.requestCount("geckoterminal") - gt0,
          dexscreener_calls: sim.faults.requestCount("dexscreener") - ds0,
          naive_calls_per_source: 30,
          p50_ms: ms,
          p99_ms: ms,
        };
      }),
    );
  } finally {
    await sim.close();
  }
  const at = new Date().toISOString();
  writeResults("dex-tokens", { at, rows });
  const table = [
    `Run ${at}, Node ${process.version}: each case on a fresh service (empty caches) against the venue simulator, loopback; calls counted by the simulator.`,
    "",
    "| case | statuses | GeckoTerminal calls | DexScreener calls | one call per address per source would be | latency p50 / p99 |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.case} | ${
          Object.entries(r.statuses)
            .map(([k, v]) => `${v}x${k}`)
            .join(", ") || "—"
        } | ${r.geckoterminal_calls} | ${r.dexscreener_calls} | ${r.naive_calls_per_source} | ${r.p50_ms} / ${r.p99_ms} ms |`,
    ),
  ].join("\n");
  writeSection("dex-tokens", table);
  console.log(table);
}

await main();
process.exit(0);
