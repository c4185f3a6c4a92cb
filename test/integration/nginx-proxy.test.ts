import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Challenge, Receipt } from "mppx";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestPath } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";

/*
 * The service behind a real nginx (Debian's package, installed by .ci/run) with nginx's default response buffers:
 * `proxy_buffer_size` is not set, so it is one memory page (4 KB), and a 402 whose header block is larger becomes a
 * 502 ("upstream sent too big header"). Run with MPP off and on: with MPP on (MPP_CHALLENGES=negotiated, the default)
 * a client that sends no Accept-Payment gets no MPP challenge and an MPP client one (docs/payments.md), so both pass
 * (test/http/payment-required-size.test.ts bounds every tool's 402).
 * Outside CI, a machine without nginx skips this file with a message; in CI (CI=true) a missing nginx fails it.
 */

/** The nginx binary: on PATH, or where Debian installs it (/usr/sbin is not on every user's PATH). */
function findNginx(): string | undefined {
  for (const candidate of ["nginx", "/usr/sbin/nginx"]) {
    const r = spawnSync(candidate, ["-v"], { encoding: "utf8" });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

const NGINX = findNginx();
if (!NGINX && process.env.CI === "true") throw new Error("nginx is not installed: .ci/run installs Debian's nginx package for this test");
if (!NGINX) console.warn("[nginx-proxy.test] SKIPPED: nginx is not installed (apt-get install -y nginx); CI installs it and runs this file");

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** nginx.conf of one server on `port` proxying to `upstream`, with every buffer at nginx's default. */
function nginxConf(dir: string, port: number, upstream: string): string {
  return `daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${upstream};
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`;
}

/** Resolves once `url` answers any HTTP status, or rejects after `timeoutMs`. */
async function waitForHttp(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe.skipIf(!NGINX).each(["off", "on"])("behind a real nginx with default proxy buffers, MPP %s", { timeout: 60_000 }, (mpp) => {
  let stack: OfflineStack;
  let nginx: ChildProcess | undefined;
  let dir: string;
  let proxied: string;
  const tool = TOOLS.find((t) => t.name === "cex_market")!;

  beforeAll(async () => {
    const port = await freePort();
    proxied = `http://127.0.0.1:${port}`;
    // The public URL is the proxy's: 402s name it, and SIWX proofs are bound to it.
    stack = await startOfflineStack({ env: { MPP: mpp, PUBLIC_URL: proxied, TRUST_PROXY: "loopback", RATE_LIMIT_PER_MIN: "100000" } });
    dir = mkdtempSync(join(tmpdir(), "marketgate-nginx-"));
    for (const d of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d));
    const conf = join(dir, "nginx.conf");
    writeFileSync(conf, nginxConf(dir, port, stack.url));
    const check = spawnSync(NGINX!, ["-t", "-q", "-c", conf, "-p", dir], { encoding: "utf8" });
    expect(check.status, check.stderr).toBe(0);
    nginx = spawn(NGINX!, ["-c", conf, "-p", dir], { stdio: ["ignore", "ignore", "pipe"] });
    await waitForHttp(`${proxied}/health`);
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once("exit", r));
      nginx.kill("SIGTERM");
      await exited;
    }
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("passes an unpaid call's 402 with its PAYMENT-REQUIRED header, naming the public URL", async () => {
    const res = await fetch(`${proxied}${requestPath(tool)}`);
    const log = readFileSync(join(dir, "error.log"), "utf8");
    expect(res.status, log).toBe(402);
    expect(log).not.toContain("too big header");
    const required = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    expect(required.resource.url).toBe(`${proxied}${requestPath(tool)}`);
    expect(required.accepts[0]).toMatchObject({ amount: "5000", payTo: stack.operator.address });
    expect(Object.keys(required.extensions ?? {})).toEqual(expect.arrayContaining(["bazaar", "sign-in-with-x"]));
  });

  it("passes a paid call through: the official x402 client pays on anvil and gets the 200 with its receipt", async () => {
    const payer = stack.payers[8]!;
    const before = await stack.balanceOf(payer.address);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    const res = await pay(`${proxied}/api/v1/market/solana`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ success: true, data: { id: "solana" } });
    expect(decodePaymentResponseHeader(res.headers.get("payment-response")!)).toMatchObject({ success: true, payer: payer.address });
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it.runIf(mpp === "on")("passes an MPP client's 402 (one challenge) and its paid 200 through", async () => {
    const payer = stack.payers[7]!;
    const before = await stack.balanceOf(payer.address);
    const unpaid = await fetch(`${proxied}/api/v1/market/cardano`, { headers: { "accept-payment": "evm/charge" } });
    expect(unpaid.status, readFileSync(join(dir, "error.log"), "utf8")).toBe(402);
    expect(Challenge.fromResponseList(unpaid).map((c) => c.method)).toEqual(["evm"]);
    const client = MppxClient.create({
      polyfill: false,
      methods: [evmClient.charge({ account: privateKeyToAccount(payer.privateKey), networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "1" })],
    });
    const res = await client.fetch(`${proxied}/api/v1/market/cardano`);
    expect(res.status).toBe(200);
    expect(Receipt.deserialize(res.headers.get("payment-receipt")!)).toMatchObject({ method: "evm", status: "success" });
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("serves MCP through the proxy: tools/list, and a tool's 402 result naming the public /mcp URL", async () => {
    const post = (body: unknown) =>
      fetch(`${proxied}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(body) });
    const list = (await (await post({ jsonrpc: "2.0", id: 1, method: "tools/list" })).json()) as { result: { tools: Array<{ name: string }> } };
    expect(list.result.tools.map((t) => t.name)).toContain("cex_market");
    const call = (await (await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "cex_market", arguments: { id: "bitcoin" } } })).json()) as {
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(call.result.isError).toBe(true);
    expect(JSON.parse(call.result.content[0]!.text)).toMatchObject({ resource: { url: `${proxied}/mcp` } });
  });
});
