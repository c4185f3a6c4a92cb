import { randomBytes } from "node:crypto";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { provisionLocalChain, type ProvisionedChain } from "../../src/payments/local-chain/provision.js";
import { offlineServiceEnv } from "../../src/sandbox/sim-env.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { json } from "../helpers/json.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";
import { siwxHeader } from "../helpers/siwx.js";
import { until } from "../helpers/wait.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

/** Reads SSE events from a fetch response until `stop()`; returns what arrived (event name, id, data). */
function collect(res: Response) {
  const got: Array<{ event: string; id?: string; data: Record<string, unknown> }> = [];
  const reader = res.body!.getReader();
  let buf = "";
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) return;
      buf += Buffer.from(value).toString();
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const field = (name: string) => [...block.matchAll(/^(\w+): ?(.*)$/gm)].find((m) => m[1] === name)?.[2];
        const event = field("event");
        if (event) got.push({ event, id: field("id"), data: JSON.parse(field("data") ?? "null") as Record<string, unknown> });
      }
    }
  })();
  return { got, stop: () => reader.cancel().catch(() => undefined) };
}

/** Paid streams on two replicas sharing Redis: each serves from its own (replicated) stores, billed from the shared credits. */
describe.skipIf(!redisAvailable)("live streams on replicas", () => {
  let sim: RunningSimulator;
  let anvil: AnvilHandle;
  let chain: ProvisionedChain;
  const running: ServiceProcess[] = [];
  const prefix = `test:${randomBytes(4).toString("hex")}:`;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11 });
    anvil = await startAnvil({ port: 0, chainId: 8453 });
    chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(running.map((r) => r.kill()));
    await Promise.allSettled([sim?.close(), anvil?.stop()]);
    await deleteRedisPrefix(prefix);
  });

  it("both replicas stream CVD of the one ingesting feed, and debit the one shared balance", async () => {
    const env = { ...offlineServiceEnv(sim, chain, anvil.rpcUrl), ALERTS: "off", RATE_LIMIT_PER_MIN: "100000", REDIS_URL, REDIS_PREFIX: prefix, CREDITS_MIN_TOP_UP_USD: "0.05" };
    const replicas = await Promise.all([0, 1].map(() => startServiceProcess(env)));
    running.push(...replicas);
    const payer = chain.funded[1]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    const top = await pay(`${replicas[0]!.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "0.05" }) });
    expect(top.status).toBe(200);

    const streams = await Promise.all(
      replicas.map(async (r) => {
        const url = `${r.url}/stream/cvd/BTC`;
        const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, url) } });
        expect(res.status).toBe(200);
        return collect(res);
      }),
    );
    await until("a CVD update on both replicas", async () => streams.every((s) => s.got.some((e) => e.event === "cvd_update")), 30_000);
    for (const s of streams) {
      expect(s.got[0]).toMatchObject({ event: "debit", data: { topic: "cvd", minute: 1, price_usd: "0.002" } });
      expect(s.got.find((e) => e.event === "cvd_update")!.data).toMatchObject({ symbol: "BTC" });
    }
    for (const s of streams) await s.stop();
    const url = `${replicas[1]!.url}/api/v1/credits`;
    const account = await json(await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, url) } }));
    expect(account).toMatchObject({ spent_usd: "0.004", balance_usd: "0.046" });
  }, 300_000);
});
