import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { provisionLocalChain, type ProvisionedChain } from "../../src/payments/local-chain/provision.js";
import { offlineServiceEnv } from "../../src/sandbox/sim-env.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { json } from "../helpers/json.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";
import { siwxHeader } from "../helpers/siwx.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

/**
 * Credits on the production entry in separate OS processes: three replicas on one Redis, and one embedded
 * process killed with SIGKILL. Each test has its own state: a fresh Redis prefix, a fresh data directory,
 * and processes that take `REDIS_URL`/`DATA_DIR` from the test only (service-process.ts), all removed after it.
 */
describe.skipIf(!redisAvailable)("credits across processes", () => {
  let sim: RunningSimulator;
  let anvil: AnvilHandle;
  let chain: ProvisionedChain;
  const running: ServiceProcess[] = [];
  const prefixes: string[] = [];
  const dirs: string[] = [];
  /** A Redis prefix of this test alone. */
  const freshPrefix = () => {
    const p = `test:${randomBytes(4).toString("hex")}:`;
    prefixes.push(p);
    return p;
  };
  /** A data directory of this test alone. */
  const freshDir = () => {
    const d = mkdtempSync(join(tmpdir(), "mg-credits-"));
    dirs.push(d);
    return d;
  };
  const payer = (i: number) => chain.funded[i]!;
  const start = async (env: Record<string, string>) => {
    const p = await startServiceProcess({ ...offlineServiceEnv(sim, chain, anvil.rpcUrl), STREAMS: "off", ALERTS: "off", RATE_LIMIT_PER_MIN: "100000", ...env });
    running.push(p);
    return p;
  };
  const topUp = async (url: string, i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status).toBe(200);
  };
  const signed = async (base: string, path: string, i: number) =>
    fetch(`${base}${path}`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${base}${path}`) } });

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11 });
    anvil = await startAnvil({ port: 0, chainId: 8453 });
    chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
  }, 60_000);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.kill()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    for (const p of prefixes.splice(0)) await deleteRedisPrefix(p);
  });
  afterAll(async () => {
    await Promise.allSettled([sim?.close(), anvil?.stop()]);
  });

  it("three replicas on Redis: a top-up on one, 20 concurrent calls spread over all against a balance for 10 are served 10 times, a dead replica loses nothing", async () => {
    const prefix = freshPrefix();
    const replicas = await Promise.all([0, 1, 2].map(() => start({ REDIS_URL, REDIS_PREFIX: prefix, CREDITS_MIN_TOP_UP_USD: "0.05" })));
    await topUp(replicas[0]!.url, 1, "0.05");
    // Prices cost 0.005: the balance covers 10 of these 20 distinct (uncached) calls.
    const results = await Promise.all(Array.from({ length: 20 }, (_, k) => signed(replicas[k % 3]!.url, `/api/v1/prices?symbols=btc,zz${k}`, 1)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 402)).toHaveLength(10);
    await replicas[0]!.kill();
    const me = await json(await signed(replicas[2]!.url, "/api/v1/credits", 1));
    expect(me).toMatchObject({ balance_usd: "0", spent_usd: "0.05", credited_usd: "0.05" });
  }, 300_000);

  it("embedded: balances and spending survive kill -9 and a restart", async () => {
    // A runner whose environment names a Redis (a developer's shell, a CI job) must not turn these
    // "embedded" processes into Redis ones sharing a prefix across runs: an unreachable one here.
    const saved = { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: process.env.REDIS_PREFIX };
    process.env.REDIS_URL = "redis://127.0.0.1:1";
    process.env.REDIS_PREFIX = "mg-shared-across-runs:";
    try {
      const env = { DATA_DIR: freshDir() };
      const first = await start(env);
      await topUp(first.url, 2, "0.5");
      expect((await signed(first.url, "/api/v1/prices?symbols=btc,eth", 2)).status).toBe(200);
      await first.kill("SIGKILL");
      const second = await start(env);
      expect(await json(await signed(second.url, "/api/v1/credits", 2))).toMatchObject({ balance_usd: "0.495", spent_usd: "0.005", credited_usd: "0.5" });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }, 300_000);
});
