import { randomBytes } from "node:crypto";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import express from "express";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET_SETTINGS, SETTING_NAMES, type SecretKind, type SecretSetting } from "../../src/config.js";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { provisionLocalChain, type ProvisionedChain } from "../../src/payments/local-chain/provision.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createSimulatorApp, startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";
import { redisAvailable } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";
import { startRedisProxy, type RedisProxy } from "../helpers/redis-proxy.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";
import { until } from "../helpers/wait.js";

/**
 * Settings whose names look like credentials (or URLs, which carry keys in their path, query or user info)
 * but are not secrets. Any other such name must be in SECRET_SETTINGS.
 */
// RECEIPT_PREVIOUS_KEYS: retired receipt keys' public halves, published in /.well-known/x402.json.
const NOT_SECRET = new Set(["PUBLIC_URL", "RECEIPT_PREVIOUS_KEYS", "TOKEN_CHECK_SHARE_PCT", "TOKEN_CHECKS_PER_MIN"]);
const LOOKS_SECRET = /SECRET|KEY|TOKEN|PASS|AUTH|PRIVATE|CREDENTIAL|_URLS?$/;

/**
 * Issue 20, finding 9: no log line of a running service holds the value of a secret setting. The service
 * runs in its own process (production start-up, test/helpers/leaky-service-main.ts) with every setting of
 * SECRET_SETTINGS set to a distinctive value that still works: venue REST bases and the RPC URL carry a
 * key in their path (served by a gateway in front of the simulator and anvil), websocket bases and the
 * Redis URL a password in their user info. It starts, serves unpaid, x402-paid, credit-paid and MPP
 * requests, goes through error paths (a venue failing, Redis cut, forged payments, a junk Host), echoes
 * every secret value and its configuration through its logger, and shuts down; then every line it wrote
 * to stderr is searched for every value.
 */
