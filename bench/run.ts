/**
 * `npm run bench`: throughput and latency on loopback, each compared with a baseline measured in the
 * same run. Writes bench/results/latest.json and the results section of bench/README.md.
 *
 * 1. Cache-hit throughput of a paid tool vs a bare express route returning the same JSON.
 * 2. Paid request latency (x402 `@x402/fetch` client, anvil, in-process facilitator) vs the same
 *    requests with payments off.
 * 3. MCP `tools/call` throughput over Streamable HTTP (cache hits) vs the REST cache hit, and the floor of
 *    any MCP hit in express: a bare app whose only middleware is the same JSON body parser, writing the same answer.
 * Sections 1 and 3 alternate their sides round by round (see `alternate`).
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { cpus } from "node:os";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import express from "express";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { startOfflineStack } from "../src/sandbox/offline-stack.js";
import { loadConfig } from "../src/config.js";
import { createService } from "../src/service.js";
import { startSimulator } from "../src/sim/server.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { listAssets } from "../src/assets/catalogue.js";
import { PaidBreakdown } from "./paid-breakdown.js";
import { percentile, writeResults, writeSection } from "./report.js";
import { alternate as alternateFor, CONNECTIONS, ROUNDS } from "./load.js";

process.env.LOG_LEVEL ??= "silent";
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
const PAID_REQUESTS = Number(process.env.BENCH_PAID_REQUESTS ?? 120);
/** {@link alternateFor} over `DURATION_SEC`. */
const alternate = <T extends autocannon.Options[]>(...targets: T) => alternateFor(DURATION_SEC, ...targets);

