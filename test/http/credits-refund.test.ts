import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createFacilitators } from "../../src/payments/x402.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { offlineServiceEnv } from "../../src/sandbox/sim-env.js";
import { createService } from "../../src/service.js";
import { TOOLS } from "../../tools/index.js";
import { anvilRpc, pauseMining } from "../helpers/anvil.js";
import { json } from "../helpers/json.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";
import { siwxHeader } from "../helpers/siwx.js";

/**
 * Refunds whose transfer is not confirmed in time (issue 20, finding 2): with mining paused on the local
 * chain, a refund answers 202 `pending` with its transaction and keeps the amount out of the balance; a
 * second refund pays nothing more; the chain alone decides (mined: confirmed; its nonce used by another
 * transaction: restored once); a restarted service reconciles what the previous one left pending. On the
 * SQLite ledger (a file) and on the Redis ledger.
 */
const kinds = [
  { name: "SQLite ledger", redis: false },
  { name: "Redis ledger", redis: true },
];

describe.each(kinds.filter((k) => redisAvailable || !k.redis))("credit refunds on a paused chain ($name)", ({ redis }) => {
  let stack: OfflineStack;
  let env: Record<string, string>;
  let dataDir: string;
  const prefix = `test:credits-refund:${randomBytes(4).toString("hex")}:`;
  const payer = (i: number) => stack.payers[i]!;
  const chainOf = () => createPublicClient({ transport: http(stack.rpcUrl) });

  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  };
  const refund = async (i: number, base = stack.url) => {
    const url = `${base}/api/v1/credits/refund`;
    return fetch(url, { method: "POST", headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, url) }, body: "{}" });
  };
  const account = async (i: number, base = stack.url) => {
    const url = `${base}/api/v1/credits`;
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, url) } });
    expect(res.status).toBe(200);
    return json(res);
  };
  /** Transactions of the relayer waiting in the pool. */
  const waiting = async () => {
    const c = chainOf();
    return (await c.getTransactionCount({ address: stack.operator.address, blockTag: "pending" })) - (await c.getTransactionCount({ address: stack.operator.address }));
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "mg-refund-"));
    env = {
      RATE_LIMIT_PER_MIN: "100000",
      CREDITS_REFUND: "on",
      // The answer says pending after 1.5 s instead of the default 30 s.
      CREDITS_REFUND_CONFIRM_MS: "1500",
      ...(redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix } : { DATA_DIR: dataDir }),
    };
    stack = await startOfflineStack({ tools: TOOLS, env });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (redis) await deleteRedisPrefix(prefix);
  });

  it("answers 202 pending with the transaction and keeps the amount out of the balance; a second refund (HTTP or MCP) pays nothing more; once mined, paid exactly once and confirmed", async () => {
    const i = 1;
    await topUp(i, "0.4");
    const before = await stack.balanceOf(payer(i).address);
    const resume = await pauseMining(stack.rpcUrl);
    let txHash: string;
    try {
      const res = await refund(i);
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(202);
      expect(body).toMatchObject({ status: "pending", amount_usd: "0.4", wallet: payer(i).address.toLowerCase() });
      txHash = body.tx_hash;
      expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await account(i)).toMatchObject({ balance_usd: "0", refund_pending_usd: "0.4", refund: { status: "pending", tx_hash: txHash, amount_usd: "0.4" } });

      const again = await refund(i);
      expect(again.status).toBe(202);
      expect(await json(again)).toMatchObject({ status: "pending", amount_usd: "0.4", tx_hash: txHash, refund_id: body.refund_id });
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
      try {
        const mcp = await client.callTool({ name: "credits_refund", arguments: {}, _meta: { "x402/sign-in-with-x": await siwxHeader(payer(i).privateKey, `${stack.url}/mcp`) } });
        expect(mcp.isError).toBeFalsy();
        expect(mcp.structuredContent).toMatchObject({ status: "pending", tx_hash: txHash });
      } finally {
        await client.close();
      }
      // One transfer waits in the pool, nothing more.
      expect(await waiting()).toBe(1);
      expect(await stack.balanceOf(payer(i).address)).toBe(before);
    } finally {
      await resume();
    }
    expect(await stack.balanceOf(payer(i).address)).toBe(before + 400_000n);
    expect(await account(i)).toMatchObject({ balance_usd: "0", refund_pending_usd: "0", refund: { status: "confirmed", tx_hash: txHash, reason: null } });
    const third = await refund(i);
    expect(third.status).toBe(200);
    expect(await json(third)).toMatchObject({ status: "none", amount_usd: "0", tx_hash: null });
    expect(await stack.balanceOf(payer(i).address)).toBe(before + 400_000n);
  });

  it("restores the balance exactly once when the transfer is dropped and its nonce used by another transaction; the next refund pays", async () => {
    const i = 2;
    await topUp(i, "0.3");
    const before = await stack.balanceOf(payer(i).address);
    const resume = await pauseMining(stack.rpcUrl);
    let txHash: Hex;
    try {
      const res = await refund(i);
      expect(res.status).toBe(202);
      txHash = (await json(res)).tx_hash;
      const { nonce } = await chainOf().getTransaction({ hash: txHash });
      // The node forgets the transfer, and the relayer's next transaction (a settlement would do the same) takes its nonce.
      await anvilRpc(stack.rpcUrl, "anvil_dropTransaction", [txHash]);
      const relayer = createWalletClient({ account: privateKeyToAccount(stack.operator.privateKey), transport: http(stack.rpcUrl) });
      await relayer.sendTransaction({ to: stack.operator.address, value: 0n, nonce, chain: null });
      // Mined some blocks deep: the nonce is used for good.
      await anvilRpc(stack.rpcUrl, "anvil_mine", ["0x6"]);
      expect(await account(i)).toMatchObject({ balance_usd: "0.3", refund_pending_usd: "0", refund: { status: "restored", reason: "dropped", tx_hash: txHash } });
    } finally {
      await resume();
    }
    expect(await stack.balanceOf(payer(i).address)).toBe(before);
    expect(await account(i)).toMatchObject({ balance_usd: "0.3", refund_pending_usd: "0" });
    const paid = await refund(i);
    expect(paid.status).toBe(200);
    expect(await json(paid)).toMatchObject({ status: "confirmed", amount_usd: "0.3" });
    expect(await stack.balanceOf(payer(i).address)).toBe(before + 300_000n);
    expect(await account(i)).toMatchObject({ balance_usd: "0", refund: { status: "confirmed" } });
  });

  it("a service restarted mid-refund finds the refund pending, pays nothing more, and confirms it once mined", async () => {
    const i = 3;
    await topUp(i, "0.25");
    const before = await stack.balanceOf(payer(i).address);
    const resume = await pauseMining(stack.rpcUrl);
    const config = loadConfig({
      ...offlineServiceEnv(stack.sim, { usdcAddress: stack.usdcAddress, relayer: stack.operator, funded: stack.payers }, stack.rpcUrl),
      PORT: "0",
      ...env,
    });
    let second: Awaited<ReturnType<Awaited<ReturnType<typeof createService>>["listen"]>> | undefined;
    try {
      const res = await refund(i);
      expect(res.status).toBe(202);
      const { tx_hash: txHash } = await json(res);
      // The first service stops (its ledger closes) with the transfer in the pool; a new one starts on the same ledger.
      await stack.service.close();
      second = await (await createService({ config, tools: TOOLS, facilitator: createFacilitators(config.payments)! })).listen();
      expect(await account(i, second.url)).toMatchObject({ balance_usd: "0", refund_pending_usd: "0.25", refund: { status: "pending", tx_hash: txHash } });
      const again = await refund(i, second.url);
      expect(again.status).toBe(202);
      expect(await json(again)).toMatchObject({ status: "pending", tx_hash: txHash });
      expect(await waiting()).toBe(1);
      await resume();
      expect(await account(i, second.url)).toMatchObject({ balance_usd: "0", refund_pending_usd: "0", refund: { status: "confirmed", tx_hash: txHash } });
      expect(await stack.balanceOf(payer(i).address)).toBe(before + 250_000n);
      expect(await json(await refund(i, second.url))).toMatchObject({ status: "none" });
      expect(await stack.balanceOf(payer(i).address)).toBe(before + 250_000n);
    } finally {
      await anvilRpc(stack.rpcUrl, "evm_setAutomine", [true]);
      await second?.close();
    }
  });
});