describe.skipIf(!redisAvailable)("secret settings never reach the logs", () => {
  const runId = randomBytes(4).toString("hex");
  const prefix = `mg-secret-logs-${runId}:`;
  let sim: RunningSimulator;
  let anvil: AnvilHandle;
  let chain: ProvisionedChain;
  let redis: RedisProxy;
  let gateway: { url: string; close(): Promise<void> };
  let service: ServiceProcess;
  /** Every line the service wrote to stderr, and when its stderr has closed. */
  const lines: string[] = [];
  let stderrClosed: Promise<void>;
  /** The distinctive part of each secret setting's value: what no log line may contain. */
  const needles = new Map<SecretSetting, string>();

  /** A distinctive secret for `setting`, at least 32 characters (the minimum of the signing keys). */
  const token = (setting: string) => `${setting.toLowerCase().replace(/_/g, "-")}-5ecre7-${runId}-${randomBytes(8).toString("hex")}`;

  /** The value `setting` is started with; its needle is recorded. */
  function secretValue(setting: SecretSetting, kind: SecretKind, base: Record<string, string>): string {
    const t = token(setting);
    needles.set(setting, t);
    switch (setting) {
      case "RPC_URL":
        return `${gateway.url}/${t}`;
      case "FACILITATOR":
        // The in-process facilitator settles; the HTTP one (a key in its path) is the failover.
        return `self,${gateway.url}/${t}`;
      case "FACILITATOR_AUTH_HEADER":
        return `X-Api-Key: ${t}`;
      case "RELAYER_PRIVATE_KEY":
        needles.set(setting, chain.relayer.privateKey);
        return chain.relayer.privateKey;
      case "SOLANA_FEE_PAYER_PRIVATE_KEY": {
        // A valid key is needed (the setting is checked as base58 of 64 bytes): a public test key of our own.
        const key = "miN8mqGdYCn7ABCfmmN2RxBq44wj89qhUGkpAmf65Q3KLZFwGhnunVgsGAWuSRQHonapEmCdrDwfD7vA8hSpKoD";
        needles.set(setting, key);
        return key;
      }
      case "SOLANA_RPC_URL":
        return `${gateway.url}/${t}`;
      case "RECEIPT_SIGNING_KEY": {
        // A valid key is needed (a 32-byte Ed25519 seed in hex): a fresh one per run.
        const seed = randomBytes(32).toString("hex");
        needles.set(setting, seed);
        return seed;
      }
      case "REDIS_URL": {
        const u = new URL(redis.url);
        u.username = "default";
        u.password = t;
        return u.href;
      }
    }
    const simValue = base[setting];
    if (kind === "url" && simValue?.startsWith(sim.baseUrl)) return simValue.replace(sim.baseUrl, `${gateway.url}/${t}`);
    if (kind === "url" && simValue?.startsWith("ws://")) return simValue.replace("ws://", `ws://mg:${t}@`);
    if (kind === "value") return t;
    throw new Error(`no test value for the secret setting ${setting}: give it one in secretValue()`);
  }

  /** Starts the gateway: the simulator's REST venues under one key path per setting, and anvil's RPC under the RPC key. */
  async function startGateway(): Promise<void> {
    const app = express();
    const venues = createSimulatorApp({ market: sim.market, faults: sim.faults });
    app.use((req, res, next) => {
      const [, key, ...rest] = req.url.split("/");
      if (needles.get("RPC_URL") === key && req.method === "POST") {
        const body: Buffer[] = [];
        req.on("data", (c: Buffer) => body.push(c));
        req.on("end", () => {
          void fetch(anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(body) })
            .then(async (r) =>
              res
                .status(r.status)
                .type("application/json")
                .send(Buffer.from(await r.arrayBuffer())),
            )
            .catch(next);
        });
        return;
      }
      if ([...needles.values()].includes(key ?? "")) {
        req.url = `/${rest.join("/")}`;
        return venues(req, res, next);
      }
      // The HTTP facilitator (and anything else): refused, echoing the key it was sent, as some upstreams do.
      res.status(503).json({ error: `key ${req.header("x-api-key") ?? "none"} refused` });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    gateway = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((r) => server.close(() => r())),
    };
  }

  beforeAll(async () => {
    [sim, anvil, redis] = await Promise.all([startSimulator({ seed: 5 }), startAnvil({ port: 0, chainId: 8453 }), startRedisProxy()]);
    chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
    await startGateway();
    const base = simEnv(sim);
    const env: Record<string, string> = {
      ...base,
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_TO: chain.relayer.address,
      NETWORK: "eip155:8453",
      SETTLE_RECEIPT_POLL_MS: "20",
      REDIS_PREFIX: prefix,
      RATE_LIMIT_PER_MIN: "100000",
      FREE_RATE_LIMIT_PER_MIN: "100000",
      CREDITS_MIN_TOP_UP_USD: "0.10",
    };
    for (const [setting, kind] of Object.entries(SECRET_SETTINGS) as Array<[SecretSetting, SecretKind]>) env[setting] = secretValue(setting, kind, base);
    service = await startServiceProcess(env, { entry: "test/helpers/leaky-service-main.ts", timeoutMs: 90_000 });
    // Lines up to "listening" are in the helper's buffer (it keeps 200: fewer means all of them); later ones are read here.
    const early = service.stderr().split("\n");
    expect(early.length).toBeLessThan(200);
    lines.push(...early);
    const rl = createInterface({ input: service.child.stderr! }).on("line", (line) => lines.push(line));
    stderrClosed = new Promise((r) => rl.once("close", () => r()));
  }, 150_000);

  afterAll(async () => {
    await service?.kill();
    await Promise.all([sim?.close(), anvil?.stop(), redis?.close(), gateway?.close()]);
    await deleteRedisPrefix(prefix);
  });

  it("every setting named like a credential or a URL is a secret setting, or known not to be one", () => {
    const unclassified = SETTING_NAMES.filter((n) => LOOKS_SECRET.test(n) && !(n in SECRET_SETTINGS) && !NOT_SECRET.has(n));
    expect(unclassified).toEqual([]);
  });

  it("start-up, paid and unpaid requests, error paths, an echo of every secret and shutdown: no line holds a secret", async () => {
    const url = service.url;
    const payer = chain.funded[0]!;
    expect((await fetch(`${url}/`)).status).toBe(200);
    await fetch(`${url}/ready`);
    // Unpaid, paid with the official x402 client (settled on anvil through the keyed RPC), forged.
    expect((await fetch(`${url}/api/v1/market/bitcoin`)).status).toBe(402);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    expect((await pay(`${url}/api/v1/market/ethereum`)).status).toBe(200);
    const forged = await signPayment(await paymentRequired(`${url}/api/v1/market/solana`), payer.privateKey, { signFor: (r) => ({ ...r, amount: "1" }) });
    expect((await fetch(`${url}/api/v1/market/solana`, { headers: { "payment-signature": header(forged) } })).status).toBe(402);
    // Credits: a top-up, a SIWX-signed call that mints a session token (CREDITS_SESSION_SECRET), a call with it.
    const topUp = await pay(`${url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "0.5" }) });
    expect(topUp.status).toBe(200);
    const signed = await wrapFetchWithSIWx(fetch, privateKeyToAccount(payer.privateKey))(`${url}/api/v1/market/cardano`);
    expect(signed.status).toBe(200);
    const session = signed.headers.get("x-credits-session")!;
    expect(session).toBeTruthy();
    expect((await fetch(`${url}/api/v1/market/polkadot`, { headers: { "X-Credits-Session": session } })).status).toBe(200);
    // MPP (MPP_SECRET_KEY binds its challenges): a credential that is not one.
    expect((await fetch(`${url}/api/v1/market/litecoin`, { headers: { authorization: "Payment not-a-credential" } })).status).toBe(402);
    // Error paths: the venue fails, Redis goes away and comes back, a junk Host.
    sim.faults.inject("coingecko", { kind: "server_error", status: 500 }, Infinity);
    const failing = await pay(`${url}/api/v1/market/chainlink`);
    expect(failing.status).toBeGreaterThanOrEqual(500);
    sim.faults.clear();
    const cutAt = lines.length;
    await redis.cut();
    await fetch(`${url}/api/v1/market/tron`, { headers: { "X-Credits-Session": session } });
    await until("a log line about the lost Redis", async () => lines.slice(cutAt).some((l) => /redis/i.test(l)), 30_000);
    await redis.restore();
    await until("Redis back", async () => lines.slice(cutAt).some((l) => l.includes('"redis connected"')), 30_000);
    await new Promise<void>((resolve) => {
      const req = request(`${url}/api/v1/market/bitcoin`, { headers: { host: "[::1" } }, (res) => res.resume().on("end", resolve));
      req.on("error", () => resolve());
      req.end();
    });
    // The echo, then shutdown.
    await until("the echo", async () => lines.some((l) => l.includes('"secrets echoed"')), 30_000);
    await service.kill("SIGTERM");
    await stderrClosed;

    const echoed = lines.filter((l) => l.includes('"msg":"echo '));
    expect(echoed).toHaveLength(Object.keys(SECRET_SETTINGS).length);
    expect(lines.some((l) => l.includes('"msg":"configuration"'))).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"shutting down"'))).toBe(true);
    expect(lines.length).toBeGreaterThan(Object.keys(SECRET_SETTINGS).length + 5);
    const leaks = [...needles].flatMap(([setting, needle]) => lines.filter((l) => l.includes(needle)).map((l) => `${setting}: ${l.slice(0, 300)}`));
    expect(leaks).toEqual([]);
  }, 180_000);
});