/** Distinct batch-price requests (so that none is a cache hit). */
function distinctPricePaths(n: number): string[] {
  const syms = listAssets().map((a) => a.symbol.toLowerCase());
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const a = syms[i % syms.length]!;
    const b = syms[Math.floor(i / syms.length) % syms.length]!;
    const c = syms[(i * 7 + 3) % syms.length]!;
    // Sorted: the cache key ignores symbol order, and every request must be a miss.
    const set = [...new Set([a, b, c])].sort().join(",");
    const p = `/api/v1/prices?symbols=${set}`;
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, duration_sec: DURATION_SEC, connections: CONNECTIONS };
  // Streams off: these measure the HTTP and payment paths, not ingestion (bench/streams.ts does).
  const phases = new PaidBreakdown();
  const stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off" }, wrapFacilitator: (f) => phases.wrapFacilitator(f) });
  const payer = stack.payers[0]!;
  const payFetch = wrapFetchWithPayment(phases.fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));

  // 1. cache-hit throughput vs bare express with the same body
  const hitPath = "/api/v1/market/bitcoin";
  const paid = await payFetch(`${stack.url}${hitPath}`);
  const body = await paid.json();
  const bare = express();
  bare.disable("x-powered-by");
  bare.set("etag", false);
  bare.get(hitPath, (_req, res) => res.json(body));
  const bareServer = bare.listen(0, "127.0.0.1");
  await new Promise((r) => bareServer.once("listening", r));
  const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}${hitPath}`;
  const [hits, baseline] = await alternate({ url: `${stack.url}${hitPath}` }, { url: bareUrl });
  bareServer.close();
  results.cache_hit = { tool: "cex_market", marketgate: hits, bare_express: baseline, ratio: +(hits.rps / baseline.rps).toFixed(3) };
  process.stdout.write(`cache hit: ${hits.rps} req/s vs bare express ${baseline.rps} req/s (ratio ${(hits.rps / baseline.rps).toFixed(2)})\n`);

  // 2. paid latency on anvil vs the same requests with payments off
  const allPaths = distinctPricePaths(2 * PAID_REQUESTS);
  const paths = allPaths.slice(0, PAID_REQUESTS);
  const timePaid = async (fetcher: (url: string) => Promise<Response>, list: string[]): Promise<number[]> => {
    const ms: number[] = [];
    for (const p of list) {
      const t0 = performance.now();
      const res = await fetcher(`${stack.url}${p}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`paid request ${p} answered ${res.status}`);
      ms.push(performance.now() - t0);
    }
    return ms.sort((a, b) => a - b);
  };
  const paidMs = await phases.record(() => timePaid((u) => payFetch(u), paths));
  // MPP `evm` credentials (mppx client) on other distinct batch-price requests: 402, sign, validate, verify, handler, settle.
  const mppClient = MppxClient.create({
    polyfill: false,
    methods: [evmClient.charge({ account: privateKeyToAccount(stack.payers[1]!.privateKey), networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "1" })],
  });
  const mppMs = await timePaid((u) => mppClient.fetch(u), allPaths.slice(PAID_REQUESTS));
  const sim = await startSimulator();
  const free = await createService({
    config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off" }),
  });
  const freeListening = await free.listen();
  const freeMs: number[] = [];
  for (const p of paths) {
    const t0 = performance.now();
    const res = await fetch(`${freeListening.url}${p}`);
    await res.arrayBuffer();
    freeMs.push(performance.now() - t0);
  }
  freeMs.sort((a, b) => a - b);
  const r2 = (x: number) => +x.toFixed(2);
  results.paid_latency_ms = {
    requests: paths.length,
    x402_paid: { p50: r2(percentile(paidMs, 50)), p99: r2(percentile(paidMs, 99)) },
    mpp_evm_paid: { requests: mppMs.length, p50: r2(percentile(mppMs, 50)), p99: r2(percentile(mppMs, 99)) },
    unpaid_baseline: { p50: r2(percentile(freeMs, 50)), p99: r2(percentile(freeMs, 99)) },
    p50_ratio: r2(percentile(paidMs, 50) / percentile(freeMs, 50)),
    p50_over_unpaid: r2(percentile(paidMs, 50) - percentile(freeMs, 50)),
    x402_phases_p50: phases.medians(),
  };
  process.stdout.write(
    `paid latency x402 p50 ${r2(percentile(paidMs, 50))} ms p99 ${r2(percentile(paidMs, 99))} ms; MPP p50 ${r2(percentile(mppMs, 50))} ms p99 ${r2(percentile(mppMs, 99))} ms (unpaid p50 ${r2(percentile(freeMs, 50))} ms)\n`,
  );

  // 3. MCP tools/call throughput (cache hits) vs the REST cache hit on the same service
  const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "cex_market", arguments: { id: "ethereum" } } });
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const first = await fetch(`${freeListening.url}/mcp`, { method: "POST", headers, body: call });
  if (first.status !== 200) throw new Error(`mcp warm call answered ${first.status}`);
  // The floor of an MCP hit in express: what any cached call costs besides its MCP work (its JSON body read
  // and parsed by express.json; a cached call consumes no budget) and the larger answer, in a bare app.
  const answer = Buffer.from(await (await fetch(`${freeListening.url}/mcp`, { method: "POST", headers, body: call })).arrayBuffer());
  const floorApp = express();
  floorApp.disable("x-powered-by");
  floorApp.use(express.json({ limit: "64kb" }), (_req, res) => {
    res.writeHead(200, ["content-type", "application/json", "content-length", String(answer.length)]);
    res.end(answer);
  });
  const floorServer = floorApp.listen(0, "127.0.0.1");
  await new Promise((r) => floorServer.once("listening", r));
  const floorUrl = `http://127.0.0.1:${(floorServer.address() as AddressInfo).port}/mcp`;
  const [mcp, rest, floor] = await alternate(
    { url: `${freeListening.url}/mcp`, method: "POST", headers, body: call },
    { url: `${freeListening.url}/api/v1/market/ethereum` },
    { url: floorUrl, method: "POST", headers, body: call },
  );
  floorServer.close();
  results.mcp_tools_call = {
    mcp,
    rest_same_tool: rest,
    ratio: +(mcp.rps / rest.rps).toFixed(3),
    express_floor: { route: floor, ratio: +(floor.rps / rest.rps).toFixed(3) },
  };
  process.stdout.write(
    `MCP tools/call: ${mcp.rps} req/s vs REST ${rest.rps} req/s (ratio ${(mcp.rps / rest.rps).toFixed(2)}); floor in express ${floor.rps} req/s (ratio ${(floor.rps / rest.rps).toFixed(2)})\n`,
  );

  await freeListening.close();
  await sim.close();
  await stack.close();

  writeResults("latest", results);
  const c = results.cache_hit as { marketgate: { rps: number; p99: number }; bare_express: { rps: number; p99: number }; ratio: number };
  const l = results.paid_latency_ms as {
    requests: number;
    x402_paid: { p50: number; p99: number };
    mpp_evm_paid: { requests: number; p50: number; p99: number };
    unpaid_baseline: { p50: number; p99: number };
    p50_ratio: number;
    p50_over_unpaid: number;
    x402_phases_p50: ReturnType<PaidBreakdown["medians"]>;
  };
  const ph = l.x402_phases_p50;
  const m = results.mcp_tools_call as {
    mcp: { rps: number; p99: number };
    rest_same_tool: { rps: number; p99: number };
    ratio: number;
    express_floor: { route: { rps: number; p99: number }; ratio: number };
  };
  const table = [
    `Run ${results.date as string} on ${results.cpus as number} cores, Node ${process.version}; autocannon ${CONNECTIONS} connections, in the same process as the servers (loopback); throughput rows alternate their sides in ${ROUNDS} rounds of ${Math.max(2, DURATION_SEC / ROUNDS)} s after a 1 s warm-up each and report the median round.`,
    "",
    "| measure | marketgate | baseline (same run) | ratio |",
    "|---|---|---|---|",
    `| cache-hit throughput, \`GET /api/v1/market/bitcoin\` (paid tool, X-Cache: HIT) | ${c.marketgate.rps} req/s, p99 ${c.marketgate.p99} ms | bare express route, same JSON: ${c.bare_express.rps} req/s, p99 ${c.bare_express.p99} ms | ${c.ratio} |`,
    `| paid request latency, x402 on anvil (${l.requests} sequential distinct \`/api/v1/prices\` requests, \`@x402/fetch\`: 402, sign, verify, handler, settle) | p50 ${l.x402_paid.p50} ms, p99 ${l.x402_paid.p99} ms | same requests, payments off: p50 ${l.unpaid_baseline.p50} ms, p99 ${l.unpaid_baseline.p99} ms | p50 x${l.p50_ratio} (+${l.p50_over_unpaid} ms) |`,
    `| where the x402 paid time goes (p50 of each phase; they need not add up to the total's p50) | 402 round trip ${ph.challenge} ms · client signs ${ph.sign} ms · facilitator verify (signature, \`eth_call\` simulation) ${ph.verify} ms · handler and our processing ${ph.rest} ms · facilitator settle (signature, transaction, receipt) ${ph.settle} ms | | |`,
    `| paid request latency, MPP \`evm\` on anvil (${l.mpp_evm_paid.requests} sequential distinct \`/api/v1/prices\` requests, mppx client) | p50 ${l.mpp_evm_paid.p50} ms, p99 ${l.mpp_evm_paid.p99} ms | x402 above: p50 ${l.x402_paid.p50} ms | p50 x${(l.mpp_evm_paid.p50 / l.x402_paid.p50).toFixed(2)} |`,
    `| MCP \`tools/call\` over Streamable HTTP (stateless, cache hits) | ${m.mcp.rps} req/s, p99 ${m.mcp.p99} ms | REST cache hit of the same tool: ${m.rest_same_tool.rps} req/s, p99 ${m.rest_same_tool.p99} ms | ${m.ratio} |`,
    `| the floor of an MCP hit in express: bare app whose only middleware is the same JSON body parser (express.json), writing the same answer bytes (a cached call consumes no budget) | ${m.express_floor.route.rps} req/s, p99 ${m.express_floor.route.p99} ms | REST cache hit above: ${m.rest_same_tool.rps} req/s | ${m.express_floor.ratio} |`,
  ].join("\n");
  writeSection("results", table);
  process.stdout.write(`\n${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
