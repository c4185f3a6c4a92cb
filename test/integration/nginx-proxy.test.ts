import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { extractReceiptFromResponse, extractReceiptPayload } from "@x402/extensions/offer-receipt";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Challenge, Receipt } from "mppx";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishedKey } from "../../src/payments/receipts/keys.js";
import { parseSavedAnswer, verifySavedAnswer } from "../../src/payments/receipts/verify.js";
import { requestPath } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { alertsToExtend, exampleCall, PAID_TOOLS, UNCACHED_TOOLS, type RouteCall } from "../helpers/paid-routes.js";
import { savedResponse } from "../helpers/saved-response.js";

/*
 * The service behind a real nginx (Debian's package, installed by .ci/run) configured as a stock reverse proxy: a
 * location with `proxy_pass` only, so every buffer is nginx's default and `proxy_buffer_size` is one memory page
 * (4 KB): an answer whose header block is larger becomes a 502 ("upstream sent too big header"), after the payment
 * settled when it is a paid answer. Base and Solana are offered, MPP (negotiated), credits and receipts are on, and
 * every paid REST route of the registry is paid through it with the official x402 client on Base, the same client
 * on Solana and the mppx client: no 502 anywhere (test/http/header-block-size.test.ts measures every block).
 * A second server of the same nginx reads upstream headers into 1 KB (`proxy_buffer_size 1k`): every paid answer
 * passed through it is lost after settlement, as behind a proxy that cannot pass it; the payer gets it back by
 * sending the same payment again through the stock one, charged once.
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

const BASE = "eip155:8453";
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

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

/**
 * nginx.conf: a stock reverse proxy on `port` (the location has `proxy_pass` only) and, on `lossyPort`, the same with
 * 1 KB for the upstream's headers, which no paid answer fits.
 */
