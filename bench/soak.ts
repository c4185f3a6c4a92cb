/**
 * Soak (issue 16, memory stays flat): the offline stack of `npm run sandbox` (venue simulator, anvil, in-process
 * facilitator and the service with its eight pre-subscribed streams, all in this process) under a mixed load for
 * `BENCH_SOAK_MIN` minutes (default 60), after a warm-up pass that pays every symbol tool over every symbol once
 * (so that every cache has seen the whole input space):
 * - a paid call every 4 s (`@x402/fetch` on anvil, four payers in turn) over distinct inputs: new
 *   `/api/v1/prices` symbol sets, alternating with every symbol tool over every symbol and with the CVD of the
 *   simulator's other perpetuals, which subscribes them on demand (at most 12 at once, so some are dropped too);
 * - cached reads: the last paid request read again every 100 ms (free while its cache TTL lasts);
 * - MCP over Streamable HTTP: a free `tools/call` every second.
 * Live heap is measured after a forced GC at start, once warm (`BENCH_SOAK_WARM_MIN` after the pass, default 2),
 * every minute, and at the end; the growth per minute is reported end minus warm, and as the least-squares slope of
 * the minute samples.
 * `BENCH_SOAK_SNAPSHOTS=<dir>` also writes heap snapshots once warm and at the end (compare them in DevTools).
 * Needs `node --expose-gc`. Writes bench/results/soak.json and the `soak` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { cpus } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { listAssets } from "../src/assets/catalogue.js";
import { canonicalTokens } from "../src/assets/tokens.js";
import { requestPath, type AnyTool } from "../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../src/sandbox/offline-stack.js";
import { SIM_PERP_BASES } from "../src/sim/perp-model.js";
import { PRE_SUBSCRIBED } from "../src/ingestion/manager.js";
import { TOOLS } from "../tools/index.js";
import { writeResults, writeSection } from "./report.js";

process.env.LOG_LEVEL ??= "silent";
const MINUTES = Number(process.env.BENCH_SOAK_MIN ?? 60);
const WARM_MIN = Number(process.env.BENCH_SOAK_WARM_MIN ?? 2);
const SNAPSHOT_DIR = process.env.BENCH_SOAK_SNAPSHOTS;
const PAID_EVERY_MS = 4000;
const CACHED_READ_EVERY_MS = 100;
const MCP_EVERY_MS = 1000;
const PAYERS = 4;
/** On-demand stream bound (sandbox default 20): below the simulator's 19 other perpetuals, so eviction runs too. */
const ON_DEMAND_MAX = 12;
const MB = 1024 * 1024;

/** Counts per label (HTTP statuses, outcomes). */
class Tally {
  readonly counts: Record<string, number> = {};
  /** Counts one more `label`. */
  add(label: string | number): void {
    this.counts[label] = (this.counts[label] ?? 0) + 1;
  }
  /** Everything counted. */
  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }
  /** `label: count, …`, for the report. */
  toString(): string {
    return Object.entries(this.counts)
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ");
  }
}

/** Every `/api/v1/prices` request over three distinct catalogue symbols, each set once (cache misses). */
function* priceSets(): Generator<string> {
  const s = listAssets()
    .map((a) => a.symbol.toLowerCase())
    .sort();
  for (let a = 0; a < s.length; a++) for (let b = a + 1; b < s.length; b++) for (let c = b + 1; c < s.length; c++) yield `/api/v1/prices?symbols=${s[a]},${s[b]},${s[c]}`;
}

/** Symbols a tool with a `symbol` input serves: perpetual bases for stream and perp tools, tokens with DEX pools for DEX tools. */
function symbolsOf(tool: AnyTool): string[] {
  if (tool.tags.includes("dex"))
    return listAssets()
      .map((a) => a.symbol)
      .filter((s) => canonicalTokens(s).length > 0);
  return [...SIM_PERP_BASES];
}

