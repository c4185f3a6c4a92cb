/**
 * Multi-replica benchmarks (issue 7), on this machine and loopback only:
 * 1. cache-hit throughput of 2 replicas vs 1 (production entry, compiled, separate processes sharing one
 *    Redis; autocannon spreads its connections over the replicas);
 * 2. the latency the Redis cache adds over the in-process one: a cache read served by Redis (first read
 *    on a replica that did not write the entry) vs one served by the in-process level, in the same run.
 * Writes bench/results/replicas.json and the `replicas` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { MemoryResponseCache, RedisResponseCache } from "../src/core/response-cache.js";
import { logger } from "../src/lib/log.js";
import { startAnvil } from "../src/payments/local-chain/anvil.js";
import { provisionLocalChain } from "../src/payments/local-chain/provision.js";
import { offlineServiceEnv } from "../src/sandbox/sim-env.js";
import { startSimulator } from "../src/sim/server.js";
import { RedisHandle } from "../src/state/redis.js";
import { percentile, writeResults, writeSection } from "./report.js";

const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
const CONNECTIONS = 32;
const PATH = "/api/v1/market/bitcoin";

/** Starts `node .bench-dist/src/main.js` with `env`; resolves with its URL once it is listening. */
function replica(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [".bench-dist/src/main.js"], { env: { ...process.env, LOG_LEVEL: "info", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("replica did not start")), 30_000);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      if (!line.includes('"marketgate listening"')) return;
      clearTimeout(timer);
      resolve({ url: (JSON.parse(line) as { url: string }).url, child });
    });
  });
}

/** Cache-hit throughput over `urls`, connections spread evenly (one autocannon per replica, run together). */
async function hits(urls: string[]): Promise<{ rps: number; p50: number; p99: number; non2xx: number }> {
  const run = (url: string, duration: number) => autocannon({ url: `${url}${PATH}`, duration, connections: Math.floor(CONNECTIONS / urls.length) });
  await Promise.all(urls.map((u) => run(u, 1)));
  const rs = await Promise.all(urls.map((u) => run(u, DURATION_SEC)));
  return {
    rps: Math.round(rs.reduce((s, r) => s + r.requests.average, 0)),
    p50: Math.max(...rs.map((r) => r.latency.p50)),
    p99: Math.max(...rs.map((r) => r.latency.p99)),
    non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
  };
}

/** Microseconds per read: the in-process level vs a read that must go to Redis (cold first level). */
async function cacheReads(prefix: string): Promise<Record<string, number>> {
  const redis = new RedisHandle({ url: REDIS_URL, prefix, log: logger });
  redis.start();
  await redis.waitReady();
  const value = { data: { id: "bitcoin", price_usd: 97_000, market_cap: 1.9e12, history: Array.from({ length: 24 }, (_, i) => [i, i * 1.5]) }, cached: false };
  const N = 3000;
  const writer = new RedisResponseCache(redis, N * 2, logger);
  for (let i = 0; i < N; i++) await writer.set(`k${i}`, value, 60_000);
  const memory = new MemoryResponseCache(N * 2);
  for (let i = 0; i < N; i++) await memory.set(`k${i}`, value, 60_000);
  const time = async (get: (k: string) => Promise<unknown>): Promise<number[]> => {
    const us: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = process.hrtime.bigint();
      await get(`k${i}`);
      us.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    return us.sort((x, y) => x - y);
  };
  const inProcess = await time((k) => memory.get(k));
  const reader = new RedisResponseCache(redis, N * 2, logger); // another replica: its first level is cold
  const viaRedis = await time((k) => reader.get(k));
  const warm = await time((k) => reader.get(k)); // the same replica again: served by its first level
  await redis.client.sendCommand(["EVAL", "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 0", "0", `${prefix}*`]);
  await redis.close();
  return {
    in_process_p50_us: round(percentile(inProcess, 50)),
    in_process_p99_us: round(percentile(inProcess, 99)),
    redis_p50_us: round(percentile(viaRedis, 50)),
    redis_p99_us: round(percentile(viaRedis, 99)),
    redis_warm_p50_us: round(percentile(warm, 50)),
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const prefix = `bench:${randomBytes(3).toString("hex")}:`;
  const sim = await startSimulator({ seed: 7 });
  const anvil = await startAnvil({ port: 0, chainId: 8453 });
  const chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
  const env = {
    ...offlineServiceEnv(sim, chain, anvil.rpcUrl),
    STREAMS: "off",
    ALERTS: "off",
    RATE_LIMIT_PER_MIN: "100000000",
  };
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(chain.funded[0]!.privateKey))));
  const children: ChildProcess[] = [];
  try {
    const embedded = await replica(env);
    children.push(embedded.child);
    await pay(`${embedded.url}${PATH}`);
    const one = await hits([embedded.url]);
    embedded.child.kill("SIGKILL");

    const shared = { ...env, REDIS_URL, REDIS_PREFIX: prefix };
    const [a, b] = await Promise.all([replica(shared), replica(shared)]);
    children.push(a.child, b.child);
    await pay(`${a.url}${PATH}`); // paid once on A, a free hit on B
    const redisOne = await hits([a.url]);
    const two = await hits([a.url, b.url]);
    const reads = await cacheReads(`${prefix}reads:`);
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      duration_sec: DURATION_SEC,
      connections: CONNECTIONS,
      one_replica_embedded: one,
      one_replica_redis: redisOne,
      two_replicas_redis: two,
      ratio_two_vs_one: Number((two.rps / redisOne.rps).toFixed(2)),
      cache_reads: reads,
    };
    writeResults("replicas", results);
    const table = [
      `Run ${results.date}, Node ${results.node}, ${results.cpus} cores shared by the replicas and the load generator (autocannon, ${CONNECTIONS} connections in all, ${DURATION_SEC} s), compiled JavaScript.`,
      "",
      "| measure | result |",
      "|---|---|",
      `| cache hits, 1 replica, embedded state (no Redis) | ${one.rps.toLocaleString("en-US")} req/s, p50 ${one.p50} ms, p99 ${one.p99} ms |`,
      `| cache hits, 1 replica with Redis | ${redisOne.rps.toLocaleString("en-US")} req/s, p50 ${redisOne.p50} ms, p99 ${redisOne.p99} ms |`,
      `| cache hits, 2 replicas with Redis (connections split) | ${two.rps.toLocaleString("en-US")} req/s, p50 ${two.p50} ms, p99 ${two.p99} ms |`,
      `| ratio 2 replicas / 1 replica (Redis) | ${results.ratio_two_vs_one} |`,
      `| cache read, in-process level | p50 ${reads.in_process_p50_us} µs, p99 ${reads.in_process_p99_us} µs |`,
      `| cache read served by Redis (first read on a replica that did not write it) | p50 ${reads.redis_p50_us} µs, p99 ${reads.redis_p99_us} µs |`,
      `| the same read again on that replica (its in-process level) | p50 ${reads.redis_warm_p50_us} µs |`,
    ].join("\n");
    writeSection("replicas", table);
    console.log(table);
  } finally {
    for (const c of children) c.kill("SIGKILL");
    await Promise.allSettled([sim.close(), anvil.stop()]);
  }
}

await main();
process.exit(0);