function nginxConf(dir: string, port: number, lossyPort: number, upstream: string): string {
  return `daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
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
    }
  }
  server {
    listen 127.0.0.1:${lossyPort};
    location / {
      proxy_pass ${upstream};
      proxy_buffer_size 1k;
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

/** A fetch that records every status it receives (clients take it as their base fetch). */
function countingFetch(statuses: number[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    statuses.push(res.status);
    return res;
  };
}

describe.skipIf(!NGINX)("behind a stock nginx (proxy_pass only, default buffers), Base and Solana offered, MPP and receipts on", { timeout: 300_000 }, () => {
  let stack: OfflineStack;
  let nginx: ChildProcess | undefined;
  let dir: string;
  /** The stock proxy (the service's PUBLIC_URL) and the one that loses every paid answer. */
  let proxied: string;
  let lossy: string;
  const errorLog = () => readFileSync(join(dir, "error.log"), "utf8");
  /** `url` (under the stock proxy) through the lossy one. */
  const viaLossy = (url: string) => url.replace(proxied, lossy);

  beforeAll(async () => {
    const [port, lossyPort] = [await freePort(), await freePort()];
    proxied = `http://127.0.0.1:${port}`;
    lossy = `http://127.0.0.1:${lossyPort}`;
    // The public URL is the proxy's: 402s and receipts name it, and SIWX proofs are bound to it. No response cache:
    // each route is paid three times below, each time charged (a cache hit would be free).
    stack = await startOfflineStack({
      solana: true,
      tools: UNCACHED_TOOLS,
      env: { PUBLIC_URL: proxied, TRUST_PROXY: "loopback", RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true" },
    });
    dir = mkdtempSync(join(tmpdir(), "marketgate-nginx-"));
    for (const d of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d));
    const conf = join(dir, "nginx.conf");
    writeFileSync(conf, nginxConf(dir, port, lossyPort, stack.url));
    const check = spawnSync(NGINX!, ["-t", "-q", "-c", conf, "-p", dir], { encoding: "utf8" });
    expect(check.status, check.stderr).toBe(0);
    nginx = spawn(NGINX!, ["-c", conf, "-p", dir], { stdio: ["ignore", "ignore", "pipe"] });
    await waitForHttp(`${proxied}/health`);
    await waitForHttp(`${lossy}/health`);
  }, 120_000);

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once("exit", r));
      nginx.kill("SIGTERM");
      await exited;
    }
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const evmAccount = (i: number) => privateKeyToAccount(stack.payers[i]!.privateKey);
  const baseClient = (i: number) => new x402Client().register(BASE, new ExactEvmScheme(evmAccount(i))).setSpendControls(false);
  const solanaClient = (i: number) =>
    new x402Client().register(SOLANA, new ExactSvmScheme(stack.solana!.payers[i]!.signer, { rpcUrl: stack.solana!.rpc.url })).setSpendControls(false);
  const mppClient = (i: number, f: typeof fetch = fetch) =>
    MppxClient.create({
      polyfill: false,
      fetch: f,
      methods: [evmClient.charge({ account: evmAccount(i), networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "10" })],
    });

  it("passes an unpaid call's 402 with both networks, naming the public URL", async () => {
    const tool = TOOLS.find((t) => t.name === "cex_market")!;
    const res = await fetch(`${proxied}${requestPath(tool)}`);
    expect(res.status, errorLog()).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    expect(required.resource.url).toBe(`${proxied}${requestPath(tool)}`);
    expect(required.accepts.map((a) => a.network)).toEqual([BASE, SOLANA]);
    expect(required.accepts[0]).toMatchObject({ amount: "5000", payTo: stack.operator.address });
    expect(Object.keys(required.extensions ?? {})).toEqual(expect.arrayContaining(["bazaar", "sign-in-with-x"]));
  });

  it("every paid REST route is paid through it with the official x402 client (Base and Solana) and the mppx client: no 502 anywhere", async () => {
    const statuses: number[] = [];
    const counted = countingFetch(statuses);
    const ids = await alertsToExtend(wrapFetchWithPayment(counted, baseClient(1)), proxied);
    const paid: string[] = [];
    for (const tool of PAID_TOOLS) {
      const call = exampleCall(proxied, tool, ids);
      const ways: Array<[string, () => Promise<Response>]> = [
        ["x402 Base", () => wrapFetchWithPayment(counted, baseClient(2))(call.url, call.init)],
        ["x402 Solana", () => wrapFetchWithPayment(counted, solanaClient(2))(call.url, call.init)],
        ["mppx", () => mppClient(3, counted).fetch(call.url, call.init)],
      ];
      for (const [how, pay] of ways) {
        const res = await pay();
        expect(res.status, `${tool.name} ${how}: ${errorLog()}`).toBe(200);
        // The receipt travels in the header the client reads.
        if (how === "mppx") expect(Receipt.deserialize(res.headers.get("payment-receipt")!)).toMatchObject({ method: "evm", status: "success" });
        else expect(extractReceiptFromResponse(res), `${tool.name} ${how}`).toBeDefined();
        await res.arrayBuffer();
        paid.push(`${tool.name} ${how}`);
      }
    }
    expect(paid).toHaveLength(PAID_TOOLS.length * 3);
    expect(statuses.filter((s) => s === 502)).toEqual([]);
    expect(errorLog()).not.toContain("too big header");
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

  describe("an answer lost after settlement (the proxy's 502) comes back on a retry with the same payment, charged once", () => {
    /** The 402 of `call` through the stock proxy. */
    const required = async (call: RouteCall): Promise<PaymentRequired> => {
      const res = await fetch(call.url, call.init);
      expect(res.status).toBe(402);
      return decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    };
    /** `call` with a PAYMENT-SIGNATURE (or other) header, through `base` (the stock or the lossy proxy). */
    const send = (call: RouteCall, headers: Record<string, string>, lossyProxy = false) =>
      fetch(lossyProxy ? viaLossy(call.url) : call.url, { ...call.init, headers: { ...(call.init.headers as Record<string, string>), ...headers } });
    /** Sends `payment` through the lossy proxy (a 502 after the settlement), then again through the stock one. */
    async function loseThenRetry(call: RouteCall, payment: PaymentPayload): Promise<{ lost: Response; retried: Response }> {
      const sig = encodePaymentSignatureHeader(payment);
      const lost = await send(call, { "payment-signature": sig }, true);
      await lost.arrayBuffer();
      const retried = await send(call, { "payment-signature": sig });
      return { lost, retried };
    }
    let keys: PublishedKey[];
    beforeAll(async () => {
      keys = ((await (await fetch(`${proxied}/.well-known/x402.json`)).json()) as { receipts: { keys: PublishedKey[] } }).receipts.keys;
    });

    it("x402 on Base, no payment identifier: the same signed payment gets the answer and a receipt that verifies", async () => {
      const call = exampleCall(
        proxied,
        PAID_TOOLS.find((t) => t.name === "dex_tokens")!,
      );
      const payer = stack.payers[4]!;
      const before = await stack.balanceOf(payer.address);
      const payment = await baseClient(4).createPaymentPayload(await required(call));
      const { lost, retried } = await loseThenRetry(call, payment);
      expect(lost.status).toBe(502);
      expect(errorLog()).toContain("too big header");
      // Settled before the proxy lost the answer.
      expect(await stack.balanceOf(payer.address)).toBe(before - 50_000n);
      expect(retried.status).toBe(200);
      expect(decodePaymentResponseHeader(retried.headers.get("payment-response")!)).toMatchObject({ success: true, payer: payer.address });
      expect(extractReceiptPayload(extractReceiptFromResponse(retried)!)).toMatchObject({ resourceUrl: call.url, payer: payer.address });
      const saved = await savedResponse(retried);
      expect(JSON.parse(saved.subarray(saved.indexOf("\r\n\r\n") + 4).toString())).toMatchObject({ network: "base", results: expect.any(Array) });
      expect((await verifySavedAnswer(parseSavedAnswer(saved), keys)).ok).toBe(true);
      // Once more: the same answer, never a second charge.
      expect((await send(call, { "payment-signature": encodePaymentSignatureHeader(payment) })).status).toBe(200);
      expect(await stack.balanceOf(payer.address)).toBe(before - 50_000n);
    });

    it("x402 on Solana: the same signed transaction gets the answer", async () => {
      const call = exampleCall(
        proxied,
        PAID_TOOLS.find((t) => t.name === "dex_token_ohlcv")!,
      );
      const payer = stack.solana!.payers[5]!;
      const before = await stack.solana!.balanceOf(payer.address);
      const pr = await required(call);
      const payment = await solanaClient(5).createPaymentPayload(pr);
      const { lost, retried } = await loseThenRetry(call, payment);
      expect(lost.status).toBe(502);
      expect(await stack.solana!.balanceOf(payer.address)).toBe(before - BigInt(pr.accepts[1]!.amount));
      expect(retried.status).toBe(200);
      expect(decodePaymentResponseHeader(retried.headers.get("payment-response")!)).toMatchObject({ success: true, network: SOLANA, payer: payer.address });
      expect(await retried.json()).toMatchObject({ network: "base", candles: expect.any(Array) });
      expect(await stack.solana!.balanceOf(payer.address)).toBe(before - BigInt(pr.accepts[1]!.amount));
    });

    it("a state-creating route (settled before it runs): the retry gets the alert created once", async () => {
      const tool = PAID_TOOLS.find((t) => t.name === "price_alert_create")!;
      const call = exampleCall(proxied, tool);
      const payer = stack.payers[6]!;
      const alerts = async () => (await stack.service.ctx.alerts!.listActive("price", payer.address.toLowerCase())).length;
      const before = await stack.balanceOf(payer.address);
      const payment = await baseClient(6).createPaymentPayload(await required(call));
      const { lost, retried } = await loseThenRetry(call, payment);
      expect(lost.status).toBe(502);
      expect(await alerts()).toBe(1);
      expect(retried.status).toBe(200);
      const alert = (await retried.json()) as { alert_id: string; manage_token: string };
      expect(alert).toMatchObject({ alert_id: expect.stringMatching(/^alert_price_eth_/), manage_token: expect.any(String) });
      expect(await alerts()).toBe(1);
      expect(await stack.balanceOf(payer.address)).toBe(before - 40_000n);
    });

    it("MPP: the same credential gets the answer", async () => {
      const call = exampleCall(
        proxied,
        PAID_TOOLS.find((t) => t.name === "funding_history")!,
      );
      const payer = stack.payers[7]!;
      const before = await stack.balanceOf(payer.address);
      const unpaid = await fetch(call.url, { headers: { "accept-payment": "evm/charge" } });
      expect(Challenge.fromResponseList(unpaid).map((c) => c.method)).toEqual(["evm"]);
      const authorization = await mppClient(7).createCredential(unpaid);
      const lost = await send(call, { authorization }, true);
      expect(lost.status).toBe(502);
      expect(await stack.balanceOf(payer.address)).toBe(before - 30_000n);
      const retried = await send(call, { authorization });
      expect(retried.status).toBe(200);
      expect(Receipt.deserialize(retried.headers.get("payment-receipt")!)).toMatchObject({ method: "evm", status: "success" });
      expect(await retried.json()).toMatchObject({ symbol: "BTCUSDT" });
      expect(await stack.balanceOf(payer.address)).toBe(before - 30_000n);
    });

    it("with a payment identifier, a new signature with the same identifier gets the answer", async () => {
      const call = exampleCall(
        proxied,
        PAID_TOOLS.find((t) => t.name === "cex_market_history")!,
      );
      const payer = stack.payers[8]!;
      const before = await stack.balanceOf(payer.address);
      const pr = await required(call);
      const withId = { ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, generatePaymentId("retry_")) };
      const lost = await send(call, { "payment-signature": encodePaymentSignatureHeader(await baseClient(8).createPaymentPayload(withId)) }, true);
      expect(lost.status).toBe(502);
      // The client signs again (a fresh authorization) with the same identifier: answered from the first, not charged.
      const retried = await send(call, { "payment-signature": encodePaymentSignatureHeader(await baseClient(8).createPaymentPayload(withId)) });
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ data: { id: "ethereum" } });
      expect(await stack.balanceOf(payer.address)).toBe(before - 10_000n);
    });
  });
});