/**
 * Paid GET tools with a `symbol` input over each of their symbols, tool by tool within a symbol so consecutive
 * calls differ; the CVD tools bring the on-demand subscriptions. Repeats only after every pair was asked once,
 * long after any cache TTL.
 */
function symbolPaths(): string[] {
  const tools = TOOLS.filter((t) => t.method === "GET" && t.priceUsd !== "free" && !t.stateful && "symbol" in t.input.shape);
  const longest = Math.max(...tools.map((t) => symbolsOf(t).length));
  const out: string[] = [];
  for (let i = 0; i < longest; i++) {
    for (const t of tools) {
      const syms = symbolsOf(t);
      if (i < syms.length) out.push(requestPath(t, { ...t.example, symbol: syms[i]! }));
    }
  }
  return out;
}

/**
 * CVD of the perpetuals that are not pre-subscribed, each asked twice 16 s apart: the first request subscribes it
 * (a free warm-up answer), the second is paid. More symbols than {@link ON_DEMAND_MAX}, so that the least
 * recently requested ones are unsubscribed and their data dropped all along.
 */
function onDemandPaths(): string[] {
  const cvd = TOOLS.find((t) => t.name === "cvd")!;
  const pre = new Set<string>(PRE_SUBSCRIBED);
  return SIM_PERP_BASES.filter((b) => !pre.has(b)).flatMap((symbol) => {
    const path = requestPath(cvd, { ...cvd.example, symbol });
    return [path, path];
  });
}

/** The paid requests in order: a new price set, a symbol tool, a new price set, an on-demand CVD, and again. */
function* paidPaths(): Generator<string> {
  const sets = priceSets();
  const symbols = symbolPaths();
  const onDemand = onDemandPaths();
  for (let k = 0; ; k++) {
    const set = sets.next();
    if (!set.done) yield set.value;
    yield k % 2 === 0 ? symbols[(k / 2) % symbols.length]! : onDemand[((k - 1) / 2) % onDemand.length]!;
  }
}

/** A memory reading after a forced GC, MB. */
interface Reading {
  /** Live V8 heap. */
  heapMb: number;
  /** Memory outside the heap held by heap objects (Buffers, ArrayBuffers). */
  externalMb: number;
  rssMb: number;
}

/** Live heap after a forced full GC (twice: finalizers of the first free more on the second), and RSS. */
function liveHeap(): Reading {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapMb: +(m.heapUsed / MB).toFixed(1), externalMb: +(m.external / MB).toFixed(1), rssMb: Math.round(m.rss / MB) };
}

/** How a failed load step is counted: its error's name and the start of its message. */
const errorLabel = (err: unknown): string => `${(err as Error).name}: ${(err as Error).message}`.slice(0, 100);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `step` every `everyMs` until `stop()` says so; a failed step is counted, not fatal. */
async function every(everyMs: number, stop: () => boolean, step: () => Promise<void>, errors: Tally): Promise<void> {
  while (!stop()) {
    const t0 = performance.now();
    await step().catch((err: unknown) => errors.add(errorLabel(err)));
    await sleep(Math.max(0, everyMs - (performance.now() - t0)));
  }
}

/** What the load did, by kind. */
interface LoadTallies {
  /** The warm-up pass: every symbol tool over every symbol once. */
  pass: Tally;
  paid: Tally;
  cached: Tally;
  mcp: Tally;
  errors: Tally;
}

/** The running load: its tallies, the end of its warm-up pass, and a function that stops it and waits for it. */
interface Load {
  tallies: LoadTallies;
  warmedUp: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the mixed load against `stack`. Paid calls begin with a warm-up pass, every symbol tool over every symbol
 * back to back, so that the caches of the service and of the simulator have seen the whole input space before the
 * steady load and what they hold afterwards is their working set, not a first fill.
 */
function startLoad(stack: OfflineStack): Load {
  const tallies: LoadTallies = { pass: new Tally(), paid: new Tally(), cached: new Tally(), mcp: new Tally(), errors: new Tally() };
  const payFetches = stack.payers
    .slice(0, PAYERS)
    .map((p) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(p.privateKey)))));
  const paths = paidPaths();
  let stopped = false;
  let calls = 0;
  let lastPaid: string | undefined;
  const stop = () => stopped;
  /** One paid request, by the next payer in turn; an answered one becomes the target of the cached reads. */
  const pay = async (path: string, tally: Tally) => {
    const res = await payFetches[calls++ % payFetches.length]!(`${stack.url}${path}`);
    await res.arrayBuffer();
    tally.add(res.status);
    if (res.status === 200) lastPaid = path;
  };

  const warmedUp = (async () => {
    for (const path of symbolPaths()) await pay(path, tallies.pass).catch((err: unknown) => tallies.errors.add(errorLabel(err)));
  })();
  const paid = warmedUp.then(() => every(PAID_EVERY_MS, stop, () => pay(paths.next().value as string, tallies.paid), tallies.errors));
  const cached = every(
    CACHED_READ_EVERY_MS,
    stop,
    async () => {
      if (!lastPaid) return;
      const res = await fetch(`${stack.url}${lastPaid}`);
      await res.arrayBuffer();
      tallies.cached.add(res.headers.get("x-cache") === "HIT" ? "hit" : res.status);
    },
    tallies.errors,
  );
  const mcpBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "service_status", arguments: {} } });
  const mcp = every(
    MCP_EVERY_MS,
    stop,
    async () => {
      const res = await fetch(`${stack.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: mcpBody,
      });
      await res.arrayBuffer();
      tallies.mcp.add(res.status);
    },
    tallies.errors,
  );
  return {
    tallies,
    warmedUp,
    stop: async () => {
      stopped = true;
      await Promise.all([paid, cached, mcp]);
    },
  };
}

/** Least-squares slope of `y` over `x`. */
function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx;
}

/** When to measure, in minutes from the start of the load: once warm, every whole minute after, and at the end. */
function sampleTimes(): number[] {
  const out = [WARM_MIN];
  for (let m = Math.floor(WARM_MIN) + 1; m < MINUTES; m++) out.push(m);
  out.push(MINUTES);
  return out;
}

/** Writes a heap snapshot into `BENCH_SOAK_SNAPSHOTS` when set. */
function snapshot(name: string): void {
  if (SNAPSHOT_DIR) process.stdout.write(`heap snapshot ${writeHeapSnapshot(join(SNAPSHOT_DIR, `soak-${name}.heapsnapshot`))}\n`);
}

async function main(): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc !== "function") throw new Error("run with node --expose-gc (the soak forces GCs before measuring)");
  if (!(MINUTES > WARM_MIN && WARM_MIN >= 0)) throw new Error(`BENCH_SOAK_MIN (${MINUTES}) must exceed BENCH_SOAK_WARM_MIN (${WARM_MIN})`);
  // The sandbox's own settings (streams on, stream history in memory), with a rate limit the load cannot reach.
  const stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000000", STREAM_MAX_ON_DEMAND: String(ON_DEMAND_MAX) } });
  const start = liveHeap();
  process.stdout.write(`soak: heap at start ${start.heapMb} MB, RSS ${start.rssMb} MB; warm-up pass over every symbol tool and symbol\n`);
  const load = startLoad(stack);
  const passStart = performance.now();
  await load.warmedUp;
  const passSec = Math.round((performance.now() - passStart) / 1000);
  process.stdout.write(`pass: ${load.tallies.pass.total} paid calls in ${passSec} s (${load.tallies.pass}); then ${MINUTES} min of steady load, warm after ${WARM_MIN} min\n`);
  const t0 = performance.now();
  const atMin = () => (performance.now() - t0) / 60_000;
  const samples: Array<{ min: number } & Reading> = [];
  for (const at of sampleTimes()) {
    await sleep(Math.max(0, (at - atMin()) * 60_000));
    const h = { min: +atMin().toFixed(2), ...liveHeap() };
    samples.push(h);
    const s = stack.service.ctx.ingestion;
    process.stdout.write(
      `${h.min.toFixed(1).padStart(5)} min  heap ${h.heapMb} MB  external ${h.externalMb} MB  RSS ${h.rssMb} MB  paid ${load.tallies.paid.total}  cached reads ${load.tallies.cached.total}  mcp ${load.tallies.mcp.total}  streamed ${s?.subscribedBases().length ?? 0}\n`,
    );
    if (samples.length === 1) snapshot("warm");
  }
  const warm = samples[0]!;
  await load.stop();
  const end = samples.at(-1)!;
  snapshot("end");
  const s = stack.service.ctx.ingestion;
  const streamed = { symbols: s?.subscribedBases().length ?? 0, on_demand: s?.onDemandCount ?? 0 };
  await stack.close();

  const span = end.min - warm.min;
  const perMin = +((end.heapMb - warm.heapMb) / span).toFixed(3);
  const fit = +slope(samples.map((p) => ({ x: p.min, y: p.heapMb }))).toFixed(3);
  const { pass, paid, cached, mcp, errors } = load.tallies;
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    minutes: MINUTES,
    warm_min: WARM_MIN,
    heap_mb: { start: start.heapMb, warm: warm.heapMb, end: end.heapMb, growth_per_min: perMin, slope_per_min: fit },
    external_mb: { start: start.externalMb, warm: warm.externalMb, end: end.externalMb },
    rss_mb: { start: start.rssMb, warm: warm.rssMb, end: end.rssMb },
    samples,
    load: { pass: { seconds: passSec, ...pass.counts }, paid: paid.counts, cached_reads: cached.counts, mcp: mcp.counts, errors: errors.counts },
    streamed,
  };
  writeResults("soak", results);
  const table = [
    `Run ${results.date} on ${results.cpus} cores, Node ${process.version}: a warm-up pass, then ${MINUTES} min of mixed load on the offline stack in one process (simulator, service, load generator; anvil apart). Live heap after a forced GC; minutes count from the end of the pass.`,
    "",
    "| measure | result |",
    "|---|---|",
    `| live heap at start / once warm (${warm.min.toFixed(1)} min) / at the end (${end.min.toFixed(1)} min) | ${start.heapMb} / ${warm.heapMb} / ${end.heapMb} MB |`,
    `| growth once warm: (end − warm) / minutes; least-squares slope of ${samples.length} minute samples | ${perMin} MB/min; ${fit} MB/min |`,
    `| external memory (Buffers) at start / warm / end | ${start.externalMb} / ${warm.externalMb} / ${end.externalMb} MB |`,
    `| RSS at start / warm / end${SNAPSHOT_DIR ? " (heap snapshots inflate it)" : ""} | ${start.rssMb} / ${warm.rssMb} / ${end.rssMb} MB |`,
    `| warm-up pass: every symbol tool over every symbol once, back to back (status: count) | ${pass.total} in ${passSec} s (${pass}) |`,
    `| paid calls, x402 on anvil, one every ${PAID_EVERY_MS / 1000} s over distinct inputs (status: count) | ${paid.total} (${paid}) |`,
    `| cached reads of the last paid request, every ${CACHED_READ_EVERY_MS} ms | ${cached.total} (${cached}) |`,
    `| MCP \`tools/call\` over Streamable HTTP, every ${MCP_EVERY_MS / 1000} s | ${mcp.total} (${mcp}) |`,
    `| symbols streamed at the end (8 pre-subscribed, the rest on demand, at most ${ON_DEMAND_MAX}) | ${streamed.symbols} (${streamed.on_demand} on demand) |`,
    ...(errors.total > 0 ? [`| load steps that threw | ${errors.total} (${errors}) |`] : []),
  ].join("\n");
  writeSection("soak", table);
  process.stdout.write(`\n${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
